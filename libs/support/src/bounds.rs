//! What every application refuses before its first unit of work, in the same words: `--threads
//! 0`, and a run whose estimated work is past a bound unless `--force` (cardiac's rule for its
//! cell-steps, [`check_work`] for the others' units).

/// A refusal of an option before any work.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BoundsError {
    #[error("--threads 0: give at least 1 (or leave it out: one per core)")]
    ZeroThreads,
    #[error(
        "{what} is {} {unit}, {} at about {} {unit} per second, past the bound of {} {unit}. \
         Pass --force to run it anyway, or {advice}",
        show(*.amount), duration(*.amount / *.per_second), show(*.per_second), show(*.bound)
    )]
    TooMuchWork {
        /// The options that make the work, e.g. `--iterations 100000000 on 256x256x64`.
        what: String,
        /// The work, in `unit`s.
        amount: f64,
        unit: &'static str,
        /// The host's speed the estimate assumes (`unit`s per second).
        per_second: f64,
        bound: f64,
        /// What else the user can do, e.g. `fewer --iterations or a smaller --grid`.
        advice: &'static str,
    },
}

/// A floating-point option's value for clap (`value_parser = app_support::bounds::f64_value`):
/// a decimal number beyond f64's range (it would become ±inf) or a non-zero one below its
/// smallest subnormal (it would become 0) is refused naming the text typed, so that the app's
/// own range check never reports a value the user did not give (`--t-end 1e400` said
/// "--t-end inf must be positive"). `inf` and `nan` typed as such pass, for the app to name.
pub fn f64_value(s: &str) -> Result<f64, String> {
    let v: f64 = s.trim().parse().map_err(|e| format!("{e}"))?;
    check_decimal(
        s,
        v.is_infinite(),
        v == 0.0,
        "f64",
        f64::MAX,
        f64::from_bits(1),
    )?;
    Ok(v)
}

/// [`f64_value`] for an `f32` option: also refused when the number is beyond f32's range or
/// below its smallest subnormal (`--lr 1e39` was reported as `--lr inf`).
pub fn f32_value(s: &str) -> Result<f32, String> {
    let v: f64 = s.trim().parse().map_err(|e| format!("{e}"))?;
    let f = v as f32;
    check_decimal(
        s,
        f.is_infinite(),
        f == 0.0,
        "f32",
        f64::from(f32::MAX),
        f64::from(f32::from_bits(1)),
    )?;
    Ok(f)
}

/// Refuses `typed`, whose value became infinite (`inf`) or zero (`zero`) in type `ty`, unless
/// it says so itself.
fn check_decimal(
    typed: &str,
    inf: bool,
    zero: bool,
    ty: &str,
    max: f64,
    tiny: f64,
) -> Result<(), String> {
    let text = typed.trim().to_ascii_lowercase();
    let says_inf = text.contains("inf");
    // A literal zero has no non-zero digit before its exponent.
    let mantissa = text.split('e').next().unwrap_or("");
    let says_zero = !mantissa.chars().any(|c| ('1'..='9').contains(&c));
    if inf && !says_inf && !text.contains("nan") {
        return Err(format!("{typed} is beyond the range of {ty} (±{max:e})"));
    }
    if zero && !says_zero {
        return Err(format!(
            "{typed} is below the smallest non-zero {ty} ({tiny:e})"
        ));
    }
    Ok(())
}

/// `--threads`: `None` (one per core) as it is; 0 refused.
pub fn threads(requested: Option<usize>) -> Result<Option<usize>, BoundsError> {
    match requested {
        Some(0) => Err(BoundsError::ZeroThreads),
        n => Ok(n),
    }
}

/// The estimate of a run's work, checked by [`check_work`].
#[derive(Debug, Clone, PartialEq)]
pub struct Work {
    /// The options that make the work, in words.
    pub what: String,
    /// The work, in `unit`s (as f64: a product of options may pass `u64`).
    pub amount: f64,
    pub unit: &'static str,
    /// The host's measured speed, `unit`s per second.
    pub per_second: f64,
    /// The most work run without `--force`.
    pub bound: f64,
    /// What else the user can do.
    pub advice: &'static str,
}

/// Refuses `w` past its bound unless `force`; returns the estimated seconds otherwise.
pub fn check_work(w: Work, force: bool) -> Result<f64, BoundsError> {
    let seconds = w.amount / w.per_second;
    if (w.amount > w.bound || w.amount.is_nan()) && !force {
        return Err(BoundsError::TooMuchWork {
            what: w.what,
            amount: w.amount,
            unit: w.unit,
            per_second: w.per_second,
            bound: w.bound,
            advice: w.advice,
        });
    }
    Ok(seconds)
}

/// A number in words: `1500000` as it is, `1.5e12` past a million.
pub fn show(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-4..1e6).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:.2e}")
    }
}

/// Wall time in words: `about 40 s`, `about 12 minutes`, `about 3.2 hours`, `about 40 days`.
pub fn duration(seconds: f64) -> String {
    let s = seconds;
    if s < 120.0 {
        format!("about {s:.0} s")
    } else if s < 7200.0 {
        format!("about {:.0} minutes", s / 60.0)
    } else if s < 3.0 * 86400.0 {
        format!("about {:.1} hours", s / 3600.0)
    } else {
        format!("about {} days", show((s / 86400.0).round()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_a_float_cannot_hold_are_refused_naming_the_text_typed() {
        assert_eq!(
            f64_value("1e400").unwrap_err(),
            "1e400 is beyond the range of f64 (±1.7976931348623157e308)"
        );
        assert!(f64_value("-1e400")
            .unwrap_err()
            .starts_with("-1e400 is beyond"));
        assert!(f64_value("1e-400")
            .unwrap_err()
            .starts_with("1e-400 is below the smallest non-zero f64"));
        assert!(f32_value("1e39")
            .unwrap_err()
            .starts_with("1e39 is beyond the range of f32"));
        assert!(f32_value("1e-50")
            .unwrap_err()
            .starts_with("1e-50 is below the smallest non-zero f32"));
        // What the text says is kept for the app's own check to name.
        assert!(f64_value("inf").unwrap().is_infinite());
        assert!(f64_value("-infinity").unwrap().is_infinite());
        assert!(f64_value("NaN").unwrap().is_nan());
        assert_eq!(f64_value("0").unwrap(), 0.0);
        assert_eq!(f64_value("-0.000e5").unwrap(), 0.0);
        assert_eq!(f32_value("1e-45").unwrap(), f32::from_bits(1));
        assert_eq!(f64_value("2.5").unwrap(), 2.5);
        assert!(f64_value("two").is_err());
    }

    #[test]
    fn zero_threads_is_refused_and_the_rest_kept() {
        assert_eq!(threads(Some(0)), Err(BoundsError::ZeroThreads));
        assert_eq!(threads(Some(3)), Ok(Some(3)));
        assert_eq!(threads(None), Ok(None));
    }

    #[test]
    fn work_past_the_bound_is_refused_unless_forced() {
        let w = |amount: f64| Work {
            what: "--steps 7".into(),
            amount,
            unit: "steps",
            per_second: 1e3,
            bound: 1e7,
            advice: "fewer --steps",
        };
        assert_eq!(check_work(w(2e6), false), Ok(2e3));
        assert_eq!(check_work(w(1e9), true), Ok(1e6));
        let e = check_work(w(1e9), false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--steps 7 is 1.00e9 steps, about 12 days at about 1000 steps per second, past the \
             bound of 1.00e7 steps. Pass --force to run it anyway, or fewer --steps"
        );
        assert!(check_work(w(f64::NAN), false).is_err());
    }
}

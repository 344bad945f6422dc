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

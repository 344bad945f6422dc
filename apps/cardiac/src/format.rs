//! Numbers as the commands' messages show them: [`show`] for a measured or given value,
//! [`grouped`] for a count.

/// A number as a message shows it: as Rust prints it between 10^-4 and 10^6 (0.02, 140), in
/// exponent form beyond (1e30 rather than thirty-one digits; 1.5e-7).
pub fn show(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-4..1e6).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// A whole number with thousands separators (24,684,084), in exponent form from 10^15.
pub fn grouped(x: f64) -> String {
    if x.is_nan() || x.abs() >= 1e15 {
        return format!("{x:e}");
    }
    let digits = format!("{}", x.abs().round() as u64);
    let mut out = String::new();
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if x < 0.0 {
        out.insert(0, '-');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn show_switches_to_exponent_form_outside_1e_minus_4_to_1e6() {
        assert_eq!(show(0.02), "0.02");
        assert_eq!(show(140.0), "140");
        assert_eq!(show(1e30), "1e30");
        assert_eq!(show(1.5e-7), "1.5e-7");
        assert_eq!(show(0.0), "0");
    }

    #[test]
    fn grouped_separates_thousands_and_keeps_the_sign() {
        assert_eq!(grouped(24_684_084.0), "24,684,084");
        assert_eq!(grouped(999.0), "999");
        assert_eq!(grouped(-1234.0), "-1,234");
        assert_eq!(grouped(2e15), "2e15");
    }
}

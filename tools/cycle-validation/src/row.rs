//! One row of the validation table: a modelled figure beside a published one.

use std::fmt::Write as _;

/// How a row's modelled figure must compare with the published one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Check {
    /// `|modelled / published - 1| <= tolerance`.
    Within(f64),
    /// `modelled <= published` (a physical bound, such as the chip's peak issue rate).
    AtMost,
}

/// A modelled figure, the published figure it is held against, and where that comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// What is compared, with its unit.
    pub name: String,
    pub modelled: f64,
    pub published: f64,
    pub check: Check,
    /// Where the published figure comes from.
    pub source: &'static str,
    /// How the modelled figure was obtained, or why it differs.
    pub note: String,
}

impl Row {
    /// `modelled / published`.
    pub fn ratio(&self) -> f64 {
        self.modelled / self.published
    }

    /// Whether the row meets its check.
    pub fn passes(&self) -> bool {
        match self.check {
            Check::Within(tol) => (self.ratio() - 1.0).abs() <= tol,
            Check::AtMost => self.modelled <= self.published,
        }
    }

    fn check_text(&self) -> String {
        match self.check {
            Check::Within(tol) => format!("±{:.0} %", tol * 100.0),
            Check::AtMost => "≤".to_string(),
        }
    }
}

/// Formats a figure with thousands separators (integers) or three significant digits.
pub fn figure(x: f64) -> String {
    if x.abs() >= 100.0 {
        let digits = format!("{:.0}", x.round());
        let (sign, digits) = digits
            .strip_prefix('-')
            .map_or(("", digits.as_str()), |d| ("-", d));
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        format!("{sign}{out}")
    } else {
        format!("{x:.3}")
    }
}

/// The rows as a Markdown table (the one in `docs/cycle-model.md`).
pub fn markdown(rows: &[Row]) -> String {
    let mut s = String::from(
        "| figure | modelled | published | ratio | check | source | note |\n\
         |---|---:|---:|---:|---|---|---|\n",
    );
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.3} | {} {} | {} | {} |",
            r.name,
            figure(r.modelled),
            figure(r.published),
            r.ratio(),
            r.check_text(),
            if r.passes() { "ok" } else { "FAILS" },
            r.source,
            r.note
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(modelled: f64, published: f64, check: Check) -> Row {
        Row {
            name: "x".into(),
            modelled,
            published,
            check,
            source: "",
            note: String::new(),
        }
    }

    #[test]
    fn checks() {
        assert!(row(114.0, 100.0, Check::Within(0.15)).passes());
        assert!(!row(116.0, 100.0, Check::Within(0.15)).passes());
        assert!(!row(84.0, 100.0, Check::Within(0.15)).passes());
        assert!(row(4.0, 4.0, Check::AtMost).passes());
        assert!(!row(4.1, 4.0, Check::AtMost).passes());
    }

    #[test]
    fn figures() {
        assert_eq!(figure(2_912_345.4), "2,912,345");
        assert_eq!(figure(106.0), "106");
        assert_eq!(figure(5.9876), "5.988");
        assert_eq!(figure(-1234.0), "-1,234");
    }
}

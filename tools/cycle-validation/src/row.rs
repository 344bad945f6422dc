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

/// What a row's published figure is, and so whether it is evidence for the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A measurement of the chip that the model was not calibrated on: the correlation
    /// suite, counted in its mean absolute percentage error.
    Measurement,
    /// A measurement the model's constants were fitted to (agreement by construction).
    Calibration,
    /// A published formula (an estimator, an architecture rule): a model against a model.
    Formula,
    /// A physical upper bound (a peak issue rate), not a figure to meet.
    Bound,
}

impl Kind {
    /// The name in the table's `kind` column.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Measurement => "measurement",
            Kind::Calibration => "calibration",
            Kind::Formula => "formula",
            Kind::Bound => "bound",
        }
    }
}

/// A modelled figure, the published figure it is held against, and where that comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// What is compared, with its unit.
    pub name: String,
    pub modelled: f64,
    pub published: f64,
    pub check: Check,
    /// Whether the published figure is evidence ([`Kind::Measurement`]) or not.
    pub kind: Kind,
    /// The chip generation the published figure was measured on (`Mk1` = GC2, `Mk2` =
    /// GC200, `Bow`, `ipu2` = Mk2 or Bow, not stated), `—` for formulas and bounds.
    pub chip: &'static str,
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

    /// `|modelled / published − 1|`, the row's absolute percentage error as a fraction.
    pub fn error(&self) -> f64 {
        (self.ratio() - 1.0).abs()
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

/// The correlation suite's summary: the mean absolute percentage error over the
/// [`Kind::Measurement`] rows and the worst of them.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Measurement rows counted.
    pub rows: usize,
    /// Mean of `|modelled / published − 1|` over them (a fraction: 0.15 is 15 %).
    pub mape: f64,
    /// The row with the largest error, and that error.
    pub worst: Option<(String, f64)>,
    /// Rows whose ratio is beyond 1.5× either way.
    pub beyond_1_5: usize,
}

/// The [`Summary`] of `rows`' measurements (other kinds are left out).
pub fn summary(rows: &[Row]) -> Summary {
    let m: Vec<&Row> = rows
        .iter()
        .filter(|r| r.kind == Kind::Measurement)
        .collect();
    let mape = m.iter().map(|r| r.error()).sum::<f64>() / m.len().max(1) as f64;
    let worst = m
        .iter()
        .max_by(|a, b| a.error().total_cmp(&b.error()))
        .map(|r| (r.name.clone(), r.error()));
    let beyond_1_5 = m
        .iter()
        .filter(|r| !(1.0 / 1.5..=1.5).contains(&r.ratio()))
        .count();
    Summary {
        rows: m.len(),
        mape,
        worst,
        beyond_1_5,
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "correlation suite: {} measurement rows, mean absolute percentage error {:.1} %, \
             {} beyond 1.5×",
            self.rows,
            self.mape * 100.0,
            self.beyond_1_5
        )?;
        if let Some((name, e)) = &self.worst {
            write!(f, "; worst: {name} ({:.1} %)", e * 100.0)?;
        }
        Ok(())
    }
}

/// The rows as a Markdown table (the one in `docs/cycle-model.md`), then the summary.
pub fn markdown(rows: &[Row]) -> String {
    let mut s = String::from(
        "| figure | kind | chip | modelled | published | ratio | check | source | note |\n\
         |---|---|---|---:|---:|---:|---|---|---|\n",
    );
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {:.3} | {} {} | {} | {} |",
            r.name,
            r.kind.name(),
            r.chip,
            figure(r.modelled),
            figure(r.published),
            r.ratio(),
            r.check_text(),
            if r.passes() { "ok" } else { "FAILS" },
            r.source,
            r.note
        );
    }
    let _ = writeln!(s, "\n{}", summary(rows));
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
            kind: Kind::Measurement,
            chip: "Mk2",
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
    fn the_summary_counts_measurements_only() {
        let mut rows = vec![
            row(110.0, 100.0, Check::Within(0.15)),
            row(70.0, 100.0, Check::Within(0.5)),
            row(1000.0, 100.0, Check::AtMost),
        ];
        rows[2].kind = Kind::Bound;
        let s = summary(&rows);
        assert_eq!(s.rows, 2);
        assert!((s.mape - 0.2).abs() < 1e-12, "{s:?}");
        let worst = s.worst.expect("a worst row");
        assert!((worst.1 - 0.3).abs() < 1e-12, "{worst:?}");
        assert_eq!(s.beyond_1_5, 0);
        rows[1].modelled = 60.0;
        assert_eq!(summary(&rows).beyond_1_5, 1);
        assert_eq!(summary(&rows[2..]).rows, 0);
    }

    #[test]
    fn figures() {
        assert_eq!(figure(2_912_345.4), "2,912,345");
        assert_eq!(figure(106.0), "106");
        assert_eq!(figure(5.9876), "5.988");
        assert_eq!(figure(-1234.0), "-1,234");
    }
}

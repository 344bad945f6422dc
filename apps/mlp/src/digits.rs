//! The shipped data set: the UCI "Optical Recognition of Handwritten Digits" (E. Alpaydin,
//! C. Kaynak, 1998; CC BY 4.0; `data/digits/README.md`). The two CSV files as published
//! (`optdigits.tra`, `optdigits.tes`: 64 counts 0..16 of an 8×8 grid of 4×4 blocks, then the
//! class 0..9) are exported once by `examples/export_digits.rs` into the `.npy` files the runs
//! read: features f32 `[samples, 64]` (count / 16, so in 0..1) and labels i32 `[samples]`, in
//! file order.

use std::path::{Path, PathBuf};

use crate::data::{Data, DataError};

/// Features per sample.
pub const FEATURES: usize = 64;
/// Classes (the digits 0..9).
pub const CLASSES: usize = 10;

/// One of the two published files and what it must hold (the counts of the data set's
/// description, `optdigits.names`).
pub struct Part {
    /// The CSV file's name.
    pub csv: &'static str,
    /// The `.npy` files' names (features, labels).
    pub x: &'static str,
    pub y: &'static str,
    /// Samples per class 0..9.
    pub class_counts: [usize; CLASSES],
}

/// The training part (3,823 samples, 30 writers).
pub const TRAIN: Part = Part {
    csv: "optdigits.tra",
    x: "digits_train_x.npy",
    y: "digits_train_y.npy",
    class_counts: [376, 389, 380, 389, 387, 376, 377, 387, 380, 382],
};

/// The test part (1,797 samples, 13 other writers: writer-independent testing).
pub const TEST: Part = Part {
    csv: "optdigits.tes",
    x: "digits_test_x.npy",
    y: "digits_test_y.npy",
    class_counts: [178, 182, 177, 183, 181, 182, 181, 179, 174, 180],
};

/// The folder of the shipped files: `data/digits` in this crate.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join("digits")
}

/// The four `.npy` files in `dir`: train features, train labels, test features, test labels.
pub fn npy_paths(dir: &Path) -> [PathBuf; 4] {
    [
        dir.join(TRAIN.x),
        dir.join(TRAIN.y),
        dir.join(TEST.x),
        dir.join(TEST.y),
    ]
}

/// The samples of one CSV file: features (count / 16, row-major) and labels.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub x: Vec<f32>,
    pub y: Vec<i32>,
}

/// Parses one of the published CSV files and checks it against `part`: every row 64 integers
/// in 0..16 and a class in 0..9, and as many samples of each class as the description says.
/// (No checksum: the workspace has no SHA-256 crate; the README gives the files' SHA-256 for
/// `sha256sum -c`.)
pub fn parse(path: &Path, part: &Part) -> Result<Parsed, DataError> {
    let text = app_support::input::read_to_string(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => DataError::Missing {
            path: path.into(),
            what: "the published CSV file (data/digits/README.md)".into(),
        },
        _ => DataError::Read {
            path: path.into(),
            source,
        },
    })?;
    let csv = |line: usize, reason: String| DataError::Csv {
        path: path.into(),
        line,
        reason,
    };
    let (mut x, mut y) = (Vec::new(), Vec::new());
    let mut counts = [0usize; CLASSES];
    for (i, row) in text.lines().enumerate() {
        let row = row.trim();
        if row.is_empty() {
            continue;
        }
        let v: Vec<u32> = row
            .split(',')
            .map(|f| f.trim().parse::<u32>())
            .collect::<Result<_, _>>()
            .map_err(|e| csv(i + 1, format!("not an integer list: {e}")))?;
        if v.len() != FEATURES + 1 {
            return Err(csv(
                i + 1,
                format!("{} fields, expected {}", v.len(), FEATURES + 1),
            ));
        }
        if let Some(f) = v[..FEATURES].iter().position(|&c| c > 16) {
            return Err(csv(i + 1, format!("field {} is {}, above 16", f + 1, v[f])));
        }
        let class = v[FEATURES] as usize;
        if class >= CLASSES {
            return Err(csv(i + 1, format!("class {class}, expected 0..9")));
        }
        counts[class] += 1;
        x.extend(v[..FEATURES].iter().map(|&c| c as f32 / 16.0));
        y.push(class as i32);
    }
    if counts != part.class_counts {
        return Err(DataError::Check {
            path: path.into(),
            reason: format!(
                "{} samples with class counts {counts:?}; the published file has {} with {:?}",
                y.len(),
                part.class_counts.iter().sum::<usize>(),
                part.class_counts
            ),
        });
    }
    Ok(Parsed { x, y })
}

/// Writes `data` as a `.npy` file of `shape`, atomically.
fn write_npy<T: npyz::AutoSerialize + Copy>(
    path: &Path,
    shape: &[u64],
    data: &[T],
) -> Result<(), DataError> {
    app_support::npy::write(path, shape, npyz::Order::C, data).map_err(|e| DataError::Write {
        path: path.into(),
        reason: format!("{e:#}"),
    })
}

/// Writes one part's samples as its two `.npy` files in `dir`.
pub fn write_part(dir: &Path, part: &Part, p: &Parsed) -> Result<(), DataError> {
    let n = p.y.len() as u64;
    write_npy(&dir.join(part.x), &[n, FEATURES as u64], &p.x)?;
    write_npy(&dir.join(part.y), &[n], &p.y)
}

/// Parses both CSV files in `dir` and writes the four `.npy` files beside them; returns the
/// sample counts (train, test).
pub fn export(dir: &Path) -> Result<(usize, usize), DataError> {
    let train = parse(&dir.join(TRAIN.csv), &TRAIN)?;
    let test = parse(&dir.join(TEST.csv), &TEST)?;
    write_part(dir, &TRAIN, &train)?;
    write_part(dir, &TEST, &test)?;
    Ok((train.y.len(), test.y.len()))
}

/// The shipped UCI digits (`data/digits`, [`dir`]): 3,823 training and
/// 1,797 test samples of 64 features in 0..1, 10 classes.
pub fn load(classes: Option<usize>, seed: u64) -> Result<Data, DataError> {
    let p = npy_paths(&dir());
    for f in &p {
        if !f.exists() {
            return Err(DataError::Missing {
                path: f.clone(),
                what: "the shipped digits; `cargo run -p mlp --example export_digits` makes it from the CSV files beside it".into(),
            });
        }
    }
    let mut d = Data::from_files(
        "digits",
        (&p[0], &p[1]),
        Some((&p[2], &p[3])),
        classes,
        seed,
    )?;
    d.info.split =
        "the published test set, 13 other writers; training samples shuffled with --seed".into();
    Ok(d)
}

//! Data sets. Generated (no download): Gaussian blobs, one per class, in `d` dimensions, with a
//! fixed seed; class centres lie on a sphere of radius 2, points scatter around them with
//! standard deviation 1, so the classes overlap a little and the best accuracy is below 100 %.
//! Read from `.npy` files ([`Data::from_files`]: features f32 `[samples, features]`, labels
//! i32, i64 or u8 `[samples]`), among them the shipped UCI digits ([`crate::digits::load`]); every
//! way a file can be unfit is a [`DataError`] naming it.

use std::path::{Path, PathBuf};

use poplar::rand::{SplitMix64, GOLDEN_GAMMA};

/// The generator of every run and test (SplitMix64 from `seed ^ GOLDEN_GAMMA`), so they all see
/// the same data.
fn rng(seed: u64) -> SplitMix64 {
    SplitMix64::new(seed ^ GOLDEN_GAMMA)
}

/// Samples (`x`: `len × dims`, row-major) and their labels (`0..classes`).
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    pub dims: usize,
    pub classes: usize,
    pub x: Vec<f32>,
    pub y: Vec<i32>,
}

impl Dataset {
    pub fn len(&self) -> usize {
        self.y.len()
    }
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }
    pub fn sample(&self, i: usize) -> (&[f32], i32) {
        (&self.x[i * self.dims..(i + 1) * self.dims], self.y[i])
    }
}

/// `per_class` points of each of `classes` blobs in `dims` dimensions, shuffled, split into a
/// training set and a test set of `test_share` of the points.
pub fn blobs(
    classes: usize,
    dims: usize,
    per_class: usize,
    test_share: f64,
    seed: u64,
) -> (Dataset, Dataset) {
    let mut rng = rng(seed);
    // Centres: random directions scaled to radius 2.
    let centres: Vec<Vec<f64>> = (0..classes)
        .map(|_| {
            let v: Vec<f64> = (0..dims).map(|_| rng.normal()).collect();
            let n = v.iter().map(|a| a * a).sum::<f64>().sqrt().max(1e-9);
            v.iter().map(|a| 2.0 * a / n).collect()
        })
        .collect();
    let mut points: Vec<(Vec<f32>, i32)> = Vec::with_capacity(classes * per_class);
    for (k, c) in centres.iter().enumerate() {
        for _ in 0..per_class {
            points.push((
                c.iter().map(|m| (m + rng.normal()) as f32).collect(),
                k as i32,
            ));
        }
    }
    // Fisher–Yates with the same generator.
    rng.shuffle(&mut points);
    let n_test = (points.len() as f64 * test_share).round() as usize;
    let split = |ps: &[(Vec<f32>, i32)]| Dataset {
        dims,
        classes,
        x: ps.iter().flat_map(|p| p.0.iter().copied()).collect(),
        y: ps.iter().map(|p| p.1).collect(),
    };
    (split(&points[n_test..]), split(&points[..n_test]))
}

/// Why a data set cannot be used for training. Every case names the file (or the option) and
/// what is wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error("{path}: missing ({what})")]
    Missing { path: PathBuf, what: String },
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The `.npy` reader's refusal (it names the file and the header field).
    #[error(transparent)]
    Npy(#[from] app_support::npy::NpyError),
    #[error("{path} holds {dtype} {shape:?}; mlp reads {wanted}")]
    DType {
        path: PathBuf,
        dtype: String,
        shape: Vec<u64>,
        wanted: &'static str,
    },
    #[error("{path} has shape {shape:?}; mlp reads {wanted}")]
    Shape {
        path: PathBuf,
        shape: Vec<u64>,
        wanted: &'static str,
    },
    #[error("{x} has {x_rows} samples but {y} has {y_rows} labels")]
    Rows {
        x: PathBuf,
        x_rows: usize,
        y: PathBuf,
        y_rows: usize,
    },
    #[error("{path}: no samples")]
    Empty { path: PathBuf },
    #[error("{path}: sample {sample}, feature {feature} is {value}; features must be finite")]
    NotFinite {
        path: PathBuf,
        sample: usize,
        feature: usize,
        value: f32,
    },
    #[error("{path}: label {label} of sample {sample} is negative; labels are 0, 1, …")]
    NegativeLabel {
        path: PathBuf,
        sample: usize,
        label: i64,
    },
    #[error("--classes {classes} is too few: {path} has label {label} (sample {sample}); labels must be below --classes")]
    TooFewClasses {
        classes: usize,
        path: PathBuf,
        label: i64,
        sample: usize,
    },
    #[error("{path} has {found} features but {other} has {expected}")]
    Features {
        path: PathBuf,
        found: usize,
        other: PathBuf,
        expected: usize,
    },
    #[error("--inputs {given}: {path} has {features} features (leave --inputs out, or use --dataset blobs)")]
    Inputs {
        given: usize,
        path: PathBuf,
        features: usize,
    },
    #[error("--per-class applies only to the generated blobs (--dataset blobs), not to {path}")]
    PerClass { path: PathBuf },
    #[error("{path}: fewer than 2 classes (labels up to {max_label}); a classifier needs 2")]
    OneClass { path: PathBuf, max_label: i64 },
    #[error("{path}, line {line}: {reason}")]
    Csv {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("{path}: {reason}")]
    Check { path: PathBuf, reason: String },
    #[error("writing {path}: {reason}")]
    Write { path: PathBuf, reason: String },
}

/// A numpy dtype as mlp names it (`f32`, `i64`, …; numpy's own string otherwise).
fn dtype_name(d: &npyz::DType) -> String {
    use npyz::TypeChar;
    match d {
        npyz::DType::Plain(t) => {
            let bits = t.size_field() * 8;
            match t.type_char() {
                TypeChar::Float => format!("f{bits}"),
                TypeChar::Int => format!("i{bits}"),
                TypeChar::Uint => format!("u{bits}"),
                TypeChar::Bool => "bool".into(),
                _ => t.to_string(),
            }
        }
        other => other.descr(),
    }
}

/// Opens and reads a `.npy` file, its header checked against its size.
fn open_npy(path: &Path) -> Result<app_support::npy::Npy, DataError> {
    // A regular file only: opening a FIFO would block for ever.
    let f = app_support::input::open(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => DataError::Missing {
            path: path.into(),
            what: "no such file".into(),
        },
        _ => DataError::Read {
            path: path.into(),
            source,
        },
    })?;
    // The one checked reader: every size the header claims agrees with the file.
    Ok(app_support::npy::from_reader(
        path,
        std::io::BufReader::new(f),
    )?)
}

fn read_vec<T: npyz::Deserialize>(
    npy: app_support::npy::Npy,
    wanted: &'static str,
) -> Result<Vec<T>, DataError> {
    Ok(npy.to_vec(wanted)?)
}

/// What mlp reads as features.
const X_RULE: &str = "f32 [samples, features] (convert with X.astype(numpy.float32))";
/// What mlp reads as labels.
const Y_RULE: &str = "labels as i32, i64 or u8 [samples]";

/// Reads features: a 2-D f32 array (C or Fortran order), every value finite. Returns the
/// values row-major and the number of features.
pub fn read_features(path: &Path) -> Result<(Vec<f32>, usize), DataError> {
    let npy = open_npy(path)?;
    let shape = npy.shape().to_vec();
    let dtype = npy.dtype().clone();
    let is_f32 = matches!(&dtype, npyz::DType::Plain(t)
        if t.type_char() == npyz::TypeChar::Float && t.size_field() == 4);
    if !is_f32 {
        return Err(DataError::DType {
            path: path.into(),
            dtype: dtype_name(&dtype),
            shape,
            wanted: X_RULE,
        });
    }
    if shape.len() != 2 {
        return Err(DataError::Shape {
            path: path.into(),
            shape,
            wanted: X_RULE,
        });
    }
    let (rows, cols) = (shape[0] as usize, shape[1] as usize);
    if rows == 0 || cols == 0 {
        return Err(DataError::Empty { path: path.into() });
    }
    let fortran = npy.order() == npyz::Order::Fortran;
    let mut x: Vec<f32> = read_vec(npy, "f32")?;
    if fortran {
        // Column-major on disk: element (i, j) at i + rows·j.
        x = (0..rows * cols)
            .map(|k| x[(k % cols) * rows + k / cols])
            .collect();
    }
    if let Some(k) = x.iter().position(|v| !v.is_finite()) {
        return Err(DataError::NotFinite {
            path: path.into(),
            sample: k / cols,
            feature: k % cols,
            value: x[k],
        });
    }
    Ok((x, cols))
}

/// Reads labels: a 1-D array of i32, i64 or u8, every label 0 or more.
pub fn read_labels(path: &Path) -> Result<Vec<i64>, DataError> {
    let npy = open_npy(path)?;
    let shape = npy.shape().to_vec();
    let dtype = npy.dtype().clone();
    let kind = match &dtype {
        npyz::DType::Plain(t) => (t.type_char(), t.size_field()),
        _ => (npyz::TypeChar::Object, 0),
    };
    let y: Vec<i64> = match kind {
        (npyz::TypeChar::Int, 4) if shape.len() == 1 => read_vec::<i32>(npy, "i32")?
            .into_iter()
            .map(i64::from)
            .collect(),
        (npyz::TypeChar::Int, 8) if shape.len() == 1 => read_vec::<i64>(npy, "i64")?,
        (npyz::TypeChar::Uint, 1) if shape.len() == 1 => read_vec::<u8>(npy, "u8")?
            .into_iter()
            .map(i64::from)
            .collect(),
        (npyz::TypeChar::Int, 4) | (npyz::TypeChar::Int, 8) | (npyz::TypeChar::Uint, 1) => {
            return Err(DataError::Shape {
                path: path.into(),
                shape,
                wanted: Y_RULE,
            })
        }
        _ => {
            return Err(DataError::DType {
                path: path.into(),
                dtype: dtype_name(&dtype),
                shape,
                wanted: Y_RULE,
            })
        }
    };
    if y.is_empty() {
        return Err(DataError::Empty { path: path.into() });
    }
    if let Some(i) = y.iter().position(|&l| l < 0) {
        return Err(DataError::NegativeLabel {
            path: path.into(),
            sample: i,
            label: y[i],
        });
    }
    Ok(y)
}

/// A pair of files read together: features, labels, and where they came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub x_path: PathBuf,
    pub y_path: PathBuf,
    pub x: Vec<f32>,
    pub dims: usize,
    pub y: Vec<i64>,
}

/// Reads `x_path` and `y_path` (see [`read_features`], [`read_labels`]) and checks they hold
/// as many samples.
pub fn read_pair(x_path: &Path, y_path: &Path) -> Result<Loaded, DataError> {
    let (x, dims) = read_features(x_path)?;
    let y = read_labels(y_path)?;
    if x.len() / dims != y.len() {
        return Err(DataError::Rows {
            x: x_path.into(),
            x_rows: x.len() / dims,
            y: y_path.into(),
            y_rows: y.len(),
        });
    }
    Ok(Loaded {
        x_path: x_path.into(),
        y_path: y_path.into(),
        x,
        dims,
        y,
    })
}

/// Where a run's data came from (recorded in `history.json`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DataInfo {
    /// `digits`, `blobs`, or `files`.
    pub source: String,
    /// The training samples' files (none for blobs).
    pub train_files: Vec<PathBuf>,
    /// The test samples' files (none for blobs, or when held out of the training files).
    pub test_files: Vec<PathBuf>,
    /// How the test set was made.
    pub split: String,
    pub features: usize,
    pub classes: usize,
    pub train_samples: usize,
    pub test_samples: usize,
}

/// A run's training and test sets.
#[derive(Debug, Clone)]
pub struct Data {
    pub train: Dataset,
    pub test: Dataset,
    pub info: DataInfo,
}

/// Shuffles the samples of `d` with a seeded Fisher–Yates (the blobs' generator).
fn shuffle(d: &mut Loaded, seed: u64) {
    let mut rng = rng(seed ^ 0xDA7A);
    for i in (1..d.y.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        d.y.swap(i, j);
        for f in 0..d.dims {
            d.x.swap(i * d.dims + f, j * d.dims + f);
        }
    }
}

fn dataset(x: &[f32], y: &[i64], dims: usize, classes: usize) -> Dataset {
    Dataset {
        dims,
        classes,
        x: x.to_vec(),
        y: y.iter().map(|&l| l as i32).collect(),
    }
}

impl Data {
    /// The generated blobs (see [`blobs`]): 80 % train, 20 % test.
    pub fn blobs(classes: usize, dims: usize, per_class: usize, seed: u64) -> Data {
        let (train, test) = blobs(classes, dims, per_class, 0.2, seed);
        let info = DataInfo {
            source: "blobs".into(),
            train_files: vec![],
            test_files: vec![],
            split: "generated, shuffled with --seed, the first 20 % held out".into(),
            features: dims,
            classes,
            train_samples: train.len(),
            test_samples: test.len(),
        };
        Data { train, test, info }
    }

    /// Training data from `train` (features, labels) and test data from `test`, or, without
    /// it, the last 20 % of `train` after a shuffle with `seed` held out. The training samples
    /// are shuffled with `seed` either way (a file sorted by class would defeat SGD). Classes:
    /// the largest label + 1, or `classes` if given and larger (smaller is an error naming
    /// both).
    pub fn from_files(
        source: &str,
        train: (&Path, &Path),
        test: Option<(&Path, &Path)>,
        classes: Option<usize>,
        seed: u64,
    ) -> Result<Data, DataError> {
        let mut tr = read_pair(train.0, train.1)?;
        let te = match test {
            Some((x, y)) => {
                let te = read_pair(x, y)?;
                if te.dims != tr.dims {
                    return Err(DataError::Features {
                        path: te.x_path,
                        found: te.dims,
                        other: tr.x_path,
                        expected: tr.dims,
                    });
                }
                Some(te)
            }
            None => None,
        };
        // Classes from the labels of both sets, checked against --classes.
        let mut max = (-1i64, tr.y_path.clone(), 0usize);
        for set in std::iter::once(&tr).chain(te.as_ref()) {
            for (i, &l) in set.y.iter().enumerate() {
                if l > max.0 {
                    max = (l, set.y_path.clone(), i);
                }
            }
        }
        if let Some(c) = classes {
            if max.0 >= c as i64 {
                return Err(DataError::TooFewClasses {
                    classes: c,
                    path: max.1,
                    label: max.0,
                    sample: max.2,
                });
            }
        }
        if max.0 < 1 && classes.is_none_or(|c| c < 2) {
            return Err(DataError::OneClass {
                path: tr.y_path,
                max_label: max.0,
            });
        }
        let classes = classes.unwrap_or(0).max(max.0 as usize + 1);
        let dims = tr.dims;
        shuffle(&mut tr, seed);
        let (train_set, test_set, test_files, split) = match te {
            Some(te) => (
                dataset(&tr.x, &tr.y, dims, classes),
                dataset(&te.x, &te.y, dims, classes),
                vec![te.x_path, te.y_path],
                "the given test files; training samples shuffled with --seed".to_string(),
            ),
            None => {
                let n = tr.y.len();
                let n_test = (n as f64 * 0.2).round() as usize;
                if n_test == 0 || n_test == n {
                    return Err(DataError::Check {
                        path: tr.x_path,
                        reason: format!(
                            "{n} samples are too few to hold 20 % out for testing (give --test-data and --test-labels)"
                        ),
                    });
                }
                let k = n - n_test;
                (
                    dataset(&tr.x[..k * dims], &tr.y[..k], dims, classes),
                    dataset(&tr.x[k * dims..], &tr.y[k..], dims, classes),
                    vec![],
                    "shuffled with --seed, the last 20 % held out".to_string(),
                )
            }
        };
        let info = DataInfo {
            source: source.into(),
            train_files: vec![tr.x_path, tr.y_path],
            test_files,
            split,
            features: dims,
            classes,
            train_samples: train_set.len(),
            test_samples: test_set.len(),
        };
        Ok(Data {
            train: train_set,
            test: test_set,
            info,
        })
    }
}

//! The data set the app generates (no download): Gaussian blobs, one per class, in `d`
//! dimensions, with a fixed seed. Class centres lie on a sphere of radius 2; points scatter
//! around them with standard deviation 1, so the classes overlap a little and the best
//! accuracy is below 100 %.

/// A deterministic generator (SplitMix64), so every run and every test sees the same data.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u = self.uniform().max(1e-300);
        let v = self.uniform();
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
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
    let mut rng = Rng::new(seed);
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
    for i in (1..points.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        points.swap(i, j);
    }
    let n_test = (points.len() as f64 * test_share).round() as usize;
    let split = |ps: &[(Vec<f32>, i32)]| Dataset {
        dims,
        classes,
        x: ps.iter().flat_map(|p| p.0.iter().copied()).collect(),
        y: ps.iter().map(|p| p.1).collect(),
    };
    (split(&points[n_test..]), split(&points[..n_test]))
}

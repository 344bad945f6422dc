//! The host side of a [`CompiledSequential`]: parameters in and out, one step per batch, and
//! the accuracy over a data set.

use poplar_exe::exe::Device;

use super::build::{CompiledSequential, EVALUATE, TRAIN};
use super::SequentialError;

/// Trains a [`CompiledSequential`] on a device running its executable.
pub struct SequentialTrainer<D: Device> {
    pub engine: D,
    pub net: CompiledSequential,
}

/// The loss and correct predictions of one batch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchStats {
    /// The mean cross-entropy over the batch.
    pub loss: f64,
    pub correct: usize,
}

impl<D: Device> SequentialTrainer<D>
where
    D::Error: std::fmt::Display,
{
    pub fn new(net: CompiledSequential, engine: D) -> SequentialTrainer<D> {
        SequentialTrainer { engine, net }
    }

    fn device<T>(r: Result<T, D::Error>) -> Result<T, SequentialError> {
        r.map_err(|e| SequentialError::Device(e.to_string()))
    }

    /// Writes the parameters (as [`super::Sequential::init`] gives them).
    pub fn set_params(&mut self, params: &[Vec<f32>]) -> Result<(), SequentialError> {
        let shapes = self.net.model.all_param_shapes();
        if params.len() != shapes.len() {
            return Err(SequentialError::Options {
                what: "params",
                reason: format!(
                    "{} tensors given, the network has {}",
                    params.len(),
                    shapes.len()
                ),
            });
        }
        for (i, p) in params.iter().enumerate() {
            Self::device(self.engine.write_tensor(&format!("p{i}"), p))?;
        }
        Ok(())
    }

    /// The parameters, as [`SequentialTrainer::set_params`] takes them.
    pub fn params(&self) -> Result<Vec<Vec<f32>>, SequentialError> {
        (0..self.net.model.all_param_shapes().len())
            .map(|i| Self::device(self.engine.read_tensor_all_replicas(&format!("p{i}"))))
            .collect()
    }

    /// The gradients of the last step, in the order of the parameters.
    pub fn gradients(&self) -> Result<Vec<Vec<f32>>, SequentialError> {
        (0..self.net.model.all_param_shapes().len())
            .map(|i| Self::device(self.engine.read_tensor_all_replicas(&format!("g{i}"))))
            .collect()
    }

    /// Runs program `index` on one batch: `x` is `batch` samples (row-major `[batch,
    /// channels, height, width]`), `y` their labels.
    /// Returns the mean loss and, per sample, whether its prediction is right.
    fn run(
        &mut self,
        index: usize,
        x: &[f32],
        y: &[i32],
    ) -> Result<(f64, Vec<bool>), SequentialError> {
        let n = self.net.batch;
        let sample = self.net.model.shape(0).elements();
        if x.len() != n * sample || y.len() != n {
            return Err(SequentialError::Options {
                what: "batch",
                reason: format!(
                    "{} values and {} labels given; a batch is {n} samples of {sample} values",
                    x.len(),
                    y.len()
                ),
            });
        }
        let classes = self.net.model.classes();
        if let Some(bad) = y.iter().find(|&&c| c < 0 || c as usize >= classes) {
            return Err(SequentialError::Options {
                what: "labels",
                reason: format!("label {bad} is not a class of 0..{classes}"),
            });
        }
        Self::device(self.engine.write_tensor("x", x))?;
        Self::device(self.engine.write_tensor("labels", y))?;
        Self::device(self.engine.run(index))?;
        let loss: Vec<f32> = Self::device(self.engine.read_tensor_all_replicas("loss"))?;
        let logits: Vec<f32> = Self::device(self.engine.read_tensor_all_replicas("logits"))?;
        let right = logits
            .chunks(classes)
            .zip(y)
            .map(|(row, &label)| crate::math::best_class(row) == label as usize)
            .collect();
        let loss = loss.iter().map(|&l| f64::from(l)).sum::<f64>() / n as f64;
        Ok((loss, right))
    }

    fn stats(r: (f64, Vec<bool>)) -> BatchStats {
        BatchStats {
            loss: r.0,
            correct: r.1.iter().filter(|&&c| c).count(),
        }
    }

    /// One SGD step on a batch; the batch's loss and correct predictions before the step.
    pub fn step(&mut self, x: &[f32], y: &[i32]) -> Result<BatchStats, SequentialError> {
        self.run(TRAIN, x, y).map(Self::stats)
    }

    /// The loss and correct predictions of a batch, the parameters unchanged.
    pub fn evaluate(&mut self, x: &[f32], y: &[i32]) -> Result<BatchStats, SequentialError> {
        self.run(EVALUATE, x, y).map(Self::stats)
    }

    /// The accuracy over a data set of any size (a last partial batch is filled up with the
    /// set's first samples, which are not counted twice).
    pub fn accuracy(&mut self, x: &[f32], y: &[i32]) -> Result<f64, SequentialError> {
        let n = self.net.batch;
        let sample = self.net.model.shape(0).elements();
        if x.len() != y.len() * sample || y.is_empty() {
            return Err(SequentialError::Options {
                what: "data",
                reason: format!(
                    "{} values for {} labels of {sample} values",
                    x.len(),
                    y.len()
                ),
            });
        }
        let mut right = 0;
        for start in (0..y.len()).step_by(n) {
            let idx: Vec<usize> = (start..start + n)
                .map(|i| if i < y.len() { i } else { i - start })
                .collect();
            let real = (y.len() - start).min(n);
            let xs: Vec<f32> = idx
                .iter()
                .flat_map(|&i| x[i * sample..(i + 1) * sample].iter().copied())
                .collect();
            let ys: Vec<i32> = idx.iter().map(|&i| y[i % y.len()]).collect();
            let (_, correct) = self.run(EVALUATE, &xs, &ys)?;
            right += correct[..real].iter().filter(|&&c| c).count();
        }
        Ok(right as f64 / y.len() as f64)
    }
}

//! popnn's vertices: the dense layer's (`dense`), the loss (`loss`), the optimizers'
//! (`optim`) and pooling's (`pool`, for [`crate::ops::pool`]). Each module's documentation tables its codelets and states its cycle estimates.

pub mod dense;
pub mod loss;
pub mod optim;
pub mod pool;

pub use dense::*;
pub use loss::SoftmaxCrossEntropy;
pub use optim::{Adam, AdamStep, Momentum, Sgd};

/// `n / d`, 0 when `d` is 0.
fn per(n: u64, d: u64) -> u64 {
    n.checked_div(d).unwrap_or(0)
}

/// A worker's share of `n` items (`⌈n / workers⌉`).
fn share_of(n: u64, workers: u32) -> u64 {
    n.div_ceil(u64::from(workers.max(1)))
}

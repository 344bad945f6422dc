//! The loss vertex: `popnn::SoftmaxCrossEntropy` reads a micro-batch's logits (`c × m`,
//! feature-major) and labels (`m`, `i32`), writes `dlogits[k, s] = p[k, s] − [k = y_s]` (the
//! gradient of the summed loss) and adds the summed loss and the count of right predictions
//! to `stats`. Multi-worker: each worker context takes a contiguous run of the samples and
//! adds its sums, in sample order, to its own pair `stats[2·w], stats[2·w + 1]` (`stats` holds
//! `2 × workers` values; the host adds the pairs in worker order).
//!
//! **Cycle estimate** (not measured; one worker's `⌈m/6⌉` samples): per sample, a softmax as the standard loops would do it
//! (`2·c` for the maximum and the sum, `Exp` at 6 cycles per 2 floats, a divide at 10 per 2),
//! `c` for the gradient and 20 for the loss and the prediction; 17 of vertex overhead.

use codelets::cycles;
use codelets::family::{BinaryOp, UnaryOp};
use poplar_core::codelet::*;
use poplar_core::dtype::DType;

use super::per;

use crate::math::{best_class, cross_entropy, softmax};

poplar_core::codelet! {
    /// `popnn::SoftmaxCrossEntropy`: the loss and its gradient for a micro-batch.
    pub struct SoftmaxCrossEntropy as "popnn::SoftmaxCrossEntropy", multi_worker {
        logits: Input<Vector<f32>>,
        labels: Input<Vector<i32>>,
        dlogits: Output<Vector<f32>>,
        stats: InOut<Vector<f32>>,
    }
}

impl Vertex for SoftmaxCrossEntropy<'_> {
    fn compute(&mut self, w: Worker) -> Result<(), VertexError> {
        let m = self.labels.len();
        let c = per(self.logits.len() as u64, m as u64) as usize;
        let pair = 2 * w.id as usize;
        if c < 2
            || self.logits.len() != c * m
            || self.dlogits.len() != c * m
            || self.stats.len() != 2 * w.count as usize
        {
            return Err(VertexError::new(format!(
                "popnn::SoftmaxCrossEntropy: logits {}, labels {m}, dlogits {}, stats {} do not make c × m, m, c × m, 2 × workers",
                self.logits.len(),
                self.dlogits.len(),
                self.stats.len()
            )));
        }
        let (mut logits, mut prob) = (vec![0f32; c], vec![0f32; c]);
        let (mut total, mut right) = (self.stats[pair], self.stats[pair + 1]);
        for s in w.split(m) {
            let y = self.labels[s];
            if y < 0 || y as usize >= c {
                return Err(VertexError::new(format!(
                    "popnn::SoftmaxCrossEntropy: label {y} of sample {s} is not one of {c} classes"
                )));
            }
            let y = y as usize;
            for (k, l) in logits.iter_mut().enumerate() {
                *l = self.logits[k * m + s];
            }
            softmax(&logits, &mut prob);
            for (k, p) in prob.iter().enumerate() {
                self.dlogits[k * m + s] = p - if k == y { 1.0 } else { 0.0 };
            }
            total += cross_entropy(&prob, y);
            right += f32::from(u8::from(best_class(&logits) == y));
        }
        self.stats[pair] = total;
        self.stats[pair + 1] = right;
        Ok(())
    }

    fn cycles(ctx: &CycleCtx<'_>) -> Option<u64> {
        let m = ctx.elements(Self::labels);
        let c = per(ctx.elements(Self::logits), m);
        let m = m.div_ceil(u64::from(ctx.workers.max(1)));
        let exp = cycles::unary(UnaryOp::Exp, DType::F32);
        let div = cycles::binary(BinaryOp::Div, DType::F32, false);
        let softmax = 2 * c + exp.cycles(c) - exp.overhead + div.cycles(c) - div.overhead;
        Some(17 + m * (softmax + c + 20))
    }
}

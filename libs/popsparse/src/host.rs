//! Writing an encoded pattern into a running engine: the next run of the same executable
//! uses it.

use poplar::{DType, Engine, EngineError};

use crate::encode::Encoded;
use crate::plan::FcPlan;

/// Writes `enc` to the weights created as `weights` by [`crate::create_weights`] (their host
/// writes `weights.rows`, `.cols`, `.vals`, `.steps`), converting the values to f16 (to
/// nearest, ties to even) for an f16 plan. Use it rather than writing `{weights}.vals` by
/// hand: [`Encoded::vals`] is f32, which the engine refuses for the f16 values of an f16 plan.
pub fn write_encoded(
    engine: &mut Engine,
    weights: &str,
    plan: &FcPlan,
    enc: &Encoded,
) -> Result<(), EngineError> {
    engine.write_tensor(&format!("{weights}.rows"), &enc.rows)?;
    engine.write_tensor(&format!("{weights}.cols"), &enc.cols)?;
    if plan.data_type == DType::F16 {
        let half: Vec<poplar::f16> = enc.vals.iter().map(|&v| poplar::f16::from_f32(v)).collect();
        engine.write_tensor(&format!("{weights}.vals"), &half)?;
    } else {
        engine.write_tensor(&format!("{weights}.vals"), &enc.vals)?;
    }
    engine.write_tensor(&format!("{weights}.steps"), &[enc.steps])
}

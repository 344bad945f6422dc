//! Writing an encoded pattern into a running device (an `Engine`): the next run of the same
//! executable uses it. Written against `poplar_exe::exe::Device`, so that this crate builds
//! without linking an engine.

use poplar_core::dtype::DType;
use poplar_exe::exe::Device;

use crate::encode::Encoded;
use crate::plan::FcPlan;

/// Writes `enc` to the weights created as `weights` by [`crate::create_weights`] (their host
/// writes `weights.rows`, `.cols`, `.vals`, `.steps`), converting the values to f16 (to
/// nearest, ties to even) for an f16 plan. Use it rather than writing `{weights}.vals` by
/// hand: [`Encoded::vals`] is f32, which the engine refuses for the f16 values of an f16 plan.
/// `device` is an `Engine` (or any [`Device`]); its error is the device's.
pub fn write_encoded<D: Device>(
    device: &mut D,
    weights: &str,
    plan: &FcPlan,
    enc: &Encoded,
) -> Result<(), D::Error> {
    device.write_tensor(&format!("{weights}.rows"), &enc.rows)?;
    device.write_tensor(&format!("{weights}.cols"), &enc.cols)?;
    if plan.data_type == DType::F16 {
        let half: Vec<poplar_core::f16> = enc
            .vals
            .iter()
            .map(|&v| poplar_core::f16::from_f32(v))
            .collect();
        device.write_tensor(&format!("{weights}.vals"), &half)?;
    } else {
        device.write_tensor(&format!("{weights}.vals"), &enc.vals)?;
    }
    device.write_tensor(&format!("{weights}.steps"), &[enc.steps])
}

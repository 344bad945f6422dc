//! (filled in by its op family's lowering)

use super::{Cx, NodeCx, Outputs};

pub(super) fn lower(_cx: &mut Cx, _n: &NodeCx) -> Option<Outputs> {
    None
}

//! VTU (stub).
use super::*;
#[derive(Debug, Clone, Copy)]
pub enum VtuEncoding {
    Ascii,
    Base64,
}
pub fn read_vtu(_p: impl AsRef<Path>, _o: &ReadOptions) -> Result<TetMesh, MeshError> {
    todo!()
}
pub fn write_vtu(
    _p: impl AsRef<Path>,
    _m: &TetMesh,
    _c: &[(&str, &[f32])],
) -> Result<(), MeshError> {
    todo!()
}
pub fn write_vtu_with(
    _p: impl AsRef<Path>,
    _m: &TetMesh,
    _c: &[(&str, &[f32])],
    _pd: &[(&str, &[f32])],
    _e: VtuEncoding,
) -> Result<(), MeshError> {
    todo!()
}

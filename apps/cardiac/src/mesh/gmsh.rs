//! Gmsh MSH 4.1 reader and writer (stub).
use super::*;
pub fn read_msh(_p: impl AsRef<Path>, _o: &ReadOptions) -> Result<TetMesh, MeshError> {
    todo!()
}
pub fn write_msh(_p: impl AsRef<Path>, _m: &TetMesh) -> Result<(), MeshError> {
    todo!()
}

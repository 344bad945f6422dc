//! The app's typed errors: each names the thing at fault.

use poplar::TileId;

#[derive(Debug, thiserror::Error)]
pub enum HdiffError {
    #[error("the grid is too small in {axis}: {size} points, but the stencil's halo of 2 on each side needs at least {min}")]
    GridTooSmall {
        axis: &'static str,
        size: usize,
        min: usize,
    },
    #[error("the grid {ni} × {nj} × {nk} has more than 2^32 points, more than a simulated chip set can address")]
    GridTooLarge { ni: usize, nj: usize, nk: usize },
    #[error("the {mapping} mapping with {groups} plane group(s) of {blocks_j} × {blocks_i} blocks needs {needed} tiles, but the target has {available}")]
    TooManyTiles {
        mapping: String,
        groups: usize,
        blocks_j: usize,
        blocks_i: usize,
        needed: usize,
        available: usize,
    },
    #[error("{what}: {value} is more than the grid allows ({max}: {why})")]
    DecompositionTooFine {
        what: &'static str,
        value: usize,
        max: usize,
        why: &'static str,
    },
    #[error("a block does not fit in tile memory: tile {tile} needs {bytes} bytes, the tile has {limit}; use more chips or tiles, or a smaller grid")]
    BlockTooLarge {
        tile: TileId,
        bytes: u64,
        limit: u64,
    },
    #[error("{count} of the {total} output values are not finite (NaN or infinite), the first at index {first} (point i {i}, j {j}, k {k}); the diffusion is unstable with this coefficient (try a smaller --coeff)")]
    NonFinite {
        count: usize,
        total: usize,
        first: usize,
        i: usize,
        j: usize,
        k: usize,
    },
    #[error("the graph could not be built: {0}")]
    Graph(#[from] poplar::GraphError),
    #[error("the graph did not compile: {0}")]
    Compile(#[from] poplar::CompileError),
    #[error("the engine failed: {0}")]
    Engine(#[from] poplar::EngineError),
    #[error("{what} has {got} values, the grid {} × {} × {} needs {want}", grid[0], grid[1], grid[2])]
    WrongLength {
        what: &'static str,
        got: usize,
        want: usize,
        /// The grid's points along i, j and k.
        grid: [usize; 3],
    },
}

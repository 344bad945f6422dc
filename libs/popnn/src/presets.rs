//! Ready-made models. [`wide`] is the model that does not fit: on [`wide_chip`] (64 tiles of
//! 624 KiB, 39 MiB in all) its weights, gradient accumulators and Adam state (16 bytes per
//! parameter, 44 MB) exceed the fullest tile's memory, so the compiler refuses it with its
//! typed out-of-memory error; with the optimizer's state sharded over 4 replicas, or off chip,
//! or the layers pipelined over 2 or 4 chips, it compiles and trains (`benches/locations.rs`).
//!
//! The chip is smaller than a GC200 (1,472 tiles): the dense layers here spread their rows
//! over a chip's tiles and each tile keeps a full-size partial of a layer's input gradient, so
//! a model that fills the 1,472-tile chip (70 M parameters) compiles in minutes and its
//! partials alone overflow a tile; a planned matmul (poplin's) would lift that.

use crate::math::Activation;
use crate::model::Model;

/// Tiles of [`wide_chip`].
pub const WIDE_CHIP_TILES: u32 = 64;

/// `960 → 960 → 960 → 960 → 10`, GELU: 2,777,290 parameters.
pub fn wide() -> Model {
    Model::mlp(960, &[960, 960, 960], 10, Activation::Gelu).expect("a valid preset")
}

/// `chips` chips of [`WIDE_CHIP_TILES`] tiles of 624 KiB (the GC200's tile memory).
pub fn wide_chip(chips: u32) -> poplar_core::target::Target {
    poplar_core::target::Target {
        num_ipus: chips,
        ..poplar_core::target::Target::custom(WIDE_CHIP_TILES, 624 * 1024)
    }
}

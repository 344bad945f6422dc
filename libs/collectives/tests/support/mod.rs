//! What the collectives' test files share: the small machine and a deterministic generator.
// Each test file uses a part of these.
#![allow(dead_code)]

use collectives::Method;
use poplar::rand::SplitMix64;
use poplar::Target;

pub const TILES: u32 = 4;

pub fn machine(chips: u32) -> Target {
    Target {
        num_ipus: chips,
        ..Target::custom(TILES, 256 * 1024)
    }
}

/// The tests' deterministic generator (poplar's SplitMix64), so failures reproduce.
pub struct Rng(SplitMix64);
impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }
    pub fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    pub fn f32(&mut self) -> f32 {
        // In [0.5, 1.5): products of many stay finite, sums do not cancel.
        0.5 + self.0.below(1_000_000) as f32 / 1_000_000.0
    }
}

/// Every ring method, the automatic choice first.
pub const METHODS: [Method; 5] = [
    Method::Auto,
    Method::Clockwise,
    Method::Anticlockwise,
    Method::BidirectionalRingPair,
    Method::MeetInTheMiddle,
];

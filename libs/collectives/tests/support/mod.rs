//! What the collectives' test files share: the small machine and a deterministic generator.
// Each test file uses a part of these.
#![allow(dead_code)]

use collectives::Method;
use poplar::Target;

pub const TILES: u32 = 4;

pub fn machine(chips: u32) -> Target {
    Target {
        num_ipus: chips,
        ..Target::custom(TILES, 256 * 1024)
    }
}

/// A small deterministic generator (xorshift), so failures reproduce.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn f32(&mut self) -> f32 {
        // In [0.5, 1.5): products of many stay finite, sums do not cancel.
        0.5 + (self.next() % 1_000_000) as f32 / 1_000_000.0
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

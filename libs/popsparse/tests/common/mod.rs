//! Helpers shared by popsparse's tests: a seeded generator and the three passes compiled.

#![allow(dead_code)]

use poplar::rand::SplitMix64;
use poplar::{compile, CompileOptions, Executable, Graph, Target};
use popsparse::FcPlan;

/// The tests' seeded generator of operands and patterns (poplar's SplitMix64).
pub struct Rng(SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }

    pub fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A value in [−1, 1] in steps of 0.001.
    pub fn unit(&mut self) -> f32 {
        self.0.below(2001) as f32 / 1000.0 - 1.0
    }
}

/// All three passes of `plan` on `target` (programs 0 Fwd, 1 GradA, 2 GradW), with host
/// writes `x`, `yg` and reads `y`, `xg`, `wg`; a compile error panics naming the plan.
pub fn three_passes(target: &Target, plan: &FcPlan) -> Executable {
    popsparse::link();
    let mut g = Graph::new(target);
    let w = popsparse::create_weights(&mut g, plan, "W").unwrap();
    let x = popsparse::create_input(&mut g, plan, "X").unwrap();
    let yg = popsparse::create_output(&mut g, plan, "Yg").unwrap();
    g.create_host_write("x", &x).unwrap();
    g.create_host_write("yg", &yg).unwrap();
    let (y, fwd) = popsparse::fwd(&mut g, &w, &x, plan, "fwd").unwrap();
    let (xg, ga) = popsparse::grad_a(&mut g, &w, &yg, plan, "grada").unwrap();
    let (wg, gw) = popsparse::grad_w(&mut g, &w, &x, &yg, plan, "gradw").unwrap();
    g.create_host_read("y", &y).unwrap();
    g.create_host_read("xg", &xg).unwrap();
    g.create_host_read("wg", &wg).unwrap();
    compile(&g, &[fwd, ga, gw], &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{plan}\n{e}"))
}

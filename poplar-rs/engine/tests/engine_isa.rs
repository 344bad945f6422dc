//! The instruction-set level belongs to the engine: engines built with different levels in one
//! process each run their codelets at their own level, on every thread of their runs.

use poplar::codelet::*;
use poplar::isa::IsaLevel;
use poplar::{compile, CompileOptions, DType, Engine, EngineOptions, Graph, Program, Target};

poplar::codelet! {
    /// Writes the level the dispatching kernels run at on this thread (`IsaLevel as u32`).
    pub struct SeeLevel as "test::SeeLevel" {
        out: Output<Vector<u32>>,
    }
}
impl Vertex for SeeLevel<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        let level = poplar::isa::active() as u32;
        self.out.fill(level);
        Ok(())
    }
}

const TILES: u32 = 64;

/// One vertex per tile, each recording the level it saw.
fn levels_exe() -> poplar::Executable {
    let target = Target::custom(TILES, 4096);
    let mut g = Graph::new(&target);
    let out = g.add_variable(DType::U32, &[TILES as usize * 4], "out");
    let cs = g.add_compute_set("see");
    for t in 0..TILES {
        let part = out.slice(t as usize * 4..t as usize * 4 + 4).unwrap();
        g.set_tile_mapping(&part, t).unwrap();
        let v = g.add_vertex(cs, "test::SeeLevel").unwrap();
        g.connect(v, "out", &part).unwrap();
        g.set_tile_mapping(v, t).unwrap();
    }
    g.create_host_read("out", &out).unwrap();
    compile(&g, &[Program::execute(cs)], &CompileOptions::default()).unwrap()
}

fn seen(e: &mut Engine) -> Vec<u32> {
    e.run(0).unwrap();
    e.read_tensor::<u32>("out").unwrap()
}

#[test]
fn two_engines_of_one_process_run_at_their_own_levels() {
    let supported = poplar::isa::supported();
    let (low, high) = (supported[0], *supported.last().unwrap());
    assert_eq!(low, IsaLevel::Baseline);
    let exe = levels_exe();
    for threads in [1, 2] {
        let engine = |level| {
            let options = EngineOptions {
                threads: Some(threads),
                isa: Some(level),
                ..Default::default()
            };
            Engine::new(&exe, options).unwrap()
        };
        // Both built before either runs: the last one built must not decide for the first.
        let mut a = engine(low);
        let mut b = engine(high);
        assert_eq!((a.isa(), b.isa()), (low, high));
        for _ in 0..2 {
            assert!(
                seen(&mut a).iter().all(|&l| l == low as u32),
                "{threads} threads"
            );
            assert!(
                seen(&mut b).iter().all(|&l| l == high as u32),
                "{threads} threads"
            );
        }
    }
    // An engine without a level follows the process's, which its runs leave alone.
    let process = poplar::isa::active();
    let mut c = Engine::new(&exe, EngineOptions::with_threads(2)).unwrap();
    if std::env::var(poplar::isa::ENV).is_err() {
        assert!(seen(&mut c).iter().all(|&l| l == process as u32));
    }
    assert_eq!(poplar::isa::active(), process);
}

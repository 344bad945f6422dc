use poplar::profile::{estimate_program, CycleModel};
use poplar::{DType, Graph, Target};
#[test]
fn gc200_million() {
    codelets::link();
    for n in [10_000usize, 1_000_000] {
        let target = Target::gc200();
        let mut g = Graph::new(&target);
        let t = g.add_variable(DType::F32, &[n], "t");
        g.map_linearly(&t, 1).unwrap();
        let mut prog = Vec::new();
        let t0 = std::time::Instant::now();
        popops::sort_with_indices(&mut g, &t, 0, &mut prog, "s").unwrap();
        let exe = poplar::compile(&g, &[poplar::Program::seq(prog)], &Default::default()).unwrap();
        let model = CycleModel::new(&exe);
        let est = estimate_program(&exe, &model, 0).unwrap();
        let worst = exe.tiles.iter().map(|t| t.memory_bytes).max().unwrap();
        eprintln!(
            "n={n} {est:?} worst={worst} build {:?} one-tile argsort {}",
            t0.elapsed(),
            codelets::sort::cost::arg_sort(1, n as u64)
        );
    }
}

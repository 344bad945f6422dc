//! Remote buffers in Streaming Memory, as a user meets them: a graph with buffers, programs
//! that copy to and from rows chosen on the device, the host's reads and writes between runs,
//! and every refusal a typed error. Each result is checked against a host model of the same
//! rows, bit for bit.

use poplar::program::Program;
use poplar::{
    compile, CompileOptions, DType, Engine, EngineError, EngineOptions, Graph, Target, Tensor,
};

fn target() -> Target {
    Target::custom(4, 64 * 1024)
}

/// `counter += step` on tile 0 (an on-device offset).
fn bump(g: &mut Graph, counter: &Tensor, by: i32, name: &str) -> poplar::ComputeSet {
    let step = g
        .add_constant(&[1], &[by], &format!("{name} step"))
        .unwrap();
    g.set_tile_mapping(&step, 0).unwrap();
    let cs = g.add_compute_set(name);
    let v = g.add_vertex(cs, "AddInPlace<int>").unwrap();
    g.connect(v, "a", counter).unwrap();
    g.connect(v, "b", &step).unwrap();
    g.set_tile_mapping(v, 0).unwrap();
    cs
}

fn engine(exe: &poplar::Executable, threads: usize) -> Engine {
    codelets::link();
    Engine::new(exe, EngineOptions::with_threads(threads)).unwrap()
}

/// Rows written by a device-computed offset land where a host model says, and read back.
#[test]
fn rows_chosen_on_the_device_round_trip() {
    for threads in [1, 2] {
        let mut g = Graph::new(&target());
        let buf = g.add_remote_buffer("buf", DType::F32, 6, 5).unwrap();
        let x = g.add_variable(DType::F32, &[6], "x");
        g.map_linearly(&x, 2).unwrap();
        let row = g.add_variable(DType::I32, &[1], "row");
        g.set_tile_mapping(&row, 0).unwrap();
        g.create_host_read_write("x", &x).unwrap();
        g.create_host_read_write("row", &row).unwrap();
        let inc = bump(&mut g, &row, 2, "next row");
        let store = Program::seq(vec![
            Program::copy_to_remote(&x, buf, Some(&row)),
            Program::execute(inc),
        ]);
        let load = Program::copy_from_remote(buf, &x, Some(&row));
        let exe = compile(&g, &[store, load], &CompileOptions::default()).unwrap();
        let mut e = engine(&exe, threads);
        let mut model = vec![vec![0f32; 6]; 5];
        e.write_tensor("row", &[0i32]).unwrap();
        for k in 0..3 {
            let data: Vec<f32> = (0..6).map(|i| (k * 10 + i) as f32 + 0.25).collect();
            e.write_tensor("x", &data).unwrap();
            e.run(0).unwrap();
            model[2 * k as usize] = data;
        }
        for (r, want) in model.iter().enumerate() {
            assert_eq!(
                &e.read_remote_row::<f32>("buf", r as u64).unwrap(),
                want,
                "row {r}"
            );
        }
        e.write_tensor("row", &[2i32]).unwrap();
        e.run(1).unwrap();
        assert_eq!(e.read_tensor::<f32>("x").unwrap(), model[2]);
        // Row 6 is past the 5 rows: a typed error naming buffer, row and program, and
        // nothing moves.
        e.write_tensor("row", &[6i32]).unwrap();
        let before = e.read_tensor::<f32>("x").unwrap();
        let err = e.run(1).unwrap_err();
        assert_eq!(
            err,
            EngineError::RemoteRowOutOfRange {
                buffer: "buf".into(),
                row: 6,
                rows: 5,
                program: Some(1)
            }
        );
        assert!(err.to_string().contains("program 1"), "{err}");
        assert_eq!(e.read_tensor::<f32>("x").unwrap(), before);
        assert_eq!(e.read_remote_buffer::<f32>("buf").unwrap(), model.concat());
    }
}

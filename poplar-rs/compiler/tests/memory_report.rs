//! `MemoryReport` on compiled graphs: totals match the tile images, categories add up, the
//! fullest tiles come first.
use poplar::profile::MemoryReport;
use poplar::{compile, CompileOptions, DType, Graph, Program, Target};

#[test]
fn memory_report_matches_the_tile_images() {
    codelets::link();
    let mut g = Graph::new(&Target::custom(4, 256 * 1024));
    let x = g.add_variable(DType::F32, &[4000], "x");
    let y = g.add_variable(DType::F32, &[4000], "y");
    let c = g.add_constant::<f32>(&[4], &[1.0; 4], "c").unwrap();
    g.set_tile_mapping(&c, 3).unwrap();
    g.map_linearly(&x, 64).unwrap();
    // y in big blocks: tile 0 holds the most, and receives remote parts of x.
    g.map_linearly(&y, 1500).unwrap();
    let cs = g.add_compute_set("y = x + x");
    popops::add(&mut g, cs, &x, &x, &y).unwrap();
    let exe = compile(&g, &[Program::execute(cs)], &CompileOptions::default()).unwrap();
    let m = MemoryReport::from_executable(&exe);
    assert_eq!(m.tiles.len(), 4);
    assert_eq!(m.bytes_per_tile, 256 * 1024);
    for (t, img) in m.tiles.iter().zip(&exe.tiles) {
        assert_eq!(t.total, u64::from(img.memory_bytes));
        assert_eq!(t.always_live, u64::from(img.always_live_bytes));
        assert_eq!(t.temporary, u64::from(img.temporary_bytes));
        let listed: u64 = img.breakdown.iter().map(|i| u64::from(i.bytes)).sum();
        let by_cat: u64 = t.by_category.entries().iter().map(|e| e.1).sum();
        assert_eq!(listed, by_cat);
        assert_eq!(t.by_category.temporaries, t.temporary);
        assert!(t.by_category.variables > 0);
    }
    assert_eq!(m.tiles[3].by_category.constants, 16);
    let fullest = m.fullest(2);
    assert!(fullest[0].total >= fullest[1].total);
    assert_eq!(fullest[0].total, m.total.max);
    assert_eq!(
        m.items[0].total,
        m.items.iter().map(|i| i.total).max().unwrap()
    );
    let x_item = m.items.iter().find(|i| i.name == "x").unwrap();
    assert_eq!(x_item.total, 16000);
    let text = m.text(3);
    assert!(text.contains("Tiles closest to the limit"));
    assert!(text.contains("temporaries"));
}

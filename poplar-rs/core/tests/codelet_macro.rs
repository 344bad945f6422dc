//! The `codelet!` macro: registration, field specs, raw identifiers.

use poplar_core::codelet::*;
use poplar_core::dtype::DType;

poplar_core::codelet! {
    /// Field named with a raw identifier, as Poplar's `in`.
    pub struct RawIn as "macro_test::RawIn", multi_worker {
        r#in: Input<Vector<f32>>,
        out: Output<f32>,
        parts: InOut<VectorList<i32>>,
        k: State<u32>,
    }
}
impl Vertex for RawIn<'_> {
    fn compute(&mut self, _w: Worker) -> Result<(), VertexError> {
        *self.out = self.r#in.iter().sum::<f32>() * self.k as f32;
        Ok(())
    }
}

#[test]
fn registration_carries_names_kinds_and_worker_mode() {
    let d = lookup("macro_test::RawIn").expect("registered");
    let names: Vec<&str> = d.fields.iter().map(|f| f.name).collect();
    assert_eq!(names, ["in", "out", "parts", "k"]);
    assert_eq!(
        d.fields[0],
        FieldSpec {
            name: "in",
            dir: FieldDir::Input,
            shape: FieldShape::Vector,
            dtype: DType::F32
        }
    );
    assert_eq!(d.fields[1].shape, FieldShape::Scalar);
    assert_eq!(
        (d.fields[2].dir, d.fields[2].shape, d.fields[2].dtype),
        (FieldDir::InOut, FieldShape::VectorList, DType::I32)
    );
    assert_eq!(
        (d.fields[3].dir, d.fields[3].dtype),
        (FieldDir::State, DType::U32)
    );
    assert!(d.multi_worker);
    assert_eq!(d.field_index("parts"), Some(2));
    assert!(duplicates().is_empty());
}

#[test]
fn worker_split_covers_the_range_once() {
    for n in [0usize, 1, 5, 6, 7, 100] {
        let mut covered = vec![0u8; n];
        for id in 0..6 {
            for i in (Worker { id, count: 6 }).split(n) {
                covered[i] += 1;
            }
        }
        assert!(covered.iter().all(|&c| c == 1), "n = {n}");
    }
}

#[test]
fn the_type_knows_its_name_and_its_field_indices() {
    assert_eq!(RawIn::NAME, "macro_test::RawIn");
    assert_eq!(<RawIn<'_> as Codelet>::NAME, "macro_test::RawIn");
    // One constant per field, equal to its position in the registered layout.
    let d = lookup(RawIn::NAME).unwrap();
    for (i, idx) in [RawIn::r#in, RawIn::out, RawIn::parts, RawIn::k]
        .into_iter()
        .enumerate()
    {
        assert_eq!(idx, i, "{}", d.fields[i].name);
    }
    // The typed form of `Graph::add_vertex` is the compiler's: poplar-rs/compiler/tests/programs.rs.
}

//! Streaming Memory in the memory report: per chip, per buffer, and for one replica.

use super::*;

fn remote_buffer(
    name: &str,
    dtype: crate::dtype::DType,
    elements: u64,
    rows: u64,
    chip: u32,
) -> RemoteBufferDesc {
    RemoteBufferDesc {
        name: name.into(),
        dtype,
        elements,
        rows,
        chip,
    }
}

#[test]
fn streaming_memory_is_reported_per_chip_and_per_buffer() {
    use crate::dtype::DType;
    let mut t = Target::custom(4, 1024);
    t.num_ipus = 3;
    t.streaming_memory_bytes = 1000;
    let mut e = exe(t);
    e.remote_buffers = vec![
        remote_buffer("weights", DType::F32, 10, 20, 1),
        remote_buffer("grads", DType::F16, 3, 7, 1),
        remote_buffer("tags", DType::U8, 5, 2, 0),
    ]
    .into();
    let m = MemoryReport::from_executable(&e);
    let s = &m.streaming;
    assert_eq!(s.bytes_per_chip, 1000);
    assert_eq!(
        s.chips,
        vec![
            ChipStreamingMemory {
                chip: 0,
                bytes: 10,
                buffers: 1
            },
            ChipStreamingMemory {
                chip: 1,
                bytes: 800 + 42,
                buffers: 2
            },
            ChipStreamingMemory {
                chip: 2,
                bytes: 0,
                buffers: 0
            },
        ]
    );
    assert_eq!(s.buffers.len(), 3);
    assert_eq!(
        s.buffers[1],
        RemoteBufferBytes {
            name: "grads".into(),
            dtype: DType::F16,
            elements: 3,
            rows: 7,
            bytes: 42,
            chip: 1
        }
    );
    assert_eq!(s.total(), 852);
    assert!(s.over_budget().is_empty());
    let text = m.text(2);
    assert!(
        text.contains(
            "Streaming Memory (1000 B per chip): 852 B in 3 remote buffers on 2 of 3 chips"
        ),
        "{text}"
    );
    assert!(
        text.contains("chip    1:            842 B ( 84.2%) in 2 buffers"),
        "{text}"
    );
    // The two largest, largest first, and how many are left out.
    let w = text.find("weights").expect("weights listed");
    let g = text.find("grads").expect("grads listed");
    assert!(w < g, "{text}");
    assert!(!text.contains("tags"), "{text}");
    assert!(text.contains("... and 1 more"), "{text}");
    // Past the budget: flagged.
    e.remote_buffers[RemoteBufferId::from_u32(0)].rows = 30;
    let m = MemoryReport::from_executable(&e);
    assert_eq!(m.streaming.over_budget(), vec![1]);
    assert!(m.text(5).contains("OVER"), "{}", m.text(5));
    // The JSON round-trips, and a report written before Streaming Memory reads with none.
    let json = serde_json::to_value(&m).unwrap();
    assert_eq!(json["streaming"]["chips"][1]["bytes"], 1242);
    assert_eq!(json["streaming"]["buffers"][0]["dtype"], "F32");
    let back: MemoryReport = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(back, m);
    let mut old = json;
    old.as_object_mut().unwrap().remove("streaming");
    let back: MemoryReport = serde_json::from_value(old).unwrap();
    assert_eq!(back.streaming, StreamingMemory::default());
}

#[test]
fn streaming_memory_without_buffers_says_none() {
    let m = MemoryReport::from_executable(&exe(Target::custom(4, 1024)));
    assert!(m.streaming.buffers.is_empty());
    assert_eq!(m.streaming.chips.len(), 1);
    assert_eq!(m.streaming.total(), 0);
    assert!(
        m.text(3).contains("Streaming Memory") && m.text(3).contains("none"),
        "{}",
        m.text(3)
    );
}

#[test]
fn streaming_memory_of_a_replicated_executable_is_of_one_replica() {
    use crate::dtype::DType;
    let mut t = Target::custom(4, 1024);
    t.num_ipus = 4;
    let mut e = exe(t);
    // Two replicas of two chips: the executable describes one replica's 8 tiles.
    e.tiles.truncate(8);
    e.replication = Some(Replication {
        factor: 2,
        chips_per_replica: 2,
        maps: vec![],
        constants: vec![],
    });
    e.remote_buffers = vec![remote_buffer("b", DType::I32, 4, 3, 1)].into();
    let m = MemoryReport::from_executable(&e);
    assert_eq!(m.replicas, 2);
    assert_eq!(m.streaming.chips.len(), 2, "chips of one replica");
    assert_eq!(m.streaming.chips[1].bytes, 48);
    assert_eq!(m.streaming.chips[0].bytes, 0);
    assert_eq!(m.streaming.buffers.len(), 1);
}

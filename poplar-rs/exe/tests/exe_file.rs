//! Saving and loading executables: round trips, and malformed files give typed errors.

use poplar_engine::Engine;
use poplar_exe::exe::file::{MAGIC, SECTION_INIT_DATA, SECTION_TARGET};
use poplar_exe::exe::*;
use poplar_exe::exe::{CheckError as C, ExecutableError as E, FileError as F};
use poplar_testkit::builder::*;

fn small() -> Executable {
    let mut e = sample_exe();
    // Awkward floats that a decimal round trip could lose, and a function and stream.
    e.target.clock_hz = 1.234_567_890_123_456_7e9;
    e.target.link_bytes_per_cycle = 0.1 + 0.2;
    e.target.gw_link_bytes_per_cycle = 0.7 / 3.0;
    e.target.chips_per_link_domain = e.target.num_ipus;
    e.functions.push(Step::Sync(SyncKind::Global));
    e.streams.push(StreamDesc {
        name: "s".into(),
        dtype: poplar_core::dtype::DType::I32,
        len: 3,
        dir: poplar_exe::exe::StreamDir::HostToDevice,
        buffering_depth: 1,
    });
    e.tiles[5].breakdown.push(MemoryItem {
        name: "x".into(),
        category: MemoryCategory::Variable,
        bytes: 256,
    });
    e.tiles[5].always_live_bytes = 1000;
    e.tiles[5].temporary_bytes = 24;
    e
}

fn tmp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("poplar-exe-file-{}-{name}", std::process::id()))
}

/// Splits a file image into (header before manifest, manifest, rest).
fn split(bytes: &[u8]) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let mlen = u64::from_le_bytes(bytes[12..20].try_into().unwrap()) as usize;
    (
        bytes[..24].to_vec(),
        bytes[24..24 + mlen].to_vec(),
        bytes[24 + mlen..].to_vec(),
    )
}

/// Rebuilds a file image around a replaced manifest, with a correct length and checksum.
fn with_manifest(bytes: &[u8], manifest: &[u8]) -> Vec<u8> {
    let (head, _, rest) = split(bytes);
    let mut out = head[..12].to_vec();
    out.extend_from_slice(&(manifest.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(manifest).to_le_bytes());
    out.extend_from_slice(manifest);
    out.extend_from_slice(&rest);
    out
}

#[test]
fn round_trip_bytes_and_file() {
    let exe = small();
    let bytes = exe.to_bytes();
    assert_eq!(&bytes[..8], &MAGIC);
    assert_eq!(
        u32::from_le_bytes(bytes[8..12].try_into().unwrap()),
        FORMAT_VERSION
    );
    let back = Executable::from_bytes(&bytes).unwrap();
    assert_eq!(back, exe);
    assert_eq!(
        back.target.clock_hz.to_bits(),
        exe.target.clock_hz.to_bits()
    );
    assert_eq!(back.to_bytes(), bytes, "serialization is deterministic");

    let p = tmp_path("rt");
    exe.save(&p).unwrap();
    let loaded = Executable::load(&p).unwrap();
    std::fs::remove_file(&p).unwrap();
    assert_eq!(loaded, exe);

    // The loaded executable runs like the original.
    let mut a = Engine::new(&exe, opts(2)).unwrap();
    let mut b = Engine::new(&loaded, opts(1)).unwrap();
    a.run(0).unwrap();
    b.run(0).unwrap();
    assert_eq!(
        a.read_tensor::<f32>("all").unwrap(),
        b.read_tensor::<f32>("all").unwrap()
    );
}

#[test]
fn missing_file_is_an_io_error() {
    assert!(matches!(
        Executable::load(tmp_path("does-not-exist")),
        Err(E::File(F::Io { .. }))
    ));
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = small().to_bytes();
    for n in 0..bytes.len() {
        match Executable::from_bytes(&bytes[..n]) {
            Err(E::File(F::Empty)) if n == 0 => {}
            Err(E::File(F::Truncated { .. })) | Err(E::File(F::BadMagic)) => {}
            Err(E::File(F::MissingSection { .. })) if n >= bytes.len() - 16 - 16 => {}
            other => panic!("prefix {n}: {other:?}"),
        }
    }
    // Appended garbage is refused too.
    let mut long = bytes.clone();
    long.push(0);
    assert_eq!(
        Executable::from_bytes(&long).unwrap_err(),
        E::File(F::TrailingBytes {
            offset: bytes.len() as u64,
            count: 1
        })
    );
}

#[test]
fn every_byte_flip_is_an_error() {
    let bytes = small().to_bytes();
    let mut b = bytes.clone();
    for i in 0..bytes.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            b[i] ^= mask;
            let r = Executable::from_bytes(&b);
            assert!(r.is_err(), "flip {mask:#x} at {i} accepted");
            b[i] ^= mask;
        }
    }
}

#[test]
fn wrong_magic_and_version() {
    let mut b = small().to_bytes();
    b[0] = b'X';
    assert_eq!(
        Executable::from_bytes(&b).unwrap_err(),
        E::File(F::BadMagic)
    );
    let mut b = small().to_bytes();
    b[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    assert_eq!(
        Executable::from_bytes(&b).unwrap_err(),
        E::File(F::UnsupportedVersion {
            found: FORMAT_VERSION + 1,
            supported: FORMAT_VERSION
        })
    );
    // An empty file says so (not "truncated in header").
    assert_eq!(Executable::from_bytes(&[]).unwrap_err(), E::File(F::Empty));
    assert_eq!(
        Executable::from_bytes(&[0; 3]).unwrap_err(),
        E::File(F::Truncated {
            section: "header".into(),
            offset: 0,
            needed: 8,
            available: 3
        })
    );
}

#[test]
fn checksums_are_verified() {
    let bytes = small().to_bytes();
    let (_, m, _) = split(&bytes);
    // Tamper with the last init byte (inside the init data section).
    let mut b = bytes.clone();
    let last = b.len() - 1;
    b[last] ^= 1;
    assert!(
        matches!(Executable::from_bytes(&b).unwrap_err(), E::File(F::Checksum { ref section, .. }) if section == "init data section")
    );
    // Tamper with the manifest.
    let mut b = bytes.clone();
    b[24 + m.len() / 2] ^= 4;
    assert!(
        matches!(Executable::from_bytes(&b).unwrap_err(), E::File(F::Checksum { ref section, offset: 24, .. }) if section == "manifest")
    );
}

#[test]
fn bogus_lengths_do_not_allocate() {
    let bytes = small().to_bytes();
    let mut b = bytes.clone();
    b[12..20].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(
        matches!(Executable::from_bytes(&b).unwrap_err(), E::File(F::Truncated { ref section, needed: u64::MAX, .. }) if section == "manifest")
    );
    // Section length field of the first section (target): just after the section count.
    let (_, m, _) = split(&bytes);
    let at = 24 + m.len() + 4 + 4;
    let mut b = bytes.clone();
    b[at..at + 8].copy_from_slice(&(1u64 << 62).to_le_bytes());
    assert!(matches!(
        Executable::from_bytes(&b).unwrap_err(),
        E::File(F::Truncated { .. })
    ));
}

#[test]
fn section_table_errors() {
    let bytes = small().to_bytes();
    let (_, m, _) = split(&bytes);
    let count_at = 24 + m.len();
    let kind_at = count_at + 4;
    assert_eq!(
        u32::from_le_bytes(bytes[kind_at..kind_at + 4].try_into().unwrap()),
        SECTION_TARGET
    );
    let mut b = bytes.clone();
    b[kind_at..kind_at + 4].copy_from_slice(&77u32.to_le_bytes());
    assert_eq!(
        Executable::from_bytes(&b).unwrap_err(),
        E::File(F::UnknownSection {
            kind: 77,
            offset: kind_at as u64
        })
    );
    let mut b = bytes.clone();
    b[kind_at..kind_at + 4].copy_from_slice(&SECTION_INIT_DATA.to_le_bytes());
    assert!(
        matches!(Executable::from_bytes(&b).unwrap_err(), E::File(F::SectionLength { expected, found: 32, .. }) if expected != 32)
    );
    // The target section twice.
    let mut b = bytes.clone();
    b[count_at..count_at + 4].copy_from_slice(&3u32.to_le_bytes());
    b.extend_from_slice(&bytes[kind_at..kind_at + 16 + 32]);
    assert_eq!(
        Executable::from_bytes(&b).unwrap_err(),
        E::File(F::DuplicateSection {
            section: "target section".into(),
            offset: bytes.len() as u64
        })
    );
    // Only one section declared: the rest is trailing.
    let mut b = bytes.clone();
    b[count_at..count_at + 4].copy_from_slice(&1u32.to_le_bytes());
    assert!(matches!(
        Executable::from_bytes(&b).unwrap_err(),
        E::File(F::TrailingBytes { .. })
    ));
    // Drop the init data section entirely.
    let mut b = bytes[..count_at + 4 + 16 + 32].to_vec();
    b[count_at..count_at + 4].copy_from_slice(&1u32.to_le_bytes());
    assert!(matches!(
        Executable::from_bytes(&b).unwrap_err(),
        E::File(F::MissingSection { .. })
    ));
}

#[test]
fn manifest_errors() {
    let bytes = small().to_bytes();
    assert!(matches!(
        Executable::from_bytes(&with_manifest(&bytes, b"{\"not\": \"an executable\"}"))
            .unwrap_err(),
        E::File(F::Manifest { offset: 24, .. })
    ));
    assert!(matches!(
        Executable::from_bytes(&with_manifest(&bytes, b"\xff\xfe")).unwrap_err(),
        E::File(F::Manifest { .. })
    ));
    // Deeply nested steps hit serde_json's recursion limit, not the stack.
    let mut exe = small();
    let mut s = Step::Sync(SyncKind::Internal);
    for _ in 0..10_000 {
        s = Step::Repeat {
            count: 1,
            body: Box::new(s),
        };
    }
    exe.programs.push(s);
    let deep = exe.to_bytes();
    // Dropping the deep tree recursively is fine at this depth on the test thread.
    assert!(matches!(
        Executable::from_bytes(&deep).unwrap_err(),
        E::File(F::Manifest { .. })
    ));
}

#[test]
fn init_section_length_must_match_manifest() {
    let mut exe = small();
    // Claim one more byte than there is: the manifest says len+1 while data is unchanged.
    exe.tiles[0].init[0].len += 1;
    let bytes = exe.to_bytes();
    assert!(matches!(
        Executable::from_bytes(&bytes).unwrap_err(),
        E::File(F::SectionLength { .. })
    ));
}

#[test]
fn codelets_are_checked_against_the_registry() {
    let mut exe = small();
    exe.codelets[poplar_exe::exe::CodeletId::from_u32(0)].name = "test::Gone".into();
    assert_eq!(
        Executable::from_bytes(&exe.to_bytes()).unwrap_err(),
        E::Check(C::UnregisteredCodelet {
            name: "test::Gone".into()
        })
    );
    let mut exe = small();
    exe.codelets[poplar_exe::exe::CodeletId::from_u32(1)]
        .signature
        .push_str("extra:Input:Scalar:f32;");
    assert!(matches!(
        Executable::from_bytes(&exe.to_bytes()).unwrap_err(),
        E::Check(C::CodeletSignature { ref name, .. }) if name == "test::AddTo"
    ));
    let mut exe = small();
    exe.codelets[poplar_exe::exe::CodeletId::from_u32(1)].multi_worker = true;
    assert!(matches!(
        Executable::from_bytes(&exe.to_bytes()).unwrap_err(),
        E::Check(C::CodeletLayout { .. })
    ));
}

#[test]
fn loading_runs_check() {
    let mut exe = small();
    exe.computes[poplar_exe::exe::ComputePhaseId::from_u32(0)].tiles[3].vertices[0].fields[1]
        .offset = 2;
    assert!(matches!(
            Executable::from_bytes(&exe.to_bytes()).unwrap_err(),
            E::Check(C::FieldMisaligned { tile, .. }) if tile == 3
    ));
}

mod mutations {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
        /// Random edits of the manifest with a fixed-up checksum reach the JSON parser and
        /// `check()`: they must give an error or a valid executable, never a panic.
        #[test]
        fn manifest_edits_never_panic(edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4)) {
            let bytes = small().to_bytes();
            let (_, mut m, _) = split(&bytes);
            for (pos, v) in edits {
                let i = pos % m.len();
                // Prefer digit edits (they keep the JSON well-formed and hit check()).
                m[i] = if m[i].is_ascii_digit() { b'0' + v % 10 } else { v };
            }
            if let Ok(exe) = Executable::from_bytes(&with_manifest(&bytes, &m)) {
                exe.check().unwrap();
                // Anything that loads must also be accepted by the engine unless over budget.
                let _ = Engine::new(&exe, opts(1));
            }
        }

        /// Arbitrary bytes never panic.
        #[test]
        fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..256)) {
            let mut d = MAGIC.to_vec();
            d.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
            d.extend_from_slice(&data);
            prop_assert!(Executable::from_bytes(&d).is_err());
            prop_assert!(Executable::from_bytes(&data).is_err());
        }
    }
}

#[test]
fn application_sections_round_trip_and_are_checked() {
    let mut exe = small();
    exe.app_sections
        .insert("app.run-info".into(), br#"{"dt":0.02}"#.to_vec());
    exe.app_sections.insert("app.empty".into(), Vec::new());
    exe.app_sections.insert(
        "app.bulk".into(),
        (0..=255u8).cycle().take(10_000).collect(),
    );
    let bytes = exe.to_bytes();
    let back = Executable::from_bytes(&bytes).unwrap();
    assert_eq!(back.app_sections, exe.app_sections);
    assert_eq!(back, exe);
    let p = tmp_path("app");
    exe.save(&p).unwrap();
    let loaded = Executable::load(&p).unwrap();
    std::fs::remove_file(&p).unwrap();
    assert_eq!(loaded.app_sections, exe.app_sections);

    // A flipped byte inside an application section's data is caught by its checksum.
    let mut b = bytes.clone();
    let at = b.len() - 5_000;
    b[at] ^= 1;
    assert!(matches!(
        Executable::from_bytes(&b).unwrap_err(),
        E::File(F::Checksum { ref section, .. }) if section == "application section"
    ));
    // Two sections of one name are refused.
    let mut one = small();
    one.app_sections.insert("dup".into(), vec![1, 2, 3]);
    let b1 = one.to_bytes();
    let header = 16; // kind u32, length u64, crc u32
    let sec = b1[b1.len() - (header + 4 + 3 + 3)..].to_vec();
    let mut b2 = b1.clone();
    b2.extend_from_slice(&sec);
    let count_at = 24 + u64::from_le_bytes(b1[12..20].try_into().unwrap()) as usize;
    b2[count_at..count_at + 4].copy_from_slice(&4u32.to_le_bytes());
    assert!(matches!(
        Executable::from_bytes(&b2).unwrap_err(),
        E::File(F::DuplicateSection { ref section, .. }) if section.contains("'dup'")
    ));
}

/// Saving is atomic: a save that cannot complete leaves the previous file intact and no
/// temporary file behind; a completed save replaces it.
#[test]
fn a_failed_save_keeps_the_previous_file() {
    let p = tmp_path("atomic");
    let exe = small();
    exe.save(&p).unwrap();
    let before = std::fs::read(&p).unwrap();
    // A directory where the temporary file would go makes the save fail before the rename.
    let name = p.file_name().unwrap().to_string_lossy().into_owned();
    let blocker = p.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::create_dir_all(&blocker).unwrap();
    assert!(exe.save(&p).is_err());
    std::fs::remove_dir(&blocker).unwrap();
    assert_eq!(
        std::fs::read(&p).unwrap(),
        before,
        "the previous file is intact"
    );
    let mut other = small();
    other.app_sections.insert("x".into(), vec![1]);
    other.save(&p).unwrap();
    assert_eq!(Executable::load(&p).unwrap(), other);
    let leftovers = std::fs::read_dir(p.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!(".{name}")) && n.ends_with(".tmp"))
        .count();
    assert_eq!(leftovers, 0);
    std::fs::remove_file(&p).unwrap();
}

#[test]
fn the_checksum_tells_executables_apart_by_any_byte_and_survives_a_round_trip() {
    let exe = small();
    let sum = exe.checksum();
    assert_eq!(sum, exe.clone().checksum());
    assert_eq!(
        sum,
        Executable::from_bytes(&exe.to_bytes()).unwrap().checksum()
    );
    assert_eq!(
        sum >> 32,
        exe.to_bytes().len() as u64,
        "the length is in the high half"
    );
    // Every single byte of initial data changes it (a CRC followed by the CRC of its own
    // message would not: the section's patched checksum is left out).
    let n = exe
        .tiles
        .iter()
        .flat_map(|t| &t.init)
        .map(|b| b.data.len())
        .sum::<usize>();
    assert!(n > 0);
    for k in 0..n {
        let mut e = exe.clone();
        let mut left = k;
        'found: for t in &mut e.tiles {
            for b in &mut t.init {
                if left < b.data.len() {
                    let mut bytes = b.data.to_vec();
                    bytes[left] ^= 0x01;
                    b.data = bytes.into();
                    break 'found;
                }
                left -= b.data.len();
            }
        }
        assert_ne!(e.checksum(), sum, "init byte {k}");
    }
}

/// A file of format version 4 (written by poplar-rs 0.2.0 before Streaming Memory existed:
/// a stream in, a reversing copy to another tile, a stream out) loads, with no remote buffers
/// and streams prefetched one deep, and runs as it did.
#[test]
fn a_version_4_file_still_loads_and_runs() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/v4_stream_copy.pxe");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 4);
    let exe = Executable::load(&path).unwrap();
    assert!(exe.remote_buffers.is_empty() && exe.remote_copies.is_empty());
    assert!(exe.streams.iter().all(|s| s.buffering_depth == 1));
    assert_eq!(
        exe.target.streaming_memory_bytes_per_cycle,
        poplar_core::target::STREAMING_MEMORY_BYTES_PER_CYCLE
    );
    let mut e = Engine::new(&exe, poplar_engine::EngineOptions::with_threads(1)).unwrap();
    let input = [3i32, -1, 4, 1, -5, 9];
    e.connect_stream("in", input.to_vec()).unwrap();
    e.run(0).unwrap();
    let reversed: Vec<i32> = input.iter().rev().copied().collect();
    assert_eq!(e.read_tensor::<i32>("y").unwrap(), reversed);
    assert_eq!(e.stream_output::<i32>("out").unwrap(), reversed);
    // Saved again, it is a version 5 file of the same executable.
    let again = Executable::from_bytes(&exe.to_bytes()).unwrap();
    assert_eq!(again, exe);
}

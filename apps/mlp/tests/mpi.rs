//! Data-parallel training over MPI ranks, unchanged: `mpiexec -n 2 mlp train` (4 replicas on 4
//! chips, two per rank, the all-reduce crossing ranks) learns exactly what one process learns:
//! the same losses and accuracies, bit for bit; so do sharded Adam with its state off chip and
//! a pipeline of two stages (8 chips, the stages' activations crossing ranks). Needs the
//! feature `mpi` and `mpiexec`.

#![cfg(feature = "mpi")]

use std::path::{Path, PathBuf};

const BIN: &str = env!("CARGO_BIN_EXE_mlp");

/// The epochs of `history.json` (losses and accuracies; wall times left out), trained with
/// the extra options `extra`.
fn train(n: usize, out: &Path, extra: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec![
        "train",
        "--replicas",
        "4",
        "--micro-batch",
        "8",
        "--epochs",
        "2",
        "--threads",
        "1",
        // Blobs: the ranks' equality does not depend on the data, and three ranks share two
        // cores (the digits took minutes).
        "--dataset",
        "blobs",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = app_support::testing::run_on_ranks(n, BIN, &args);
    assert!(
        o.status.success(),
        "{n} ranks: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let h: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("history.json")).unwrap()).unwrap();
    h["epochs"]
        .as_array()
        .expect("epochs")
        .iter()
        .map(|e| {
            let mut e = e.clone();
            if let Some(o) = e.as_object_mut() {
                o.retain(|k, _| !k.contains("second"));
            }
            e
        })
        .collect()
}

#[test]
fn two_and_three_ranks_learn_exactly_what_one_process_learns() {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("mpi_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let base = train(1, &d.join("one"), &[]);
    assert_eq!(base.len(), 2);
    assert!(base[0].get("train_loss").is_some(), "{:?}", base[0]);
    for n in [2, 3] {
        assert_eq!(train(n, &d.join(format!("r{n}")), &[]), base, "{n} ranks");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Adam with its state sharded over pairs of replicas and kept in Streaming Memory
/// (`--state-location off-chip`): the same bits on 1, 2 and 3 ranks.
#[test]
fn sharded_adam_state_in_streaming_memory_learns_the_same_on_any_rank_count() {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mpi_sharded_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    // Fewer samples: every step crosses ranks many times (the copies of the state rank 0
    // holds, the sharded collectives).
    let extra = [
        "--per-class",
        "40",
        "--optimizer",
        "adam",
        "--lr",
        "0.01",
        "--shard",
        "2",
        "--state-location",
        "off-chip",
    ];
    let base = train(1, &d.join("one"), &extra);
    assert_eq!(base.len(), 2);
    for n in [2, 3] {
        assert_eq!(
            train(n, &d.join(format!("r{n}")), &extra),
            base,
            "{n} ranks"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Two hidden layers in two pipeline stages (R = 4 × P = 2 = 8 chips), interleaved, with
/// recomputation: the same bits on 1, 2 and 3 ranks.
#[test]
fn a_pipeline_learns_the_same_on_any_rank_count() {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mpi_pipeline_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let extra = [
        "--per-class",
        "40",
        "--hidden",
        "16,8",
        "--pipeline-stages",
        "2",
        "--schedule",
        "interleaved",
        "--recompute",
        "--accumulate",
        "2",
    ];
    let base = train(1, &d.join("one"), &extra);
    assert_eq!(base.len(), 2);
    for n in [2, 3] {
        assert_eq!(
            train(n, &d.join(format!("r{n}")), &extra),
            base,
            "{n} ranks"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

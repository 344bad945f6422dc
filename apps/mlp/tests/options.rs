//! Options that make no sense are refused, naming the option at fault.

mod common;

use common::small;
use mlp::config::Config;

#[test]
fn zero_shapes_name_their_own_option() {
    let (train, _) = mlp::run::data(&small(1, 1));
    let mut c = small(1, 4);
    c.shape.inputs = 0;
    assert_eq!(c.check(train.len()).unwrap_err().option, "inputs");
    for hidden in [vec![0], vec![16, 0], vec![]] {
        let mut c = small(1, 4);
        c.shape.hidden = hidden;
        assert_eq!(c.check(train.len()).unwrap_err().option, "hidden");
    }
    let mut c: Config = small(1, 4);
    c.shape.classes = 1;
    assert_eq!(c.check(train.len()).unwrap_err().option, "classes");
}

#[test]
fn scaling_refuses_zero_replicas() {
    let dir = std::env::temp_dir().join(format!("mlp-scaling-zero-{}", std::process::id()));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mlp"))
        .args(["scaling", "--max-replicas", "0", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "--max-replicas 0 ran:\n{stderr}");
    assert!(stderr.contains("--max-replicas"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

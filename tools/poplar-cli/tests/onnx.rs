//! `poplar onnx`: a model built with onnx.helper (libs/poponnx/tests/models/make_models.py)
//! imported, run and its outputs written; a model the importer refuses is a clean error.

use std::path::{Path, PathBuf};
use std::process::Command;

fn models() -> PathBuf {
    let d = std::env::temp_dir().join(format!("poplar-cli-onnx-{}", std::process::id()));
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../libs/poponnx/tests/models/make_models.py");
    let python = std::env::var("POPLAR_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(&python).arg(&script).arg(&d).output().unwrap();
    assert!(
        out.status.success(),
        "{} needs onnx and onnxruntime (scripts/test installs them; or set POPLAR_PYTHON):\n{}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    d
}

fn poplar(args: &[&std::ffi::OsStr]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_poplar"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn onnx_runs_a_model_and_writes_its_outputs_profile_and_report() {
    let m = models();
    let out = m.join("out");
    let arg = |s: String| std::ffi::OsString::from(s);
    let args = [
        arg("onnx".into()),
        m.join("add.onnx").into_os_string(),
        arg(format!("--input=x={}", m.join("add/input_0.pb").display())),
        arg(format!("--input=y={}", m.join("add/input_1.pb").display())),
        arg("--tiles=4".into()),
        arg("-o".into()),
        out.clone().into_os_string(),
    ];
    let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let (ok, stdout, stderr) = poplar(&refs);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("Tiles closest to the limit"), "{stdout}");
    assert!(stdout.contains("Profile summary"), "{stdout}");
    let npy = app_support::npy::read(&out.join("output_0.npy")).unwrap();
    assert_eq!(npy.shape(), &[2, 3]);
    // x = 0..6, y = x / 2: z = 1.5 x.
    let z: Vec<f32> = npy.to_vec("f32").unwrap();
    assert_eq!(z, vec![0.0, 1.5, 3.0, 4.5, 6.0, 7.5]);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("outputs.json")).unwrap()).unwrap();
    assert_eq!(json["outputs"][0]["name"], "z");
    for f in ["profile.json", "report.html"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    // Again into the same folder: refused without --force, naming an earlier file.
    let (ok, _, stderr) = poplar(&refs);
    assert!(!ok && stderr.contains("--force"), "{stderr}");

    // An op outside the supported set: the node and the op are named, nothing panics.
    let args = [
        arg("onnx".into()),
        m.join("unsupported.onnx").into_os_string(),
        arg("--compile-only".into()),
        arg("-o".into()),
        m.join("out2").into_os_string(),
    ];
    let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let (ok, _, stderr) = poplar(&refs);
    assert!(!ok);
    assert!(
        stderr.contains("node 'mystery' (Frobnicate): op not supported"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&m);
}

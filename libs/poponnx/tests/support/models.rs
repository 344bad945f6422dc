//! The whole-model test models, built once per test process by `tests/models/make_models.py`
//! (onnx.helper) with their onnxruntime outputs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use poponnx::{read_tensor_file, HostTensor};

/// The Python with `onnx` and `onnxruntime` (`POPLAR_PYTHON`, as `scripts/test` sets it).
pub fn python() -> String {
    std::env::var("POPLAR_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// The folder of the generated models (made on first use).
pub fn models() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("poponnx-models-{}", std::process::id()));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/models/make_models.py");
        let out = std::process::Command::new(python())
            .arg(&script)
            .arg(&dir)
            .output()
            .expect("run python");
        assert!(
            out.status.success(),
            "{} failed (it needs onnx and onnxruntime: run scripts/test, or pip install -r libs/poponnx/tests/requirements.txt and set POPLAR_PYTHON):\n{}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
}

fn numbered(dir: &Path, prefix: &str) -> Vec<HostTensor> {
    (0..)
        .map(|i| dir.join(format!("{prefix}_{i}.pb")))
        .take_while(|p| p.is_file())
        .map(|p| read_tensor_file(p).unwrap().1)
        .collect()
}

/// A model's path, its inputs by the model's input names, and onnxruntime's outputs.
pub fn case(name: &str) -> (PathBuf, BTreeMap<String, HostTensor>, Vec<HostTensor>) {
    let dir = models().join(name);
    let path = models().join(format!("{name}.onnx"));
    let model = poponnx::Model::load(&path).unwrap();
    let inputs = model
        .graph
        .inputs
        .iter()
        .map(|i| i.name.clone())
        .zip(numbered(&dir, "input"))
        .collect();
    (path, inputs, numbered(&dir, "output"))
}

//! The importer on models of real size, and one inference against onnxruntime:
//!
//!     cargo bench -p poponnx --bench models
//!
//! 1. ResNet-50 and BERT-base (`make_big_models.py`: onnx.helper, random weights, batch 1):
//!    import and compile time and peak memory (each in a child process, so that the peak is
//!    its own: `VmHWM`), the fullest tile, and the modelled time of one inference (the static
//!    estimate, `poplar::profile::estimate_program`) on one GC200 and, with 16 replicas, on a
//!    Pod16 — in f32 and with `fp16`.
//! 2. The small CNN of the tests: host time of one inference on the simulator against
//!    onnxruntime on this machine (medians of 7), as a ratio.
//!
//! `-- --small-cnn` runs part 2 alone; `-- --one MODEL [--fp16] [--pod16]` one row of part 1.
//! Needs the Python of `POPLAR_PYTHON` with onnx, onnxruntime and numpy
//! (`libs/poponnx/tests/requirements.txt`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use poponnx::{read_tensor_file, ImportOptions, Model, Session};

fn python() -> String {
    std::env::var("POPLAR_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("poponnx-bench")
}

fn generate(script: &str, args: &[&str]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(script);
    let out = Command::new(python())
        .arg(&path)
        .args(args)
        .output()
        .expect("python");
    assert!(
        out.status.success(),
        "{}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    print!("{}", String::from_utf8_lossy(&out.stdout));
}

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// In the child: imports and compiles one model for one target, prints one line of figures.
fn one(model: &str, pod16: bool, fp16: bool) {
    let t0 = Instant::now();
    let m = Model::load(dir().join(format!("{model}.onnx"))).unwrap();
    let load = t0.elapsed().as_secs_f64();
    let (target, replicas) = if pod16 {
        (poplar::Target::pod16(), 16)
    } else {
        (poplar::Target::gc200(), 1)
    };
    let options = ImportOptions {
        fp16,
        replicas,
        ..Default::default()
    };
    let imported = match poponnx::import(&m, &target, &options) {
        Ok(i) => i,
        Err(e) => return println!("{model}: import failed: {e}"),
    };
    let import = t0.elapsed().as_secs_f64() - load;
    let exe = match poplar::compile(&imported.graph, &[imported.program], &Default::default()) {
        Ok(e) => e,
        Err(e) => {
            return println!(
                "{model}: compile failed after {:.1} s: {e}",
                t0.elapsed().as_secs_f64()
            )
        }
    };
    let total = t0.elapsed().as_secs_f64();
    let fullest = exe.tiles.iter().map(|t| t.memory_bytes).max().unwrap_or(0);
    let flat = if exe.replication.is_some() {
        exe.expand_replicas().0
    } else {
        exe.clone()
    };
    let model_c = poplar::profile::CycleModel::new(&flat);
    let est = poplar::profile::estimate_program(&flat, &model_c, 0).unwrap();
    let ms = est.cycles as f64 / target.clock_hz * 1e3;
    println!(
        "{model:9} {:5} {:6} | load {load:5.1} s, import {import:5.1} s, compile {:5.1} s, total {total:5.1} s, peak {:6.0} MiB | fullest tile {fullest} B of {} | modelled {ms:7.3} ms per run ({:.0} samples/s over {replicas} replica(s)); compute {:.0} %, exchange {:.0} %, sync {:.0} %",
        if fp16 { "fp16" } else { "f32" },
        if pod16 { "Pod16" } else { "GC200" },
        total - import - load,
        peak_rss_mib(),
        target.bytes_per_tile,
        replicas as f64 / (ms / 1e3),
        100.0 * est.compute as f64 / est.cycles.max(1) as f64,
        100.0 * est.exchange as f64 / est.cycles.max(1) as f64,
        100.0 * est.sync as f64 / est.cycles.max(1) as f64,
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Host time of one inference of the small CNN: the simulator against onnxruntime.
fn small_cnn() {
    generate("tests/models/make_models.py", &[dir().to_str().unwrap()]);
    let path = dir().join("small_cnn.onnx");
    let m = Model::load(&path).unwrap();
    let target = poplar::Target::custom(16, 256 * 1024);
    let mut session = Session::new(&m, &target, &ImportOptions::default()).unwrap();
    let x = read_tensor_file(dir().join("small_cnn/input_0.pb"))
        .unwrap()
        .1;
    let inputs = BTreeMap::from([("x".to_string(), x)]);
    let ours = median(
        (0..7)
            .map(|_| {
                let t = Instant::now();
                session.run(&inputs).unwrap();
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    );
    let code = format!(
        "import onnxruntime as ort, numpy as np, time\n\
         from onnx import numpy_helper, load_tensor\n\
         s = ort.InferenceSession('{}', providers=['CPUExecutionProvider'])\n\
         x = numpy_helper.to_array(load_tensor('{}'))\n\
         t = []\n\
         for _ in range(7):\n    a = time.perf_counter(); s.run(None, {{'x': x}}); t.append((time.perf_counter() - a) * 1e3)\n\
         print(sorted(t)[3])",
        path.display(),
        dir().join("small_cnn/input_0.pb").display()
    );
    let out = Command::new(python()).args(["-c", &code]).output().unwrap();
    let ort: f64 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(f64::NAN);
    println!(
        "small CNN, one inference (batch 2, 16 tiles), medians of 7: simulator {ours:.2} ms, onnxruntime {ort:.3} ms, ratio {:.0}",
        ours / ort
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--one") {
        let model = &args[i + 1];
        return one(
            model,
            args.contains(&"--pod16".to_string()),
            args.contains(&"--fp16".to_string()),
        );
    }
    if args.iter().any(|a| a == "--list") {
        return;
    }
    if args.iter().any(|a| a == "--small-cnn") {
        std::fs::create_dir_all(dir()).unwrap();
        return small_cnn();
    }
    std::fs::create_dir_all(dir()).unwrap();
    if !dir().join("bert_base.onnx").is_file() {
        generate("benches/make_big_models.py", &[dir().to_str().unwrap()]);
    }
    let me = std::env::current_exe().unwrap();
    for model in ["resnet50", "bert_base"] {
        for (pod16, fp16) in [(false, false), (false, true), (true, true)] {
            let mut c = Command::new(&me);
            c.args(["--one", model]);
            if pod16 {
                c.arg("--pod16");
            }
            if fp16 {
                c.arg("--fp16");
            }
            let out = c.output().unwrap();
            print!("{}", String::from_utf8_lossy(&out.stdout));
            if !out.status.success() {
                println!(
                    "{model}: child failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                        .lines()
                        .last()
                        .unwrap_or("")
                );
            }
        }
    }
    small_cnn();
}

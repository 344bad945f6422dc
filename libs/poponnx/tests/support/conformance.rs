//! Running one ONNX node test: import (fixing the inputs that set shapes), run, compare.

use std::collections::BTreeMap;
use std::path::Path;

use poponnx::{read_tensor_file, HostData, HostTensor, ImportOptions, Model, OnnxError, Session};

/// The `onnx` release whose node tests the expectations are for.
pub const ONNX_VERSION: &str = "1.17.0";

/// The suite's default tolerances.
pub const RTOL: f64 = 1e-3;
pub const ATOL: f64 = 1e-7;

#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Passed; `fixed` names the inputs fixed at build time (as they set shapes).
    Pass { fixed: Option<String> },
    /// Failed, with the reason.
    Fail(String),
}

/// The target the suite runs on: small, so that each test compiles quickly.
pub fn target() -> poplar::Target {
    poplar::Target::custom(16, 1024 * 1024)
}

/// The reason of an importer error, shortened to its kind (the op, the type, …), without the
/// suite's folder (so that the list is the same on every machine).
fn reason(e: &OnnxError, dir: &Path) -> String {
    let prefix = format!("{}/", dir.display());
    short(e).replace(&prefix, "")
}

fn short(e: &OnnxError) -> String {
    match e {
        OnnxError::UnsupportedOp { at } => format!("unsupported op {}", at.op),
        OnnxError::Opset { version, .. } => format!("opset {version}"),
        OnnxError::UnsupportedType { dtype, .. } => format!("type {dtype}"),
        OnnxError::DynamicShape { .. } => "dynamic shape".into(),
        OnnxError::UnsupportedAttribute {
            attribute, reason, ..
        } => {
            format!("attribute {attribute}: {reason}")
        }
        other => {
            let s = other.to_string().replace(['\n', '\t'], " ");
            s.chars().take(400).collect()
        }
    }
}

fn read_set(dir: &Path, prefix: &str) -> Result<Vec<(String, HostTensor)>, OnnxError> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|source| OnnxError::Read {
            path: dir.into(),
            source,
        })?
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    files.sort_by_key(|p| {
        let s = p.file_stem().unwrap().to_string_lossy().into_owned();
        s[prefix.len()..].parse::<usize>().unwrap_or(usize::MAX)
    });
    files.iter().map(read_tensor_file).collect()
}

/// Whether `got` matches `want` at the suite's tolerances.
pub fn compare(got: &HostTensor, want: &HostTensor) -> Result<(), String> {
    if got.shape != want.shape {
        return Err(format!("shape {:?}, expected {:?}", got.shape, want.shape));
    }
    if got.ty != want.ty {
        return Err(format!("type {}, expected {}", got.ty, want.ty));
    }
    match (&got.data, &want.data) {
        (HostData::Int(g), HostData::Int(w)) => match g.iter().zip(w).position(|(a, b)| a != b) {
            Some(i) => Err(format!("element {i}: {} where {} expected", g[i], w[i])),
            None => Ok(()),
        },
        _ => {
            let (g, w) = (got.to_f64(), want.to_f64());
            for (i, (&a, &b)) in g.iter().zip(&w).enumerate() {
                let ok =
                    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= ATOL + RTOL * b.abs();
                if !ok {
                    return Err(format!("element {i}: {a} where {b} expected"));
                }
            }
            Ok(())
        }
    }
}

/// Runs the node test in `dir`; returns its op and outcome.
pub fn run_case(dir: &Path) -> (String, Outcome) {
    let model = match Model::load(dir.join("model.onnx")) {
        Ok(m) => m,
        Err(e) => return (op_of_dir(dir), Outcome::Fail(reason(&e, dir))),
    };
    let op = model
        .graph
        .nodes
        .first()
        .map_or_else(|| op_of_dir(dir), |n| n.op.clone());
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_model(dir, &model)))
        .unwrap_or_else(|p| {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Outcome::Fail(format!(
                "PANIC: {}",
                msg.replace(['\n', '\t'], " ")
                    .chars()
                    .take(160)
                    .collect::<String>()
            ))
        });
    (op, outcome)
}

fn op_of_dir(dir: &Path) -> String {
    dir.file_name().unwrap().to_string_lossy().into_owned()
}

fn run_model(dir: &Path, model: &Model) -> Outcome {
    let set = dir.join("test_data_set_0");
    let (inputs, outputs) = match (read_set(&set, "input_"), read_set(&set, "output_")) {
        (Ok(i), Ok(o)) => (i, o),
        (Err(e), _) | (_, Err(e)) => return Outcome::Fail(reason(&e, dir)),
    };
    // Name the inputs by the model's graph inputs, in order (the files' names may be empty).
    let names: Vec<String> = model.graph.inputs.iter().map(|i| i.name.clone()).collect();
    let given: BTreeMap<String, HostTensor> = names
        .iter()
        .cloned()
        .zip(inputs.into_iter().map(|(_, t)| t))
        .collect();
    let mut options = ImportOptions::default();
    // An input that sets a shape is fixed at build time: the graph input named by the error,
    // or, when the error names a value computed from graph inputs, the integer graph inputs
    // (the shapes, sizes and axes a model computes with).
    let mut session = loop {
        match Session::new(model, &target(), &options) {
            Ok(s) => break s,
            Err(OnnxError::NotConstant { input, .. })
                if given.contains_key(&input) && !options.fixed_inputs.contains_key(&input) =>
            {
                options
                    .fixed_inputs
                    .insert(input.clone(), given[&input].clone());
            }
            Err(e @ OnnxError::NotConstant { .. }) => {
                let ints: Vec<String> = given
                    .iter()
                    .filter(|(k, v)| !v.ty.is_float() && !options.fixed_inputs.contains_key(*k))
                    .map(|(k, _)| k.clone())
                    .collect();
                if ints.is_empty() {
                    return Outcome::Fail(reason(&e, dir));
                }
                for k in ints {
                    options.fixed_inputs.insert(k.clone(), given[&k].clone());
                }
            }
            Err(e) => return Outcome::Fail(reason(&e, dir)),
        }
    };
    let feed: BTreeMap<String, HostTensor> = given
        .iter()
        .filter(|(k, _)| !options.fixed_inputs.contains_key(*k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let got = match session.run(&feed) {
        Ok(g) => g,
        Err(e) => return Outcome::Fail(reason(&e, dir)),
    };
    for (i, ((name, g), (_, w))) in got.iter().zip(&outputs).enumerate() {
        if let Err(m) = compare(g, w) {
            return Outcome::Fail(format!("wrong output {i} ('{name}'): {m}"));
        }
    }
    if got.len() != outputs.len() {
        return Outcome::Fail(format!("{} outputs, expected {}", got.len(), outputs.len()));
    }
    let fixed: Vec<&str> = options.fixed_inputs.keys().map(String::as_str).collect();
    Outcome::Pass {
        fixed: (!fixed.is_empty()).then(|| format!("fixed: {}", fixed.join(","))),
    }
}

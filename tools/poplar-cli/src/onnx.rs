//! `poplar onnx MODEL.onnx`: import an ONNX model, compile it for the simulated chip (the
//! memory report per tile and whether it fits), run it on given inputs, and write its outputs
//! (`.npy`), the profile and the HTML report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use app_support::output::RunFiles;
use poplar::{CompileOptions, EngineOptions, Target};
use poponnx::{ElemType, HostData, HostTensor, ImportOptions, Model, Session};

use crate::CliError;

/// The files a run writes in its folder: fixed names and `output_<i>.npy`.
const FILES: RunFiles = RunFiles::new(&["outputs.json", "profile.json", "report.html"])
    .with_series(&[("output_", ".npy")]);

/// `poplar onnx`'s options.
#[derive(clap::Args)]
pub struct OnnxArgs {
    /// The model (`.onnx`; external data files beside it).
    model: PathBuf,
    /// An input's array, `NAME=FILE`, a `.npy` or a serialized TensorProto (`.pb`); once per
    /// input of the model.
    #[arg(long = "input", value_name = "NAME=FILE")]
    inputs: Vec<String>,
    /// Fix an input's value when the graph is built (`NAME=FILE`), for inputs that set shapes.
    #[arg(long = "fix", value_name = "NAME=FILE")]
    fixed: Vec<String>,
    /// Chips (GC200s) of the target: 1, or an IPU-Machine or Pod of this many.
    #[arg(long, default_value_t = 1)]
    chips: u32,
    /// Data parallelism: this many replicas of the model, each on chips / replicas chips
    /// (a power of two); each runs the given inputs, replica 0's outputs are written.
    #[arg(long, default_value_t = 1)]
    replicas: u32,
    /// A custom target of this many tiles instead of GC200s (with --tile-memory).
    #[arg(long)]
    tiles: Option<u32>,
    /// Bytes per tile of the custom target.
    #[arg(long, default_value_t = 624 * 1024)]
    tile_memory: u32,
    /// Hold the model's floats (inputs and weights) as f16 on the chip; `float` outputs are
    /// written as `float`.
    #[arg(long)]
    fp16: bool,
    /// Compile only: the memory report and the modelled time, no run and no inputs.
    #[arg(long)]
    compile_only: bool,
    /// The output folder.
    #[arg(short, long, default_value = "onnx-out")]
    out: PathBuf,
    /// Replace the files of an earlier run in the output folder (only those).
    #[arg(long)]
    force: bool,
}

fn onnx_err(e: poponnx::OnnxError) -> CliError {
    CliError::Onnx(e.to_string())
}

fn target(a: &OnnxArgs) -> Result<Target, CliError> {
    if let Some(tiles) = a.tiles {
        return Ok(Target::custom(tiles, a.tile_memory));
    }
    match a.chips {
        0 => Err(CliError::Onnx("--chips must be at least 1".into())),
        1 => Ok(Target::gc200()),
        n => Ok(Target::gc200_multi(n)),
    }
}

/// `NAME=FILE` pairs, read.
fn read_arrays(specs: &[String]) -> Result<BTreeMap<String, HostTensor>, CliError> {
    let mut arrays = BTreeMap::new();
    for spec in specs {
        let Some((name, file)) = spec.split_once('=') else {
            return Err(CliError::Onnx(format!(
                "--input '{spec}': expected NAME=FILE"
            )));
        };
        let path = Path::new(file);
        let value = if path.extension().is_some_and(|e| e == "npy") {
            read_npy(path)?
        } else {
            poponnx::read_tensor_file(path).map_err(onnx_err)?.1
        };
        if arrays.insert(name.to_string(), value).is_some() {
            return Err(CliError::Onnx(format!("input '{name}' given twice")));
        }
    }
    Ok(arrays)
}

fn read_npy(path: &Path) -> Result<HostTensor, CliError> {
    let npy = app_support::npy::read(path).map_err(|e| CliError::Onnx(e.to_string()))?;
    if npy.order() != npyz::Order::C {
        return Err(CliError::Onnx(format!(
            "{}: Fortran order is not supported",
            path.display()
        )));
    }
    let shape: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
    let e = |e: app_support::npy::NpyError| CliError::Onnx(e.to_string());
    let descr = npy.descr();
    Ok(match &descr[1..] {
        "f4" => HostTensor::float(
            ElemType::Float,
            &shape,
            npy.to_vec::<f32>("f32")
                .map_err(e)?
                .into_iter()
                .map(f64::from)
                .collect(),
        ),
        "f2" => HostTensor::float(
            ElemType::Float16,
            &shape,
            npy.to_vec::<half::f16>("f16")
                .map_err(e)?
                .into_iter()
                .map(|x| x.to_f64())
                .collect(),
        ),
        "i8" => HostTensor::int(
            ElemType::Int64,
            &shape,
            npy.to_vec::<i64>("i64").map_err(e)?,
        ),
        "i4" => HostTensor::int(
            ElemType::Int32,
            &shape,
            npy.to_vec::<i32>("i32")
                .map_err(e)?
                .into_iter()
                .map(i64::from)
                .collect(),
        ),
        "u1" => HostTensor::int(
            ElemType::Uint8,
            &shape,
            npy.to_vec::<u8>("u8")
                .map_err(e)?
                .into_iter()
                .map(i64::from)
                .collect(),
        ),
        "b1" => HostTensor::int(
            ElemType::Bool,
            &shape,
            npy.to_vec::<u8>("bool")
                .map_err(e)?
                .into_iter()
                .map(i64::from)
                .collect(),
        ),
        _ => {
            return Err(CliError::Onnx(format!(
                "{}: element type {descr} is not taken (f4, f2, i8, i4, u1, b1)",
                path.display()
            )))
        }
    })
}

/// Writes one output as `.npy` in its ONNX type.
fn write_npy(path: &Path, t: &HostTensor) -> Result<(), CliError> {
    let shape: Vec<u64> = t.shape.iter().map(|&d| d as u64).collect();
    fn put<T: npyz::AutoSerialize + Copy>(
        path: &Path,
        shape: &[u64],
        data: Vec<T>,
    ) -> Result<(), CliError> {
        app_support::npy::write(path, shape, npyz::Order::C, &data).map_err(CliError::from)
    }
    match (&t.data, t.ty) {
        (HostData::Float(v), ElemType::Float16) => put(
            path,
            &shape,
            v.iter().map(|&x| poplar::f16_from_f64(x)).collect(),
        ),
        (HostData::Float(v), _) => put(path, &shape, v.iter().map(|&x| x as f32).collect()),
        (HostData::Int(v), ElemType::Bool | ElemType::Uint8) => {
            put(path, &shape, v.iter().map(|&x| x as u8).collect())
        }
        (HostData::Int(v), ElemType::Int32) => {
            put(path, &shape, v.iter().map(|&x| x as i32).collect())
        }
        (HostData::Int(v), _) => put(path, &shape, v.clone()),
    }
}

fn outputs_json(outputs: &[(String, HostTensor)]) -> String {
    let list: Vec<serde_json::Value> = outputs
        .iter()
        .enumerate()
        .map(|(i, (name, t))| {
            serde_json::json!({"file": format!("output_{i}.npy"), "name": name, "type": t.ty.name(), "shape": t.shape})
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({ "outputs": list })).unwrap_or_default() + "\n"
}

/// Runs `poplar onnx`.
pub fn run(a: OnnxArgs) -> Result<(), CliError> {
    let model = Model::load(&a.model).map_err(onnx_err)?;
    let options = ImportOptions {
        fixed_inputs: read_arrays(&a.fixed)?,
        fp16: a.fp16,
        replicas: a.replicas,
    };
    let inputs = if a.compile_only {
        BTreeMap::new()
    } else {
        read_arrays(&a.inputs)?
    };
    let target = target(&a)?;
    let lock = FILES.prepare(&a.out, a.force)?;
    eprintln!(
        "importing {} (opset {}, {} nodes) for {} tiles × {} B",
        a.model.display(),
        model.opset,
        model.graph.nodes.len(),
        target.tiles().len(),
        target.bytes_per_tile
    );
    let imported = poponnx::import(&model, &target, &options).map_err(onnx_err)?;
    let mut session = Session::compile(
        imported,
        &CompileOptions::default(),
        EngineOptions::default(),
    )
    .map_err(onnx_err)?;
    let exe = session.executable();
    let report = poplar_exe::profile::MemoryReport::from_executable(exe);
    crate::out(&report.text(5));
    let title = format!("poplar onnx: {}", a.model.display());
    let mut page = poplar_viewer::ReportData::from_executable(exe, &title);
    if a.compile_only {
        crate::out(&poplar_exe::profile::CycleModel::new(exe).text_summary());
    } else {
        session.engine_mut().enable_profiling(Default::default());
        let outputs = session.run(&inputs).map_err(onnx_err)?;
        for (i, (name, t)) in outputs.iter().enumerate() {
            let path = a.out.join(format!("output_{i}.npy"));
            write_npy(&path, t)?;
            eprintln!(
                "wrote {} ('{name}', {} {:?})",
                path.display(),
                t.ty,
                t.shape
            );
        }
        write_text(&a.out.join("outputs.json"), &outputs_json(&outputs))?;
        if let Some(p) = session.engine().profile() {
            crate::out(&p.text_summary());
            write_text(&a.out.join("profile.json"), &p.to_json())?;
            page = page.with_profile(p)?;
        }
    }
    write_text(&a.out.join("report.html"), &poplar_viewer::html(&page))?;
    drop(lock);
    Ok(())
}

fn write_text(path: &Path, text: &str) -> Result<(), CliError> {
    app_support::output::write_atomic(path, text)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

//! Importing a model into a graph, and a session that compiles it and runs it on the
//! simulated chip.

use std::collections::BTreeMap;

use poplar::{
    compile, CompileOptions, DType, Engine, EngineOptions, Executable, Graph, Program, Target,
};

use crate::error::{At, OnnxError, Result};
use crate::host::{ElemType, HostData, HostTensor};
use crate::lower::{Cx, Value};
use crate::model::Model;

/// How a model is imported.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// Graph inputs whose values are fixed when the graph is built (they become constants):
    /// for inputs that set shapes, as `Reshape`'s shape or `Slice`'s starts do when a model
    /// takes them as inputs.
    pub fixed_inputs: BTreeMap<String, HostTensor>,
    /// Hold the model's `float` inputs and initializers as `float16` on the chip (PopART's
    /// usual way of running a model in half precision): the ops then compute in f16 (sums
    /// accumulate in f32, as the ops document), inputs are rounded to f16 when written and
    /// `float` outputs are read back as `float`.
    pub fp16: bool,
    /// Replicate the model over this many replicas (data parallelism, a power of two; 0 or 1
    /// for none), each on `chips / replicas` of the target's chips. Every replica runs the
    /// given inputs; [`Session::run`] returns replica 0's outputs, and the profile shows the
    /// time of all replicas running at once (throughput: replicas × batch per run).
    pub replicas: u32,
}

/// A graph input or output of the imported model.
#[derive(Debug, Clone, PartialEq)]
pub struct Port {
    /// The ONNX name.
    pub name: String,
    pub ty: ElemType,
    pub shape: Vec<usize>,
    /// The host tensor's name in the graph (`Engine::write_tensor`/`read_tensor`); `None` for
    /// an output known when the graph was built.
    pub host_name: Option<String>,
    /// The chip's type of the tensor (`f16` for a `float` port with [`ImportOptions::fp16`]).
    pub chip_type: Option<DType>,
    /// An output's value when it is known when the graph is built.
    pub value: Option<HostTensor>,
}

/// A model lowered onto a graph: the graph, its one program, and its inputs and outputs.
pub struct Imported {
    pub graph: Graph,
    pub program: Program,
    pub inputs: Vec<Port>,
    pub outputs: Vec<Port>,
}

/// Lowers `model` onto a new graph for `target`.
pub fn import(model: &Model, target: &Target, options: &ImportOptions) -> Result<Imported> {
    let rewritten = crate::rewrite::run(&model.graph);
    codelets::link();
    poplin::link();
    let mut graph = new_graph(target, options.replicas)?;
    let (inputs, outputs, prog) = {
        let mut cx = Cx::new(&mut graph, model.opset);
        for (name, h) in model
            .graph
            .initializers
            .iter()
            .chain(&rewritten.initializers)
        {
            let h = match (options.fp16, h.ty) {
                (true, ElemType::Float) => crate::fold::cast(h, ElemType::Float16),
                _ => h.clone(),
            };
            cx.define(name, Value::Host(h));
        }
        let inputs = define_inputs(&mut cx, model, options)?;
        for node in &rewritten.nodes {
            cx.lower_node(node)?;
        }
        let outputs = define_outputs(&mut cx, model)?;
        (inputs, outputs, std::mem::take(&mut cx.prog))
    };
    Ok(Imported {
        graph,
        program: Program::seq(prog),
        inputs,
        outputs,
    })
}

fn new_graph(target: &Target, replicas: u32) -> Result<Graph> {
    if replicas <= 1 {
        return Ok(Graph::new(target));
    }
    let bad = |reason: String| OnnxError::Input {
        input: "replicas".into(),
        reason,
    };
    if !target.num_ipus.is_multiple_of(replicas) {
        return Err(bad(format!(
            "{replicas} replicas do not divide the target's {} chips",
            target.num_ipus
        )));
    }
    Graph::new_replicated(target, replicas, target.num_ipus / replicas)
        .map_err(|e| bad(e.to_string()))
}

fn graph_at(name: &str) -> At {
    At {
        node: name.into(),
        op: "graph input".into(),
    }
}

fn define_inputs(cx: &mut Cx, model: &Model, options: &ImportOptions) -> Result<Vec<Port>> {
    let mut ports = Vec::new();
    for name in options.fixed_inputs.keys() {
        if !model.graph.inputs.iter().any(|i| &i.name == name) {
            return Err(OnnxError::Input {
                input: name.clone(),
                reason: "fixed, but the model has no such input".into(),
            });
        }
    }
    for info in &model.graph.inputs {
        let shape = info.static_shape()?;
        if let Some(h) = options.fixed_inputs.get(&info.name) {
            check_input(&info.name, info.ty, &shape, h)?;
            cx.define(&info.name, Value::Host(h.clone()));
            continue;
        }
        let held = match (options.fp16, info.ty) {
            (true, ElemType::Float) => ElemType::Float16,
            (_, ty) => ty,
        };
        let dtype = held.device().ok_or_else(|| OnnxError::UnsupportedType {
            at: graph_at(&info.name),
            what: format!("input '{}'", info.name),
            dtype: info.ty.name(),
            reason: "no tile holds".into(),
        })?;
        let host_name = format!("in:{}", info.name);
        let t = cx.graph.add_variable(dtype, &shape, &info.name);
        let lowering = |e: poplar::GraphError| OnnxError::lowering(&graph_at(&info.name), e);
        if t.num_elements() > 0 {
            cx.graph.map_linearly(&t, 2).map_err(lowering)?;
        }
        cx.graph
            .create_host_write(&host_name, &t)
            .map_err(lowering)?;
        cx.define(&info.name, Value::Device { t, ty: held });
        ports.push(Port {
            name: info.name.clone(),
            ty: info.ty,
            shape,
            host_name: Some(host_name),
            chip_type: Some(dtype),
            value: None,
        });
    }
    Ok(ports)
}

fn define_outputs(cx: &mut Cx, model: &Model) -> Result<Vec<Port>> {
    let mut ports = Vec::new();
    for info in &model.graph.outputs {
        let at = At {
            node: info.name.clone(),
            op: "graph output".into(),
        };
        let v = cx
            .get(&info.name)
            .cloned()
            .ok_or_else(|| OnnxError::Undefined {
                at: at.clone(),
                input: info.name.clone(),
            })?;
        let port = match v {
            Value::Host(h) => Port {
                name: info.name.clone(),
                ty: h.ty,
                shape: h.shape.clone(),
                host_name: None,
                chip_type: None,
                value: Some(h),
            },
            Value::Device { t, ty } => {
                let host_name = format!("out:{}", info.name);
                let out = cx.graph.add_variable(t.dtype(), t.shape(), &host_name);
                let lowering = |e: poplar::GraphError| OnnxError::lowering(&at, e);
                if out.num_elements() > 0 {
                    cx.graph.map_linearly(&out, 2).map_err(lowering)?;
                    cx.prog.push(Program::copy(&t, &out));
                }
                cx.graph
                    .create_host_read(&host_name, &out)
                    .map_err(lowering)?;
                // A `float` output computed in f16 (`fp16`) is read back as `float`.
                let ty = if ty == ElemType::Float16 && info.ty == ElemType::Float {
                    info.ty
                } else {
                    ty
                };
                Port {
                    name: info.name.clone(),
                    ty,
                    shape: t.shape().to_vec(),
                    host_name: Some(host_name),
                    chip_type: Some(t.dtype()),
                    value: None,
                }
            }
        };
        ports.push(port);
    }
    Ok(ports)
}

/// Checks an array given for an input against the input's type and shape.
fn check_input(name: &str, ty: ElemType, shape: &[usize], h: &HostTensor) -> Result<()> {
    let err = |reason: String| OnnxError::Input {
        input: name.into(),
        reason,
    };
    if h.ty != ty {
        return Err(err(format!("the model takes {ty}, the array is {}", h.ty)));
    }
    if h.shape != shape {
        return Err(err(format!(
            "the model takes shape {shape:?}, the array has {:?}",
            h.shape
        )));
    }
    Ok(())
}

/// A compiled model on an engine: give it inputs, get its outputs.
pub struct Session {
    replicated: bool,
    inputs: Vec<Port>,
    outputs: Vec<Port>,
    exe: Executable,
    engine: Engine,
}

impl Session {
    /// Imports and compiles `model` for `target`.
    pub fn new(model: &Model, target: &Target, options: &ImportOptions) -> Result<Session> {
        let imported = import(model, target, options)?;
        Session::compile(
            imported,
            &CompileOptions::default(),
            EngineOptions::default(),
        )
    }

    /// Compiles an imported model.
    pub fn compile(
        imported: Imported,
        options: &CompileOptions,
        engine: EngineOptions,
    ) -> Result<Session> {
        let replicated = imported.graph.replication_factor() > 1;
        let exe = compile(&imported.graph, &[imported.program], options).map_err(|e| {
            OnnxError::Poplar {
                stage: "compile",
                source: Box::new(e),
            }
        })?;
        let engine = Engine::new(&exe, engine).map_err(|e| OnnxError::Poplar {
            stage: "engine",
            source: Box::new(e),
        })?;
        Ok(Session {
            replicated,
            inputs: imported.inputs,
            outputs: imported.outputs,
            exe,
            engine,
        })
    }

    /// The inputs the model takes (fixed inputs excluded).
    pub fn inputs(&self) -> &[Port] {
        &self.inputs
    }

    /// The outputs the model gives.
    pub fn outputs(&self) -> &[Port] {
        &self.outputs
    }

    /// The compiled executable (memory report, static profile).
    pub fn executable(&self) -> &Executable {
        &self.exe
    }

    /// The engine (its profile after a run).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The engine, to enable profiling or take the profile.
    pub fn engine_mut(&mut self) -> &mut Engine {
        &mut self.engine
    }

    /// Runs the model once on `inputs` (one array per input, by name) and returns every
    /// output in the model's order.
    pub fn run(
        &mut self,
        inputs: &BTreeMap<String, HostTensor>,
    ) -> Result<Vec<(String, HostTensor)>> {
        for name in inputs.keys() {
            if !self.inputs.iter().any(|p| &p.name == name) {
                return Err(OnnxError::Input {
                    input: name.clone(),
                    reason: "the model has no such input".into(),
                });
            }
        }
        for port in &self.inputs {
            let h = inputs.get(&port.name).ok_or_else(|| OnnxError::Input {
                input: port.name.clone(),
                reason: "no array given".into(),
            })?;
            check_input(&port.name, port.ty, &port.shape, h)?;
            h.check_fits_device(&port.name)?;
            if let Some(host_name) = &port.host_name {
                write(&mut self.engine, host_name, port.chip_type, h)?;
            }
        }
        self.engine.run(0).map_err(|e| OnnxError::Poplar {
            stage: "run",
            source: Box::new(e),
        })?;
        self.outputs
            .iter()
            .map(|p| {
                let value = match (&p.value, &p.host_name) {
                    (Some(v), _) => v.clone(),
                    (None, Some(h)) => read(&self.engine, h, p, self.replicated)?,
                    (None, None) => unreachable!("an output is either known or read"),
                };
                Ok((p.name.clone(), value))
            })
            .collect()
    }
}

fn engine_err(e: poplar::EngineError) -> OnnxError {
    OnnxError::Poplar {
        stage: "run",
        source: Box::new(e),
    }
}

fn write(engine: &mut Engine, name: &str, chip: Option<DType>, h: &HostTensor) -> Result<()> {
    let f = h.to_f64();
    let i = h.to_i64();
    match chip.expect("inputs written by the host are on the chip") {
        DType::F32 => engine.write_tensor(name, &f.iter().map(|&x| x as f32).collect::<Vec<_>>()),
        DType::F16 => engine.write_tensor(
            name,
            &f.iter()
                .map(|&x| poplar::f16_from_f64(x))
                .collect::<Vec<_>>(),
        ),
        DType::I32 => engine.write_tensor(name, &i.iter().map(|&x| x as i32).collect::<Vec<_>>()),
        DType::U32 => engine.write_tensor(name, &i.iter().map(|&x| x as u32).collect::<Vec<_>>()),
        DType::U16 => engine.write_tensor(name, &i.iter().map(|&x| x as u16).collect::<Vec<_>>()),
        DType::U8 => engine.write_tensor(name, &i.iter().map(|&x| x as u8).collect::<Vec<_>>()),
        DType::Bool => engine.write_tensor(name, &i.iter().map(|&x| x != 0).collect::<Vec<_>>()),
    }
    .map_err(engine_err)
}

/// Reads an output (replica 0's of a replicated model).
fn read(engine: &Engine, name: &str, p: &Port, replicated: bool) -> Result<HostTensor> {
    fn get<T: poplar::Element>(engine: &Engine, name: &str, replicated: bool) -> Result<Vec<T>> {
        if replicated {
            engine.read_tensor_replica::<T>(name, 0)
        } else {
            engine.read_tensor::<T>(name)
        }
        .map_err(engine_err)
    }
    fn ints<T: poplar::Element + Into<i64>>(v: Vec<T>) -> HostData {
        HostData::Int(v.into_iter().map(Into::into).collect())
    }
    let r = replicated;
    let data = match p
        .chip_type
        .expect("outputs read by the host are on the chip")
    {
        DType::F32 => HostData::Float(
            get::<f32>(engine, name, r)?
                .into_iter()
                .map(f64::from)
                .collect(),
        ),
        DType::F16 => HostData::Float(
            get::<poplar::f16>(engine, name, r)?
                .iter()
                .map(|x| x.to_f64())
                .collect(),
        ),
        DType::I32 => ints(get::<i32>(engine, name, r)?),
        DType::U32 => ints(get::<u32>(engine, name, r)?),
        DType::U16 => ints(get::<u16>(engine, name, r)?),
        DType::U8 => ints(get::<u8>(engine, name, r)?),
        DType::Bool => ints(get::<bool>(engine, name, r)?),
    };
    Ok(HostTensor {
        ty: p.ty,
        shape: p.shape.clone(),
        data,
    })
}

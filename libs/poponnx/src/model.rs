//! An ONNX model as the importer reads it: the decoded protobuf turned into plain structures
//! (nodes, attributes, value infos, initializers), checked for what every later stage relies
//! on — one definition per value, data that matches its shape, an opset this importer takes.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use prost::Message;

use crate::error::{At, OnnxError, Result};
use crate::host::{ElemType, HostTensor};
use crate::proto::{
    self, attribute_proto::AttributeType, tensor_shape_proto::dimension, type_proto,
};

/// The opsets of the default domain (`ai.onnx`) this importer takes: 1 to 22, the newest that
/// the pinned `onnx` release (1.17.0) generates. An op's meaning is that of its newest version
/// at the model's opset; from opset 13 on every supported op is lowered as its version says.
/// Below 13, the versions that differ from opset 13's differ by attributes (read or refused by
/// name, so never misread), except for the softmax family's `axis`, which coerced the input to
/// 2-D: those are refused below 13 ([`SOFTMAX_OPSET`]).
pub const OPSETS: std::ops::RangeInclusive<i64> = 1..=22;

/// The first opset in which Softmax, LogSoftmax and Hardmax work along one axis.
pub const SOFTMAX_OPSET: i64 = 13;

/// A dimension of a value's declared shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dim {
    Fixed(usize),
    /// A symbolic size (`dim_param`, such as `batch`).
    Param(String),
    Unknown,
}

/// A graph input's or output's declared type and shape.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueInfo {
    pub name: String,
    pub ty: ElemType,
    /// `None` when the model declares no shape.
    pub shape: Option<Vec<Dim>>,
}

impl ValueInfo {
    /// The shape when every dimension is fixed (and it holds at most
    /// [`MAX_ELEMENTS`](crate::MAX_ELEMENTS)), else the first dimension that is not.
    pub fn static_shape(&self) -> Result<Vec<usize>> {
        let shape = self.fixed_dims()?;
        if crate::lower::checked_len(&shape).is_none() {
            return Err(OnnxError::Invalid {
                what: format!("value '{}'", self.name),
                reason: format!("shape {shape:?} holds more than 2^36 elements"),
            });
        }
        Ok(shape)
    }

    fn fixed_dims(&self) -> Result<Vec<usize>> {
        let Some(shape) = &self.shape else {
            return Err(OnnxError::DynamicShape {
                what: format!("value '{}'", self.name),
                axis: 0,
                reason: "the model declares no shape".into(),
            });
        };
        shape
            .iter()
            .enumerate()
            .map(|(axis, d)| match d {
                Dim::Fixed(n) => Ok(*n),
                Dim::Param(p) => Err(OnnxError::DynamicShape {
                    what: format!("value '{}'", self.name),
                    axis,
                    reason: format!("symbolic size '{p}'"),
                }),
                Dim::Unknown => Err(OnnxError::DynamicShape {
                    what: format!("value '{}'", self.name),
                    axis,
                    reason: "unknown size".into(),
                }),
            })
            .collect()
    }
}

/// An attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    Float(f32),
    Int(i64),
    String(String),
    Tensor(HostTensor),
    Floats(Vec<f32>),
    Ints(Vec<i64>),
    Strings(Vec<String>),
    /// A kind the importer does not read (graphs, sparse tensors, type protos).
    Other(&'static str),
}

/// A node of the graph.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The node's position in the graph.
    pub index: usize,
    /// Its name, or `#index` when the model gives none.
    pub name: String,
    pub op: String,
    /// The domain, empty for the default one.
    pub domain: String,
    /// Input names, an empty name for an optional input left out.
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    pub attributes: Vec<(String, AttrValue)>,
}

impl Node {
    /// Where this node is, for errors.
    pub fn at(&self) -> At {
        let op = if self.domain.is_empty() || self.domain == "ai.onnx" {
            self.op.clone()
        } else {
            format!("{}::{}", self.domain, self.op)
        };
        At {
            node: self.name.clone(),
            op,
        }
    }
}

/// The model's main graph.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelGraph {
    pub name: String,
    pub nodes: Vec<Node>,
    /// The graph's inputs that are not initializers (those the user gives).
    pub inputs: Vec<ValueInfo>,
    pub outputs: Vec<ValueInfo>,
    /// Initializers by name (weights and constants).
    pub initializers: BTreeMap<String, HostTensor>,
}

/// A model read from an `.onnx` file or bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// The default domain's opset.
    pub opset: i64,
    pub producer: String,
    pub graph: ModelGraph,
}

impl Model {
    /// Reads a model from a file; external data is read from the file's folder.
    pub fn load(path: impl AsRef<Path>) -> Result<Model> {
        let path = path.as_ref();
        let bytes = crate::io::read_file(path)?;
        let base = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        Model::decode(&bytes, &path.display().to_string(), Some(&base))
    }

    /// Reads a model from its bytes (external data is refused: there is no folder to read it
    /// from).
    pub fn from_bytes(bytes: &[u8]) -> Result<Model> {
        Model::decode(bytes, "model", None)
    }

    fn decode(bytes: &[u8], what: &str, base: Option<&Path>) -> Result<Model> {
        let m = proto::ModelProto::decode(bytes).map_err(|e| OnnxError::Decode {
            what: what.into(),
            kind: "model",
            reason: e.to_string(),
        })?;
        let opset = default_opset(&m)?;
        let g = m.graph.as_ref().ok_or_else(|| OnnxError::Invalid {
            what: what.into(),
            reason: "the model has no graph".into(),
        })?;
        Ok(Model {
            opset,
            producer: m.producer_name.clone().unwrap_or_default(),
            graph: read_graph(g, base)?,
        })
    }
}

fn default_opset(m: &proto::ModelProto) -> Result<i64> {
    let mut opset = None;
    for o in &m.opset_import {
        let domain = o.domain.clone().unwrap_or_default();
        let version = o.version.unwrap_or(0);
        if domain.is_empty() || domain == "ai.onnx" {
            opset = Some(version);
        }
    }
    let version = opset.ok_or_else(|| OnnxError::Invalid {
        what: "model".into(),
        reason: "imports no opset of the default domain".into(),
    })?;
    if !OPSETS.contains(&version) {
        return Err(OnnxError::Opset {
            domain: "ai.onnx".into(),
            version,
            supported: format!("{} to {}", OPSETS.start(), OPSETS.end()),
        });
    }
    Ok(version)
}

fn read_graph(g: &proto::GraphProto, base: Option<&Path>) -> Result<ModelGraph> {
    let mut initializers = BTreeMap::new();
    for t in &g.initializer {
        let name = t.name.clone().unwrap_or_default();
        let what = format!("initializer '{name}'");
        let value = HostTensor::from_proto(t, base, &what)?;
        if initializers.insert(name, value).is_some() {
            return Err(OnnxError::Invalid {
                what,
                reason: "defined twice".into(),
            });
        }
    }
    if let Some(s) = g.sparse_initializer.first() {
        let name = s
            .values
            .as_ref()
            .and_then(|v| v.name.clone())
            .unwrap_or_default();
        return Err(OnnxError::Invalid {
            what: format!("sparse initializer '{name}'"),
            reason: "sparse initializers are not supported".into(),
        });
    }
    let inputs = g
        .input
        .iter()
        .map(value_info)
        .filter(|v| {
            v.as_ref()
                .map_or(true, |v| !initializers.contains_key(&v.name))
        })
        .collect::<Result<Vec<_>>>()?;
    let outputs = g
        .output
        .iter()
        .map(value_info)
        .collect::<Result<Vec<_>>>()?;
    let nodes = g
        .node
        .iter()
        .enumerate()
        .map(|(i, n)| read_node(i, n, base))
        .collect::<Result<Vec<_>>>()?;
    check_single_definitions(&inputs, &initializers, &nodes)?;
    Ok(ModelGraph {
        name: g.name.clone().unwrap_or_default(),
        nodes,
        inputs,
        outputs,
        initializers,
    })
}

/// Every value is defined once: by a graph input, an initializer or one node's output.
fn check_single_definitions(
    inputs: &[ValueInfo],
    initializers: &BTreeMap<String, HostTensor>,
    nodes: &[Node],
) -> Result<()> {
    let mut defined: HashSet<&str> = initializers.keys().map(String::as_str).collect();
    for i in inputs {
        if !defined.insert(&i.name) {
            return Err(OnnxError::Invalid {
                what: format!("graph input '{}'", i.name),
                reason: "defined twice".into(),
            });
        }
    }
    for n in nodes {
        for o in n.outputs.iter().filter(|o| !o.is_empty()) {
            if !defined.insert(o) {
                return Err(OnnxError::Invalid {
                    what: format!("{}: output '{o}'", n.at()),
                    reason: "is already defined by an input, an initializer or another node".into(),
                });
            }
        }
    }
    Ok(())
}

fn value_info(v: &proto::ValueInfoProto) -> Result<ValueInfo> {
    let name = v.name.clone().unwrap_or_default();
    let tensor = match v.r#type.as_ref().and_then(|t| t.value.as_ref()) {
        Some(type_proto::Value::TensorType(t)) => t,
        Some(_) => {
            return Err(OnnxError::Invalid {
                what: format!("value '{name}'"),
                reason: "is not a tensor (sequences, maps and optionals are not supported)".into(),
            })
        }
        None => {
            return Err(OnnxError::Invalid {
                what: format!("value '{name}'"),
                reason: "has no type".into(),
            })
        }
    };
    let ty = ElemType::from_code(tensor.elem_type.unwrap_or(0));
    let shape = tensor.shape.as_ref().map(|s| {
        s.dim
            .iter()
            .map(|d| match &d.value {
                Some(dimension::Value::DimValue(n)) if *n >= 0 => Dim::Fixed(*n as usize),
                Some(dimension::Value::DimParam(p)) => Dim::Param(p.clone()),
                _ => Dim::Unknown,
            })
            .collect()
    });
    Ok(ValueInfo { name, ty, shape })
}

fn read_node(index: usize, n: &proto::NodeProto, base: Option<&Path>) -> Result<Node> {
    let name = n
        .name
        .clone()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| format!("#{index}"));
    let mut node = Node {
        index,
        name,
        op: n.op_type.clone().unwrap_or_default(),
        domain: n.domain.clone().unwrap_or_default(),
        inputs: n.input.clone(),
        outputs: n.output.clone(),
        attributes: Vec::new(),
    };
    let mut seen = HashMap::new();
    for a in &n.attribute {
        let aname = a.name.clone().unwrap_or_default();
        let value = attr_value(a, base, &node, &aname)?;
        if seen.insert(aname.clone(), ()).is_some() {
            return Err(OnnxError::attribute(&node.at(), &aname, "given twice"));
        }
        node.attributes.push((aname, value));
    }
    Ok(node)
}

fn attr_value(
    a: &proto::AttributeProto,
    base: Option<&Path>,
    node: &Node,
    name: &str,
) -> Result<AttrValue> {
    let kind = a.r#type.and_then(|t| AttributeType::try_from(t).ok());
    let s = |b: &Vec<u8>| String::from_utf8_lossy(b).into_owned();
    Ok(match kind {
        Some(AttributeType::Float) => AttrValue::Float(a.f.unwrap_or(0.0)),
        Some(AttributeType::Int) => AttrValue::Int(a.i.unwrap_or(0)),
        Some(AttributeType::String) => AttrValue::String(a.s.as_ref().map(s).unwrap_or_default()),
        Some(AttributeType::Tensor) => {
            let t = a.t.as_ref().ok_or_else(|| {
                OnnxError::attribute(&node.at(), name, "a tensor attribute without its tensor")
            })?;
            AttrValue::Tensor(HostTensor::from_proto(
                t,
                base,
                &format!("{}: attribute '{name}'", node.at()),
            )?)
        }
        Some(AttributeType::Floats) => AttrValue::Floats(a.floats.clone()),
        Some(AttributeType::Ints) => AttrValue::Ints(a.ints.clone()),
        Some(AttributeType::Strings) => AttrValue::Strings(a.strings.iter().map(s).collect()),
        Some(AttributeType::Graph) | Some(AttributeType::Graphs) => AttrValue::Other("graph"),
        Some(AttributeType::SparseTensor) | Some(AttributeType::SparseTensors) => {
            AttrValue::Other("sparse tensor")
        }
        Some(AttributeType::TypeProto) | Some(AttributeType::TypeProtos) => {
            AttrValue::Other("type")
        }
        Some(AttributeType::Tensors) => AttrValue::Other("tensors"),
        Some(AttributeType::Undefined) | None => AttrValue::Other("undefined"),
    })
}

/// Reads one `TensorProto` file (as ONNX's test data sets hold inputs and outputs).
pub fn read_tensor_file(path: impl AsRef<Path>) -> Result<(String, HostTensor)> {
    let path = path.as_ref();
    let bytes = crate::io::read_file(path)?;
    let what = path.display().to_string();
    let t = proto::TensorProto::decode(bytes.as_slice()).map_err(|e| OnnxError::Decode {
        what: what.clone(),
        kind: "tensor",
        reason: e.to_string(),
    })?;
    let value = HostTensor::from_proto(&t, path.parent(), &what)?;
    Ok((t.name.clone().unwrap_or_default(), value))
}

//! Lowering: each node of the model, in order, onto the graph-building ops of popops, poplin and
//! popnn, with shapes and element types inferred as it goes.
//!
//! A value is either on the chip (a [`Tensor`], with the ONNX type it stands for) or known on
//! the host ([`HostTensor`]: initializers, `Constant` nodes, and what is computed from them
//! alone, such as `Shape`). Inputs that set a shape (Reshape's shape, Slice's starts, …) must be
//! host values. A host value read by an op on the chip becomes a graph constant once.
//!
//! Each op family has its module; a module's `lower` takes the ops it knows and returns `None`
//! for the others. Every attribute a node carries must be read by its op's lowering: one left
//! unread is an error naming it (the lowering does not know what it would change).

mod elementwise;
mod image;
mod index;
mod linalg;
mod loss;
mod nn;
mod reduce;
mod rnn;
mod shape;

use std::cell::RefCell;
use std::collections::HashMap;

use poplar::{DType, Graph, Program, Tensor};
use popops::expr::Expr;

use crate::error::{At, OnnxError, Result};
use crate::host::{ElemType, HostTensor};
use crate::model::{AttrValue, Node};

/// A value of the model during lowering.
#[derive(Debug, Clone)]
pub(crate) enum Value {
    /// On the chip; `ty` is the ONNX type it holds (`Int64` held as `i32`).
    Device { t: Tensor, ty: ElemType },
    /// Known when the graph is built.
    Host(HostTensor),
}

impl Value {
    pub(crate) fn shape(&self) -> Vec<usize> {
        match self {
            Value::Device { t, .. } => t.shape().to_vec(),
            Value::Host(h) => h.shape.clone(),
        }
    }

    pub(crate) fn ty(&self) -> ElemType {
        match self {
            Value::Device { ty, .. } => *ty,
            Value::Host(h) => h.ty,
        }
    }
}

/// The lowering's state: the graph, the program built so far and every value by name.
pub(crate) struct Cx<'g> {
    pub graph: &'g mut Graph,
    pub prog: Vec<Program>,
    values: HashMap<String, Value>,
    /// Device copies of host values, by value name.
    materialised: HashMap<String, Tensor>,
    /// A counter for unique debug names.
    serial: usize,
    /// The model's opset of the default domain.
    pub opset: i64,
    /// The tile the next small tensor starts on ([`Cx::map_linearly`]).
    next_tile: u32,
}

/// One node being lowered: its attributes, with a record of those read.
pub(crate) struct NodeCx<'n> {
    pub node: &'n Node,
    pub at: At,
    used: RefCell<Vec<bool>>,
}

/// What an op's lowering returns: one value per output.
pub(crate) type Outputs = Result<Vec<Value>>;

impl<'n> NodeCx<'n> {
    fn new(node: &'n Node) -> Self {
        NodeCx {
            node,
            at: node.at(),
            used: RefCell::new(vec![false; node.attributes.len()]),
        }
    }

    fn attr(&self, name: &str) -> Option<&'n AttrValue> {
        let i = self.node.attributes.iter().position(|(n, _)| n == name)?;
        self.used.borrow_mut()[i] = true;
        Some(&self.node.attributes[i].1)
    }

    fn wrong_kind(&self, name: &str, want: &str) -> OnnxError {
        OnnxError::attribute(&self.at, name, format!("expected {want}"))
    }

    /// An `int` attribute, or `default`.
    pub fn int(&self, name: &str, default: i64) -> Result<i64> {
        match self.attr(name) {
            None => Ok(default),
            Some(AttrValue::Int(i)) => Ok(*i),
            Some(_) => Err(self.wrong_kind(name, "an int")),
        }
    }

    /// An `int` attribute that may be absent.
    pub fn opt_int(&self, name: &str) -> Result<Option<i64>> {
        match self.attr(name) {
            None => Ok(None),
            Some(AttrValue::Int(i)) => Ok(Some(*i)),
            Some(_) => Err(self.wrong_kind(name, "an int")),
        }
    }

    /// A `float` attribute, or `default`.
    pub fn float(&self, name: &str, default: f32) -> Result<f32> {
        match self.attr(name) {
            None => Ok(default),
            Some(AttrValue::Float(f)) => Ok(*f),
            Some(_) => Err(self.wrong_kind(name, "a float")),
        }
    }

    /// A `float` attribute that may be absent.
    pub fn opt_float(&self, name: &str) -> Result<Option<f32>> {
        match self.attr(name) {
            None => Ok(None),
            Some(AttrValue::Float(f)) => Ok(Some(*f)),
            Some(_) => Err(self.wrong_kind(name, "a float")),
        }
    }

    /// A `string` attribute, or `default`.
    pub fn string(&self, name: &str, default: &str) -> Result<String> {
        match self.attr(name) {
            None => Ok(default.to_string()),
            Some(AttrValue::String(s)) => Ok(s.clone()),
            Some(_) => Err(self.wrong_kind(name, "a string")),
        }
    }

    /// An `ints` attribute that may be absent.
    pub fn ints(&self, name: &str) -> Result<Option<Vec<i64>>> {
        match self.attr(name) {
            None => Ok(None),
            Some(AttrValue::Ints(v)) => Ok(Some(v.clone())),
            Some(AttrValue::Int(i)) => Ok(Some(vec![*i])),
            Some(_) => Err(self.wrong_kind(name, "ints")),
        }
    }

    /// A `strings` attribute that may be absent.
    pub fn strings(&self, name: &str) -> Result<Option<Vec<String>>> {
        match self.attr(name) {
            None => Ok(None),
            Some(AttrValue::Strings(v)) => Ok(Some(v.clone())),
            Some(_) => Err(self.wrong_kind(name, "strings")),
        }
    }

    /// A `floats` attribute that may be absent.
    pub fn floats(&self, name: &str) -> Result<Option<Vec<f32>>> {
        match self.attr(name) {
            None => Ok(None),
            Some(AttrValue::Floats(v)) => Ok(Some(v.clone())),
            Some(_) => Err(self.wrong_kind(name, "floats")),
        }
    }

    /// A `tensor` attribute that may be absent.
    pub fn tensor(&self, name: &str) -> Result<Option<HostTensor>> {
        match self.attr(name) {
            None => Ok(None),
            Some(AttrValue::Tensor(t)) => Ok(Some(t.clone())),
            Some(_) => Err(self.wrong_kind(name, "a tensor")),
        }
    }

    /// Marks an attribute as handled without reading it (one whose every value means the same
    /// here, such as `Dropout`'s `seed`).
    pub fn ignore(&self, name: &str) {
        let _ = self.attr(name);
    }

    /// The number of inputs given (trailing optional ones left out are not counted).
    pub fn num_inputs(&self) -> usize {
        self.node.inputs.len()
    }

    /// Whether input `i` is given.
    pub fn has_input(&self, i: usize) -> bool {
        self.node.inputs.get(i).is_some_and(|s| !s.is_empty())
    }

    /// The name of input `i` ("" when left out).
    pub fn input_name(&self, i: usize) -> &str {
        self.node.inputs.get(i).map_or("", String::as_str)
    }

    /// A shape error about input `i`.
    pub fn input_error(&self, i: usize, reason: impl Into<String>) -> OnnxError {
        OnnxError::shape(
            &self.at,
            format!("input {i} ('{}')", self.input_name(i)),
            reason,
        )
    }

    /// An error about an attribute's value.
    pub fn attr_error(&self, name: &str, reason: impl Into<String>) -> OnnxError {
        OnnxError::attribute(&self.at, name, reason)
    }

    /// An error of the graph library while lowering this node.
    pub fn lowering(&self, e: impl std::error::Error + Send + Sync + 'static) -> OnnxError {
        OnnxError::lowering(&self.at, e)
    }

    /// An element type this op does not take.
    pub fn type_error(&self, what: impl Into<String>, ty: ElemType, reason: &str) -> OnnxError {
        OnnxError::UnsupportedType {
            at: self.at.clone(),
            what: what.into(),
            dtype: ty.name(),
            reason: reason.into(),
        }
    }

    /// The first attribute not read, as an error.
    fn check_all_read(&self) -> Result<()> {
        let used = self.used.borrow();
        match self
            .node
            .attributes
            .iter()
            .zip(used.iter())
            .find(|(_, &u)| !u)
        {
            Some(((name, _), _)) => Err(OnnxError::attribute(
                &self.at,
                name,
                "not taken by this op's lowering",
            )),
            None => Ok(()),
        }
    }
}

impl<'g> Cx<'g> {
    pub(crate) fn new(graph: &'g mut Graph, opset: i64) -> Self {
        Cx {
            graph,
            prog: Vec::new(),
            values: HashMap::new(),
            materialised: HashMap::new(),
            serial: 0,
            opset,
            next_tile: 0,
        }
    }

    /// Defines a value by name.
    pub(crate) fn define(&mut self, name: &str, v: Value) {
        self.values.insert(name.to_string(), v);
    }

    /// A defined value.
    pub(crate) fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }

    /// A unique debug name for a tensor made while lowering `n`.
    pub fn name(&mut self, n: &NodeCx, what: &str) -> String {
        self.serial += 1;
        format!("{}/{what}#{}", n.at.node, self.serial)
    }

    /// Input `i`'s value (an error if it is left out or undefined).
    pub fn value(&self, n: &NodeCx, i: usize) -> Result<Value> {
        let name = n.input_name(i);
        if name.is_empty() {
            return Err(n.input_error(i, "is required"));
        }
        self.values
            .get(name)
            .cloned()
            .ok_or_else(|| OnnxError::Undefined {
                at: n.at.clone(),
                input: name.into(),
            })
    }

    /// Input `i`'s value when given.
    pub fn opt_value(&self, n: &NodeCx, i: usize) -> Result<Option<Value>> {
        if n.has_input(i) {
            self.value(n, i).map(Some)
        } else {
            Ok(None)
        }
    }

    /// Input `i` as a host value: it must be known when the graph is built.
    pub fn host(&self, n: &NodeCx, i: usize) -> Result<HostTensor> {
        match self.value(n, i)? {
            Value::Host(h) => Ok(h),
            Value::Device { .. } => Err(OnnxError::NotConstant {
                at: n.at.clone(),
                index: i,
                input: n.input_name(i).into(),
            }),
        }
    }

    /// Input `i` as host integers, when given.
    pub fn opt_ints(&self, n: &NodeCx, i: usize) -> Result<Option<Vec<i64>>> {
        if n.has_input(i) {
            Ok(Some(self.host(n, i)?.to_i64()))
        } else {
            Ok(None)
        }
    }

    /// Input `i` on the chip, with its ONNX type (a host value becomes a constant).
    pub fn tensor(&mut self, n: &NodeCx, i: usize) -> Result<(Tensor, ElemType)> {
        match self.value(n, i)? {
            Value::Device { t, ty } => Ok((t, ty)),
            Value::Host(h) => {
                let name = n.input_name(i).to_string();
                if let Some(t) = self.materialised.get(&name) {
                    return Ok((t.clone(), h.ty));
                }
                let t = self.constant(n, &h, &name)?;
                self.materialised.insert(name, t.clone());
                Ok((t, h.ty))
            }
        }
    }

    /// Input `i` on the chip, which must be `float` or `float16` (the ops of real numbers).
    pub fn float_tensor(&mut self, n: &NodeCx, i: usize) -> Result<(Tensor, ElemType)> {
        let (t, ty) = self.tensor(n, i)?;
        match ty {
            ElemType::Float | ElemType::Float16 => Ok((t, ty)),
            _ => Err(n.type_error(
                format!("input {i} ('{}')", n.input_name(i)),
                ty,
                "this op does not take (float and float16 only)",
            )),
        }
    }

    /// A graph constant holding a host tensor, spread over the tiles.
    pub fn constant(&mut self, n: &NodeCx, h: &HostTensor, name: &str) -> Result<Tensor> {
        let dtype =
            h.ty.device()
                .ok_or_else(|| n.type_error(format!("value '{name}'"), h.ty, "no tile holds"))?;
        h.check_fits_device(name)?;
        let shape = h.shape.clone();
        let t = match dtype {
            DType::F32 => {
                let v: Vec<f32> = h.to_f64().iter().map(|&x| x as f32).collect();
                self.graph.add_constant(&shape, &v, name)
            }
            DType::F16 => {
                let v: Vec<poplar::f16> = h
                    .to_f64()
                    .iter()
                    .map(|&x| poplar::f16_from_f64(x))
                    .collect();
                self.graph.add_constant(&shape, &v, name)
            }
            DType::I32 => {
                let v: Vec<i32> = h.to_i64().iter().map(|&x| x as i32).collect();
                self.graph.add_constant(&shape, &v, name)
            }
            DType::U32 => {
                let v: Vec<u32> = h.to_i64().iter().map(|&x| x as u32).collect();
                self.graph.add_constant(&shape, &v, name)
            }
            DType::U16 => {
                let v: Vec<u16> = h.to_i64().iter().map(|&x| x as u16).collect();
                self.graph.add_constant(&shape, &v, name)
            }
            DType::U8 => {
                let v: Vec<u8> = h.to_i64().iter().map(|&x| x as u8).collect();
                self.graph.add_constant(&shape, &v, name)
            }
            DType::Bool => {
                let v: Vec<bool> = h.to_i64().iter().map(|&x| x != 0).collect();
                self.graph.add_constant(&shape, &v, name)
            }
        }
        .map_err(|e| n.lowering(e))?;
        self.map_linearly(n, &t)?;
        Ok(t)
    }

    /// `value` (one element) everywhere in `shape`: a host value when it is small
    /// ([`HOST_FOLD_LIMIT`](shape::HOST_FOLD_LIMIT) elements), else a broadcast view of one
    /// constant element on the chip (nothing of the shape's size is made on the host).
    pub fn fill(&mut self, n: &NodeCx, value: &HostTensor, shape: &[usize]) -> Result<Value> {
        use crate::host::HostData;
        let len = checked_len(shape).ok_or_else(|| {
            OnnxError::shape(&n.at, "a fill", format!("shape {shape:?} is too large"))
        })?;
        let repeat = |k: usize| match &value.data {
            HostData::Float(v) => HostData::Float(vec![v[0]; k]),
            HostData::Int(v) => HostData::Int(vec![v[0]; k]),
        };
        if len <= shape::HOST_FOLD_LIMIT {
            let data = repeat(len);
            return Ok(Value::Host(HostTensor {
                ty: value.ty,
                shape: shape.to_vec(),
                data,
            }));
        }
        let one = HostTensor {
            ty: value.ty,
            shape: vec![1; shape.len()],
            data: repeat(1),
        };
        let name = self.name(n, "fill");
        let t = self.constant(n, &one, &name)?;
        let t = shape::broadcast_to(n, &t, shape)?;
        Ok(Value::Device { t, ty: value.ty })
    }

    /// A tensor on the chip of `shape` and `dtype` holding `value` everywhere (a broadcast
    /// view of one constant element).
    pub fn filled(
        &mut self,
        n: &NodeCx,
        dtype: DType,
        shape: &[usize],
        value: f64,
    ) -> Result<Tensor> {
        let ty = ElemType::of_device(dtype);
        let one = if ty.is_float() {
            HostTensor::float(ty, &vec![1; shape.len()], vec![value])
        } else {
            HostTensor::int(ty, &vec![1; shape.len()], vec![value as i64])
        };
        let name = self.name(n, "filled");
        let t = self.constant(n, &one, &name)?;
        shape::broadcast_to(n, &t, shape)
    }

    /// Spreads a new tensor over the tiles.
    ///
    /// A tensor too small to give every tile [`SMALL_TENSOR_PER_TILE`] elements is placed on
    /// the next tiles in turn instead of on the first ones, so that a model's many small
    /// tensors (biases, normalisation parameters, shapes' constants) and the vertices that
    /// follow them spread over the chip rather than filling tile 0.
    pub fn map_linearly(&mut self, n: &NodeCx, t: &Tensor) -> Result<()> {
        let len = t.num_elements();
        if len == 0 {
            return Ok(());
        }
        let grain = (8 / t.dtype().size().max(1)).max(1);
        let tiles = self.graph.target().num_tiles();
        let per_tile = SMALL_TENSOR_PER_TILE.max(grain);
        let needed = len.div_ceil(per_tile).min(u32::MAX as usize) as u32;
        if needed >= tiles {
            return self.graph.map_linearly(t, grain).map_err(|e| n.lowering(e));
        }
        if self.next_tile + needed > tiles {
            self.next_tile = 0;
        }
        let range = self.next_tile..self.next_tile + needed;
        self.next_tile += needed;
        self.graph
            .map_linearly_over(t, per_tile, range)
            .map_err(|e| n.lowering(e))
    }

    /// A new variable spread over the tiles.
    pub fn variable(
        &mut self,
        n: &NodeCx,
        dtype: DType,
        shape: &[usize],
        what: &str,
    ) -> Result<Tensor> {
        if checked_len(shape).is_none() {
            return Err(OnnxError::shape(
                &n.at,
                what,
                format!("shape {shape:?} is too large"),
            ));
        }
        let name = self.name(n, what);
        let t = self.graph.add_variable(dtype, shape, &name);
        self.map_linearly(n, &t)?;
        Ok(t)
    }

    /// `popops::map` of `expr` over `inputs`, in a compute set of its own.
    pub fn map(
        &mut self,
        n: &NodeCx,
        expr: &Expr,
        inputs: &[&Tensor],
        what: &str,
    ) -> Result<Tensor> {
        let name = self.name(n, what);
        popops::map(self.graph, expr, inputs, &mut self.prog, &name).map_err(|e| n.lowering(e))
    }

    /// A copy of `t` into a new variable of its shape (a view made whole).
    pub fn copy(&mut self, n: &NodeCx, t: &Tensor, what: &str) -> Result<Tensor> {
        let out = self.variable(n, t.dtype(), t.shape(), what)?;
        if t.num_elements() > 0 {
            self.prog.push(Program::copy(t, &out));
        }
        Ok(out)
    }

    /// Lowers one node and defines its outputs.
    pub(crate) fn lower_node(&mut self, node: &Node) -> Result<()> {
        let n = NodeCx::new(node);
        if !(node.domain.is_empty() || node.domain == "ai.onnx") {
            return Err(OnnxError::UnsupportedOp { at: n.at.clone() });
        }
        let softmax = matches!(node.op.as_str(), "Softmax" | "LogSoftmax" | "Hardmax");
        if softmax && self.opset < crate::model::SOFTMAX_OPSET {
            return Err(OnnxError::Opset {
                domain: "ai.onnx".into(),
                version: self.opset,
                supported: format!(
                    "{} to 22 for {} (before, its axis flattened the input to 2-D)",
                    crate::model::SOFTMAX_OPSET,
                    node.op
                ),
            });
        }
        let outputs = dispatch(self, &n)?;
        n.check_all_read()?;
        for (name, v) in node.outputs.iter().zip(outputs) {
            if !name.is_empty() {
                self.define(name, v);
            }
        }
        Ok(())
    }
}

/// Each family's lowering in turn; `UnsupportedOp` when none takes the op.
fn dispatch(cx: &mut Cx, n: &NodeCx) -> Outputs {
    let families: [fn(&mut Cx, &NodeCx) -> Option<Outputs>; 9] = [
        elementwise::lower,
        shape::lower,
        reduce::lower,
        linalg::lower,
        nn::lower,
        index::lower,
        image::lower,
        loss::lower,
        rnn::lower,
    ];
    for family in families {
        if let Some(out) = family(cx, n) {
            return out;
        }
    }
    Err(OnnxError::UnsupportedOp { at: n.at.clone() })
}

pub(crate) use shape::broadcast_shapes;

/// Elements a tile gets at least of a tensor the importer spreads ([`Cx::map_linearly`]).
pub(crate) const SMALL_TENSOR_PER_TILE: usize = 256;

/// The most elements of a tensor the importer makes or takes (2^36: more than a Pod64's
/// memory holds in bytes), so that no size computation overflows.
pub const MAX_ELEMENTS: usize = 1 << 36;

/// The number of elements of `shape`, when at most [`MAX_ELEMENTS`].
pub(crate) fn checked_len(shape: &[usize]) -> Option<usize> {
    shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&len| len <= MAX_ELEMENTS)
}

/// Normalises an axis in `-rank..rank` (ONNX's negative axes count from the end).
pub(crate) fn axis(n: &NodeCx, attr: &str, a: i64, rank: usize) -> Result<usize> {
    let r = rank as i64;
    if a < -r || a >= r.max(1) && !(rank == 0 && a == 0) {
        return Err(n.attr_error(attr, format!("axis {a} is outside a rank-{rank} tensor")));
    }
    Ok(if a < 0 { (a + r) as usize } else { a as usize })
}

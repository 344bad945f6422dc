//! The builder of one collective: its plan, the layout of the data over tiles (padded
//! fragments, or the tensor's own pieces in place), ring positions, buffers and vertices.

use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::Graph;
use poplar_compiler::graph::GraphError;
use poplar_compiler::graph::Tensor;
use poplar_core::dtype::DType;
use poplar_core::target::TileId;

use super::Options;
use crate::codelets::type_name;
use crate::plan::{Group, Kind, Method, Op, Plan, RingOrder};
use crate::CollectiveError;

/// One direction of travel over one half of the data.
pub(super) struct Chain {
    pub(super) half: usize,
    /// Sends to the next replica in ring order (clockwise) or the previous.
    pub(super) up_ring: bool,
    /// Per tile of the half: send and receive buffers and the step counters (one per worker
    /// context).
    pub(super) send: Vec<Tensor>,
    pub(super) recv: Vec<Tensor>,
    pub(super) step: Vec<Tensor>,
}

pub(super) struct Builder<'g> {
    pub(super) g: &'g mut Graph,
    pub(super) name: String,
    pub(super) plan: Plan,
    pub(super) dtype: DType,
    pub(super) ty: &'static str,
    /// Elements per replica.
    pub(super) n: u64,
    /// Tiles of the layout (those holding the inputs, at most `C`).
    pub(super) tiles: Vec<TileId>,
    /// Per half: per tile, the columns (`w`, possibly 0).
    pub(super) widths: Vec<Vec<usize>>,
    /// Per half: per tile with `w > 0`, the data variable (`G × w`).
    pub(super) data: Vec<Vec<Option<Tensor>>>,
    /// The ring position of this replica, one element per layout tile.
    pub(super) pos: Tensor,
    /// Ring position of each member index (`perm[i]`), the same for every group.
    pub(super) perm: Vec<u32>,
    /// Replica maps: to the next and to the previous in ring order.
    pub(super) map_next: Vec<(u32, u32)>,
    pub(super) map_prev: Vec<(u32, u32)>,
    pub(super) counter: u32,
    /// A compute set that zeroes every chain buffer made from now on (the in-place
    /// reduce-scatter: the tails past a short fragment then stay zero, so its result is
    /// zero-padded).
    pub(super) zero: Option<poplar_compiler::graph::ComputeSet>,
    /// Buffers to zero that `Fill` cannot (half precision): see [`Builder::zero_buffers`].
    pub(super) zero_halves: Vec<Tensor>,
    /// Where send and receive buffers come from when the caller shares them between
    /// collectives ([`Options::scratch`]); `None`: this collective's own.
    pub(super) scratch: Option<super::Scratch>,
}

impl<'g> Builder<'g> {
    pub(super) fn err(&self, source: GraphError) -> CollectiveError {
        CollectiveError::Graph {
            name: self.name.clone(),
            source,
        }
    }

    pub(super) fn new(
        g: &'g mut Graph,
        inputs: &[Tensor],
        kind: Kind,
        op: Op,
        group: Group,
        opts: &Options,
        name: &str,
    ) -> Result<Builder<'g>, CollectiveError> {
        Builder::with_layout(g, inputs, kind, op, group, opts, name, None)
    }

    /// `aligned`: reduce in place over this tensor's own pieces (see [`Builder::aligned`]);
    /// else the padded fragment layout of the module notes.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn with_layout(
        g: &'g mut Graph,
        inputs: &[Tensor],
        kind: Kind,
        op: Op,
        group: Group,
        opts: &Options,
        name: &str,
        aligned: Option<&Tensor>,
    ) -> Result<Builder<'g>, CollectiveError> {
        let name = name.to_string();
        if inputs.is_empty() {
            return Err(CollectiveError::BadInputs {
                name,
                reason: "no tensors given".into(),
            });
        }
        let (dtype, ty) = element_type(inputs, op, &name)?;
        let replicas = g.replication_factor();
        let groups = group.members(replicas)?;
        let gsz = groups[0].len() as u32;
        let maps = RingMaps::new(g, &groups, opts);
        let chips_per_replica = g.target().num_ipus;
        let errg = |source: GraphError| CollectiveError::Graph {
            name: name.clone(),
            source,
        };
        let (n, tiles) = input_tiles(g, inputs, &name)?;
        let c = if kind == Kind::AllGather && aligned.is_none() {
            n
        } else {
            n.div_ceil(u64::from(gsz))
        };
        let bytes_per_chip =
            c * u64::from(gsz) * dtype.size() as u64 / u64::from(chips_per_replica.max(1));
        let method = match opts.method {
            Method::Auto => Plan::auto_method(kind, gsz, chips_per_replica, bytes_per_chip),
            m => m,
        };
        let method = if gsz <= 1 { Method::Clockwise } else { method };
        let method = one_way_in_place(method, kind, aligned.is_some(), opts)
            .ok_or_else(|| two_way_in_place(&name))?;
        let halves = if method == Method::BidirectionalRingPair {
            2
        } else {
            1
        };
        let (tiles, widths, aligned_data) = match aligned {
            None => {
                let k = (tiles.len() as u64).min(c.max(1)) as usize;
                let tiles: Vec<TileId> = tiles.into_iter().take(k.max(1)).collect();
                let tiles = if tiles.is_empty() {
                    vec![TileId::new(0)]
                } else {
                    tiles
                };
                let k = tiles.len();
                let half_cols = [c.div_ceil(halves as u64), c / halves as u64];
                let widths: Vec<Vec<usize>> = (0..halves)
                    .map(|h| split(half_cols[h] as usize, k))
                    .collect();
                (tiles, widths, None)
            }
            Some(t) => {
                let (tiles, widths, data) =
                    Builder::aligned(g, t, halves, gsz as usize).map_err(errg)?;
                (tiles, widths, Some(data))
            }
        };
        let k = tiles.len();
        let steps = match (kind, method) {
            (_, _) if gsz <= 1 => 0,
            (_, Method::MeetInTheMiddle) => gsz / 2,
            _ => gsz - 1,
        };
        let plan = Plan {
            kind,
            op,
            group,
            replicas,
            group_size: gsz,
            rings: maps.rings,
            ring_order: maps.ring_order,
            method,
            fragments: gsz * halves as u32,
            elements: n,
            element_bytes: dtype.size() as u32,
            steps,
            tiles: k as u32,
        };

        let data = match aligned_data {
            Some(a) => a,
            None => padded_data(g, dtype, gsz as usize, &tiles, &widths, &name).map_err(errg)?,
        };
        let pos = ring_positions(g, &maps.pos_of, &tiles, &name).map_err(errg)?;
        Ok(Builder {
            g,
            name,
            plan,
            dtype,
            ty,
            n,
            tiles,
            widths,
            data,
            pos,
            perm: maps.perm,
            map_next: maps.map_next,
            map_prev: maps.map_prev,
            counter: 0,
            zero: None,
            zero_halves: Vec::new(),
            scratch: opts.scratch.clone(),
        })
    }

    /// The in-place layout of an all-reduce: each contiguous piece of `t` on a tile (split in
    /// two halves for the bidirectional pair) is a block whose `G` fragments are its
    /// consecutive `w = ⌈L/G⌉`-element runs, the last ones shorter or empty. The data are
    /// reduced where they are: no copy in or out and no exchange inside a replica. Returns
    /// the block tiles and, per half, their widths and pieces.
    #[allow(clippy::type_complexity)]
    pub(super) fn aligned(
        g: &Graph,
        t: &Tensor,
        halves: usize,
        gsz: usize,
    ) -> Result<(Vec<TileId>, Vec<Vec<usize>>, Vec<Vec<Option<Tensor>>>), GraphError> {
        let flat = t.flatten();
        let mut tiles = Vec::new();
        let mut widths = vec![Vec::new(); halves];
        let mut data = vec![Vec::new(); halves];
        for (tile, ranges) in g.tile_mapping(t)?.into_iter().enumerate() {
            for r in ranges {
                tiles.push(TileId::new(tile as u32));
                let len = r.end - r.start;
                let first = len.div_ceil(halves);
                for h in 0..halves {
                    let (a, b) = if h == 0 {
                        (r.start, r.start + first)
                    } else {
                        (r.start + first, r.end)
                    };
                    if b > a {
                        widths[h].push((b - a).div_ceil(gsz));
                        data[h].push(Some(flat.slice(a..b)?));
                    } else {
                        widths[h].push(0);
                        data[h].push(None);
                    }
                }
            }
        }
        Ok((tiles, widths, data))
    }

    /// The data in element order: member `i`'s block is slot `perm[i]`.
    pub(super) fn ordered(&self) -> Result<Tensor, CollectiveError> {
        let mut parts = Vec::new();
        for &slot in &self.perm {
            for (h, ws) in self.widths.iter().enumerate() {
                for (j, &w) in ws.iter().enumerate() {
                    if let Some(d) = &self.data[h][j] {
                        let s = slot as usize * w;
                        parts.push(d.slice(s..s + w).map_err(|e| self.err(e))?);
                    }
                }
            }
        }
        poplar_compiler::graph::concat(&parts).map_err(|e| self.err(e))
    }

    /// A buffer per tile of half `h` (`w` elements each; a `u32` step counter has one element
    /// per worker context), named `what`.
    pub(super) fn buffers(
        &mut self,
        h: usize,
        what: &str,
        dtype: DType,
    ) -> Result<Vec<Tensor>, CollectiveError> {
        let mut out = Vec::new();
        for j in 0..self.tiles.len() {
            let w = self.widths[h][j];
            if w == 0 {
                continue;
            }
            let len = if dtype == DType::U32 {
                self.g.target().workers_per_tile as usize
            } else {
                w
            };
            if dtype != DType::U32 {
                if let Some(scratch) = &self.scratch {
                    let key = format!("{what}{h}.{j}");
                    let v = scratch
                        .take(self.g, self.tiles[j], dtype, &key, len)
                        .map_err(|e| CollectiveError::Graph {
                            name: self.name.clone(),
                            source: e,
                        })?;
                    out.push(v);
                    continue;
                }
            }
            let v = self
                .g
                .add_variable(dtype, &[len], &format!("{}/{what}{h}.{j}", self.name));
            self.g
                .set_tile_mapping(&v, self.tiles[j])
                .map_err(|e| self.err(e))?;
            out.push(v);
        }
        Ok(out)
    }

    pub(super) fn chain(&mut self, half: usize, up_ring: bool) -> Result<Chain, CollectiveError> {
        self.counter += 1;
        let c = self.counter;
        let dt = self.dtype;
        let ch = Chain {
            half,
            up_ring,
            send: self.buffers(half, &format!("send{c}."), dt)?,
            recv: self.buffers(half, &format!("recv{c}."), dt)?,
            step: self.buffers(half, &format!("step{c}."), DType::U32)?,
        };
        if let Some(cs) = self.zero {
            for t in ch.send.iter().chain(&ch.recv) {
                self.fill_zero(cs, t)?;
            }
        }
        Ok(ch)
    }

    /// Zeroes `t` (on one tile) in compute set `cs` with `Fill`; a half-precision tensor, for
    /// which there is no `Fill`, is zeroed by `zero_buffers`, a copy from constants.
    fn fill_zero(
        &mut self,
        cs: poplar_compiler::graph::ComputeSet,
        t: &Tensor,
    ) -> Result<(), CollectiveError> {
        use ::popops::fill;
        let r = match t.dtype() {
            DType::F32 => fill(self.g, cs, t, 0f32),
            DType::I32 => fill(self.g, cs, t, 0i32),
            DType::Bool => fill(self.g, cs, t, false),
            _ => {
                self.zero_halves.push(t.clone());
                return Ok(());
            }
        };
        r.map(|_| ()).map_err(|e| CollectiveError::BadInputs {
            name: self.name.clone(),
            reason: format!("zeroing the buffers: {e}"),
        })
    }

    /// Copies zeros into the tensors `fill_zero` could not zero (on their tiles).
    pub(super) fn zero_buffers(&mut self) -> Result<Option<Program>, CollectiveError> {
        if self.zero_halves.is_empty() {
            return Ok(None);
        }
        let dst = poplar_compiler::graph::concat(&self.zero_halves).map_err(|e| self.err(e))?;
        let n = dst.num_elements();
        let zeros = zero_constant(self.g, self.dtype, n, &format!("{}/zeros", self.name))
            .map_err(|e| self.err(e))?;
        let mut at = 0;
        for t in &self.zero_halves {
            let tile = self.g.tile_mapping(t).map_err(|e| self.err(e))?;
            let tile = tile.iter().position(|r| !r.is_empty()).unwrap_or(0);
            let len = t.num_elements();
            let z = zeros.slice(at..at + len).map_err(|e| self.err(e))?;
            self.g
                .set_tile_mapping(&z, TileId::new(tile as u32))
                .map_err(|e| self.err(e))?;
            at += len;
        }
        Ok(Some(Program::copy(&zeros, &dst)))
    }

    /// Tiles (index into `tiles`) of half `h` with columns, in the order of a chain's buffers.
    pub(super) fn live(&self, h: usize) -> Vec<usize> {
        (0..self.tiles.len())
            .filter(|&j| self.widths[h][j] > 0)
            .collect()
    }

    pub(super) fn pos_at(&self, j: usize) -> Result<Tensor, CollectiveError> {
        self.pos
            .slice(j..j + 1)
            .and_then(|t| t.reshape(&[]))
            .map_err(|e| self.err(e))
    }

    pub(super) fn vertex(
        &mut self,
        cs: poplar_compiler::graph::ComputeSet,
        codelet: &str,
        j: usize,
        fields: &[(&str, &Tensor)],
        state: &[(&str, poplar_compiler::graph::StateValue)],
    ) -> Result<(), CollectiveError> {
        let v = self.g.add_vertex(cs, codelet).map_err(|e| self.err(e))?;
        for (f, t) in fields {
            self.g.connect(v, f, t).map_err(|e| self.err(e))?;
        }
        for (f, s) in state {
            self.g
                .set_vertex_state(v, f, s.clone())
                .map_err(|e| self.err(e))?;
        }
        self.g
            .set_tile_mapping(v, self.tiles[j])
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// `gcl::Map` over every data variable (`op` 0 squares, 1 scales) or over `ts`.
    pub(super) fn map(
        &mut self,
        ts: &[Tensor],
        op: u32,
        scale: f32,
    ) -> Result<Program, CollectiveError> {
        let cs = self.g.add_compute_set(&format!("{}/map", self.name));
        let codelet = format!("gcl::Map<{}>", self.ty);
        for t in ts {
            let mapping = self.g.tile_mapping(t).map_err(|e| self.err(e))?;
            let flat = t.flatten();
            for (tile, ranges) in mapping.into_iter().enumerate() {
                for r in ranges {
                    let x = flat.slice(r).map_err(|e| self.err(e))?;
                    let v = self.g.add_vertex(cs, &codelet).map_err(|e| self.err(e))?;
                    self.g.connect(v, "x", &x).map_err(|e| self.err(e))?;
                    self.g
                        .set_vertex_state(v, "op", op)
                        .map_err(|e| self.err(e))?;
                    self.g
                        .set_vertex_state(v, "scale", scale)
                        .map_err(|e| self.err(e))?;
                    self.g
                        .set_tile_mapping(v, TileId::new(tile as u32))
                        .map_err(|e| self.err(e))?;
                }
            }
        }
        Ok(Program::execute(cs))
    }

    /// Copies the inputs (and zero padding) into the data buffer.
    pub(super) fn load(
        &mut self,
        src: &Tensor,
        body: &mut Vec<Program>,
    ) -> Result<(), CollectiveError> {
        let ordered = self.ordered()?;
        let n = src.num_elements();
        body.push(Program::copy(
            src,
            &ordered.slice(0..n).map_err(|e| self.err(e))?,
        ));
        let pad = ordered.num_elements() - n;
        if pad > 0 {
            self.counter += 1;
            let zeros = zero_constant(
                self.g,
                self.dtype,
                pad,
                &format!("{}/padding{}", self.name, self.counter),
            )
            .map_err(|e| self.err(e))?;
            let dst = ordered.slice(n..n + pad).map_err(|e| self.err(e))?;
            // Map the zeros where they go, so the padding is an on-tile copy.
            let mapping = self.g.tile_mapping(&dst).map_err(|e| self.err(e))?;
            for (tile, ranges) in mapping.into_iter().enumerate() {
                for r in ranges {
                    let z = zeros.slice(r).map_err(|e| self.err(e))?;
                    self.g
                        .set_tile_mapping(&z, TileId::new(tile as u32))
                        .map_err(|e| self.err(e))?;
                }
            }
            body.push(Program::copy(&zeros, &dst));
        }
        if self.plan.op == Op::SquareAdd {
            let all: Vec<Tensor> = self.data.iter().flatten().flatten().cloned().collect();
            let p = self.map(&all, 0, 1.0)?;
            body.push(p);
        }
        Ok(())
    }
}

/// The method of a collective: in place (`aligned`), a reduce-scatter or all-gather keeps
/// each piece's fragments whole, so `Auto` never picks the ring pair there and an explicit
/// ring pair is refused (`None`).
fn one_way_in_place(method: Method, kind: Kind, aligned: bool, opts: &Options) -> Option<Method> {
    if !aligned || kind == Kind::AllReduce || method != Method::BidirectionalRingPair {
        return Some(method);
    }
    (opts.method == Method::Auto).then_some(Method::Clockwise)
}

/// `n` balanced parts of `total` (the first `total % n` one larger).
pub(super) fn split(total: usize, n: usize) -> Vec<usize> {
    (0..n)
        .map(|j| total / n + usize::from(j < total % n))
        .collect()
}

pub(super) fn zero_constant(
    g: &mut Graph,
    dtype: DType,
    len: usize,
    name: &str,
) -> Result<Tensor, GraphError> {
    match dtype {
        DType::F32 => g.add_constant(&[len], &vec![0f32; len], name),
        DType::F16 => g.add_constant(&[len], &vec![poplar_core::f16::ZERO; len], name),
        DType::I32 => g.add_constant(&[len], &vec![0i32; len], name),
        _ => g.add_constant(&[len], &vec![false; len], name),
    }
}

/// The element type of `inputs` and its name in codelet names, or the error naming the
/// tensor of another type or the operator the type does not take.
fn element_type(
    inputs: &[Tensor],
    op: Op,
    name: &str,
) -> Result<(DType, &'static str), CollectiveError> {
    let name = name.to_string();
    let dtype = inputs[0].dtype();
    if let Some((index, t)) = inputs.iter().enumerate().find(|(_, t)| t.dtype() != dtype) {
        return Err(CollectiveError::MixedTypes {
            name,
            index,
            first: dtype,
            other: t.dtype(),
        });
    }
    let ty = type_name(dtype).ok_or(CollectiveError::OpType {
        name: name.clone(),
        op: op.name(),
        dtype,
    })?;
    let allowed = match op {
        Op::LogicalAnd | Op::LogicalOr => dtype == DType::Bool,
        Op::Local => true,
        Op::Mean => matches!(dtype, DType::F32 | DType::F16),
        Op::Add | Op::Mul | Op::Min | Op::Max | Op::SquareAdd => dtype != DType::Bool,
    };
    if !allowed {
        return Err(CollectiveError::OpType {
            name,
            op: op.name(),
            dtype,
        });
    }
    Ok((dtype, ty))
}

/// The rings of the groups and the maps between neighbours.
struct RingMaps {
    rings: Vec<Vec<u32>>,
    ring_order: RingOrder,
    /// Member index -> ring position (the same pattern in every group).
    perm: Vec<u32>,
    /// Replica -> its position in its ring.
    pos_of: Vec<u32>,
    /// Replica maps: to the next and to the previous in ring order.
    map_next: Vec<(u32, u32)>,
    map_prev: Vec<(u32, u32)>,
}

impl RingMaps {
    fn new(g: &Graph, groups: &[Vec<u32>], opts: &Options) -> RingMaps {
        let replicas = g.replication_factor();
        let machine = g.machine_target();
        let chips_per_replica = g.target().num_ipus;
        let mut rings = Vec::new();
        let mut ring_order = opts.ring_order;
        for m in groups {
            let (ring, order) = Plan::ring(m, opts.ring_order, machine, chips_per_replica);
            ring_order = order;
            rings.push(ring);
        }
        let perm: Vec<u32> = groups[0]
            .iter()
            .map(|r| {
                rings[0]
                    .iter()
                    .position(|x| x == r)
                    .expect("member in its ring") as u32
            })
            .collect();
        let mut pos_of = vec![0u32; replicas as usize];
        let (mut map_next, mut map_prev) = (Vec::new(), Vec::new());
        for ring in &rings {
            let k = ring.len();
            for (q, &r) in ring.iter().enumerate() {
                pos_of[r as usize] = q as u32;
                if k > 1 {
                    map_next.push((r, ring[(q + 1) % k]));
                    map_prev.push((r, ring[(q + k - 1) % k]));
                }
            }
        }
        RingMaps {
            rings,
            ring_order,
            perm,
            pos_of,
            map_next,
            map_prev,
        }
    }
}

/// The elements of `inputs` together and the tiles that hold them, or
/// [`CollectiveError::Unmapped`] naming an input with unmapped elements.
fn input_tiles(
    g: &Graph,
    inputs: &[Tensor],
    name: &str,
) -> Result<(u64, std::collections::BTreeSet<TileId>), CollectiveError> {
    let mut n = 0u64;
    let mut tiles = std::collections::BTreeSet::new();
    for (index, t) in inputs.iter().enumerate() {
        let len = t.num_elements() as u64;
        n += len;
        let mapping = g.tile_mapping(t).map_err(|source| CollectiveError::Graph {
            name: name.to_string(),
            source,
        })?;
        let mapped: u64 = mapping
            .iter()
            .flatten()
            .map(|r| (r.end - r.start) as u64)
            .sum();
        if mapped != len {
            return Err(CollectiveError::Unmapped {
                name: name.to_string(),
                index,
            });
        }
        for (tile, ranges) in mapping.iter().enumerate() {
            if !ranges.is_empty() {
                tiles.insert(TileId::new(tile as u32));
            }
        }
    }
    Ok((n, tiles))
}

/// The padded fragment layout's data: per half, per block tile, a variable of `G × w`
/// elements (none where the width is 0).
fn padded_data(
    g: &mut Graph,
    dtype: DType,
    gsz: usize,
    tiles: &[TileId],
    widths: &[Vec<usize>],
    name: &str,
) -> Result<Vec<Vec<Option<Tensor>>>, GraphError> {
    let mut data = Vec::new();
    for (h, ws) in widths.iter().enumerate() {
        let mut row = Vec::new();
        for (j, &w) in ws.iter().enumerate() {
            if w == 0 {
                row.push(None);
                continue;
            }
            let v = g.add_variable(dtype, &[gsz * w], &format!("{name}/data{h}.{j}"));
            g.set_tile_mapping(&v, tiles[j])?;
            row.push(Some(v));
        }
        data.push(row);
    }
    Ok(data)
}

/// The refusal of the bidirectional ring pair in place.
fn two_way_in_place(name: &str) -> CollectiveError {
    CollectiveError::BadInputs {
        name: name.to_string(),
        reason: "in place, a reduce-scatter or all-gather runs one-way rings: the \
                 bidirectional ring pair would cut each fragment in two"
            .into(),
    }
}

/// The replica constant of every replica's ring position, one element on each block tile.
fn ring_positions(
    g: &mut Graph,
    pos_of: &[u32],
    tiles: &[TileId],
    name: &str,
) -> Result<Tensor, GraphError> {
    let k = tiles.len();
    let pos_values: Vec<u32> = pos_of
        .iter()
        .flat_map(|&p| std::iter::repeat_n(p, k))
        .collect();
    let pos = g.add_replica_constant(&[k], &pos_values, &format!("{name}/ring position"))?;
    for (j, &t) in tiles.iter().enumerate() {
        g.set_tile_mapping(&pos.slice(j..j + 1)?, t)?;
    }
    Ok(pos)
}

//! The ring steps of a collective: resetting the step counters, the cross-replica exchanges
//! and the compute sets of the reduce-scatter (`gcl::Slice`, then `gcl::Accumulate` with two
//! buffers in turn for the one-way rings and the ring pair, `gcl::Reduce` and `gcl::Finish`
//! for meet in the middle) and of the all-gather (`gcl::Store`, with two buffers in turn).

use poplar_compiler::graph::program::CrossReplicaCopy;
use poplar_compiler::graph::program::Program;
use poplar_compiler::graph::Tensor;

use super::builder::{Builder, Chain};
use crate::plan::{Method, Op};
use crate::CollectiveError;

impl Builder<'_> {
    /// Sets every counter of the chains to `start`.
    pub(super) fn reset(
        &mut self,
        chains: &[(&Chain, u32)],
        body: &mut Vec<Program>,
    ) -> Result<(), CollectiveError> {
        for (ch, start) in chains {
            if ch.step.is_empty() {
                continue;
            }
            let steps = poplar_compiler::graph::concat(&ch.step).map_err(|e| self.err(e))?;
            let init = vec![*start; steps.num_elements()];
            self.counter += 1;
            let k = self
                .g
                .add_constant(
                    &[init.len()],
                    &init,
                    &format!("{}/step start{}", self.name, self.counter),
                )
                .map_err(|e| self.err(e))?;
            // Each tile's counters (one per worker) where the tile's step variable lives.
            let per = ch.step.first().map_or(0, |t| t.num_elements());
            for (i, j) in self.live(ch.half).into_iter().enumerate() {
                let e = k.slice(i * per..(i + 1) * per).map_err(|e| self.err(e))?;
                self.g
                    .set_tile_mapping(&e, self.tiles[j])
                    .map_err(|e| self.err(e))?;
            }
            body.push(Program::copy(&k, &steps));
        }
        Ok(())
    }

    /// One exchange step: every chain's send buffers to its neighbours' receive buffers.
    pub(super) fn exchange(&self, chains: &[&Chain]) -> Result<Program, CollectiveError> {
        self.exchange_dir(chains, true)
    }

    /// One exchange step, send → receive buffers (`forward`) or receive → send buffers (the
    /// second half of the all-gather's ping-pong).
    pub(super) fn exchange_dir(
        &self,
        chains: &[&Chain],
        forward: bool,
    ) -> Result<Program, CollectiveError> {
        let mut copies = Vec::new();
        for ch in chains {
            if ch.send.is_empty() {
                continue;
            }
            let (from, to) = if forward {
                (&ch.send, &ch.recv)
            } else {
                (&ch.recv, &ch.send)
            };
            copies.push(CrossReplicaCopy {
                src: poplar_compiler::graph::concat(from).map_err(|e| self.err(e))?,
                dst: poplar_compiler::graph::concat(to).map_err(|e| self.err(e))?,
                map: if ch.up_ring {
                    self.map_next.clone()
                } else {
                    self.map_prev.clone()
                },
            });
        }
        Ok(Program::cross_replica_copies(copies))
    }

    /// `gcl::Slice`: each chain's send buffers = data fragment `pos + off`.
    pub(super) fn slice(
        &mut self,
        chains: &[(&Chain, u32)],
        body: &mut Vec<Program>,
    ) -> Result<(), CollectiveError> {
        let cs = self.g.add_compute_set(&format!("{}/slice", self.name));
        let codelet = format!("gcl::Slice<{}>", self.ty);
        let gsz = self.plan.group_size;
        for (ch, off) in chains {
            for (i, j) in self.live(ch.half).into_iter().enumerate() {
                let d = self.data[ch.half][j].clone().expect("live tile");
                let p = self.pos_at(j)?;
                self.vertex(
                    cs,
                    &codelet,
                    j,
                    &[("data", &d), ("pos", &p), ("out", &ch.send[i])],
                    &[
                        ("g", gsz.into()),
                        ("off", (off % gsz.max(1)).into()),
                        ("up", true.into()),
                    ],
                )?;
            }
        }
        body.push(Program::execute(cs));
        Ok(())
    }

    /// One stepping ring vertex (`gcl::Reduce`, `gcl::Accumulate`, `gcl::Store`) on live tile
    /// `j` (the chain's `i`-th): the tile's data, the replica's position and the chain's step
    /// counter, the given buffers, and the fragment offset, direction and operator (if any).
    #[allow(clippy::too_many_arguments)]
    fn ring_vertex(
        &mut self,
        cs: poplar_compiler::graph::ComputeSet,
        codelet: &str,
        ch: &Chain,
        (i, j): (usize, usize),
        buffers: &[(&str, &Tensor)],
        (off, up): (u32, bool),
        op: Option<u32>,
    ) -> Result<(), CollectiveError> {
        let gsz = self.plan.group_size;
        let d = self.data[ch.half][j].clone().expect("live tile");
        let p = self.pos_at(j)?;
        let step = ch.step[i].clone();
        let mut fields = vec![("data", &d), ("pos", &p), ("step", &step)];
        fields.extend_from_slice(buffers);
        let mut state = vec![
            ("g", gsz.into()),
            ("off", (off % gsz.max(1)).into()),
            ("up", up.into()),
        ];
        if let Some(op) = op {
            state.push(("op", op.into()));
        }
        self.vertex(cs, codelet, j, &fields, &state)
    }

    /// `gcl::Reduce` on each chain: send = recv ⊕ data[pos + off ± step].
    pub(super) fn reduce_step(
        &mut self,
        chains: &[(&Chain, u32, bool)],
    ) -> Result<Program, CollectiveError> {
        let cs = self.g.add_compute_set(&format!("{}/reduce", self.name));
        let codelet = format!("gcl::Reduce<{}>", self.ty);
        let op = self.plan.op.code();
        for (ch, off, up) in chains {
            for (i, j) in self.live(ch.half).into_iter().enumerate() {
                let bufs = [("recv", &ch.recv[i]), ("out", &ch.send[i])];
                self.ring_vertex(cs, &codelet, ch, (i, j), &bufs, (*off, *up), Some(op))?;
            }
        }
        Ok(Program::execute(cs))
    }

    /// `gcl::Accumulate` on each chain: its receive buffers (`in_recv`) or its send buffers
    /// `⊕= data[pos + off ± step]`.
    pub(super) fn accumulate_step(
        &mut self,
        chains: &[(&Chain, u32, bool)],
        in_recv: bool,
    ) -> Result<Program, CollectiveError> {
        let cs = self.g.add_compute_set(&format!("{}/reduce", self.name));
        let codelet = format!("gcl::Accumulate<{}>", self.ty);
        let op = self.plan.op.code();
        for (ch, off, up) in chains {
            for (i, j) in self.live(ch.half).into_iter().enumerate() {
                let buf = if in_recv { &ch.recv[i] } else { &ch.send[i] };
                self.ring_vertex(
                    cs,
                    &codelet,
                    ch,
                    (i, j),
                    &[("buf", buf)],
                    (*off, *up),
                    Some(op),
                )?;
            }
        }
        Ok(Program::execute(cs))
    }

    /// `count` reduce-scatter steps of `chains` whose partial fragments start in their send
    /// buffers: each step forwards the current buffers to the neighbour's other buffers, which
    /// then accumulate the local fragment where it arrived (`gcl::Accumulate`). The buffers
    /// alternate, so no step's compute writes what its exchange reads, and the engine can
    /// interleave the two tile by tile (`poplar::Interleave`). Returns whether the
    /// reduced fragments end in the receive buffers.
    pub(super) fn reduce_steps(
        &mut self,
        chains: &[(&Chain, u32, bool)],
        count: u32,
        body: &mut Vec<Program>,
    ) -> Result<bool, CollectiveError> {
        let only: Vec<&Chain> = chains.iter().map(|(c, _, _)| *c).collect();
        self.alternate(count, body, |b, forward| {
            Ok((
                b.exchange_dir(&only, forward)?,
                b.accumulate_step(chains, forward)?,
            ))
        })
    }

    /// `count` ring steps that alternate between two buffer directions: `step(self, true)`
    /// builds the first direction's exchange and compute, `step(self, false)` the other's (only
    /// when there are two steps or more). Pushes them repeated in pairs, then the first once
    /// more when `count` is odd; returns whether it was.
    fn alternate(
        &mut self,
        count: u32,
        body: &mut Vec<Program>,
        mut step: impl FnMut(&mut Self, bool) -> Result<(Program, Program), CollectiveError>,
    ) -> Result<bool, CollectiveError> {
        if count == 0 {
            return Ok(false);
        }
        let (there, work_there) = step(self, true)?;
        if count >= 2 {
            let (back, work_back) = step(self, false)?;
            body.push(Program::repeat(
                count / 2,
                Program::seq(vec![there.clone(), work_there.clone(), back, work_back]),
            ));
        }
        let odd = count % 2 == 1;
        if odd {
            body.push(there);
            body.push(work_there);
        }
        Ok(odd)
    }

    /// `gcl::Store` on each chain: data[pos ± step] = its receive buffers (`in_recv`) or its
    /// send buffers. Chains over different halves (the ring pair) share one compute set, so
    /// the step is one exchange and one compute phase, which the engine can interleave; two
    /// chains over one half (meet in the middle) write the same data variable, so each has a
    /// compute set of its own.
    pub(super) fn store_step(
        &mut self,
        chains: &[(&Chain, bool)],
        in_recv: bool,
    ) -> Result<Program, CollectiveError> {
        let codelet = format!("gcl::Store<{}>", self.ty);
        let mut halves: Vec<usize> = chains.iter().map(|(ch, _)| ch.half).collect();
        halves.sort_unstable();
        halves.dedup();
        let shared = halves.len() == chains.len();
        let mut sets = Vec::new();
        let mut cs = None;
        for (ch, up) in chains {
            let cs = match cs {
                Some(cs) if shared => cs,
                _ => {
                    let new = self.g.add_compute_set(&format!("{}/store", self.name));
                    sets.push(Program::execute(new));
                    cs = Some(new);
                    new
                }
            };
            for (i, j) in self.live(ch.half).into_iter().enumerate() {
                let src = if in_recv { &ch.recv[i] } else { &ch.send[i] };
                self.ring_vertex(cs, &codelet, ch, (i, j), &[("recv", src)], (0, *up), None)?;
            }
        }
        Ok(Program::seq(sets))
    }

    /// `count` all-gather steps of `chains` whose current fragment is in their receive
    /// buffers (`in_recv`) or send buffers: each step forwards the current buffers to the
    /// neighbour's other buffers and stores what arrived, so the buffers alternate and nothing
    /// is copied twice. Returns where the current fragment is afterwards.
    pub(super) fn gather_steps(
        &mut self,
        chains: &[(&Chain, bool)],
        count: u32,
        in_recv: bool,
        body: &mut Vec<Program>,
    ) -> Result<bool, CollectiveError> {
        let only: Vec<&Chain> = chains.iter().map(|(c, _)| *c).collect();
        // From the receive buffers to the neighbours' send buffers is "backward".
        let odd = self.alternate(count, body, |b, first| {
            let forward = if first { !in_recv } else { in_recv };
            Ok((
                b.exchange_dir(&only, forward)?,
                b.store_step(chains, forward)?,
            ))
        })?;
        Ok(in_recv != odd)
    }

    /// `gcl::Finish`: out = (a ⊕ b) ⊕ data[pos] into new buffers.
    pub(super) fn finish(
        &mut self,
        a: &Chain,
        b: Option<&Chain>,
    ) -> Result<(Program, Vec<Tensor>), CollectiveError> {
        let outs = self.buffers(a.half, "result", self.dtype)?;
        let cs = self.g.add_compute_set(&format!("{}/finish", self.name));
        let codelet = format!("gcl::Finish<{}>", self.ty);
        let gsz = self.plan.group_size;
        let op = self.plan.op.code();
        for (i, j) in self.live(a.half).into_iter().enumerate() {
            let d = self.data[a.half][j].clone().expect("live tile");
            let p = self.pos_at(j)?;
            let bt = b.map_or(&a.recv[i], |b| &b.recv[i]);
            self.vertex(
                cs,
                &codelet,
                j,
                &[
                    ("data", &d),
                    ("a", &a.recv[i]),
                    ("b", bt),
                    ("pos", &p),
                    ("out", &outs[i]),
                ],
                &[
                    ("g", gsz.into()),
                    ("op", op.into()),
                    ("with_b", b.is_some().into()),
                ],
            )?;
        }
        Ok((Program::execute(cs), outs))
    }

    /// Loads `src` and reduce-scatters it; returns this replica's reduced block (`⌈n/G⌉`
    /// elements, in element order).
    pub(super) fn reduce_scatter(
        &mut self,
        src: &Tensor,
        body: &mut Vec<Program>,
    ) -> Result<Tensor, CollectiveError> {
        self.load(src, body)?;
        self.rs_steps(body)
    }

    /// The reduce-scatter steps over the data as they are; returns the reduced fragment this
    /// replica owns, block after block.
    pub(super) fn rs_steps(&mut self, body: &mut Vec<Program>) -> Result<Tensor, CollectiveError> {
        let gsz = self.plan.group_size;
        let result: Vec<Tensor> = if gsz == 1 || self.plan.op == Op::Local {
            // Each replica keeps its own fragment, in every half.
            let mut all = Vec::new();
            for h in 0..self.widths.len() {
                let ch = self.chain(h, true)?;
                self.slice(&[(&ch, 0)], body)?;
                all.extend(ch.send);
            }
            all
        } else {
            match self.plan.method {
                Method::Clockwise | Method::Anticlockwise | Method::Auto => {
                    let cw = self.plan.method != Method::Anticlockwise;
                    let ch = self.chain(0, cw)?;
                    self.reset(&[(&ch, 0)], body)?;
                    self.slice(&[(&ch, if cw { gsz - 1 } else { 1 })], body)?;
                    let off = if cw { gsz - 2 } else { 2 };
                    let in_recv = self.reduce_steps(&[(&ch, off, !cw)], gsz - 1, body)?;
                    if in_recv {
                        ch.recv
                    } else {
                        ch.send
                    }
                }
                Method::BidirectionalRingPair => {
                    let c0 = self.chain(0, true)?;
                    let c1 = self.chain(1, false)?;
                    self.reset(&[(&c0, 0), (&c1, 0)], body)?;
                    self.slice(&[(&c0, gsz - 1), (&c1, 1)], body)?;
                    let chains = [(&c0, gsz - 2, false), (&c1, 2 % gsz, true)];
                    if self.reduce_steps(&chains, gsz - 1, body)? {
                        let mut all = c0.recv;
                        all.extend(c1.recv);
                        all
                    } else {
                        let mut all = c0.send;
                        all.extend(c1.send);
                        all
                    }
                }
                Method::MeetInTheMiddle => {
                    let a = gsz / 2; // ⌈(G−1)/2⌉ steps clockwise
                    let b = (gsz - 1) / 2; // ⌊(G−1)/2⌋ anticlockwise
                    let cw = self.chain(0, true)?;
                    let acw = if b > 0 {
                        Some(self.chain(0, false)?)
                    } else {
                        None
                    };
                    let mut starts = vec![(&cw, 0u32)];
                    let mut slices = vec![(&cw, a % gsz)];
                    if let Some(acw) = &acw {
                        starts.push((acw, 0));
                        slices.push((acw, gsz - b));
                    }
                    self.reset(&starts, body)?;
                    self.slice(&slices, body)?;
                    let cw_off = (a + gsz - 1) % gsz;
                    if let Some(acw) = &acw {
                        let acw_off = (gsz + 1 - b) % gsz;
                        let both = self.exchange(&[&cw, acw])?;
                        if b > 1 {
                            let r =
                                self.reduce_step(&[(&cw, cw_off, false), (acw, acw_off, true)])?;
                            body.push(Program::repeat(b - 1, Program::seq(vec![both.clone(), r])));
                        }
                        body.push(both);
                        if a > b {
                            let r = self.reduce_step(&[(&cw, cw_off, false)])?;
                            body.push(r);
                            body.push(self.exchange(&[&cw])?);
                        }
                    } else {
                        body.push(self.exchange(&[&cw])?);
                    }
                    let (p, outs) = self.finish(&cw, acw.as_ref())?;
                    body.push(p);
                    outs
                }
            }
        };
        if self.plan.op == Op::Mean && gsz > 1 {
            let p = self.map(&result, 1, 1.0 / gsz as f32)?;
            body.push(p);
        }
        poplar_compiler::graph::concat(&result).map_err(|e| self.err(e))
    }

    /// Gathers every member's `src` (`n` elements); returns the `G·n` elements in member order.
    pub(super) fn all_gather(
        &mut self,
        src: &Tensor,
        body: &mut Vec<Program>,
    ) -> Result<Tensor, CollectiveError> {
        let gsz = self.plan.group_size;
        if gsz == 1 {
            let ordered = self.ordered()?;
            body.push(Program::copy(src, &ordered));
            return Ok(ordered);
        }
        self.gather(src, body)?;
        self.ordered()
    }

    /// The all-gather steps: every member's `src` (its own fragment, block after block) into
    /// the data.
    pub(super) fn gather(
        &mut self,
        src: &Tensor,
        body: &mut Vec<Program>,
    ) -> Result<(), CollectiveError> {
        let gsz = self.plan.group_size;
        match self.plan.method {
            Method::Clockwise | Method::Anticlockwise | Method::Auto => {
                let cw = self.plan.method != Method::Anticlockwise;
                let ch = self.chain(0, cw)?;
                self.reset(&[(&ch, 0)], body)?;
                body.push(Program::copy(
                    src,
                    &poplar_compiler::graph::concat(&ch.recv).map_err(|e| self.err(e))?,
                ));
                body.push(self.store_step(&[(&ch, !cw)], true)?);
                self.gather_steps(&[(&ch, !cw)], gsz - 1, true, body)?;
            }
            Method::BidirectionalRingPair => {
                let c0 = self.chain(0, true)?;
                let c1 = self.chain(1, false)?;
                self.reset(&[(&c0, 0), (&c1, 0)], body)?;
                let mut recv = c0.recv.clone();
                recv.extend(c1.recv.iter().cloned());
                body.push(Program::copy(
                    src,
                    &poplar_compiler::graph::concat(&recv).map_err(|e| self.err(e))?,
                ));
                body.push(self.store_step(&[(&c0, false), (&c1, true)], true)?);
                self.gather_steps(&[(&c0, false), (&c1, true)], gsz - 1, true, body)?;
            }
            Method::MeetInTheMiddle => {
                let a = gsz / 2;
                let b = (gsz - 1) / 2;
                let cw = self.chain(0, true)?;
                let acw = if b > 0 {
                    Some(self.chain(0, false)?)
                } else {
                    None
                };
                let mut starts = vec![(&cw, 0u32)];
                if let Some(acw) = &acw {
                    starts.push((acw, 1));
                }
                self.reset(&starts, body)?;
                let own = poplar_compiler::graph::concat(&cw.recv).map_err(|e| self.err(e))?;
                body.push(Program::copy(src, &own));
                body.push(self.store_step(&[(&cw, false)], true)?);
                let mut at = true;
                if let Some(acw) = &acw {
                    body.push(Program::copy(
                        &own,
                        &poplar_compiler::graph::concat(&acw.recv).map_err(|e| self.err(e))?,
                    ));
                    at = self.gather_steps(&[(&cw, false), (acw, true)], b, true, body)?;
                }
                self.gather_steps(&[(&cw, false)], a - b, at, body)?;
            }
        }
        Ok(())
    }
}

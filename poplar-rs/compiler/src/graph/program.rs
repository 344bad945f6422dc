//! Programs: the control flow that orders compute sets, copies and host transfers.

use super::{ComputeSet, Function, RemoteBuffer, Stream, Tensor};

/// A program tree. Build with the constructor functions; run by index after compiling.
#[derive(Debug, Clone)]
pub enum Program {
    /// Runs the children in order; a label names the block in profiles (e.g. `PDEcompute`).
    Sequence {
        label: Option<String>,
        body: Vec<Program>,
    },
    /// Runs every vertex of a compute set (one BSP superstep).
    Execute(ComputeSet),
    /// Copies `src` to `dst` element-wise, wherever they live.
    Copy { src: Tensor, dst: Tensor },
    /// Runs `body` `count` times.
    Repeat { count: u32, body: Box<Program> },
    /// Runs `cond`, then while the scalar `predicate` is non-zero runs `body` and `cond` again.
    RepeatWhileTrue {
        cond: Box<Program>,
        predicate: Tensor,
        body: Box<Program>,
    },
    /// Runs `then` if the scalar `predicate` is non-zero, else `else_`.
    If {
        predicate: Tensor,
        then: Box<Program>,
        else_: Box<Program>,
    },
    /// Runs the case whose value equals the scalar `control`, else `default`.
    Switch {
        control: Tensor,
        cases: Vec<(i64, Program)>,
        default: Box<Program>,
    },
    /// Runs a function registered with `Graph::add_function`.
    Call(Function),
    /// Copies the next chunk of a host-to-device stream into `dst`.
    StreamToDevice { stream: Stream, dst: Tensor },
    /// Copies `src` to the host through a device-to-host stream.
    StreamFromDevice { src: Tensor, stream: Stream },
    /// In a replicated graph, copies between replicas, all in one exchange: for each
    /// [`CrossReplicaCopy`], `src` of each replica `s` of its map goes to `dst` of the replica
    /// the map pairs it with. Replicas not named as a destination keep their `dst`.
    CrossReplicaCopy(Vec<CrossReplicaCopy>),
    /// Copies rows of a remote buffer into `dst` (k rows of the buffer's elements each): the
    /// rows `offset` names (a 1-D `i32`/`u32` tensor of k entries, computed on the device),
    /// or rows `0..k` without one.
    CopyFromRemote {
        buffer: RemoteBuffer,
        dst: Tensor,
        offset: Option<Tensor>,
    },
    /// Copies `src` into rows of a remote buffer, chosen as for [`Program::CopyFromRemote`].
    CopyToRemote {
        src: Tensor,
        buffer: RemoteBuffer,
        offset: Option<Tensor>,
    },
    /// Runs `io` — stream and remote-buffer copies whose tensors live on the target's I/O
    /// tiles — overlapped with `compute`, which touches no I/O tile: on the chip the
    /// transfers run while the compute tiles compute, so the pair takes as long as the longer.
    OverlapIo {
        io: Box<Program>,
        compute: Box<Program>,
    },
}

/// One copy of a [`Program::CrossReplicaCopy`]: `map` holds pairs `(source replica,
/// destination replica)`, each replica at most once on each side.
#[derive(Debug, Clone)]
pub struct CrossReplicaCopy {
    pub src: Tensor,
    pub dst: Tensor,
    pub map: Vec<(u32, u32)>,
}

impl Program {
    /// Calls `f` on every program nested directly in this one (sequence items, loop bodies and
    /// conditions, branches and cases), in order; not on called functions.
    pub(crate) fn for_each_child(&self, mut f: impl FnMut(&Program)) {
        match self {
            Program::Sequence { body, .. } => body.iter().for_each(f),
            Program::Repeat { body, .. } => f(body),
            Program::RepeatWhileTrue { cond, body, .. } => {
                f(cond);
                f(body);
            }
            Program::If { then, else_, .. } => {
                f(then);
                f(else_);
            }
            Program::OverlapIo { io, compute } => {
                f(io);
                f(compute);
            }
            Program::Switch { cases, default, .. } => {
                cases.iter().for_each(|(_, c)| f(c));
                f(default);
            }
            Program::Execute(_)
            | Program::Copy { .. }
            | Program::Call(_)
            | Program::StreamToDevice { .. }
            | Program::StreamFromDevice { .. }
            | Program::CrossReplicaCopy(_)
            | Program::CopyFromRemote { .. }
            | Program::CopyToRemote { .. } => {}
        }
    }

    /// A [`Program::CrossReplicaCopy`] of one tensor: `src` of replica `s` to `dst` of
    /// replica `d` for each `(s, d)` in `map`. Lowered to one exchange over the links between
    /// the replicas' chips.
    pub fn cross_replica_copy(src: &Tensor, dst: &Tensor, map: &[(u32, u32)]) -> Program {
        Program::CrossReplicaCopy(vec![CrossReplicaCopy {
            src: src.clone(),
            dst: dst.clone(),
            map: map.to_vec(),
        }])
    }

    /// Several cross-replica copies in one exchange phase (for example the two directions of
    /// a bidirectional ring): their destinations must not overlap each other or any source.
    pub fn cross_replica_copies(copies: Vec<CrossReplicaCopy>) -> Program {
        Program::CrossReplicaCopy(copies)
    }

    pub fn seq(body: Vec<Program>) -> Program {
        Program::Sequence { label: None, body }
    }
    /// A sequence named `label` in profiles.
    pub fn labelled(label: &str, body: Vec<Program>) -> Program {
        Program::Sequence {
            label: Some(label.to_string()),
            body,
        }
    }
    pub fn execute(cs: ComputeSet) -> Program {
        Program::Execute(cs)
    }
    pub fn copy(src: &Tensor, dst: &Tensor) -> Program {
        Program::Copy {
            src: src.clone(),
            dst: dst.clone(),
        }
    }
    pub fn repeat(count: u32, body: Program) -> Program {
        Program::Repeat {
            count,
            body: Box::new(body),
        }
    }
    pub fn repeat_while_true(cond: Program, predicate: &Tensor, body: Program) -> Program {
        Program::RepeatWhileTrue {
            cond: Box::new(cond),
            predicate: predicate.clone(),
            body: Box::new(body),
        }
    }
    pub fn if_else(predicate: &Tensor, then: Program, else_: Program) -> Program {
        Program::If {
            predicate: predicate.clone(),
            then: Box::new(then),
            else_: Box::new(else_),
        }
    }
    pub fn switch(control: &Tensor, cases: Vec<(i64, Program)>, default: Program) -> Program {
        Program::Switch {
            control: control.clone(),
            cases,
            default: Box::new(default),
        }
    }
    pub fn call(f: Function) -> Program {
        Program::Call(f)
    }
    pub fn stream_to_device(stream: Stream, dst: &Tensor) -> Program {
        Program::StreamToDevice {
            stream,
            dst: dst.clone(),
        }
    }
    pub fn stream_from_device(src: &Tensor, stream: Stream) -> Program {
        Program::StreamFromDevice {
            src: src.clone(),
            stream,
        }
    }
    /// Copies rows of `buffer` into `dst`: the rows `offset` names (a 1-D `i32` or `u32`
    /// tensor of k entries on the buffer's chip, each a row; `dst` holds k rows), or rows
    /// `0..k` when `offset` is `None`. An offset beyond the buffer's rows when the copy runs
    /// is the engine's `RemoteRowOutOfRange`, and nothing is copied.
    pub fn copy_from_remote(
        buffer: RemoteBuffer,
        dst: &Tensor,
        offset: Option<&Tensor>,
    ) -> Program {
        Program::CopyFromRemote {
            buffer,
            dst: dst.clone(),
            offset: offset.cloned(),
        }
    }
    /// Copies `src` into rows of `buffer`, chosen as for [`Program::copy_from_remote`].
    pub fn copy_to_remote(src: &Tensor, buffer: RemoteBuffer, offset: Option<&Tensor>) -> Program {
        Program::CopyToRemote {
            src: src.clone(),
            buffer,
            offset: offset.cloned(),
        }
    }
    /// `io` (stream and remote-buffer copies to and from the I/O tiles) overlapped with
    /// `compute` (which touches no I/O tile): see [`Program::OverlapIo`].
    pub fn overlap_io(io: Program, compute: Program) -> Program {
        Program::OverlapIo {
            io: Box::new(io),
            compute: Box::new(compute),
        }
    }
    /// Runs `then` if the predicate is non-zero, nothing otherwise (an `if` without `else`).
    pub fn if_then(predicate: &Tensor, then: Program) -> Program {
        Program::if_else(predicate, then, Program::nop())
    }
    /// An empty program: does nothing, costs nothing (no superstep, no sync). Useful as the
    /// `else` of an `if`, a `switch` default, or a placeholder body.
    pub fn nop() -> Program {
        Program::seq(Vec::new())
    }
}

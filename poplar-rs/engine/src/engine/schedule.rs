//! The schedule: an executable's step tree realised once, at engine creation, as a flat list
//! of typed instructions ([`Op`]) that a run executes with one dispatch.
//!
//! Every `Seq` of the tree (and every program and function body) becomes a [`Block`], a
//! contiguous range of the list; an instruction with a body (`Repeat`, `While`, `If`, …)
//! names the instruction that is its body by its index, and a body that is a `Seq` is an
//! [`Op::Seq`] of that `Seq`'s block. So the list holds each step of the tree exactly once,
//! in the order the tree is read, and a run walks nested ranges of it.
//!
//! The host's reorderings are rewrites of the schedule ([`Schedule::rewrite`]): a window of a
//! block (a straight run of supersteps, an exchange and the compute after it) is replaced by
//! one instruction that runs the window another way ([`Op::Grouped`], [`Op::Interleaved`]),
//! giving a second set of roots. The plain roots stay: a profiled run, or a run over several
//! ranks, executes every phase on its own.

use crate::entity::PrimaryMap;
use crate::exe::{
    ComputePhaseId, ExchangePhaseId, Executable, FunctionId, MemRun, RemoteCopyId, ScalarLoc, Step,
    SyncKind,
};

/// A contiguous range of [`Schedule::ops`]: the instructions of one sequence, run in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Block {
    pub(crate) start: u32,
    pub(crate) end: u32,
}

impl Block {
    /// The indices of the block's instructions.
    #[inline]
    pub(crate) fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    pub(crate) fn len(self) -> usize {
        (self.end - self.start) as usize
    }
}

/// The index of one instruction in [`Schedule::ops`] (the body of a `Repeat`, a branch, …).
pub(crate) type OpIndex = u32;

/// One instruction of the schedule.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Op {
    Compute(ComputePhaseId),
    Exchange(ExchangePhaseId),
    /// Only the profiler sees it.
    Sync(SyncKind),
    /// A host-to-device copy: [`Schedule::streams`]`[i]`.
    StreamIn(u32),
    /// A device-to-host copy: [`Schedule::streams`]`[i]`.
    StreamOut(u32),
    Remote(RemoteCopyId),
    /// A nested sequence.
    Seq(Block),
    /// A labelled body: [`Schedule::labels`]`[label]`.
    Label {
        label: u32,
        body: OpIndex,
    },
    Repeat {
        count: u32,
        body: OpIndex,
    },
    While {
        cond: OpIndex,
        predicate: ScalarLoc,
        body: OpIndex,
    },
    If {
        predicate: ScalarLoc,
        then: OpIndex,
        else_: OpIndex,
    },
    /// `cases` is a range of [`Schedule::cases`].
    Switch {
        control: ScalarLoc,
        cases: Block,
        default: OpIndex,
    },
    /// The function's root block (of the roots the run executes).
    Call(FunctionId),
    /// The compute part, then the I/O part (`Step::OverlapIo`).
    OverlapIo {
        io: OpIndex,
        compute: OpIndex,
    },
    /// A rewrite: interleaved plan `i` (`interleave.rs`) in place of an exchange and the
    /// compute phases after it.
    Interleaved(u32),
    /// A rewrite: grouped run `i` (`grouped.rs`) in place of a straight run of supersteps.
    Grouped(u32),
}

/// A rewrite of the schedule: at instruction `i` of plain block `b`, the instruction that
/// replaces the window starting there and the window's length, if any.
pub(crate) type Rewrite<'a> = dyn Fn(&Schedule, Block, usize) -> Option<(Op, usize)> + 'a;

/// A stream copy's stream and the runs of tile memory it fills or reads.
#[derive(Debug)]
pub(crate) struct StreamCopy {
    pub(crate) stream: u32,
    pub(crate) runs: Vec<MemRun>,
}

/// Where a run starts: a block per top-level program and per function.
#[derive(Clone, Debug, Default)]
pub(crate) struct Roots {
    pub(crate) programs: Vec<Block>,
    pub(crate) functions: PrimaryMap<FunctionId, Block>,
}

/// The realised program of an engine.
#[derive(Debug, Default)]
pub(crate) struct Schedule {
    pub(crate) ops: Vec<Op>,
    /// Every `Switch`'s cases: (value, the case's instruction).
    pub(crate) cases: Vec<(i64, OpIndex)>,
    pub(crate) streams: Vec<StreamCopy>,
    pub(crate) labels: Vec<String>,
    /// The step tree as it is: every phase runs on its own.
    pub(crate) plain: Roots,
    /// After the rewrites (the plain roots when there are none).
    pub(crate) fast: Roots,
}

impl Schedule {
    /// The plain schedule of `exe`'s programs and functions (no rewrites yet: `fast` is
    /// `plain`).
    pub(crate) fn lower(exe: &Executable) -> Schedule {
        let mut s = Schedule::default();
        s.plain.programs = exe.programs.iter().map(|p| s.root(p)).collect();
        s.plain.functions = exe.functions.values().map(|f| s.root(f)).collect();
        s.fast = s.plain.clone();
        s
    }

    /// A program or function body as a block: a `Seq`'s own block, else a block of one.
    fn root(&mut self, step: &Step) -> Block {
        match step {
            Step::Seq(v) => self.seq(v),
            _ => {
                let op = self.lower_op(step);
                self.push_block(vec![op])
            }
        }
    }

    fn seq(&mut self, v: &[Step]) -> Block {
        let ops = v.iter().map(|s| self.lower_op(s)).collect();
        self.push_block(ops)
    }

    fn push_block(&mut self, ops: Vec<Op>) -> Block {
        let start = self.ops.len() as u32;
        self.ops.extend(ops);
        Block {
            start,
            end: self.ops.len() as u32,
        }
    }

    /// `step` as an instruction of its own (a body).
    fn child(&mut self, step: &Step) -> OpIndex {
        let op = self.lower_op(step);
        self.ops.push(op);
        self.ops.len() as u32 - 1
    }

    fn lower_op(&mut self, step: &Step) -> Op {
        match step {
            Step::Seq(v) => Op::Seq(self.seq(v)),
            Step::Label { name, body } => {
                self.labels.push(name.clone());
                let label = self.labels.len() as u32 - 1;
                Op::Label {
                    label,
                    body: self.child(body),
                }
            }
            Step::Sync(k) => Op::Sync(*k),
            Step::Exchange(x) => Op::Exchange(*x),
            Step::Compute(c) => Op::Compute(*c),
            Step::Repeat { count, body } => Op::Repeat {
                count: *count,
                body: self.child(body),
            },
            Step::While {
                cond,
                predicate,
                body,
            } => Op::While {
                cond: self.child(cond),
                predicate: *predicate,
                body: self.child(body),
            },
            Step::If {
                predicate,
                then,
                else_,
            } => Op::If {
                predicate: *predicate,
                then: self.child(then),
                else_: self.child(else_),
            },
            Step::Switch {
                control,
                cases,
                default,
            } => {
                let cases: Vec<(i64, OpIndex)> =
                    cases.iter().map(|(v, s)| (*v, self.child(s))).collect();
                let start = self.cases.len() as u32;
                self.cases.extend(cases);
                Op::Switch {
                    control: *control,
                    cases: Block {
                        start,
                        end: self.cases.len() as u32,
                    },
                    default: self.child(default),
                }
            }
            Step::Call(f) => Op::Call(*f),
            Step::StreamIn { stream, runs } => Op::StreamIn(self.stream(*stream, runs)),
            Step::StreamOut { stream, runs } => Op::StreamOut(self.stream(*stream, runs)),
            Step::Remote(id) => Op::Remote(*id),
            Step::OverlapIo { io, compute } => Op::OverlapIo {
                io: self.child(io),
                compute: self.child(compute),
            },
        }
    }

    fn stream(&mut self, stream: u32, runs: &[MemRun]) -> u32 {
        self.streams.push(StreamCopy {
            stream,
            runs: runs.to_vec(),
        });
        self.streams.len() as u32 - 1
    }

    /// The instructions directly inside instruction `i` that are bodies (not `Seq` blocks),
    /// in program order.
    pub(crate) fn bodies(&self, i: OpIndex) -> Vec<OpIndex> {
        match &self.ops[i as usize] {
            Op::Label { body, .. } | Op::Repeat { body, .. } => vec![*body],
            Op::While { cond, body, .. } => vec![*cond, *body],
            Op::If { then, else_, .. } => vec![*then, *else_],
            Op::OverlapIo { io, compute } => vec![*io, *compute],
            Op::Switch { cases, default, .. } => self.cases[cases.range()]
                .iter()
                .map(|&(_, c)| c)
                .chain(std::iter::once(*default))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The plain root blocks: the programs', then the functions'.
    pub(crate) fn plain_roots(&self) -> impl Iterator<Item = Block> + '_ {
        self.plain
            .programs
            .iter()
            .chain(self.plain.functions.values())
            .copied()
    }

    /// The fast roots: the plain ones with `rewrite` applied to every block, which at block
    /// position `i` (an index of [`Schedule::ops`]) may return the instruction replacing the
    /// window that starts there and the window's length (at least 1). Blocks inside a
    /// replaced window are left as they are (the rewritten instruction runs them its own
    /// way).
    pub(crate) fn rewrite(&mut self, rewrite: &Rewrite<'_>) {
        let plain = self.plain.clone();
        let programs = plain
            .programs
            .iter()
            .map(|&b| self.rewrite_block(b, rewrite))
            .collect();
        let functions = plain
            .functions
            .values()
            .map(|&b| self.rewrite_block(b, rewrite))
            .collect();
        self.fast = Roots {
            programs,
            functions,
        };
    }

    fn rewrite_block(&mut self, b: Block, rewrite: &Rewrite<'_>) -> Block {
        let mut out = Vec::with_capacity(b.len());
        let mut i = b.range().start;
        while i < b.range().end {
            if let Some((op, len)) = rewrite(self, b, i) {
                out.push(op);
                i += len.max(1);
                continue;
            }
            let op = self.ops[i].clone();
            out.push(self.rewrite_inside(op, rewrite));
            i += 1;
        }
        if out.len() == b.len() && out[..] == self.ops[b.range()] {
            return b;
        }
        self.push_block(out)
    }

    /// `op` with its nested blocks and bodies rewritten.
    fn rewrite_inside(&mut self, op: Op, rewrite: &Rewrite<'_>) -> Op {
        let body = |s: &mut Schedule, i: OpIndex| s.rewrite_body(i, rewrite);
        match op {
            Op::Seq(b) => Op::Seq(self.rewrite_block(b, rewrite)),
            Op::Label { label, body: x } => Op::Label {
                label,
                body: body(self, x),
            },
            Op::Repeat { count, body: x } => Op::Repeat {
                count,
                body: body(self, x),
            },
            Op::While {
                cond,
                predicate,
                body: x,
            } => Op::While {
                cond: body(self, cond),
                predicate,
                body: body(self, x),
            },
            Op::If {
                predicate,
                then,
                else_,
            } => Op::If {
                predicate,
                then: body(self, then),
                else_: body(self, else_),
            },
            Op::Switch {
                control,
                cases,
                default,
            } => {
                let mut new = Vec::with_capacity(cases.len());
                for k in cases.range() {
                    let (v, c) = self.cases[k];
                    new.push((v, body(self, c)));
                }
                let default = body(self, default);
                if new
                    .iter()
                    .zip(&self.cases[cases.range()])
                    .all(|(a, b)| a == b)
                {
                    return Op::Switch {
                        control,
                        cases,
                        default,
                    };
                }
                let start = self.cases.len() as u32;
                self.cases.extend(new);
                Op::Switch {
                    control,
                    cases: Block {
                        start,
                        end: self.cases.len() as u32,
                    },
                    default,
                }
            }
            Op::OverlapIo { io, compute } => Op::OverlapIo {
                io: body(self, io),
                compute: body(self, compute),
            },
            leaf => leaf,
        }
    }

    /// Body instruction `i` rewritten: `i` itself when nothing inside it changed.
    fn rewrite_body(&mut self, i: OpIndex, rewrite: &Rewrite<'_>) -> OpIndex {
        let op = self.ops[i as usize].clone();
        let new = self.rewrite_inside(op, rewrite);
        if new == self.ops[i as usize] {
            return i;
        }
        self.ops.push(new);
        self.ops.len() as u32 - 1
    }
}

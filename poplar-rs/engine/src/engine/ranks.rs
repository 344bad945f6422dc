//! The engine over several ranks ([`crate::dist`]): which copies of an exchange phase cross
//! ranks and how they are packed, control-flow scalars and errors shared by every rank, and
//! host transfers routed through rank 0.
//!
//! Every rank builds the same plans from the same executable (checked by a checksum when the
//! engine is created), so the two ends of a message agree on its length and on the order of
//! the copies packed into it without sending either.

use super::memory::Memory;
use super::EngineError;
use crate::dist::{RankSplit, Ranks};
use crate::entity::PrimaryMap;
use crate::exe::{ExchangePhase, ExchangePhaseId, Executable, MemRun};
use crate::target::TileId;

/// One copy of an exchange that crosses ranks: a whole transfer to one destination.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RemoteCopy {
    pub(crate) src_tile: TileId,
    pub(crate) src: u32,
    pub(crate) dst_tile: TileId,
    pub(crate) dst: u32,
    pub(crate) bytes: u32,
}

/// The copies between this rank and one peer in one exchange phase, in transfer order: one
/// message.
#[derive(Debug, Default)]
pub(crate) struct Message {
    pub(crate) peer: usize,
    pub(crate) copies: Vec<RemoteCopy>,
    pub(crate) bytes: usize,
}

/// What crosses ranks in one exchange phase, seen from this rank.
#[derive(Debug, Default)]
pub(crate) struct RankExchange {
    pub(crate) sends: Vec<Message>,
    pub(crate) recvs: Vec<Message>,
}

/// The messages of exchange phase `ph` between `rank` and the other ranks of `split`:
/// copies whose source this rank owns and whose destination another rank owns go out,
/// copies the other way come in; nothing between ranks that exchange nothing.
pub(crate) fn plan_exchange(ph: &ExchangePhase, split: &RankSplit, rank: usize) -> RankExchange {
    let n = split.ranks();
    let mut sends: Vec<Message> = (0..n)
        .map(|peer| Message {
            peer,
            ..Default::default()
        })
        .collect();
    let mut recvs: Vec<Message> = (0..n)
        .map(|peer| Message {
            peer,
            ..Default::default()
        })
        .collect();
    for t in &ph.transfers {
        let from = split.owner(t.src_tile);
        for &(dst_tile, dst) in &t.dsts {
            let to = split.owner(dst_tile);
            if from == to || (from != rank && to != rank) {
                continue;
            }
            let c = RemoteCopy {
                src_tile: t.src_tile,
                src: t.src_offset,
                dst_tile,
                dst,
                bytes: t.bytes,
            };
            let m = if from == rank {
                &mut sends[to]
            } else {
                &mut recvs[from]
            };
            m.copies.push(c);
            m.bytes += t.bytes as usize;
        }
    }
    let keep = |v: Vec<Message>| v.into_iter().filter(|m| !m.copies.is_empty()).collect();
    RankExchange {
        sends: keep(sends),
        recvs: keep(recvs),
    }
}

/// The engine's state over several ranks.
pub(crate) struct Dist {
    pub(crate) ranks: Ranks,
    pub(crate) split: RankSplit,
    pub(crate) rank: usize,
    pub(crate) exchanges: PrimaryMap<ExchangePhaseId, RankExchange>,
}

impl Dist {
    /// This rank's share of a job over `ranks`: the messages of every exchange phase of `exe`.
    pub(crate) fn new(ranks: Ranks, split: RankSplit, exe: &Executable) -> Dist {
        let rank = ranks.rank();
        Dist {
            exchanges: exe
                .exchanges
                .values()
                .map(|ph| plan_exchange(ph, &split, rank))
                .collect(),
            ranks,
            split,
            rank,
        }
    }

    pub(crate) fn owns(&self, tile: TileId) -> bool {
        self.split.tiles(self.rank).contains(tile)
    }

    /// The copies of exchange phase `i` that cross ranks: pack what this rank sends, send and
    /// receive every message at once, unpack what came in. (The copies inside the rank run
    /// before this, as in a one-rank engine; no destination of a phase overlaps any source,
    /// so the order does not matter.)
    pub(crate) fn exchange(&self, i: ExchangePhaseId, mem: &Memory) {
        let plan = &self.exchanges[i];
        if plan.sends.is_empty() && plan.recvs.is_empty() {
            return;
        }
        let packed: Vec<Vec<u8>> = plan
            .sends
            .iter()
            .map(|m| {
                let mut buf = vec![0u8; m.bytes];
                let mut at = 0;
                for c in &m.copies {
                    let n = c.bytes as usize;
                    // In bounds: `check()` (TransferOutOfBounds); this rank owns the source.
                    mem.read(c.src_tile, c.src as usize, &mut buf[at..at + n]);
                    at += n;
                }
                buf
            })
            .collect();
        let mut inbox: Vec<Vec<u8>> = plan.recvs.iter().map(|m| vec![0u8; m.bytes]).collect();
        {
            let sends: Vec<(usize, &[u8])> = plan
                .sends
                .iter()
                .zip(&packed)
                .map(|(m, b)| (m.peer, &b[..]))
                .collect();
            let mut recvs: Vec<(usize, &mut [u8])> = plan
                .recvs
                .iter()
                .zip(inbox.iter_mut())
                .map(|(m, b)| (m.peer, &mut b[..]))
                .collect();
            self.ranks.comm.exchange(&sends, &mut recvs);
        }
        for (m, buf) in plan.recvs.iter().zip(&inbox) {
            let mut at = 0;
            for c in &m.copies {
                let n = c.bytes as usize;
                mem.write(c.dst_tile, c.dst as usize, &buf[at..at + n]);
                at += n;
            }
        }
    }

    /// Makes a result every rank's: when any rank failed, every rank returns the failure of
    /// the lowest failing rank ([`EngineError::OnRank`], naming it).
    pub(crate) fn agree(&self, r: Result<(), EngineError>) -> Result<(), EngineError> {
        let size = self.ranks.size();
        let mut v = [match &r {
            Ok(()) => 0,
            Err(_) => (size - self.rank) as i64,
        }];
        self.ranks.comm.max_i64(&mut v);
        if v[0] == 0 {
            return Ok(());
        }
        let failed = size - v[0] as usize;
        let mut cause = match &r {
            Err(e) if failed == self.rank => match e {
                EngineError::OnRank { cause, .. } => cause.clone().into_bytes(),
                e => e.to_string().into_bytes(),
            },
            _ => Vec::new(),
        };
        self.ranks.comm.broadcast(failed, &mut cause);
        Err(EngineError::OnRank {
            rank: failed,
            ranks: size,
            cause: String::from_utf8_lossy(&cause).into_owned(),
        })
    }

    /// Writes `data` (rank 0's; other ranks' are ignored) into `runs`: rank 0 writes the runs
    /// it owns and sends every other rank the bytes of its runs, in one message.
    pub(crate) fn scatter_runs(&self, mem: &Memory, runs: &[MemRun], data: &[u8]) {
        let n = self.ranks.size();
        if self.rank == 0 {
            let mut out: Vec<Vec<u8>> = vec![Vec::new(); n];
            let mut pos = 0;
            for r in runs {
                let len = r.bytes as usize;
                let bytes = &data[pos..pos + len];
                match self.split.owner(r.tile) {
                    0 => mem.write(r.tile, r.offset as usize, bytes),
                    o => out[o].extend_from_slice(bytes),
                }
                pos += len;
            }
            let sends: Vec<(usize, &[u8])> = out
                .iter()
                .enumerate()
                .filter(|(_, b)| !b.is_empty())
                .map(|(p, b)| (p, &b[..]))
                .collect();
            self.ranks.comm.exchange(&sends, &mut []);
        } else {
            let mine: usize = runs
                .iter()
                .filter(|r| self.owns(r.tile))
                .map(|r| r.bytes as usize)
                .sum();
            if mine == 0 {
                return;
            }
            let mut buf = vec![0u8; mine];
            self.ranks.comm.exchange(&[], &mut [(0, &mut buf[..])]);
            let mut at = 0;
            for r in runs.iter().filter(|r| self.owns(r.tile)) {
                let len = r.bytes as usize;
                mem.write(r.tile, r.offset as usize, &buf[at..at + len]);
                at += len;
            }
        }
    }

    /// The bytes of `runs`, concatenated, on every rank: each rank contributes the runs it
    /// owns (host reads and device-to-host streams, gathered at rank 0 and shared, so the
    /// application sees the same values on every rank).
    pub(crate) fn gather_runs(&self, mem: &Memory, runs: &[MemRun]) -> Vec<u8> {
        let mut mine = Vec::new();
        for r in runs.iter().filter(|r| self.owns(r.tile)) {
            let at = mine.len();
            mine.resize(at + r.bytes as usize, 0);
            mem.read(r.tile, r.offset as usize, &mut mine[at..]);
        }
        let all = self.ranks.comm.all_gather(&mine);
        let mut cursor = vec![0usize; all.len()];
        let total: usize = runs.iter().map(|r| r.bytes as usize).sum();
        let mut out = Vec::with_capacity(total);
        for r in runs {
            let o = self.split.owner(r.tile);
            let len = r.bytes as usize;
            out.extend_from_slice(&all[o][cursor[o]..cursor[o] + len]);
            cursor[o] += len;
        }
        out
    }

    /// Each value of `values` on its owner's rank (`None` elsewhere), on every rank.
    pub(crate) fn share_values(&self, values: &[Option<i64>]) -> Vec<i64> {
        let mut v: Vec<i64> = values.iter().map(|x| x.unwrap_or(i64::MIN)).collect();
        self.ranks.comm.max_i64(&mut v);
        v
    }
}

/// Checks that every rank holds the same executable; on every rank, the first rank that
/// differs from rank 0 is the error.
/// [`Dist::agree`] while the engine is being built (before its `Dist` exists): every rank
/// gets the error of the lowest failing rank. On one rank, `r` itself.
pub(crate) fn agree_at_creation(
    ranks: &Ranks,
    split: &RankSplit,
    r: Result<(), EngineError>,
) -> Result<(), EngineError> {
    if ranks.size() == 1 {
        return r;
    }
    Dist {
        ranks: ranks.clone(),
        split: split.clone(),
        rank: ranks.rank(),
        exchanges: PrimaryMap::new(),
    }
    .agree(r)
}

pub(crate) fn agree_on_executable(ranks: &Ranks, exe: &Executable) -> Result<(), EngineError> {
    let sum = exe.checksum();
    let all = ranks.comm.all_gather(&sum.to_le_bytes());
    let get = |b: &[u8]| {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[..8]);
        u64::from_le_bytes(a)
    };
    let root = get(&all[0]);
    for (rank, b) in all.iter().enumerate().skip(1) {
        let c = get(b);
        if c != root {
            return Err(EngineError::RanksDisagree {
                rank,
                checksum: c,
                root_checksum: root,
            });
        }
    }
    Ok(())
}

/// What crosses ranks in one exchange phase when an executable runs over some ranks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhaseTraffic {
    /// Messages between ranks (one per ordered pair of ranks that exchange anything).
    pub messages: usize,
    /// Bytes in all of them.
    pub bytes: u64,
    /// The most bytes one rank sends.
    pub max_rank_send_bytes: u64,
    /// The most bytes one rank receives.
    pub max_rank_recv_bytes: u64,
    /// The most messages one rank sends.
    pub max_rank_messages: usize,
}

/// The traffic between ranks of every exchange phase of `exe` split over `ranks` ranks
/// ([`RankSplit`]), from the same plans the engine builds: the figures of a cluster run,
/// computed without one.
pub fn rank_traffic(exe: &Executable, ranks: usize) -> Vec<PhaseTraffic> {
    let split = RankSplit::new(&exe.target, ranks);
    let n = split.ranks();
    exe.exchanges
        .values()
        .map(|ph| {
            let mut t = PhaseTraffic::default();
            for rank in 0..n {
                let p = plan_exchange(ph, &split, rank);
                let sent: u64 = p.sends.iter().map(|m| m.bytes as u64).sum();
                let got: u64 = p.recvs.iter().map(|m| m.bytes as u64).sum();
                t.messages += p.sends.len();
                t.bytes += sent;
                t.max_rank_send_bytes = t.max_rank_send_bytes.max(sent);
                t.max_rank_recv_bytes = t.max_rank_recv_bytes.max(got);
                t.max_rank_messages = t.max_rank_messages.max(p.sends.len());
            }
            t
        })
        .collect()
}

/// What crosses ranks in one run of a program, over `ranks` ranks: the exchange phases it
/// executes with their messages, and the collectives the engine adds (one all-reduce per
/// compute phase, so that a failure on any rank is every rank's, and one per control-flow
/// predicate). `RepeatWhileTrue` is counted as one iteration, `If` and `Switch` by their
/// costliest branch (`assumed` says when either was met).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProgramTraffic {
    /// Exchange phases executed.
    pub exchange_phases: u64,
    /// Of them, those that send anything between ranks.
    pub crossing_phases: u64,
    /// Messages between ranks, all ranks together.
    pub messages: u64,
    /// Bytes between ranks, all ranks together.
    pub bytes: u64,
    /// Sum over the executed phases of the most bytes one rank sends or receives in the phase
    /// (the bandwidth term of a bulk-synchronous estimate).
    pub critical_bytes: u64,
    /// Sum over the executed phases of the most messages one rank sends or receives.
    pub critical_messages: u64,
    /// All-reduces over all ranks the engine makes (compute phases and predicates).
    pub collectives: u64,
    /// Data-dependent control flow was met.
    pub assumed: bool,
}

/// The [`ProgramTraffic`] of top-level program `index` of `exe` over `ranks` ranks, from the
/// engine's plans (no run, no MPI); `None` if there is no such program.
pub fn program_traffic(exe: &Executable, ranks: usize, index: usize) -> Option<ProgramTraffic> {
    let step = exe.programs.get(index)?;
    let split = RankSplit::new(&exe.target, ranks);
    let n = split.ranks();
    // Per phase: (bytes, messages, critical bytes, critical messages), computed once.
    let per_phase: Vec<(u64, u64, u64, u64)> = exe
        .exchanges
        .values()
        .map(|ph| {
            let (mut bytes, mut msgs, mut cb, mut cm) = (0u64, 0u64, 0u64, 0u64);
            for rank in 0..n {
                let p = plan_exchange(ph, &split, rank);
                let sent: u64 = p.sends.iter().map(|m| m.bytes as u64).sum();
                let got: u64 = p.recvs.iter().map(|m| m.bytes as u64).sum();
                bytes += sent;
                msgs += p.sends.len() as u64;
                cb = cb.max(sent.max(got));
                cm = cm.max(p.sends.len().max(p.recvs.len()) as u64);
            }
            (bytes, msgs, cb, cm)
        })
        .collect();
    let mut t = ProgramTraffic::default();
    walk(exe, step, 1, &per_phase, &mut t, 0);
    Some(t)
}

fn walk(
    exe: &Executable,
    step: &crate::exe::Step,
    times: u64,
    per_phase: &[(u64, u64, u64, u64)],
    t: &mut ProgramTraffic,
    depth: usize,
) {
    use crate::exe::Step;
    // Calls nest no deeper than the executable's functions (`check()` refuses recursion);
    // the bound only guards a hand-made executable.
    if depth > 256 {
        return;
    }
    let go = |s: &Step, k: u64, t: &mut ProgramTraffic| {
        walk(exe, s, times.saturating_mul(k), per_phase, t, depth + 1)
    };
    match step {
        Step::Seq(v) => v.iter().for_each(|s| go(s, 1, t)),
        Step::Label { body, .. } => go(body, 1, t),
        Step::Sync(_) | Step::StreamIn { .. } | Step::StreamOut { .. } => {}
        Step::Exchange(i) => {
            let (b, m, cb, cm) = per_phase[i.as_u32() as usize];
            t.exchange_phases += times;
            if m > 0 {
                t.crossing_phases += times;
            }
            t.bytes += b * times;
            t.messages += m * times;
            t.critical_bytes += cb * times;
            t.critical_messages += cm * times;
        }
        // A remote copy agrees on its rows and result, like a compute phase on its result.
        Step::Compute(_) | Step::Remote(_) => t.collectives += times,
        Step::OverlapIo { io, compute } => {
            go(io, 1, t);
            go(compute, 1, t);
        }
        Step::Repeat { count, body } => go(body, u64::from(*count), t),
        Step::While { cond, body, .. } => {
            t.assumed = true;
            t.collectives += 2 * times;
            go(cond, 2, t);
            go(body, 1, t);
        }
        Step::If { then, else_, .. } => {
            t.assumed = true;
            t.collectives += times;
            let (mut a, mut b) = (ProgramTraffic::default(), ProgramTraffic::default());
            walk(exe, then, times, per_phase, &mut a, depth + 1);
            walk(exe, else_, times, per_phase, &mut b, depth + 1);
            t.add(if a.critical_bytes >= b.critical_bytes {
                &a
            } else {
                &b
            });
        }
        Step::Switch { cases, default, .. } => {
            t.assumed = true;
            t.collectives += times;
            let mut best = ProgramTraffic::default();
            walk(exe, default, times, per_phase, &mut best, depth + 1);
            for (_, s) in cases {
                let mut c = ProgramTraffic::default();
                walk(exe, s, times, per_phase, &mut c, depth + 1);
                if c.critical_bytes > best.critical_bytes {
                    best = c;
                }
            }
            t.add(&best);
        }
        Step::Call(f) => {
            if let Some(body) = exe.functions.get(*f) {
                go(body, 1, t)
            }
        }
    }
}

impl ProgramTraffic {
    fn add(&mut self, o: &ProgramTraffic) {
        self.exchange_phases += o.exchange_phases;
        self.crossing_phases += o.crossing_phases;
        self.messages += o.messages;
        self.bytes += o.bytes;
        self.critical_bytes += o.critical_bytes;
        self.critical_messages += o.critical_messages;
        self.collectives += o.collectives;
        self.assumed |= o.assumed;
    }

    /// Seconds of communication of one run on a network of `bytes_per_second` per link and
    /// `latency` seconds per message (and per step of a collective: `2·⌈log₂ ranks⌉` steps per
    /// all-reduce), with the phases bulk-synchronous: each costs its busiest rank's bytes and
    /// messages.
    pub fn seconds(&self, ranks: usize, bytes_per_second: f64, latency: f64) -> f64 {
        let log = (ranks.max(1) as f64).log2().ceil();
        self.critical_bytes as f64 / bytes_per_second
            + self.critical_messages as f64 * latency
            + self.collectives as f64 * 2.0 * log * latency
    }
}

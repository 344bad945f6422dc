//! The engine's look-ahead: while a thread runs one tile of a compute phase, it fetches the
//! cache lines of the next tile it will run, in step with the running vertices' progress
//! reports (`Worker::progress`, which reaches [`ahead_progress`] through the codelet room's
//! progress hook). Host speed only: it reads and writes nothing.

// On the host, a tile's fields are a few kilobytes that nothing has touched since the previous
// superstep; a compute phase over many small tiles ran ≈ 9 % slower per cell than the same
// kernel over long arrays, because each tile started with a burst of cache misses. Asking for
// the whole next tile at once stalls on the CPU's few outstanding-miss slots; asking for it in
// step with the current tile's work (`Worker::progress`) overlaps the transfers with compute.

use std::cell::RefCell;

/// A run of cache lines in a tile's memory, by byte offset (a multiple of 64) and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineRun {
    pub offset: u32,
    pub lines: u32,
}

/// The current thread's look-ahead target: the next tile of the running task.
struct Ahead {
    base: usize,
    runs: Vec<LineRun>,
    /// Lines in `runs`.
    total: u64,
    /// Lines asked for so far; the cursor is (`run`, `line`).
    issued: u64,
    run: usize,
    line: u32,
    /// The running vertex of the current tile, and how many the tile has.
    vertex: u32,
    vertices: u32,
}

thread_local! {
    static AHEAD: RefCell<Ahead> = const {
        RefCell::new(Ahead {
            base: 0,
            runs: Vec::new(),
            total: 0,
            issued: 0,
            run: 0,
            line: 0,
            vertex: 0,
            vertices: 1,
        })
    };
}

/// Makes `runs` of the tile at `base` the look-ahead target of the calling thread while it runs
/// a tile of `vertices` vertices; `runs` empty means none (the last tile of a task).
#[inline]
pub(crate) fn ahead_begin(base: *const u8, runs: &[LineRun], vertices: u32) {
    AHEAD.with_borrow_mut(|a| {
        a.base = base as usize;
        a.runs.clear();
        a.runs.extend_from_slice(runs);
        a.total = runs.iter().map(|r| u64::from(r.lines)).sum();
        a.issued = 0;
        a.run = 0;
        a.line = 0;
        a.vertex = 0;
        a.vertices = vertices.max(1);
    });
}

/// Vertex `k` of the current tile is about to run.
#[inline]
pub(crate) fn ahead_vertex(k: u32) {
    AHEAD.with_borrow_mut(|a| a.vertex = k);
}

/// No look-ahead target (end of a task; also after a failed tile).
#[inline]
pub(crate) fn ahead_end() {
    AHEAD.with_borrow_mut(|a| {
        a.runs.clear();
        a.total = 0;
    });
}

/// Asks for the next tile's lines up to the share of the tile's work that is done.
pub(crate) fn ahead_progress(worker: u32, workers: u32, done: usize, total: usize) {
    if total == 0 {
        return;
    }
    AHEAD.with_borrow_mut(|a| {
        if a.issued >= a.total {
            return;
        }
        // Share of the tile done once this call's work is: vertex `vertex` of `vertices`,
        // worker `worker` of `workers`, `done` of `total`.
        let (w, ws) = (u128::from(worker), u128::from(workers.max(1)));
        let num = ((u128::from(a.vertex) * ws + w) * total as u128 + done.min(total) as u128)
            * u128::from(a.total);
        let den = u128::from(a.vertices) * ws * total as u128;
        let target = u64::try_from(num.div_ceil(den))
            .unwrap_or(u64::MAX)
            .min(a.total);
        let (mut issued, mut run, mut line) = (a.issued, a.run, a.line);
        while issued < target {
            let r = a.runs[run];
            crate::codelet::prefetch_ptr(
                a.base.wrapping_add(r.offset as usize + 64 * line as usize) as *const u8,
            );
            issued += 1;
            line += 1;
            if line == r.lines {
                run += 1;
                line = 0;
            }
        }
        (a.issued, a.run, a.line) = (issued, run, line);
    });
}

/// The cache-line runs covering byte ranges `(offset, bytes)`, merged and sorted.
pub(crate) fn line_runs(ranges: impl Iterator<Item = (u32, u32)>) -> Vec<LineRun> {
    let mut lines: Vec<(u32, u32)> = ranges
        .filter(|&(_, b)| b > 0)
        .map(|(o, b)| (o / 64, (o.saturating_add(b - 1)) / 64 + 1))
        .collect();
    lines.sort_unstable();
    let mut out: Vec<LineRun> = Vec::new();
    let mut cur: Option<(u32, u32)> = None;
    for (s, e) in lines {
        cur = match cur {
            Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                out.push(LineRun {
                    offset: cs * 64,
                    lines: ce - cs,
                });
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    if let Some((cs, ce)) = cur {
        out.push(LineRun {
            offset: cs * 64,
            lines: ce - cs,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(offset: u32, lines: u32) -> LineRun {
        LineRun { offset, lines }
    }

    /// (lines asked for so far, lines in the target) on this thread.
    fn state() -> (u64, u64) {
        AHEAD.with_borrow(|a| (a.issued, a.total))
    }

    #[test]
    fn line_runs_cover_each_range_and_merge_overlapping_and_adjacent_lines() {
        // [0,4) bytes -> line 0; [60,70) -> lines 0..2; [128,129) -> line 2 (adjacent: merged);
        // [640,704) -> line 10 exactly; empty ranges add nothing.
        let runs = line_runs([(128, 1), (0, 4), (640, 64), (60, 10), (300, 0)].into_iter());
        assert_eq!(runs, vec![run(0, 3), run(640, 1)]);
        // Unaligned range spanning three lines.
        assert_eq!(line_runs([(100, 100)].into_iter()), vec![run(64, 3)]);
        assert!(line_runs(std::iter::empty()).is_empty());
    }

    #[test]
    fn progress_asks_for_the_share_of_lines_matching_the_share_of_work() {
        let mem = vec![0u8; 4096];
        ahead_begin(mem.as_ptr(), &[run(0, 10), run(1024, 6)], 1);
        assert_eq!(state(), (0, 16));
        ahead_progress(0, 1, 1, 4);
        assert_eq!(state(), (4, 16));
        // Progress never goes back, and repeating a call asks for nothing more.
        ahead_progress(0, 1, 1, 4);
        ahead_progress(0, 1, 0, 4);
        assert_eq!(state(), (4, 16));
        ahead_progress(0, 1, 3, 4);
        assert_eq!(state(), (12, 16));
        // `done` beyond `total` counts as all of it; the cursor crossed into the second run.
        ahead_progress(0, 1, 9, 4);
        assert_eq!(state(), (16, 16));
        ahead_progress(0, 1, 4, 4);
        assert_eq!(state(), (16, 16));
        ahead_end();
        assert_eq!(state().1, 0);
    }

    #[test]
    fn progress_of_later_vertices_and_workers_counts_the_earlier_ones_as_done() {
        let mem = vec![0u8; 4096];
        // Two vertices of two workers each: worker 1 of vertex 1 halfway is 7/8 of the tile.
        ahead_begin(mem.as_ptr(), &[run(0, 16)], 2);
        ahead_vertex(1);
        ahead_progress(1, 2, 5, 10);
        assert_eq!(state(), (14, 16));
        ahead_progress(1, 2, 10, 10);
        assert_eq!(state(), (16, 16));
        ahead_end();
    }

    #[test]
    fn progress_without_a_target_or_with_no_work_does_nothing() {
        ahead_end();
        ahead_progress(0, 1, 5, 10);
        assert_eq!(state().0, 0);
        let mem = vec![0u8; 256];
        ahead_begin(mem.as_ptr(), &[run(0, 4)], 1);
        ahead_progress(0, 1, 0, 0);
        ahead_progress(0, 0, 3, 3); // a zero worker count is taken as one
        assert_eq!(state(), (4, 4));
        ahead_end();
    }
}

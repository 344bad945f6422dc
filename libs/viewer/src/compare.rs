//! Two runs side by side (PopVision's "compare two reports"): memory per tile, phases, labels
//! and exchange matrices of two executables (and profiles), with their differences B − A.
//!
//! The two may differ in graph (two partitionings of one application give different phases):
//! phases are matched by kind and name (the k-th phase of a kind and name in A with the k-th of
//! that kind and name in B), labels by name, and what has no match is listed apart. Two
//! executables of different targets are still compared where that means something: totals,
//! categories, phases and labels always; per-tile differences only with the same tile count,
//! chip × chip differences only with the same chip count. What is left out is said in
//! [`Comparison::limits`].
//!
//! The same [`Comparison`] is printed by `poplar memory|profile --compare` and embedded in the
//! page of `poplar report --compare` ([`CompareData`], schema `poplar-compare`, described in
//! `docs/viewer.md`).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use poplar_exe::profile::{LabelProfile, Profile, Split};

use crate::data::{MemoryData, ReportData};

/// Version of the comparison layout; bumped on any incompatible change.
pub const COMPARE_VERSION: u32 = 1;

/// Tiles listed by [`MemoryDiff::tiles`] unless told otherwise.
pub const TOP_TILES: usize = 20;

/// Why two runs cannot be compared at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CompareError {
    /// One side has a profile and the other not: measured cycles against modelled ones.
    #[error("only {with} has a profile: give a profile of both executables, or of neither (then the static cycle models are compared)")]
    OneProfile { with: &'static str },
    /// A profile against an executable (`poplar profile A.json --compare B.popexe`).
    #[error("{a} is compared with {b}: give two profiles, or two executables")]
    MixedInputs { a: &'static str, b: &'static str },
}

/// Something the two runs do not share, which leaves a part of the comparison out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
pub enum Limit {
    /// Different tile counts: no per-tile differences (nor tile-range matrices).
    Tiles { a: u32, b: u32 },
    /// Different chip counts: no chip × chip differences.
    Chips { a: u32, b: u32 },
    /// Different memory per tile: bytes compare, fractions of the budget do not.
    BytesPerTile { a: u64, b: u64 },
    /// Different clocks: cycles compare, times do not.
    Clock { a: f64, b: f64 },
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Limit::Tiles { a, b } => write!(
                f,
                "different targets: {a} tiles in A, {b} in B; per-tile differences are left out"
            ),
            Limit::Chips { a, b } => write!(
                f,
                "different targets: {a} chips in A, {b} in B; chip × chip differences are left out"
            ),
            Limit::BytesPerTile { a, b } => write!(
                f,
                "different targets: {a} B per tile in A, {b} in B; tiles over the budget are each against its own"
            ),
            Limit::Clock { a, b } => write!(
                f,
                "different clocks: {:.3} GHz in A, {:.3} GHz in B; cycles compare, times do not",
                a / 1e9,
                b / 1e9
            ),
        }
    }
}

/// A quantity in A and in B, and `diff` = B − A.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Pair {
    pub a: u64,
    pub b: u64,
    pub diff: i64,
}

impl Pair {
    pub fn new(a: u64, b: u64) -> Pair {
        let diff = i128::from(b) - i128::from(a);
        Pair {
            a,
            b,
            diff: diff.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64,
        }
    }
}

/// A named [`Pair`] (a memory category).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedPair {
    pub name: String,
    #[serde(flatten)]
    pub bytes: Pair,
}

/// One tile's total bytes in A and B.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileDiff {
    pub tile: u32,
    #[serde(flatten)]
    pub bytes: Pair,
}

/// Memory of the two executables.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryDiff {
    /// Bytes over all tiles: total, always-live, temporaries' peaks.
    pub total: Pair,
    pub always_live: Pair,
    pub temporary: Pair,
    /// The fullest tile's total.
    pub max_tile: Pair,
    /// Tiles over their budget.
    pub over_budget: Pair,
    /// Bytes over all tiles per category, in the order of `MemoryData::categories`.
    pub categories: Vec<NamedPair>,
    /// Tiles whose total differs (`None` when the tile counts differ).
    pub changed_tiles: Option<u64>,
    /// The tiles whose total changed most (largest |B − A| first, then by tile), at most the
    /// number asked for; empty when the tile counts differ.
    pub tiles: Vec<TileDiff>,
}

/// One phase's executions and cycles over the run (a profile), or one execution's modelled
/// cycles (the static model: `executions` is 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseSide {
    pub executions: u64,
    pub cycles: u64,
}

/// A phase of A, of B, or of both (matched by kind and name).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseRow {
    /// `"compute"`, `"exchange"` or `"transfer"`.
    pub kind: String,
    pub name: String,
    pub a: Option<PhaseSide>,
    pub b: Option<PhaseSide>,
}

impl PhaseRow {
    /// B − A of the cycles, a missing side counting 0.
    pub fn diff(&self) -> i64 {
        let c = |s: Option<PhaseSide>| s.map_or(0, |s| s.cycles);
        Pair::new(c(self.a), c(self.b)).diff
    }
}

/// A label of A, of B, or of both (matched by name): its elapsed cycles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelRow {
    pub name: String,
    pub a: Option<Split>,
    pub b: Option<Split>,
}

/// The elapsed cycles of two profiles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ElapsedDiff {
    pub runs: Pair,
    pub compute: Pair,
    pub exchange: Pair,
    pub sync: Pair,
    pub transfer: Pair,
    pub total: Pair,
}

/// Bytes delivered between chips, chip × chip (row = source), over the run (each exchange
/// weighted by its executions) with profiles, every exchange once without.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChipMatrices {
    /// `"run"` or `"once"`.
    pub weight: String,
    pub a_chips: u32,
    pub b_chips: u32,
    /// `a[src * a_chips + dst]`.
    pub a: Vec<u64>,
    pub b: Vec<u64>,
    /// B − A, when the chip counts agree.
    pub diff: Option<Vec<i64>>,
}

/// Everything compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// What the two do not share, and what it leaves out.
    pub limits: Vec<Limit>,
    pub memory: Option<MemoryDiff>,
    /// `"profile"` (cycles over the runs) or `"model"` (one execution each).
    pub phase_source: String,
    /// Matched phases first (in A's order), then A's unmatched, then B's.
    pub phases: Vec<PhaseRow>,
    /// With profiles: matched labels first (in A's order), then A's unmatched, then B's.
    pub labels: Vec<LabelRow>,
    pub elapsed: Option<ElapsedDiff>,
    pub exchange: Option<ChipMatrices>,
}

/// The page's data: both reports and their comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareData {
    /// `"poplar-compare"`.
    pub schema: String,
    pub version: u32,
    pub title: String,
    pub a: ReportData,
    pub b: ReportData,
    pub diff: Comparison,
}

impl CompareData {
    /// Compares two reports (both with a profile, or both without), listing `top` tiles.
    pub fn new(a: ReportData, b: ReportData, top: usize) -> Result<CompareData, CompareError> {
        let diff = Comparison::of_reports(&a, &b, top)?;
        Ok(CompareData {
            schema: "poplar-compare".into(),
            version: COMPARE_VERSION,
            title: format!("{} vs {}", a.title, b.title),
            a,
            b,
            diff,
        })
    }
}

/// The limits of comparing two targets.
fn limits(a: &crate::data::TargetInfo, b: &crate::data::TargetInfo) -> Vec<Limit> {
    let mut v = Vec::new();
    if a.tiles != b.tiles {
        v.push(Limit::Tiles {
            a: a.tiles,
            b: b.tiles,
        });
    }
    if a.chips != b.chips {
        v.push(Limit::Chips {
            a: a.chips,
            b: b.chips,
        });
    }
    if a.bytes_per_tile != b.bytes_per_tile {
        v.push(Limit::BytesPerTile {
            a: a.bytes_per_tile,
            b: b.bytes_per_tile,
        });
    }
    if a.clock_hz != b.clock_hz {
        v.push(Limit::Clock {
            a: a.clock_hz,
            b: b.clock_hz,
        });
    }
    v
}

impl Comparison {
    /// Compares two reports: memory, phases (of the profiles, or of the static model when
    /// neither has one), labels, elapsed cycles and chip × chip bytes.
    pub fn of_reports(
        a: &ReportData,
        b: &ReportData,
        top: usize,
    ) -> Result<Comparison, CompareError> {
        let (phase_source, pa, pb) = match (&a.profile, &b.profile) {
            (Some(_), Some(_)) => ("profile", report_phases(a), report_phases(b)),
            (None, None) => ("model", report_phases(a), report_phases(b)),
            (Some(_), None) => return Err(CompareError::OneProfile { with: "A" }),
            (None, Some(_)) => return Err(CompareError::OneProfile { with: "B" }),
        };
        let (labels, elapsed) = match (&a.profile, &b.profile) {
            (Some(x), Some(y)) => (
                match_labels(&x.labels, &y.labels),
                Some(ElapsedDiff::new(x.runs, &x.elapsed, y.runs, &y.elapsed)),
            ),
            _ => (Vec::new(), None),
        };
        Ok(Comparison {
            limits: limits(&a.target, &b.target),
            memory: Some(MemoryDiff::new(
                (&a.memory, a.target.bytes_per_tile),
                (&b.memory, b.target.bytes_per_tile),
                top,
            )),
            phase_source: phase_source.into(),
            phases: match_phases(&pa, &pb),
            labels,
            elapsed,
            exchange: Some(ChipMatrices::new(a, b)),
        })
    }

    /// Compares two profiles (no executables: no memory, no matrices).
    pub fn of_profiles(a: &Profile, b: &Profile) -> Comparison {
        let info = |p: &Profile| crate::data::TargetInfo {
            chips: p.target.num_ipus,
            tiles_per_chip: p.target.tiles_per_ipu,
            tiles: p.target.num_tiles(),
            bytes_per_tile: u64::from(p.target.bytes_per_tile),
            workers_per_tile: p.target.workers_per_tile,
            clock_hz: p.target.clock_hz,
            matrix_bin_tiles: 0,
            matrix_bins: 0,
        };
        let rows = |p: &Profile| -> Vec<(String, String, PhaseSide)> {
            p.phases
                .iter()
                .map(|ph| {
                    let side = PhaseSide {
                        executions: ph.executions,
                        cycles: ph.cycles,
                    };
                    (ph.kind.name().to_string(), ph.name.clone(), side)
                })
                .collect()
        };
        Comparison {
            limits: limits(&info(a), &info(b)),
            memory: None,
            phase_source: "profile".into(),
            phases: match_phases(&rows(a), &rows(b)),
            labels: match_labels(&a.labels, &b.labels),
            elapsed: Some(ElapsedDiff::new(a.runs, &a.elapsed, b.runs, &b.elapsed)),
            exchange: None,
        }
    }
}

impl ElapsedDiff {
    fn new(runs_a: u64, a: &Split, runs_b: u64, b: &Split) -> ElapsedDiff {
        ElapsedDiff {
            runs: Pair::new(runs_a, runs_b),
            compute: Pair::new(a.compute, b.compute),
            exchange: Pair::new(a.exchange, b.exchange),
            sync: Pair::new(a.sync, b.sync),
            transfer: Pair::new(a.transfer, b.transfer),
            total: Pair::new(a.total(), b.total()),
        }
    }
}

impl MemoryDiff {
    /// Compares two executables' memory (each with its bytes per tile), listing the `top`
    /// tiles whose total changed most.
    pub fn new(a: (&MemoryData, u64), b: (&MemoryData, u64), top: usize) -> MemoryDiff {
        let ((ma, budget_a), (mb, budget_b)) = (a, b);
        let sum = |v: &[u64]| v.iter().fold(0u64, |s, &x| s.saturating_add(x));
        let over = |m: &MemoryData, budget: u64| m.total.iter().filter(|&&t| t > budget).count();
        let categories = ma
            .categories
            .iter()
            .enumerate()
            .map(|(c, name)| {
                // Matched by name: the two lists agree unless written by other versions.
                let k = mb.categories.iter().position(|n| n == name);
                let in_b = k.map_or(0, |k| sum(&mb.by_category[k]));
                NamedPair {
                    name: name.clone(),
                    bytes: Pair::new(sum(&ma.by_category[c]), in_b),
                }
            })
            .collect();
        let same_tiles = ma.total.len() == mb.total.len();
        let mut tiles: Vec<TileDiff> = if same_tiles {
            ma.total
                .iter()
                .zip(&mb.total)
                .enumerate()
                .filter(|(_, (x, y))| x != y)
                .map(|(t, (&x, &y))| TileDiff {
                    tile: t as u32,
                    bytes: Pair::new(x, y),
                })
                .collect()
        } else {
            Vec::new()
        };
        let changed = same_tiles.then_some(tiles.len() as u64);
        tiles.sort_by(|x, y| {
            y.bytes
                .diff
                .unsigned_abs()
                .cmp(&x.bytes.diff.unsigned_abs())
                .then(x.tile.cmp(&y.tile))
        });
        tiles.truncate(top);
        MemoryDiff {
            total: Pair::new(sum(&ma.total), sum(&mb.total)),
            always_live: Pair::new(sum(&ma.always_live), sum(&mb.always_live)),
            temporary: Pair::new(sum(&ma.temporary), sum(&mb.temporary)),
            max_tile: Pair::new(ma.total_stats.max, mb.total_stats.max),
            over_budget: Pair::new(over(ma, budget_a) as u64, over(mb, budget_b) as u64),
            categories,
            changed_tiles: changed,
            tiles,
        }
    }
}

/// `(kind, name, side)` of every phase of a report: the profile's, or the static model's.
fn report_phases(r: &ReportData) -> Vec<(String, String, PhaseSide)> {
    match &r.profile {
        Some(p) => p
            .phases
            .iter()
            .map(|ph| {
                let side = PhaseSide {
                    executions: ph.executions,
                    cycles: ph.cycles,
                };
                (ph.kind.clone(), ph.name.clone(), side)
            })
            .collect(),
        None => model_phases(
            r.computes.iter().map(|c| (&c.name, c.cycles)),
            r.exchanges.iter().map(|x| (&x.name, x.cycles)),
        ),
    }
}

/// The static model's phases: computes then exchanges, one execution each.
fn model_phases<'a>(
    computes: impl Iterator<Item = (&'a String, u64)>,
    exchanges: impl Iterator<Item = (&'a String, u64)>,
) -> Vec<(String, String, PhaseSide)> {
    let side = |cycles| PhaseSide {
        executions: 1,
        cycles,
    };
    computes
        .map(|(n, c)| ("compute".to_string(), n.clone(), side(c)))
        .chain(exchanges.map(|(n, c)| ("exchange".to_string(), n.clone(), side(c))))
        .collect()
}

/// Matches the k-th phase of a kind and name in A with the k-th of that kind and name in B.
fn match_phases(
    a: &[(String, String, PhaseSide)],
    b: &[(String, String, PhaseSide)],
) -> Vec<PhaseRow> {
    let mut in_b: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    for (i, (k, n, _)) in b.iter().enumerate().rev() {
        in_b.entry((k, n)).or_default().push(i);
    }
    let mut used = vec![false; b.len()];
    let mut matched = Vec::new();
    let mut only_a = Vec::new();
    for (k, n, side) in a {
        let j = in_b.get_mut(&(k.as_str(), n.as_str())).and_then(Vec::pop);
        let row = PhaseRow {
            kind: k.clone(),
            name: n.clone(),
            a: Some(*side),
            b: j.map(|j| b[j].2),
        };
        match j {
            Some(j) => {
                used[j] = true;
                matched.push(row);
            }
            None => only_a.push(row),
        }
    }
    let only_b = b
        .iter()
        .zip(&used)
        .filter(|(_, &u)| !u)
        .map(|((k, n, s), _)| PhaseRow {
            kind: k.clone(),
            name: n.clone(),
            a: None,
            b: Some(*s),
        });
    matched.into_iter().chain(only_a).chain(only_b).collect()
}

/// Matches labels by name.
fn match_labels(a: &[LabelProfile], b: &[LabelProfile]) -> Vec<LabelRow> {
    let by_name: BTreeMap<&str, &LabelProfile> = b.iter().map(|l| (l.name.as_str(), l)).collect();
    let in_a: std::collections::BTreeSet<&str> = a.iter().map(|l| l.name.as_str()).collect();
    let (matched, only_a): (Vec<LabelRow>, Vec<LabelRow>) = a
        .iter()
        .map(|l| LabelRow {
            name: l.name.clone(),
            a: Some(l.elapsed),
            b: by_name.get(l.name.as_str()).map(|m| m.elapsed),
        })
        .partition(|r| r.b.is_some());
    let only_b = b
        .iter()
        .filter(|l| !in_a.contains(l.name.as_str()))
        .map(|l| LabelRow {
            name: l.name.clone(),
            a: None,
            b: Some(l.elapsed),
        });
    matched.into_iter().chain(only_a).chain(only_b).collect()
}

impl ChipMatrices {
    fn new(a: &ReportData, b: &ReportData) -> ChipMatrices {
        let run = a.profile.is_some() && b.profile.is_some();
        let (ma, mb) = (chip_matrix(a, run), chip_matrix(b, run));
        let diff = (a.target.chips == b.target.chips).then(|| {
            ma.iter()
                .zip(&mb)
                .map(|(&x, &y)| Pair::new(x, y).diff)
                .collect()
        });
        ChipMatrices {
            weight: if run { "run" } else { "once" }.into(),
            a_chips: a.target.chips,
            b_chips: b.target.chips,
            a: ma,
            b: mb,
            diff,
        }
    }
}

/// Bytes delivered chip × chip: over the run (each exchange × its executions in the profile)
/// or every exchange once.
pub fn chip_matrix(r: &ReportData, run: bool) -> Vec<u64> {
    let chips = r.target.chips.max(1) as usize;
    let per_chip = (r.target.matrix_bins as usize / chips).max(1);
    let mut executions = vec![u64::from(!run); r.exchanges.len()];
    if let Some(p) = r.profile.as_ref().filter(|_| run) {
        for ph in p.phases.iter().filter(|ph| ph.kind == "exchange") {
            if let Some(e) = executions.get_mut(ph.index as usize) {
                *e = ph.executions;
            }
        }
    }
    let mut m = vec![0u64; chips * chips];
    for (x, &w) in r.exchanges.iter().zip(&executions) {
        for t in x.matrix.chunks_exact(3) {
            let (s, d) = (t[0] as usize / per_chip, t[1] as usize / per_chip);
            if let Some(cell) = m.get_mut(s.min(chips - 1) * chips + d.min(chips - 1)) {
                *cell = cell.saturating_add(w.saturating_mul(t[2]));
            }
        }
    }
    m
}

// ------------------------------------------------------------------------------------ text

/// `+12`, `-3`, `0`.
fn signed(d: i64) -> String {
    if d > 0 {
        format!("+{d}")
    } else {
        d.to_string()
    }
}

/// `+12.5%` of `a`, or `new` when A had none.
fn rel(p: &Pair) -> String {
    match (p.a, p.diff) {
        (_, 0) => String::new(),
        (0, _) => "new".into(),
        (a, d) => format!("{:+.1}%", 100.0 * d as f64 / a as f64),
    }
}

fn pair_line(s: &mut String, what: &str, p: &Pair) {
    let line = format!(
        "  {what:<24} {:>14} {:>14} {:>14} {:>9}",
        p.a,
        p.b,
        signed(p.diff),
        rel(p)
    );
    let _ = writeln!(s, "{}", line.trim_end());
}

fn header(s: &mut String, first: &str, unit: &str) {
    let _ = writeln!(
        s,
        "  {first:<24} {:>14} {:>14} {:>14} {:>9}",
        format!("A {unit}"),
        format!("B {unit}"),
        "B - A",
        "change"
    );
}

impl MemoryDiff {
    /// The text of `poplar memory A --compare B`.
    pub fn text(&self) -> String {
        let mut s = String::from("Memory (bytes over all tiles)\n");
        header(&mut s, "", "bytes");
        pair_line(&mut s, "total", &self.total);
        pair_line(&mut s, "always-live", &self.always_live);
        pair_line(&mut s, "temporaries (peaks)", &self.temporary);
        pair_line(&mut s, "fullest tile", &self.max_tile);
        pair_line(&mut s, "tiles over the budget", &self.over_budget);
        s += "By category\n";
        for c in &self.categories {
            pair_line(&mut s, &c.name, &c.bytes);
        }
        match self.changed_tiles {
            None => s += "Tiles: not compared (different tile counts)\n",
            Some(0) => s += "Tiles: no tile's total changed\n",
            Some(n) => {
                let _ = writeln!(
                    s,
                    "Tiles whose total changed most ({} of {n} changed)",
                    self.tiles.len()
                );
                header(&mut s, "tile", "bytes");
                for t in &self.tiles {
                    pair_line(&mut s, &format!("tile {}", t.tile), &t.bytes);
                }
            }
        }
        s
    }
}

fn cycles_of(s: Option<PhaseSide>) -> String {
    s.map_or("-".into(), |s| s.cycles.to_string())
}

impl Comparison {
    /// The text of the comparison: limits, memory, elapsed cycles, phases, labels and the
    /// chip × chip bytes.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for l in &self.limits {
            let _ = writeln!(s, "note: {l}");
        }
        if let Some(m) = &self.memory {
            s += &m.text();
        }
        if let Some(e) = &self.elapsed {
            s += "Elapsed cycles (all runs)\n";
            header(&mut s, "", "cycles");
            pair_line(&mut s, "runs", &e.runs);
            pair_line(&mut s, "compute", &e.compute);
            pair_line(&mut s, "exchange", &e.exchange);
            pair_line(&mut s, "sync", &e.sync);
            pair_line(&mut s, "transfer", &e.transfer);
            pair_line(&mut s, "total", &e.total);
        }
        self.write_phases(&mut s);
        self.write_labels(&mut s);
        if let Some(x) = &self.exchange {
            write_chips(&mut s, x);
        }
        s
    }

    fn write_phases(&self, s: &mut String) {
        let what = if self.phase_source == "profile" {
            "cycles over the runs"
        } else {
            "modelled cycles of one execution"
        };
        let _ = writeln!(s, "Phases matched by kind and name ({what})");
        let _ = writeln!(
            s,
            "  {:<9} {:<40} {:>14} {:>14} {:>14}",
            "kind", "phase", "A cycles", "B cycles", "B - A"
        );
        let mut only = String::new();
        for p in &self.phases {
            let line = format!(
                "  {:<9} {:<40} {:>14} {:>14} {:>14}\n",
                p.kind,
                p.name,
                cycles_of(p.a),
                cycles_of(p.b),
                signed(p.diff())
            );
            if p.a.is_some() && p.b.is_some() {
                *s += &line;
            } else {
                only += &line;
            }
        }
        let unmatched = self
            .phases
            .iter()
            .filter(|p| p.a.is_none() || p.b.is_none())
            .count();
        if unmatched > 0 {
            let _ = writeln!(
                s,
                "Phases without a match ({unmatched}; '-': not in that run)"
            );
            *s += &only;
        }
    }

    fn write_labels(&self, s: &mut String) {
        if self.labels.is_empty() {
            return;
        }
        s.push_str("Labels (elapsed cycles)\n");
        let _ = writeln!(
            s,
            "  {:<32} {:>14} {:>14} {:>14} {:>12} {:>12} {:>12}",
            "label", "A total", "B total", "B - A", "compute", "exchange", "sync"
        );
        for l in &self.labels {
            let t = |x: Option<Split>| x.map_or("-".into(), |x| x.total().to_string());
            let d = |f: fn(&Split) -> u64| {
                signed(Pair::new(l.a.as_ref().map_or(0, f), l.b.as_ref().map_or(0, f)).diff)
            };
            let _ = writeln!(
                s,
                "  {:<32} {:>14} {:>14} {:>14} {:>12} {:>12} {:>12}",
                l.name,
                t(l.a),
                t(l.b),
                d(Split::total),
                d(|x| x.compute),
                d(|x| x.exchange),
                d(|x| x.sync)
            );
        }
    }
}

/// The chip × chip bytes of A and B, and B − A when the chip counts agree.
fn write_chips(s: &mut String, x: &ChipMatrices) {
    let weight = if x.weight == "run" {
        "over the runs"
    } else {
        "every exchange once"
    };
    let _ = writeln!(s, "Bytes between chips ({weight}; row = source chip)");
    let grid = |s: &mut String, name: &str, n: u32, cell: &dyn Fn(usize) -> String| {
        let _ = writeln!(s, "  {name}");
        for r in 0..n as usize {
            let row: Vec<String> = (0..n as usize)
                .map(|c| format!("{:>14}", cell(r * n as usize + c)))
                .collect();
            let _ = writeln!(s, "    chip {r:>3} {}", row.join(" "));
        }
    };
    grid(s, "A", x.a_chips, &|i| x.a[i].to_string());
    grid(s, "B", x.b_chips, &|i| x.b[i].to_string());
    match &x.diff {
        Some(d) => grid(s, "B - A", x.a_chips, &|i| signed(d[i])),
        None => s.push_str("  B - A: not compared (different chip counts)\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(kind: &str, name: &str, cycles: u64) -> (String, String, PhaseSide) {
        let side = PhaseSide {
            executions: 1,
            cycles,
        };
        (kind.into(), name.into(), side)
    }

    /// The k-th phase of a kind and name in A goes with the k-th in B; the rest is listed apart,
    /// A's before B's.
    #[test]
    fn phases_of_one_name_match_in_order_and_the_rest_is_listed_apart() {
        let a = [
            phase("compute", "step", 10),
            phase("exchange", "step", 5),
            phase("compute", "step", 11),
            phase("compute", "only a", 1),
        ];
        let b = [
            phase("compute", "step", 20),
            phase("compute", "only b", 2),
            phase("compute", "step", 21),
            phase("compute", "step", 22),
        ];
        let rows = match_phases(&a, &b);
        let got: Vec<(&str, &str, Option<u64>, Option<u64>)> = rows
            .iter()
            .map(|r| {
                let c = |s: Option<PhaseSide>| s.map(|s| s.cycles);
                (r.kind.as_str(), r.name.as_str(), c(r.a), c(r.b))
            })
            .collect();
        assert_eq!(
            got,
            [
                ("compute", "step", Some(10), Some(20)),
                ("compute", "step", Some(11), Some(21)),
                ("exchange", "step", Some(5), None),
                ("compute", "only a", Some(1), None),
                ("compute", "only b", None, Some(2)),
                ("compute", "step", None, Some(22)),
            ]
        );
        assert_eq!(rows[0].diff(), 10);
        assert_eq!(rows[2].diff(), -5);
    }

    #[test]
    fn differences_saturate_instead_of_overflowing() {
        assert_eq!(Pair::new(0, u64::MAX).diff, i64::MAX);
        assert_eq!(Pair::new(u64::MAX, 0).diff, i64::MIN);
        assert_eq!(Pair::new(7, 3).diff, -4);
    }
}

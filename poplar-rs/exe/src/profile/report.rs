//! Reports of a [`Profile`]: text summary, JSON and Chrome trace.

use std::fmt::Write as _;

use serde_json::json;

use super::data::*;
use crate::target::{Moves, Target};

/// Errors of reading a profile.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    #[error("cannot read profile {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// The path is not a regular file (a directory, FIFO, device or socket): refused before
    /// anything is read from it.
    #[error("{path}: not a regular file ({kind}); a profile is read from a regular file")]
    NotAFile { path: String, kind: String },
    /// The file is empty (or only white space).
    #[error("empty file: not a poplar profile (a profile is a JSON object)")]
    Empty,
    /// Valid JSON, but not an object.
    #[error(
        "not a poplar profile: {0}, expected a JSON object with \"schema\": \"poplar-profile\""
    )]
    NotAnObject(&'static str),
    #[error("not a poplar profile: {0}")]
    Json(#[from] serde_json::Error),
    #[error("not a poplar profile (schema '{0}')")]
    Schema(String),
    #[error("profile schema version {found} is not supported (this build reads {supported})")]
    Version { found: u32, supported: u32 },
    #[error("inconsistent profile: {0}")]
    Inconsistent(String),
    /// A cycle count no run can reach (above [`MAX_PROFILE_CYCLES`]: 2^62 cycles are over a
    /// century at the chip's clock), such as the `u64::MAX` a saturated sum or an edited file
    /// holds: `field` names it (`elapsed.compute`, `labels[2].elapsed.sync`, …).
    #[error("implausible profile: {field} is {value} cycles, more than any run can reach (at most {MAX_PROFILE_CYCLES})")]
    Implausible { field: String, value: u64 },
}

/// The most cycles a profile's counts may hold ([`ProfileError::Implausible`] above): 2^62,
/// 110 years at 1.33 GHz.
pub const MAX_PROFILE_CYCLES: u64 = 1 << 62;

/// The first cycle count of `p` above [`MAX_PROFILE_CYCLES`], by field.
fn implausible(p: &Profile) -> Option<ProfileError> {
    let split = |name: &str, s: &Split| {
        [
            ("compute", s.compute),
            ("exchange", s.exchange),
            ("sync", s.sync),
            ("transfer", s.transfer),
            ("transfer_overlapped", s.transfer_overlapped),
        ]
        .into_iter()
        .find(|&(_, v)| v > MAX_PROFILE_CYCLES)
        .map(|(f, value)| ProfileError::Implausible {
            field: format!("{name}.{f}"),
            value,
        })
    };
    let tiles = [
        ("compute", &p.tiles.compute),
        ("exchange", &p.tiles.exchange),
        ("sync", &p.tiles.sync),
        ("transfer", &p.tiles.transfer),
    ];
    split("elapsed", &p.elapsed)
        .or_else(|| {
            p.labels
                .iter()
                .enumerate()
                .find_map(|(i, l)| split(&format!("labels[{i}].elapsed"), &l.elapsed))
        })
        .or_else(|| {
            p.phases.iter().enumerate().find_map(|(i, ph)| {
                (ph.cycles > MAX_PROFILE_CYCLES).then(|| ProfileError::Implausible {
                    field: format!("phases[{i}].cycles"),
                    value: ph.cycles,
                })
            })
        })
        .or_else(|| {
            tiles.iter().find_map(|(what, a)| {
                a.iter().enumerate().find_map(|(t, &value)| {
                    (value > MAX_PROFILE_CYCLES).then(|| ProfileError::Implausible {
                        field: format!("tiles.{what}[{t}]"),
                        value,
                    })
                })
            })
        })
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

impl Profile {
    /// The profile as JSON (schema [`PROFILE_SCHEMA`], version [`PROFILE_SCHEMA_VERSION`]).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a profile always serializes")
    }

    /// Reads a profile written by [`Profile::to_json`]; checks the schema name, the version
    /// and that per-tile arrays match the target.
    pub fn from_json(text: &str) -> Result<Profile, ProfileError> {
        if text.trim().is_empty() {
            return Err(ProfileError::Empty);
        }
        let v: serde_json::Value = serde_json::from_str(text)?;
        let kind = match &v {
            serde_json::Value::Object(_) => None,
            serde_json::Value::Array(_) => Some("a JSON array"),
            serde_json::Value::String(_) => Some("a JSON string"),
            serde_json::Value::Number(_) => Some("a JSON number"),
            serde_json::Value::Bool(_) => Some("a JSON boolean"),
            serde_json::Value::Null => Some("JSON null"),
        };
        if let Some(kind) = kind {
            return Err(ProfileError::NotAnObject(kind));
        }
        match v.get("schema").and_then(|s| s.as_str()) {
            Some(PROFILE_SCHEMA) => {}
            other => return Err(ProfileError::Schema(other.unwrap_or("none").to_string())),
        }
        let version = v.get("version").and_then(|s| s.as_u64()).unwrap_or(0);
        // Version 1 lacks only the transfer fields, which default to none.
        if !(1..=u64::from(PROFILE_SCHEMA_VERSION)).contains(&version) {
            return Err(ProfileError::Version {
                found: u32::try_from(version).unwrap_or(u32::MAX),
                supported: PROFILE_SCHEMA_VERSION,
            });
        }
        let p: Profile = serde_json::from_value(v)?;
        // The target first (the clock divides every time in the reports; a tile count from
        // it sizes what follows).
        p.target
            .validate()
            .map_err(|e| ProfileError::Inconsistent(format!("target: {e}")))?;
        if p.runs == 0 {
            return Err(ProfileError::Inconsistent(
                "runs is 0: a profile records at least one run".into(),
            ));
        }
        if let Some(e) = implausible(&p) {
            return Err(e);
        }
        let n = u64::from(p.target.num_ipus) * u64::from(p.target.tiles_per_ipu);
        for ph in &p.phases {
            if let Some([t, _]) = ph.tile_cycles.iter().find(|[t, _]| *t >= n) {
                return Err(ProfileError::Inconsistent(format!(
                    "phase '{}' ({} {}): tile {t} is out of range (the target has {n} tiles)",
                    ph.name,
                    ph.kind.name(),
                    ph.index
                )));
            }
        }
        for t in &p.timeline.tracks {
            for tile in [t.first_tile, t.last_tile] {
                if u64::from(tile) >= n {
                    return Err(ProfileError::Inconsistent(format!(
                        "timeline track '{}': tile {tile} is out of range (the target has {n} tiles)",
                        t.name
                    )));
                }
            }
            if t.first_tile > t.last_tile {
                return Err(ProfileError::Inconsistent(format!(
                    "timeline track '{}': first tile {} after last tile {}",
                    t.name, t.first_tile, t.last_tile
                )));
            }
        }
        for (what, a) in [
            ("compute", &p.tiles.compute),
            ("exchange", &p.tiles.exchange),
            ("sync", &p.tiles.sync),
        ]
        .into_iter()
        // Version 1 profiles have no transfer cycles.
        .chain((!p.tiles.transfer.is_empty()).then_some(("transfer", &p.tiles.transfer)))
        {
            if a.len() as u64 != n {
                return Err(ProfileError::Inconsistent(format!(
                    "tiles.{what} has {} entries for {n} tiles",
                    a.len()
                )));
            }
        }
        let tracks = p.timeline.tracks.len() as u32;
        let names = p.timeline.names.len() as u32;
        if let Some(s) = p
            .timeline
            .spans
            .iter()
            .find(|s| s.track >= tracks || s.name >= names)
        {
            return Err(ProfileError::Inconsistent(format!(
                "span {s:?} refers to a missing track or name"
            )));
        }
        Ok(p)
    }

    /// Reads a profile file.
    pub fn load(path: impl AsRef<std::path::Path>) -> Result<Profile, ProfileError> {
        let path = path.as_ref();
        let io = |source| ProfileError::Io {
            path: path.display().to_string(),
            source,
        };
        // Checked before opening: opening a FIFO for reading blocks until a writer comes.
        let text = crate::files::read_regular_to_string(path).map_err(|e| match e {
            crate::files::InputError::NotRegular { kind, .. } => ProfileError::NotAFile {
                path: path.display().to_string(),
                kind: kind.into(),
            },
            crate::files::InputError::Io { source, .. } => io(source),
        })?;
        Profile::from_json(&text)
    }

    /// Writes the profile as JSON to `path`, atomically: into a temporary file beside it,
    /// flushed to the disk, then renamed over `path` (a failed save leaves the file that was
    /// there and no temporary file).
    pub fn save(&self, path: impl AsRef<std::path::Path>) -> std::io::Result<()> {
        crate::atomic::save_bytes(path.as_ref(), self.to_json().as_bytes())
    }

    /// Modelled elapsed cycles of everything recorded.
    pub fn total_cycles(&self) -> u64 {
        self.elapsed.total()
    }

    /// Compute, exchange and sync cycles of each label, in order of first execution.
    pub fn summary_by_label(&self) -> Vec<LabelSummary> {
        self.labels
            .iter()
            .map(|l| LabelSummary {
                name: l.name.clone(),
                executions: l.executions,
                compute: l.elapsed.compute,
                exchange: l.elapsed.exchange,
                sync: l.elapsed.sync,
                total: l.elapsed.total(),
            })
            .collect()
    }

    /// The label named `name`.
    pub fn label(&self, name: &str) -> Option<&LabelProfile> {
        self.labels.iter().find(|l| l.name == name)
    }

    /// Phases of one compute set or exchange by name.
    pub fn phases_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a PhaseProfile> {
        self.phases.iter().filter(move |p| p.name == name)
    }

    /// A text summary in the spirit of Poplar's `printProfileSummary`.
    pub fn text_summary(&self) -> String {
        let mut s = String::new();
        self.write_overview(&mut s);
        write_assumptions(&mut s, &self.target, |m| self.had(m));
        write_tile_stats(&mut s, "compute", &self.tiles.compute);
        write_tile_stats(&mut s, "exchange", &self.tiles.exchange);
        write_tile_stats(&mut s, "sync", &self.tiles.sync);
        if self.tiles.transfer.iter().any(|&c| c > 0) {
            write_tile_stats(&mut s, "transfer", &self.tiles.transfer);
        }
        if !self.labels.is_empty() {
            self.write_labels(&mut s);
            self.write_cross_chip(&mut s);
        }
        self.write_phases(&mut s);
        s
    }

    /// Whether the run had some of what an assumed constant moves.
    fn had(&self, m: Moves) -> bool {
        let inter_chip = self.phases.iter().any(|p| p.inter_chip_bytes > 0);
        match m {
            Moves::Exchange => self
                .phases
                .iter()
                .any(|p| p.kind == PhaseKind::Exchange && p.cycles > 0),
            Moves::InterChip => inter_chip,
            Moves::InterDomain => inter_chip && self.target.domain_chips() < self.target.num_ipus,
            Moves::InternalSync => self.syncs.internal > 0,
            Moves::GlobalSync => self.syncs.global > 0,
            Moves::Transfer => self.elapsed.transfer + self.elapsed.transfer_overlapped > 0,
        }
    }

    /// The summary's first lines: target, runs, elapsed cycles by kind and syncs.
    fn write_overview(&self, s: &mut String) {
        let t = &self.target;
        let total = self.total_cycles();
        let secs = total as f64 / t.clock_hz;
        let _ = writeln!(
            s,
            "Profile summary (modelled cycles; schema v{})",
            self.version
        );
        let _ = writeln!(
            s,
            "  target: {} chip(s) x {} tiles, {} workers/tile, {:.2} GHz",
            t.num_ipus,
            t.tiles_per_ipu,
            t.workers_per_tile,
            t.clock_hz / 1e9
        );
        let _ = writeln!(
            s,
            "  runs: {}, modelled {} cycles ({:.3} ms at the clock), host wall {:.3} ms",
            self.runs,
            total,
            secs * 1e3,
            self.wall_ns as f64 / 1e6
        );
        let e = &self.elapsed;
        let _ = writeln!(
            s,
            "  elapsed: compute {} ({:.1}%), exchange {} ({:.1}%), sync {} ({:.1}%)",
            e.compute,
            pct(e.compute, total),
            e.exchange,
            pct(e.exchange, total),
            e.sync,
            pct(e.sync, total)
        );
        if e.transfer > 0 || e.transfer_overlapped > 0 {
            let _ = writeln!(
                s,
                "  transfers (Streaming Memory and host): waited for {} ({:.1}%), overlapped with compute {}",
                e.transfer,
                pct(e.transfer, total),
                e.transfer_overlapped
            );
        }
        let _ = writeln!(
            s,
            "  syncs: {} internal, {} global",
            self.syncs.internal, self.syncs.global
        );
    }

    /// The table of labels: executions and elapsed cycles by kind.
    fn write_labels(&self, s: &mut String) {
        let _ = writeln!(s, "\nPrograms by label (elapsed cycles, inclusive):");
        let _ = writeln!(
            s,
            "  {:<24} {:>8} {:>14} {:>14} {:>14} {:>14} {:>8}",
            "label", "runs", "compute", "exchange", "sync", "total", "effect."
        );
        for l in &self.labels {
            let _ = writeln!(
                s,
                "  {:<24} {:>8} {:>14} {:>14} {:>14} {:>14} {:>7.1}%",
                l.name,
                l.executions,
                l.elapsed.compute,
                l.elapsed.exchange,
                l.elapsed.sync,
                l.elapsed.total(),
                100.0 * l.effectiveness
            );
        }
    }

    /// The table of collectives (and any block that crosses chips): their steps and link
    /// bytes; nothing if no label crosses chips.
    fn write_cross_chip(&self, s: &mut String) {
        let over_links: Vec<_> = self
            .labels
            .iter()
            .filter(|l| l.inter_chip_bytes > 0)
            .collect();
        if over_links.is_empty() {
            return;
        }
        let _ = writeln!(
            s,
            "\nBlocks that cross chips (collectives: one exchange per step):"
        );
        let _ = writeln!(
            s,
            "  {:<24} {:>10} {:>16} {:>6} {:>16} {:>14} {:>10}",
            "label",
            "exchanges",
            "bytes over links",
            "links",
            "busiest link B",
            "exchange cyc",
            "GB/s"
        );
        let clock = self.target.clock_hz;
        for l in over_links {
            let secs = l.elapsed.total() as f64 / clock;
            let _ = writeln!(
                s,
                "  {:<24} {:>10} {:>16} {:>6} {:>16} {:>14} {:>10.2}",
                l.name,
                l.exchange_phases,
                l.inter_chip_bytes,
                l.links,
                l.max_link_bytes,
                l.elapsed.exchange,
                if secs > 0.0 {
                    l.inter_chip_bytes as f64 / secs / 1e9
                } else {
                    0.0
                }
            );
        }
    }

    /// The table of phases, busiest first, with a note if any uses default cycle estimates.
    fn write_phases(&self, s: &mut String) {
        let _ = writeln!(s, "\nPhases (cycles of the busiest tile x executions):");
        let _ = writeln!(
            s,
            "  {:<9} {:<28} {:>7} {:>12} {:>9} {:>9} {:>9} {:>7} {:>11}",
            "kind", "name", "execs", "cycles", "min", "median", "max", "effect.", "wall us"
        );
        let mut phases: Vec<&PhaseProfile> = self.phases.iter().collect();
        phases.sort_by_key(|p| std::cmp::Reverse(p.cycles));
        let mut flagged = false;
        for p in phases {
            flagged |= p.default_estimates > 0;
            write_phase_row(s, p);
        }
        if flagged {
            let _ = writeln!(
                s,
                "  * some vertices use the default cycle estimate (their codelet gives none)"
            );
        }
    }

    /// The timeline as a Chrome trace-event JSON object (opens in Perfetto and
    /// chrome://tracing). Time unit: one modelled cycle per microsecond of the trace.
    pub fn chrome_trace(&self) -> serde_json::Value {
        let tl = &self.timeline;
        let mut events = Vec::with_capacity(tl.spans.len() + 2 * tl.tracks.len());
        let pid_of = |t: &Track| t.chip.map_or(0, |c| c + 1);
        let mut named_pids = std::collections::BTreeSet::new();
        for (i, t) in tl.tracks.iter().enumerate() {
            let pid = pid_of(t);
            if named_pids.insert(pid) {
                events.push(json!({
                    "name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                    "args": {"name": match t.chip {
                        Some(c) => format!("chip {c}"),
                        None => "program".to_string(),
                    }}
                }));
                events.push(json!({
                    "name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
                    "args": {"sort_index": pid}
                }));
            }
            events.push(json!({
                "name": "thread_name", "ph": "M", "pid": pid, "tid": i,
                "args": {"name": t.name}
            }));
        }
        for s in &tl.spans {
            let t = &tl.tracks[s.track as usize];
            let cat = match s.kind {
                SpanKind::Compute => "compute",
                SpanKind::Exchange => "exchange",
                SpanKind::Sync => "sync",
                SpanKind::Label => "label",
                SpanKind::Transfer => "transfer",
            };
            events.push(json!({
                "name": tl.names[s.name as usize],
                "cat": cat,
                "ph": "X",
                "ts": s.start,
                "dur": s.dur,
                "pid": pid_of(t),
                "tid": s.track,
                "args": {"cycles": s.dur, "first_tile": t.first_tile, "last_tile": t.last_tile}
            }));
        }
        json!({
            "traceEvents": events,
            "displayTimeUnit": "ns",
            "otherData": {
                "schema": "poplar-trace",
                "version": PROFILE_SCHEMA_VERSION,
                "time_unit": "cycle",
                "clock_hz": self.target.clock_hz,
                "truncated": tl.truncated,
            }
        })
    }
}

/// One line of per-tile statistics of the summary.
fn write_tile_stats(s: &mut String, name: &str, v: &[u64]) {
    let st = Stats::of(v);
    let _ = writeln!(
        s,
        "  per tile {name:<8}: min {} median {} max {} mean {:.0} std {:.0} effectiveness {:.1}%",
        st.min,
        st.median,
        st.max,
        st.mean,
        st.std,
        100.0 * st.effectiveness
    );
}

/// One row of the summary's phase table; its name is flagged `*` if it uses default cycle
/// estimates.
fn write_phase_row(s: &mut String, p: &PhaseProfile) {
    let flag = if p.default_estimates > 0 { "*" } else { "" };
    // Exchange wall times exist since the engine measured them (older files hold 0).
    let wall = if p.kind == PhaseKind::Compute || p.wall_ns > 0 {
        format!("{:.1}", p.wall_ns as f64 / 1e3)
    } else {
        "-".into()
    };
    let st = &p.per_execution;
    let _ = writeln!(
        s,
        "  {:<9} {:<28} {:>7} {:>12} {:>9} {:>9} {:>9} {:>6.1}% {:>11}",
        p.kind.name(),
        format!("{}{flag}", truncate(&p.name, 27)),
        p.executions,
        p.cycles,
        st.min,
        st.median,
        st.max,
        100.0 * st.effectiveness,
        wall
    );
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('~');
        t
    }
}

/// The assumed constants (no public measurement: [`Target::assumptions`]) that moved this
/// run's time, `moved` telling which parts the run had; nothing if none did.
pub(crate) fn write_assumptions(s: &mut String, target: &Target, moved: impl Fn(Moves) -> bool) {
    let used: Vec<_> = target
        .assumptions()
        .into_iter()
        .filter(|a| moved(a.moves))
        .collect();
    if used.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "  assumptions (constants with no measurement that moved this time; docs/cycle-model.md):"
    );
    for a in used {
        let _ = writeln!(
            s,
            "    {:<26} {:>10} {:<30} {}",
            a.constant.name(),
            format!("{:.4}", a.value)
                .trim_end_matches('0')
                .trim_end_matches('.'),
            a.unit,
            a.basis
        );
    }
}

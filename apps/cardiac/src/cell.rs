//! Single-cell mode: one TP06 cell (or a batch of independent cells) paced by a stimulus
//! protocol, with the features a modeller reads off an action potential per beat and the S1–S2
//! restitution curve. It runs the tissue solver's own f32 kernel ([`tp06::step_batch`], the
//! same numerics per cell as the device codelet), so what is learnt here holds in tissue.
//!
//! **Protocol.** Pulses of `amplitude` pA/pF (negative depolarises, the TP06 convention) for
//! `duration` ms, the first at `start` ms, then every `bcl` ms for `beats` beats (S1). An S2
//! pulse may follow the last S1 pulse after a coupling interval. Pulse edges are whole time
//! steps: a pulse starting at `t0` is on for the steps `k` with `t0 <= k·dt < t0 + duration`.
//!
//! **Features of a beat** (window: from its pulse to the next pulse, or to the end of the run):
//! - `v_rest`: V at the pulse onset;
//! - `v_max`: the largest V in the window;
//! - `dvdt_max`: the largest dV/dt, and `t_upstroke` its time after the onset;
//! - `t_activation`: the upward crossing of 0 mV after the onset, interpolated linearly;
//! - `apd30`, `apd50` and `apd90`: for x = 30, 50, 90, the level
//!   `L = v_max − x/100 · (v_max − v_rest)`, and APDx = the time from the upward crossing of `L`
//!   to the next downward crossing of `L`.
//!
//! This is the definition of the committed myokit reference (`reference/tp06/make_reference.py`),
//! so that APD90 can be compared with it directly. A beat captures when V crosses 0 mV after the
//! onset and its APD50 is at least [`MIN_CAPTURE_APD50`] ms; otherwise it has no features (a
//! pulse late in repolarisation can push V over 0 mV by itself for a few ms: that is the
//! stimulus's own depolarisation, not an action potential).

use crate::format::show;
use crate::mesh::CellType;
use crate::tp06;
use crate::tp06::Scalings;

/// Errors in a protocol, each naming the option at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CellError {
    #[error("{option} = {}: {why}", show(*.value))]
    Bad {
        option: &'static str,
        value: f64,
        why: &'static str,
    },
    #[error("the cell diverged at t = {t:.3} ms (V = {v} mV): use a smaller --dt (at most 0.2 ms; 0.02 is the default)")]
    Diverged { t: f64, v: f32 },
    /// A run past [`MAX_CELL_TIME`], [`MAX_HELD_BYTES`] or (unless forced) [`MAX_CELL_STEPS`].
    #[error("{0}")]
    TooLarge(String),
}

/// Latest end of a protocol (ms): 100,000 beats of 1 s, the most `--beats` at the default
/// `--bcl`.
pub const MAX_CELL_TIME: f64 = 1e8;

/// Most bytes of V a run holds at once: the windows of the beats being measured (every step
/// of each, 4 bytes) and the sampled trace (24 bytes a sample, with its CSV row).
pub const MAX_HELD_BYTES: f64 = (1u64 << 30) as f64;

/// Most cell-steps (cells × time steps) of a run unless forced: about 17 minutes for the S1–S2
/// sweep, whose cells share the kernel's vector lanes (1.3–2.3·10^7 cell-steps per second
/// measured for 750 to 2,000 cells on a loaded 2-core host; 10^7 assumed), and about 2 hours
/// for one paced cell (1.3·10^6 steps per second).
pub const MAX_CELL_STEPS: f64 = 1e10;

/// Most time steps of any run, forced or not: 10^15, centuries of one cell; and what keeps
/// step counts far inside usize.
pub const MAX_CELL_STEPS_EVER: f64 = 1e15;

/// Bytes held per sample of the trace: the f32, and its row of trace.csv.
const TRACE_SAMPLE_BYTES: f64 = 24.0;

/// The shortest APD50 (ms) of a response counted as an action potential.
pub const MIN_CAPTURE_APD50: f64 = 20.0;

/// A pacing protocol.
#[derive(Debug, Clone, PartialEq)]
pub struct Protocol {
    pub cell_type: CellType,
    /// Time step (ms).
    pub dt: f64,
    /// Basic cycle length (ms).
    pub bcl: f64,
    /// S1 beats.
    pub beats: usize,
    /// Stimulus current (pA/pF; negative depolarises).
    pub amplitude: f64,
    /// Pulse length (ms).
    pub duration: f64,
    /// First pulse (ms).
    pub start: f64,
    /// Time simulated after the last pulse (ms); `None`: one `bcl`.
    pub tail: Option<f64>,
    /// TP06 conductance scalings (1: the published model), as in tissue (`--tp06`).
    pub scale: Scalings,
    /// Sampling interval of the paced run's trace (ms), rounded to whole time steps, at least
    /// one (`--trace-every`, which the command refuses below `--dt`).
    pub trace_every: f64,
}

impl Protocol {
    /// The reference protocol of `reference/tp06`: -52 pA/pF for 1 ms, 10 ms into each beat of
    /// 1000 ms, 5 beats, at 0.02 ms.
    pub fn reference(cell_type: CellType) -> Protocol {
        Protocol {
            cell_type,
            dt: 0.02,
            bcl: 1000.0,
            beats: 5,
            amplitude: -52.0,
            duration: 1.0,
            start: 10.0,
            tail: None,
            scale: Scalings::ONE,
            trace_every: 0.1,
        }
    }

    /// Checks every field; the error names the command-line option.
    pub fn check(&self) -> Result<(), CellError> {
        let bad = |option, value, why| Err(CellError::Bad { option, value, why });
        let fin = |x: f64| x.is_finite();
        if !(fin(self.dt) && self.dt > 0.0 && self.dt <= 0.2) {
            return bad(
                "--dt",
                self.dt,
                "must be in (0, 0.2] ms: TP06 with forward Euler is unstable beyond",
            );
        }
        if !(fin(self.duration) && self.duration >= self.dt) {
            return bad(
                "--stim-duration",
                self.duration,
                "must be at least one time step (--dt)",
            );
        }
        if !(fin(self.bcl) && self.bcl > self.duration) {
            return bad(
                "--bcl",
                self.bcl,
                "must be longer than the pulse (--stim-duration)",
            );
        }
        if self.beats == 0 || self.beats > 100_000 {
            return bad("--beats", self.beats as f64, "must be 1 to 100,000");
        }
        if !(fin(self.amplitude) && self.amplitude.abs() <= 1e4) {
            return bad(
                "--stim-amplitude",
                self.amplitude,
                "must be finite and at most 10,000 pA/pF in magnitude",
            );
        }
        if !(fin(self.start) && self.start >= 0.0) {
            return bad("--stim-start", self.start, "must be 0 or later");
        }
        if let Some(t) = self.tail {
            if !(fin(t) && t > 0.0) {
                return bad("--tail", t, "must be positive");
            }
        }
        if !(fin(self.trace_every) && self.trace_every > 0.0) {
            return bad("--trace-every", self.trace_every, "must be positive");
        }
        Ok(())
    }

    /// Steps between two samples of the trace.
    fn trace_stride(&self) -> usize {
        ((self.trace_every / self.dt).round() as usize).max(1)
    }

    /// Checks the size of a run of this protocol, paced ([`pace`]) and, with `s2`, swept
    /// ([`restitution`]), before any of it is allocated: a protocol ending past
    /// [`MAX_CELL_TIME`] or holding more than [`MAX_HELD_BYTES`] at once is refused, and one
    /// of more than [`MAX_CELL_STEPS`] cell-steps unless `force`. Returns the cell-steps.
    pub fn check_size(&self, s2: Option<&[f64]>, force: bool) -> Result<f64, CellError> {
        self.check()?;
        let paced = Plan::pace(self)?;
        let mut cell_steps = paced.cell_steps;
        if let Some(s2) = s2 {
            cell_steps += Plan::restitution(self, s2)?.cell_steps;
        }
        if cell_steps > MAX_CELL_STEPS && !force {
            return Err(CellError::TooLarge(format!(
                "the protocol is {cell_steps:.3e} cell-steps ({} steps of --dt {} ms to t = {} ms \
                 for the paced cell{}: --stim-start, --beats × --bcl, {}and a --bcl after the \
                 last pulse), past the bound of {MAX_CELL_STEPS:e} (about {:.0} minutes of \
                 the S1-S2 sweep's vector lanes, or {:.1} hours of one cell). Pass --force to \
                 run it anyway",
                crate::format::grouped(paced.steps as f64),
                show(self.dt),
                show(paced.end),
                s2.map_or(String::new(), |s| format!(
                    ", and {} S2 cells × {} steps",
                    s.len(),
                    crate::format::grouped(
                        Plan::restitution(self, s).map_or(0.0, |r| r.steps as f64)
                    )
                )),
                if s2.is_some() { "--s2 " } else { "" },
                MAX_CELL_STEPS / 1e7 / 60.0,
                MAX_CELL_STEPS / 1.3e6 / 3600.0
            )));
        }
        Ok(cell_steps)
    }

    /// Pulse onsets of the S1 train (ms).
    pub fn s1_onsets(&self) -> Vec<f64> {
        (0..self.beats)
            .map(|k| self.start + k as f64 * self.bcl)
            .collect()
    }
}

/// Features of one beat (see the module notes).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct BeatFeatures {
    /// Beat number from 1.
    pub beat: usize,
    /// Pulse onset (ms).
    pub onset: f64,
    pub v_rest: f64,
    pub v_max: f64,
    /// mV/ms.
    pub dvdt_max: f64,
    /// Time of the largest dV/dt after the onset (ms).
    pub t_upstroke: f64,
    /// Upward 0 mV crossing after the onset (ms).
    pub t_activation: f64,
    pub apd30: f64,
    pub apd50: f64,
    pub apd90: f64,
}

/// A sampled trace: V every `dt` ms from t = 0 (for a paced run, `dt` is the protocol's
/// `trace_every` rounded to whole time steps).
#[derive(Debug, Clone)]
pub struct Trace {
    pub dt: f64,
    pub v: Vec<f32>,
}

/// V at every time step of a beat's window: steps `first .. first + v.len()`. Beats are
/// measured from their window alone, so that a run holds the windows being filled, not its
/// whole trace.
#[derive(Debug, Clone)]
struct Window {
    first: usize,
    dt: f64,
    v: Vec<f32>,
}

impl Window {
    fn t(&self, k: usize) -> f64 {
        k as f64 * self.dt
    }

    fn at(&self, k: usize) -> f64 {
        f64::from(self.v[k - self.first])
    }

    fn end(&self) -> usize {
        self.first + self.v.len()
    }

    /// Upward (or downward) crossing of `level` in steps `from..to`, interpolated linearly.
    fn crossing(&self, level: f64, upward: bool, from: usize, to: usize) -> Option<f64> {
        (from.max(self.first + 1)..to.min(self.end())).find_map(|k| {
            let (a, b) = (self.at(k - 1), self.at(k));
            let hit = if upward {
                a < level && level <= b
            } else {
                a > level && level >= b
            };
            hit.then(|| self.t(k - 1) + self.dt * (level - a) / (b - a))
        })
    }

    /// Features of the beat whose pulse starts at `onset` and whose window ends at `end` (ms);
    /// `None` if it did not capture.
    fn features(&self, beat: usize, onset: f64, end: f64) -> Option<BeatFeatures> {
        let k0 = (onset / self.dt).round() as usize;
        let k1 = ((end / self.dt).round() as usize).min(self.end());
        if k0 < self.first || k0 + 1 >= k1 {
            return None;
        }
        let v_rest = self.at(k0);
        let (mut v_max, mut dvdt, mut k_up) = (f64::MIN, f64::MIN, k0);
        for k in k0..k1 {
            v_max = v_max.max(self.at(k));
            if k > k0 {
                let d = f64::from(self.v[k - self.first] - self.v[k - 1 - self.first]) / self.dt;
                if d > dvdt {
                    dvdt = d;
                    k_up = k;
                }
            }
        }
        let t_act = self.crossing(0.0, true, k0 + 1, k1)?;
        let apd = |x: f64| -> f64 {
            let level = v_max - x / 100.0 * (v_max - v_rest);
            let Some(up) = self.crossing(level, true, k0 + 1, k1) else {
                return f64::NAN;
            };
            let k_after = (up / self.dt).ceil() as usize;
            self.crossing(level, false, k_after, k1)
                .map_or(f64::NAN, |down| down - up)
        };
        let apd50 = apd(50.0);
        if apd50.is_nan() || apd50 < MIN_CAPTURE_APD50 {
            return None;
        }
        Some(BeatFeatures {
            beat,
            onset,
            v_rest,
            v_max,
            dvdt_max: dvdt,
            t_upstroke: self.t(k_up) - self.dt / 2.0 - onset,
            t_activation: t_act - onset,
            apd30: apd(30.0),
            apd50,
            apd90: apd(90.0),
        })
    }
}

/// Steps `k0..k1` of cell `cell` to hold as one [`Window`]; `tag` is its index in the
/// windows the plan was made from.
#[derive(Debug, Clone, Copy)]
struct Capture {
    cell: usize,
    k0: usize,
    k1: usize,
    tag: usize,
}

/// What a run will take: its steps, its end (ms), its windows, and what it holds at once.
struct Plan {
    steps: usize,
    end: f64,
    cells: usize,
    captures: Vec<Capture>,
    cell_steps: f64,
}

impl Plan {
    /// Sizes a run of `cells` cells to `end` ms whose windows are `windows` (cell, from ms,
    /// to ms), with a sampled trace of cell 0 if `traced`: refused past [`MAX_CELL_TIME`] or
    /// [`MAX_HELD_BYTES`] before anything is allocated.
    fn new(
        p: &Protocol,
        cells: usize,
        end: f64,
        windows: &[(usize, f64, f64)],
        traced: bool,
    ) -> Result<Plan, CellError> {
        let too_large = |what: String| Err(CellError::TooLarge(what));
        if end.is_nan() || end > MAX_CELL_TIME {
            return too_large(format!(
                "the protocol ends at t = {} ms (--stim-start {} ms, --beats {} × --bcl {} ms, \
                 --s2, and a --bcl after the last pulse), past the longest cell run, {} ms \
                 (100,000 beats of 1 s)",
                show(end),
                show(p.start),
                p.beats,
                show(p.bcl),
                show(MAX_CELL_TIME)
            ));
        }
        // Counted in f64 first: 10^-300 ms steps are beyond usize.
        let steps = (end / p.dt).round();
        if steps.is_nan() || steps > MAX_CELL_STEPS_EVER {
            return too_large(format!(
                "the protocol is {} time steps of --dt {} ms (to t = {} ms): past {}, more \
                 than any run could take",
                show(steps),
                show(p.dt),
                show(end),
                show(MAX_CELL_STEPS_EVER)
            ));
        }
        let steps = steps as usize;
        let step = |t: f64| ((t / p.dt).round() as usize).min(steps + 1);
        let mut captures: Vec<Capture> = windows
            .iter()
            .enumerate()
            .map(|(tag, &(cell, a, b))| Capture {
                cell,
                k0: step(a),
                k1: step(b),
                tag,
            })
            .collect();
        captures.sort_by_key(|c| c.k0);
        // The most samples held at once: windows open from k0 to k1.
        let mut events: Vec<(usize, i64)> = captures
            .iter()
            .filter(|c| c.k1 > c.k0)
            .flat_map(|c| {
                [
                    (c.k0, (c.k1 - c.k0) as i64),
                    (c.k1, -((c.k1 - c.k0) as i64)),
                ]
            })
            .collect();
        events.sort_by_key(|&(k, d)| (k, d));
        let (mut now, mut most) = (0i64, 0i64);
        for (_, d) in events {
            now += d;
            most = most.max(now);
        }
        let samples = if traced {
            (steps / p.trace_stride() + 1) as f64
        } else {
            0.0
        };
        let held = most as f64 * 4.0 + samples * TRACE_SAMPLE_BYTES;
        if held > MAX_HELD_BYTES {
            return too_large(format!(
                "the protocol would hold {:.1} GiB of V at once, past the bound of {:.0} GiB: \
                 the windows of the beats it measures are every step of --dt {} ms for a --bcl \
                 of {} ms{}{}",
                held / f64::from(1u32 << 30),
                MAX_HELD_BYTES / f64::from(1u32 << 30),
                show(p.dt),
                show(p.bcl),
                if cells > 1 {
                    format!(" (in each of {cells} S2 cells, up to the longest --s2)")
                } else {
                    String::new()
                },
                if traced {
                    format!(
                        ", and the trace has {} samples of --trace-every {} ms",
                        show(samples),
                        show(p.trace_every)
                    )
                } else {
                    String::new()
                }
            ));
        }
        Ok(Plan {
            steps,
            end,
            cells,
            captures,
            cell_steps: cells as f64 * steps as f64,
        })
    }

    /// The paced run of [`pace`]: one cell, a window per beat from its pulse to the next.
    fn pace(p: &Protocol) -> Result<Plan, CellError> {
        let onsets = p.s1_onsets();
        let end = onsets.last().copied().unwrap_or(0.0) + p.tail.unwrap_or(p.bcl);
        let windows: Vec<(usize, f64, f64)> = onsets
            .iter()
            .enumerate()
            .map(|(b, &o)| (0, o, onsets.get(b + 1).copied().unwrap_or(end)))
            .collect();
        Plan::new(p, 1, end, &windows, true)
    }

    /// The sweep of [`restitution`]: a cell per S2 interval, each with the window of its S2
    /// beat, and the last S1 beat's window (to its S2 pulse) in the cell of the longest.
    fn restitution(p: &Protocol, s2: &[f64]) -> Result<Plan, CellError> {
        let (last, longest, far) = sweep(p, s2);
        let tail = p.tail.unwrap_or(p.bcl);
        let end = last + longest + tail;
        let mut windows: Vec<(usize, f64, f64)> = s2
            .iter()
            .enumerate()
            .map(|(i, &c)| (i, last + c, last + c + tail))
            .collect();
        windows.push((far, last, last + longest));
        Plan::new(p, s2.len(), end, &windows, false)
    }
}

/// The last S1 pulse (ms), the longest S2 interval and the cell that has it.
fn sweep(p: &Protocol, s2: &[f64]) -> (f64, f64, usize) {
    let last = p.s1_onsets().last().copied().unwrap_or(p.start);
    let longest = s2.iter().cloned().fold(0.0, f64::max);
    let far = s2
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map_or(0, |(i, _)| i);
    (last, longest, far)
}

/// The states of `n` cells at rest (state-major: state `k` of cell `i` at `k * n + i`).
fn initial_states(p: &Protocol, n: usize) -> Vec<f32> {
    let mut states = vec![0.0f32; tp06::N_STATES * n];
    let init = tp06::initial_state(p.cell_type);
    for (k, &x) in init.iter().enumerate() {
        states[k * n..(k + 1) * n].fill(x as f32);
    }
    states
}

/// The pulses of each cell as step ranges `[first, end)`, from their onsets (ms).
fn pulse_steps(p: &Protocol, onsets: &[Vec<f64>]) -> Vec<Vec<(usize, usize)>> {
    let pulse_steps = (p.duration / p.dt).round().max(1.0) as usize;
    onsets
        .iter()
        .map(|o| {
            o.iter()
                .map(|&t0| {
                    let k = (t0 / p.dt).round() as usize;
                    (k, k + pulse_steps)
                })
                .collect()
        })
        .collect()
}

/// Simulates the cells of `plan`, cell `i` stimulated by the pulses starting at `onsets[i]`,
/// handing each window of the plan to `window` (with its tag) as soon as it is full; returns the trace of cell 0 sampled every [`Protocol::trace_stride`] steps
/// if `traced`.
fn simulate(
    p: &Protocol,
    onsets: &[Vec<f64>],
    plan: &Plan,
    traced: bool,
    window: &mut dyn FnMut(usize, Window),
) -> Result<Option<Trace>, CellError> {
    let n = onsets.len();
    debug_assert_eq!(n, plan.cells);
    let dt = p.dt as f32;
    let mut states = initial_states(p, n);
    let types = vec![0u8; n];
    let models = [tp06::CellParams::<f32>::from_model(&tp06::CellModel {
        cell_type: p.cell_type,
        scale: p.scale,
    })
    .to_array()];
    let windows = pulse_steps(p, onsets);
    let stride = p.trace_stride();
    let mut trace = traced.then(|| Vec::with_capacity(plan.steps / stride + 1));
    // Windows in order of their first step; those open, with their samples so far.
    let caps = &plan.captures;
    let mut next_cap = 0;
    let mut open: Vec<(usize, Vec<f32>)> = Vec::new();
    // Records V (row 0 of `states`) at step `k`.
    let mut record = |k: usize, states: &[f32]| {
        while next_cap < caps.len() && caps[next_cap].k0 <= k {
            let c = caps[next_cap];
            if c.k1 > c.k0 {
                open.push((next_cap, Vec::with_capacity(c.k1 - c.k0)));
            } else {
                window(
                    c.tag,
                    Window {
                        first: c.k0,
                        dt: p.dt,
                        v: Vec::new(),
                    },
                );
            }
            next_cap += 1;
        }
        let mut j = 0;
        while j < open.len() {
            let c = caps[open[j].0];
            open[j].1.push(states[c.cell]);
            if k + 1 >= c.k1 {
                let (_, v) = open.swap_remove(j);
                window(
                    c.tag,
                    Window {
                        first: c.k0,
                        dt: p.dt,
                        v,
                    },
                );
            } else {
                j += 1;
            }
        }
        if let Some(t) = trace.as_mut() {
            if k.is_multiple_of(stride) {
                t.push(states[0]);
            }
        }
    };
    record(0, &states);
    let mut next = vec![0usize; n];
    let mut stim = vec![0.0f32; n];
    for k in 0..plan.steps {
        for i in 0..n {
            let w = &windows[i];
            while next[i] < w.len() && w[next[i]].1 <= k {
                next[i] += 1;
            }
            let on = next[i] < w.len() && w[next[i]].0 <= k;
            stim[i] = if on { p.amplitude as f32 } else { 0.0 };
        }
        let batch = tp06::Batch {
            models: &models,
            model: &types,
            stim: tp06::Stim::PerCell {
                current: &stim,
                scale: 1.0,
            },
            dt,
        };
        tp06::step_batch_of(&mut states, n, &batch, &mut |_| {});
        if let Some(&x) = states[..n]
            .iter()
            .find(|x| !x.is_finite() || x.abs() > 500.0)
        {
            return Err(CellError::Diverged {
                t: (k + 1) as f64 * p.dt,
                v: x,
            });
        }
        record(k + 1, &states);
    }
    Ok(trace.map(|v| Trace {
        dt: stride as f64 * p.dt,
        v,
    }))
}

/// A paced run: the trace and the features of every beat (`None` where a beat did not capture).
#[derive(Debug, Clone)]
pub struct PacedRun {
    pub trace: Trace,
    pub beats: Vec<Option<BeatFeatures>>,
}

/// Runs the S1 train of `p`, holding each beat's window only until it is measured (see
/// [`Protocol::check_size`] for the bounds).
pub fn pace(p: &Protocol) -> Result<PacedRun, CellError> {
    p.check()?;
    let plan = Plan::pace(p)?;
    let onsets = p.s1_onsets();
    let mut beats = vec![None; onsets.len()];
    let trace = simulate(
        p,
        std::slice::from_ref(&onsets),
        &plan,
        true,
        &mut |i, w| {
            // Window i is beat i's.
            let end = onsets.get(i + 1).copied().unwrap_or(plan.end);
            beats[i] = w.features(i + 1, onsets[i], end);
        },
    )?
    .expect("a traced run");
    Ok(PacedRun { trace, beats })
}

/// One point of an S1–S2 restitution curve.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct RestitutionPoint {
    /// S2 coupling interval: from the last S1 pulse to the S2 pulse (ms).
    pub s2: f64,
    /// Diastolic interval: from the last S1 beat's 90 % repolarisation to the S2 pulse (ms).
    pub di: f64,
    /// The S2 beat's features; `None` if S2 did not capture (refractory).
    pub features: Option<BeatFeatures>,
}

/// The S1–S2 restitution curve: the S1 train of `p`, then one S2 pulse per coupling interval
/// in `s2` (each its own cell, all simulated together), followed for `p.tail` (default `bcl`).
/// Also returns the last S1 beat's features.
pub fn restitution(
    p: &Protocol,
    s2: &[f64],
) -> Result<(Option<BeatFeatures>, Vec<RestitutionPoint>), CellError> {
    p.check()?;
    for &c in s2 {
        if !(c.is_finite() && c > p.duration) {
            return Err(CellError::Bad {
                option: "--s2",
                value: c,
                why: "each S2 interval must be longer than the pulse",
            });
        }
    }
    let plan = Plan::restitution(p, s2)?;
    let s1 = p.s1_onsets();
    let (last, longest, _) = sweep(p, s2);
    let tail = p.tail.unwrap_or(p.bcl);
    let onsets: Vec<Vec<f64>> = s2
        .iter()
        .map(|&c| {
            let mut o = s1.clone();
            o.push(last + c);
            o
        })
        .collect();
    let mut s2_beats: Vec<Option<BeatFeatures>> = vec![None; s2.len()];
    let (mut s1_last, mut repol) = (None, None);
    // Windows 0..n are the S2 beats' (cell i's is window i), window n the last S1 beat's.
    simulate(p, &onsets, &plan, false, &mut |i, w| {
        // The S1 train is the same in every cell until its S2: the last S1 beat is read
        // from the cell with the longest interval, up to its S2 pulse.
        if i == s2.len() {
            let f = w.features(s1.len(), last, last + longest);
            // The 90 % repolarisation time of the last S1 beat.
            repol = f.map(|f| {
                let level = f.v_max - 0.9 * (f.v_max - f.v_rest);
                let k0 = (last / p.dt).round() as usize + 1;
                let k1 = ((last + longest) / p.dt).round() as usize;
                let up = w.crossing(level, true, k0, k1).unwrap_or(last);
                up + f.apd90
            });
            s1_last = f;
        } else {
            let onset = last + s2[i];
            s2_beats[i] = w.features(s1.len() + 1, onset, onset + tail);
        }
    })?;
    let points = s2
        .iter()
        .zip(s2_beats)
        .map(|(&c, f)| RestitutionPoint {
            s2: c,
            di: repol.map_or(f64::NAN, |r| last + c - r),
            features: f,
        })
        .collect();
    Ok((s1_last, points))
}

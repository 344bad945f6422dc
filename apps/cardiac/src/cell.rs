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

use crate::mesh::CellType;
use crate::tp06;
use crate::tp06::Scalings;

/// Errors in a protocol, each naming the option at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CellError {
    #[error("{option} = {value}: {why}")]
    Bad {
        option: &'static str,
        value: f64,
        why: &'static str,
    },
    #[error("the cell diverged at t = {t:.3} ms (V = {v} mV): use a smaller --dt (at most 0.2 ms; 0.02 is the default)")]
    Diverged { t: f64, v: f32 },
}

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
                "must be at least one time step",
            );
        }
        if !(fin(self.bcl) && self.bcl > self.duration) {
            return bad("--bcl", self.bcl, "must be longer than the pulse");
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
        Ok(())
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

/// A simulated trace: V every step, from t = 0.
#[derive(Debug, Clone)]
pub struct Trace {
    pub dt: f64,
    pub v: Vec<f32>,
}

impl Trace {
    fn t(&self, k: usize) -> f64 {
        k as f64 * self.dt
    }

    /// Upward (or downward) crossing of `level` in steps `from..to`, interpolated linearly.
    fn crossing(&self, level: f64, upward: bool, from: usize, to: usize) -> Option<f64> {
        (from.max(1)..to.min(self.v.len())).find_map(|k| {
            let (a, b) = (f64::from(self.v[k - 1]), f64::from(self.v[k]));
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
    pub fn features(&self, beat: usize, onset: f64, end: f64) -> Option<BeatFeatures> {
        let k0 = (onset / self.dt).round() as usize;
        let k1 = ((end / self.dt).round() as usize).min(self.v.len());
        if k0 + 1 >= k1 {
            return None;
        }
        let v_rest = f64::from(self.v[k0]);
        let (mut v_max, mut dvdt, mut k_up) = (f64::MIN, f64::MIN, k0);
        for k in k0..k1 {
            v_max = v_max.max(f64::from(self.v[k]));
            if k > k0 {
                let d = f64::from(self.v[k] - self.v[k - 1]) / self.dt;
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

/// Simulates `cells` independent cells of one type, cell `i` stimulated by the pulses starting
/// at `onsets[i]`, for `steps` steps; returns V of every cell at every step (from t = 0).
fn simulate(p: &Protocol, onsets: &[Vec<f64>], steps: usize) -> Result<Vec<Trace>, CellError> {
    let n = onsets.len();
    let dt = p.dt as f32;
    let mut states = vec![0.0f32; tp06::N_STATES * n];
    let init = tp06::initial_state(p.cell_type);
    for (k, &x) in init.iter().enumerate() {
        for i in 0..n {
            states[k * n + i] = x as f32;
        }
    }
    let types = vec![0u8; n];
    let models = [tp06::CellParams::<f32>::from_model(&tp06::CellModel {
        cell_type: p.cell_type,
        scale: p.scale,
    })
    .to_array()];
    // Pulses as step ranges, per cell.
    let pulse_steps = (p.duration / p.dt).round().max(1.0) as usize;
    let windows: Vec<Vec<(usize, usize)>> = onsets
        .iter()
        .map(|o| {
            o.iter()
                .map(|&t0| {
                    let k = (t0 / p.dt).round() as usize;
                    (k, k + pulse_steps)
                })
                .collect()
        })
        .collect();
    let mut next = vec![0usize; n];
    let mut stim = vec![0.0f32; n];
    let mut v: Vec<Vec<f32>> = (0..n).map(|_| Vec::with_capacity(steps + 1)).collect();
    for (i, vi) in v.iter_mut().enumerate() {
        vi.push(states[i]);
    }
    for k in 0..steps {
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
        for (i, vi) in v.iter_mut().enumerate() {
            let x = states[i];
            if !x.is_finite() || x.abs() > 500.0 {
                return Err(CellError::Diverged {
                    t: (k + 1) as f64 * p.dt,
                    v: x,
                });
            }
            vi.push(x);
        }
    }
    Ok(v.into_iter().map(|v| Trace { dt: p.dt, v }).collect())
}

/// A paced run: the trace and the features of every beat (`None` where a beat did not capture).
#[derive(Debug, Clone)]
pub struct PacedRun {
    pub trace: Trace,
    pub beats: Vec<Option<BeatFeatures>>,
}

/// Runs the S1 train of `p`.
pub fn pace(p: &Protocol) -> Result<PacedRun, CellError> {
    p.check()?;
    let onsets = p.s1_onsets();
    let end = onsets.last().copied().unwrap_or(0.0) + p.tail.unwrap_or(p.bcl);
    let steps = (end / p.dt).round() as usize;
    let trace = simulate(p, std::slice::from_ref(&onsets), steps)?
        .pop()
        .expect("one cell");
    let beats = onsets
        .iter()
        .enumerate()
        .map(|(b, &o)| {
            let w_end = onsets.get(b + 1).copied().unwrap_or(end);
            trace.features(b + 1, o, w_end)
        })
        .collect();
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
    let s1 = p.s1_onsets();
    let last = *s1.last().expect("at least one beat");
    let tail = p.tail.unwrap_or(p.bcl);
    let longest = s2.iter().cloned().fold(0.0, f64::max);
    let end = last + longest + tail;
    let steps = (end / p.dt).round() as usize;
    let onsets: Vec<Vec<f64>> = s2
        .iter()
        .map(|&c| {
            let mut o = s1.clone();
            o.push(last + c);
            o
        })
        .collect();
    let traces = simulate(p, &onsets, steps)?;
    // The S1 train is the same in every cell until its S2: the last S1 beat is read from the
    // cell with the longest interval, up to its S2 pulse.
    let far = s2
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map_or(0, |(i, _)| i);
    let s1_last = traces
        .get(far)
        .and_then(|t| t.features(s1.len(), last, last + longest));
    let repol = s1_last.map(|f| {
        // The 90 % repolarisation time of the last S1 beat.
        let level = f.v_max - 0.9 * (f.v_max - f.v_rest);
        let tr = &traces[far];
        let k0 = (last / p.dt).round() as usize + 1;
        let k1 = ((last + longest) / p.dt).round() as usize;
        let up = tr.crossing(level, true, k0, k1).unwrap_or(last);
        up + f.apd90
    });
    let points = s2
        .iter()
        .zip(&traces)
        .map(|(&c, tr)| {
            let onset = last + c;
            let f = tr.features(s1.len() + 1, onset, onset + tail);
            RestitutionPoint {
                s2: c,
                di: repol.map_or(f64::NAN, |r| onset - r),
                features: f,
            }
        })
        .collect();
    Ok((s1_last, points))
}

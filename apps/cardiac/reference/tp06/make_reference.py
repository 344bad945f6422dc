#!/usr/bin/env python3
"""Independent TP06 reference data for apps/cardiac's Rust tests, made with myokit.

The Rust model (apps/cardiac/src/tp06) is implemented by hand from the CellML files in
shared/reference/tp06/. This script loads the *same CellML files* with myokit (an independent
CellML importer, code generator and CVODES integrator) and writes small CSV files that the Rust
tests read. CI never runs this script; it only reads the committed CSVs.

    python3 -m pip install myokit        # tested with myokit 1.39.2
    python3 apps/cardiac/reference/tp06/make_reference.py [path/to/shared/reference/tp06]

Outputs (next to this script):

* ``features.csv``  per cell type and beat: resting V, peak V, plateau V, activation time, APD90.
* ``trace_last_beat.csv``  V of the last beat every 1 ms for the three cell types.
* ``states_currents.csv``  a few dozen states (logged from the paced run, plus states with V
  placed on and around the I_CaL singularity at 15 mV) with every current and every state
  derivative evaluated by myokit, for per-current unit tests.

Protocol (identical in the Rust tests): start from the CellML initial state, stimulus
-52 pA/pF (TP06 sign convention: negative depolarises) for 1 ms starting 10 ms into every beat,
BCL 1000 ms, 5 beats. The CellML's own stimulus (offset 100 ms) is replaced by a myokit pacing
protocol so that CVODES stops exactly at the stimulus edges; the stimulus still enters dK_i/dt
as in the CellML (it refers to membrane.i_Stim).

The integration is CVODES with tight tolerances: this is the "exact" solution of the ODEs; the
Rust forward-Euler/Rush-Larsen integrators at dt = 0.02 ms are expected to differ from it by
their discretisation error, which the Rust tests bound.
"""

import math
import os
import sys

import myokit

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SHARED = os.path.normpath(
    os.path.join(HERE, "..", "..", "..", "..", "..", "shared", "reference", "tp06"))

# Cell types in the order of the Rust enum CellType (Endo = 0, Mid = 1, Epi = 2).
CELL_TYPES = [(0, "endo", "tt06_endo.cellml"), (1, "mid", "tt06_M.cellml"), (2, "epi", "tt06_epi.cellml")]

STIM_AMPLITUDE = -52.0  # pA/pF
STIM_OFFSET = 10.0  # ms into each beat
STIM_DURATION = 1.0  # ms
BCL = 1000.0  # ms
N_BEATS = 5
DENSE = 0.01  # ms, logging interval used for feature extraction

# Rust state order (STATE_NAMES in apps/cardiac/src/tp06/mod.rs) -> myokit qualified names.
STATES = [
    ("V", "membrane.V"),
    ("Xr1", "rapid_time_dependent_potassium_current_Xr1_gate.Xr1"),
    ("Xr2", "rapid_time_dependent_potassium_current_Xr2_gate.Xr2"),
    ("Xs", "slow_time_dependent_potassium_current_Xs_gate.Xs"),
    ("m", "fast_sodium_current_m_gate.m"),
    ("h", "fast_sodium_current_h_gate.h"),
    ("j", "fast_sodium_current_j_gate.j"),
    ("d", "L_type_Ca_current_d_gate.d"),
    ("f", "L_type_Ca_current_f_gate.f"),
    ("f2", "L_type_Ca_current_f2_gate.f2"),
    ("fCass", "L_type_Ca_current_fCass_gate.fCass"),
    ("s", "transient_outward_current_s_gate.s"),
    ("r", "transient_outward_current_r_gate.r"),
    ("Ca_i", "calcium_dynamics.Ca_i"),
    ("Ca_SR", "calcium_dynamics.Ca_SR"),
    ("Ca_ss", "calcium_dynamics.Ca_ss"),
    ("R_prime", "calcium_dynamics.R_prime"),
    ("Na_i", "sodium_dynamics.Na_i"),
    ("K_i", "potassium_dynamics.K_i"),
]

# Rust Currents field -> myokit qualified name.
CURRENTS = [
    ("i_na", "fast_sodium_current.i_Na"),
    ("i_k1", "inward_rectifier_potassium_current.i_K1"),
    ("i_to", "transient_outward_current.i_to"),
    ("i_kr", "rapid_time_dependent_potassium_current.i_Kr"),
    ("i_ks", "slow_time_dependent_potassium_current.i_Ks"),
    ("i_cal", "L_type_Ca_current.i_CaL"),
    ("i_naca", "sodium_calcium_exchanger_current.i_NaCa"),
    ("i_nak", "sodium_potassium_pump_current.i_NaK"),
    ("i_pca", "calcium_pump_current.i_p_Ca"),
    ("i_pk", "potassium_pump_current.i_p_K"),
    ("i_bna", "sodium_background_current.i_b_Na"),
    ("i_bca", "calcium_background_current.i_b_Ca"),
    ("i_leak", "calcium_dynamics.i_leak"),
    ("i_up", "calcium_dynamics.i_up"),
    ("i_rel", "calcium_dynamics.i_rel"),
    ("i_xfer", "calcium_dynamics.i_xfer"),
]

# Times (ms after the stimulus onset of the last beat) at which states are sampled for the
# per-current tests: rest, during the stimulus, upstroke, peak, notch, plateau, repolarisation.
SAMPLE_TIMES = [-1.0, 0.5, 1.2, 1.6, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0, 200.0, 250.0, 280.0, 300.0, 330.0, 600.0]
# V values placed into the plateau state around the I_CaL singularity at 15 mV.
SINGULAR_V = [15.0, 14.9995, 15.0005, 14.998, 15.002, 14.9, 15.1]


def load(path):
    model = myokit.formats.importer("cellml").model(path)
    membrane = model.get("membrane")
    pace = membrane.add_variable("pace")
    pace.set_rhs(0)
    pace.set_binding("pace")
    membrane.get("i_Stim").set_rhs(f"pace * {STIM_AMPLITUDE!r}")
    model.validate()
    return model


def crossings(t, v, level, upward):
    """Times where v crosses level (linear interpolation), in order."""
    out = []
    for k in range(1, len(v)):
        a, b = v[k - 1], v[k]
        if (upward and a < level <= b) or (not upward and a > level >= b):
            out.append(t[k - 1] + (t[k] - t[k - 1]) * (level - a) / (b - a))
    return out


def interp(t, v, x):
    for k in range(1, len(t)):
        if t[k] >= x:
            return v[k - 1] + (v[k] - v[k - 1]) * (x - t[k - 1]) / (t[k] - t[k - 1])
    return v[-1]


def beat_features(t, v, beat_start):
    """Features of one beat from a dense trace; definitions mirrored in tests/tp06_reference.rs.

    v_rest: V at the stimulus onset; v_peak: max V in the beat; t_act: first upward 0 mV
    crossing (ms after stimulus onset); v_plateau: V at t_act + 100 ms; apd90: time between the
    upward and downward crossings of v_peak - 0.9 (v_peak - v_rest).
    """
    onset = beat_start + STIM_OFFSET
    idx = [k for k in range(len(t)) if beat_start <= t[k] <= beat_start + BCL]
    bt = [t[k] for k in idx]
    bv = [v[k] for k in idx]
    v_rest = interp(bt, bv, onset)
    v_peak = max(bv)
    t0 = crossings(bt, bv, 0.0, True)[0]
    v_plateau = interp(bt, bv, t0 + 100.0)
    level = v_peak - 0.9 * (v_peak - v_rest)
    up = crossings(bt, bv, level, True)[0]
    down = [x for x in crossings(bt, bv, level, False) if x > up][0]
    return dict(v_rest=v_rest, v_peak=v_peak, t_act=t0 - onset, v_plateau=v_plateau, apd90=down - up)


def main():
    shared = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_SHARED
    protocol = myokit.pacing.blocktrain(period=BCL, duration=STIM_DURATION, offset=STIM_OFFSET)
    features = []
    traces = {}
    samples = []
    for ct, name, fname in CELL_TYPES:
        model = load(os.path.join(shared, fname))
        sim = myokit.Simulation(model, protocol)
        sim.set_tolerance(1e-10, 1e-10)
        sim.set_max_step_size(0.1)
        state_names = [q for _, q in STATES]
        log_vars = ["environment.time"] + state_names
        last_start = (N_BEATS - 1) * BCL
        for beat in range(N_BEATS):
            d = sim.run(BCL, log=log_vars, log_interval=DENSE)
            t = list(d["environment.time"])
            v = list(d["membrane.V"])
            f = beat_features(t, v, beat * BCL)
            features.append((ct, name, beat, f))
            if beat == N_BEATS - 1:
                traces[name] = [(x, y) for x, y in zip(t, v) if abs((x - last_start) - round(x - last_start)) < 1e-6]
                for ts in SAMPLE_TIMES:
                    target = last_start + STIM_OFFSET + ts
                    k = min(range(len(t)), key=lambda i: abs(t[i] - target))
                    state = [d[q][k] for q in state_names]
                    stim_on = STIM_OFFSET <= t[k] - last_start < STIM_OFFSET + STIM_DURATION
                    samples.append((ct, f"t{ts:g}", state, STIM_AMPLITUDE if stim_on else 0.0))
                # Plateau state with V moved onto / around the I_CaL singularity.
                k = min(range(len(t)), key=lambda i: abs(t[i] - (last_start + STIM_OFFSET + 100.0)))
                base = [d[q][k] for q in state_names]
                for vs in SINGULAR_V:
                    samples.append((ct, f"V{vs:g}", [vs] + base[1:], 0.0))
        # Evaluate currents and derivatives of the samples of this cell type with myokit.
        for i, sample in enumerate(samples):
            if len(sample) != 4:
                continue  # already evaluated (an earlier cell type)
            sct, label, state, stim = sample
            model.set_initial_values(state)
            model.get("membrane.pace").set_rhs(stim / STIM_AMPLITUDE)
            cur = [model.get(q).eval() for _, q in CURRENTS]
            der = model.evaluate_derivatives(state)
            model.get("membrane.pace").set_rhs(0)
            samples[i] = (sct, label, state, stim, cur, der)

    with open(os.path.join(HERE, "features.csv"), "w") as fh:
        fh.write("cell_type,name,beat,v_rest,v_peak,t_act,v_plateau,apd90\n")
        for ct, name, beat, f in features:
            fh.write(f"{ct},{name},{beat},{f['v_rest']:.6f},{f['v_peak']:.6f},{f['t_act']:.6f},"
                     f"{f['v_plateau']:.6f},{f['apd90']:.6f}\n")

    with open(os.path.join(HERE, "trace_last_beat.csv"), "w") as fh:
        names = [n for _, n, _ in CELL_TYPES]
        fh.write("t_in_beat," + ",".join(f"V_{n}" for n in names) + "\n")
        rows = zip(*(traces[n] for n in names))
        for row in rows:
            t_in = row[0][0] - (N_BEATS - 1) * BCL
            fh.write(f"{t_in:.0f}," + ",".join(f"{v:.4f}" for _, v in row) + "\n")

    with open(os.path.join(HERE, "states_currents.csv"), "w") as fh:
        cols = (["cell_type", "label", "i_stim"] + [n for n, _ in STATES] + [n for n, _ in CURRENTS]
                + ["d_" + n for n, _ in STATES])
        fh.write(",".join(cols) + "\n")
        for ct, label, state, stim, cur, der in samples:
            vals = [repr(float(x)) for x in list(state) + list(cur) + list(der)]
            fh.write(f"{ct},{label},{stim!r}," + ",".join(vals) + "\n")

    for ct, name, beat, f in features:
        if beat == N_BEATS - 1:
            print(name, {k: round(x, 3) for k, x in f.items()})
    assert all(math.isfinite(x) for s in samples for x in s[4] + list(s[5]))


if __name__ == "__main__":
    main()

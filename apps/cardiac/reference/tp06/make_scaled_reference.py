#!/usr/bin/env python3
"""Currents of TP06 with scaled conductances (drug block, disease), evaluated by myokit, for
the Rust test of `--tp06` scalings (tests/tp06_reference.rs).

Each case multiplies maximal conductances or rates of the *CellML* model (loaded by myokit,
independently of the Rust code) by factors, and evaluates every current at the reference
states of states_currents.csv (rows of the case's cell type). A scaling applied to the wrong
current, or by the wrong factor, differs from these values. CI never runs this script; it
reads the CSV. Needs only myokit (no CVODES: nothing is integrated).

    python3 apps/cardiac/reference/tp06/make_scaled_reference.py [path/to/shared/reference/tp06]

Output: ``scaled_currents.csv``: cell_type, label (of the state), scaling (as `--tp06`
writes it, with "|" between items), then the currents in the Rust Currents order.
"""

import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_reference as ref  # noqa: E402

# --tp06 name -> CellML variable (unqualified; unique in the TP06 CellML files).
CELLML = {
    "g_na": "g_Na", "g_k1": "g_K1", "g_to": "g_to", "g_kr": "g_Kr", "g_ks": "g_Ks",
    "g_cal": "g_CaL", "g_bna": "g_bna", "g_bca": "g_bca", "g_pca": "g_pCa", "g_pk": "g_pK",
    "k_naca": "K_NaCa", "p_nak": "P_NaK",
}

# One case per scalable parameter, and a combination; on epi, and I_Kr block on endo and M.
CASES = [(2, f"{k}*{f}") for k, f in zip(CELLML, [0.5, 0.7, 0.0, 0.5, 0.25, 1.5, 2.0, 0.5, 3.0, 0.1, 1.8, 0.6])]
CASES += [(2, "g_kr*0.5,g_cal*1.2,g_ks*0.8"), (0, "g_kr*0.5"), (1, "g_kr*0.5")]


def find(model, name):
    hits = [v for v in model.variables(deep=True) if v.name() == name]
    assert len(hits) == 1, (name, hits)
    return hits[0]


def main():
    shared = sys.argv[1] if len(sys.argv) > 1 else ref.DEFAULT_SHARED
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "states_currents.csv")) as fh:
        states = [r for r in csv.DictReader(fh) if not r["label"].startswith("V")]
    files = {ct: fname for ct, _, fname in ref.CELL_TYPES}
    out = []
    for ct, scaling in CASES:
        model = ref.load(os.path.join(shared, files[ct]))
        for item in scaling.split(","):
            key, factor = item.split("*")
            var = find(model, CELLML[key])
            var.set_rhs(f"{var.eval()!r} * {float(factor)!r}")
        model.validate()
        for row in (r for r in states if int(r["cell_type"]) == ct):
            model.set_initial_values([float(row[n]) for n, _ in ref.STATES])
            cur = [model.get(q).eval() for _, q in ref.CURRENTS]
            out.append((ct, row["label"], scaling, cur))
    with open(os.path.join(here, "scaled_currents.csv"), "w") as fh:
        fh.write("cell_type,label,scaling," + ",".join(n for n, _ in ref.CURRENTS) + "\n")
        for ct, label, scaling, cur in out:
            # The CSV has no quoting: the items of a combination are separated by "|".
            fh.write(f"{ct},{label},{scaling.replace(',', '|')}," + ",".join(repr(float(x)) for x in cur) + "\n")
    print(f"{len(out)} rows, {len(CASES)} cases")


if __name__ == "__main__":
    main()

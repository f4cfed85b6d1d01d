"""GALA vs GAZELLE on real BFV (SEAL via tenseal.sealapi), measured side by side in one run.

* matrix-vector products of GALA Tables V/VI (1x2048, 2x1024, 16x128) and Table I (2x2048);
* the four convolutions of GALA Tables VII/VIII (16x16 inputs with 128/2048 channels). A
  convolution runs ``--groups`` output ciphertexts (every output ciphertext does the same work)
  and is scaled to the whole layer by its counted operations (labelled ``projected``);
  ``--full-conv`` runs every output ciphertext.

Times are CPU seconds of the server's HE evaluation (weight encoding excluded, as GAZELLE
precomputes it); each method's best of ``--repeats`` interleaved runs. The paper reports
59x / 13x / 19x (matrix-vector) and 9x / 14x / 2.6x / 1.7x (convolution, Table VIII) in
its setting.
Prints a table and writes ``figures/gala/bench_gala_kernels_timings.csv``.
Run: ``.venv/bin/python benchmarks/bench_gala_kernels.py [--repeats 5] [--groups 2]``.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from ppnn import paths
from ppnn.experiments.gala import runs as ex
from ppnn.he.bfv import SealBFV
from ppnn.protocols.gala import costs
from ppnn.protocols.gala.runtime import project_seconds, time_kernel, unit_costs

PAPER = {"1x2048": 59, "2x1024": 13, "16x128": 19, "16x16@128; 1x1@128": 9,
         "16x16@2048; 1x1@512": 14, "16x16@128; 3x3@128": 2.6, "16x16@2048; 5x5@64": 1.7}


def matvec(he, repeats: int, rng) -> list[dict]:
    rows = []
    for n_o, n_i in ex.MATVEC_DIMS + [ex.TABLE1_DIMS]:
        W, x = rng.integers(-8, 9, (n_o, n_i)), rng.integers(-8, 9, n_i)
        kers = {m: ex.matvec_kernel(m, n_o, n_i, he.n) for m in ("GAZELLE", "GALA")}
        best = dict.fromkeys(kers, np.inf)
        for _ in range(repeats):  # interleaved
            for m, k in kers.items():
                best[m] = min(best[m], time_kernel(k, he, W, x, rng)["online_s"])
        label = ex.mv_label(n_o, n_i)
        rows.append({"kernel": "matvec", "dims": label, "GAZELLE_s": best["GAZELLE"],
                     "GALA_s": best["GALA"], "speedup": best["GAZELLE"] / best["GALA"],
                     "paper_speedup": PAPER.get(label), "kind": "measured"})
    return rows


def conv(he, unit, groups: int, full: bool, rng) -> list[dict]:
    rows = []
    for H, W, c_i, k, c_o in ex.CONV_DIMS:
        K, x = rng.integers(-8, 9, (c_o, c_i, k, k)), rng.integers(-8, 9, (c_i, H, W))
        res = {}
        for m in ("GAZELLE", "GALA"):
            ker = ex.conv_kernel(m, H, W, c_i, k, c_o, he.n)
            g = ker.layout.ct_out if full else min(groups, ker.layout.ct_out)
            r = time_kernel(ker, he, K, x, rng, groups=range(g))
            if g == ker.layout.ct_out:
                res[m] = (r["online_s"], "measured")
            else:
                calib = r["online_s"] / project_seconds(r["counts"], unit)
                res[m] = (project_seconds(costs.count_kernel(ker), unit) * calib, "projected")
        label = ex.conv_label(H, W, c_i, k, c_o)
        rows.append({"kernel": "conv", "dims": label, "GAZELLE_s": res["GAZELLE"][0],
                     "GALA_s": res["GALA"][0], "speedup": res["GAZELLE"][0] / res["GALA"][0],
                     "paper_speedup": PAPER.get(label),
                     "kind": "measured" if res["GALA"][1] == res["GAZELLE"][1] == "measured"
                     else f"projected from {groups} output ciphertext(s)"})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--groups", type=int, default=1)
    ap.add_argument("--full-conv", action="store_true")
    ap.add_argument("--no-conv", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    he = SealBFV()
    unit = unit_costs(he, reps=100)
    rows = matvec(he, args.repeats, rng)
    if not args.no_conv:
        rows += conv(he, unit, args.groups, args.full_conv, rng)
    df = pd.DataFrame(rows)
    with pd.option_context("display.width", 160, "display.max_columns", 10):
        print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    out = paths.figures_dir("gala") / "bench_gala_kernels_timings.csv"
    paths.atomic_write(out, df.to_csv(index=False))
    print("wrote", out)


if __name__ == "__main__":
    main()

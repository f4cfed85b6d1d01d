"""Wrapper overhead: our backend's rotate / add / multiply vs the bare ``sealapi`` calls.

Same operands, interleaved in one run (median CPU seconds). Our calls check arguments,
broadcast batches, count operations on a ledger and track the noise model once per *call*;
with ``--batch`` ciphertexts per call that fixed cost is shared. Target: <= 10 % at the batch
sizes the kernels use. Prints a table and writes
``figures/gala/bench_gala_overhead_timings.csv``.
Run: ``.venv/bin/python benchmarks/bench_gala_overhead.py [--reps 200]``.
"""

from __future__ import annotations

import argparse

import pandas as pd

from ppnn import paths
from ppnn.core import Ledger
from ppnn.he.bfv import SealBFV
from ppnn.protocols.gala.runtime import wrapper_overhead


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    args = ap.parse_args()
    he = SealBFV()
    he.ledger = Ledger(["client", "server"])  # counting on, as in the kernels
    df = pd.concat([wrapper_overhead(he, reps=args.reps, batch=b) for b in (1, 8, 64)],
                   ignore_index=True)
    print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    out = paths.figures_dir("gala") / "bench_gala_overhead_timings.csv"
    paths.atomic_write(out, df.to_csv(index=False))
    print("wrote", out)


if __name__ == "__main__":
    main()

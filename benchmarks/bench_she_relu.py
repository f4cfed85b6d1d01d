"""Gate-level ReLU (SHE Fig. 2) vs one programmable-bootstrapping lookup, side by side in one run.

On real tfhe-rs through the project's binding:

(a) SHE's 5-bit ReLU unit -- 4 AND gates on the bits of a 5-bit two's-complement value (Boolean
    parameters DEFAULT_PARAMETERS) -- vs ReLU as ONE table lookup on a 5-bit shortint
    ciphertext (PARAM_MESSAGE_5_CARRY_0, one PBS: the Tabula idea in FHE);
(b) the ReLU-and-saturate unit SHE's network actually needs after a 16-bit accumulator (16-bit
    word -> 5-bit activation, 20 gates): no single lookup exists for 16-bit inputs (shortint
    tables stop at 8 bits), so it is reported without a lookup counterpart.

Latency: one element per call (median over rounds, rounds alternate the two sides).
Throughput: a batch of N elements in one call (all cores). Prints a table and writes
figures/she/bench_she_relu.csv (temp file + rename).

The binding's own overhead (binding vs pure-Rust gate, batched vs one-at-a-time gates) is
measured by benchmarks/bench_tfhe_binding.py.

Usage: python benchmarks/bench_she_relu.py [--batch N] [--rounds R]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
import pandas as pd

from ppnn import paths
from ppnn.he.tfhe import PbsLookup, TfheBackend, binding_available, relu_table
from ppnn.protocols.she import circuits as C


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv=None) -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    if not binding_available():
        sys.exit("ppnn_tfhe is not importable; build it with `make setup`.")
    rng = np.random.default_rng(0)
    print("generating keys (Boolean + 5-bit shortint) ...", flush=True)
    gates = TfheBackend()
    lut = PbsLookup(5)
    table = relu_table(5)

    def gate_relu(values):
        x = C.encrypt_word(gates, values, 5, signed=True)
        return lambda: C.relu_unit(x)

    def gate_relu_sat16(values):
        x = C.encrypt_word(gates, values, 16, signed=True)
        return lambda: C.relu_saturate(C.truncate(C.shift_right(x, 6), 10), 5)

    def pbs_relu(values):
        ct = lut.encrypt(np.where(values < 0, values + 32, values))
        return lambda: lut.apply(ct, table)

    one5 = rng.integers(-16, 16, size=1)
    many5 = rng.integers(-16, 16, size=args.batch)
    one16 = rng.integers(-2**15, 2**15, size=1)
    many16 = rng.integers(-2**15, 2**15, size=args.batch)
    cases = {
        "gate ReLU 5-bit (4 AND)": (gate_relu(one5), gate_relu(many5), 4),
        "PBS lookup ReLU 5-bit (1 PBS)": (pbs_relu(one5), pbs_relu(many5), 1),
        "gate ReLU+saturate 16->5 bit": (gate_relu_sat16(one16), gate_relu_sat16(many16), None),
    }
    for single, batch, _ in cases.values():  # warm-up
        single()
        batch()
    lat = {k: [] for k in cases}
    thr = {k: [] for k in cases}
    for _ in range(args.rounds):
        for k, (single, batch, _) in cases.items():
            lat[k].append(_time(single))
            thr[k].append(args.batch / _time(batch))
    rows = []
    base = statistics.median(lat["PBS lookup ReLU 5-bit (1 PBS)"])
    for k, (_, _, boots) in cases.items():
        med = statistics.median(lat[k])
        rows.append({"case": k, "bootstraps_per_element": boots,
                     "latency_ms": 1e3 * med,
                     "latency_vs_pbs": med / base,
                     "throughput_per_s": statistics.median(thr[k]),
                     "batch": args.batch, "rounds": args.rounds})
    df = pd.DataFrame(rows)
    g = gates.binding.num_threads()
    print(f"tfhe {gates.binding.TFHE_VERSION}, {g} threads; Boolean {gates.key.parameters_name},"
          f" shortint {lut.key.parameters_name}")
    print(df.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    out = paths.figures_dir("she") / "bench_she_relu.csv"
    paths.atomic_write(out, df.to_csv(index=False, float_format="%.6g"))
    print(f"wrote {out}")
    return df


if __name__ == "__main__":
    main()

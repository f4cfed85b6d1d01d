"""One ReLU, every family: seconds and bytes per activation, measured side by side.

The cross-paper comparison (``ppnn.experiments.compare``) shows that the nonlinear layers
dominate every interactive family. This benchmark isolates them: the same ``n`` signed
activations go through
each family's ReLU protocol in one process, the repetitions interleaved so that every protocol
sees the same machine load, and the median seconds per activation and the ledger's bytes per
activation (online, and online + offline) are reported with their ratio to Tabula's lookup:

* Delphi's garbled ReLU (Z_2^32, truncation in the circuit): garbling (offline) and
  evaluation (online) separately;
* GAZELLE / GALA's garbled ReLU mod the 20-bit plaintext prime (reduce, centre, ReLU, rescale),
  garbled and evaluated online;
* Tabula: one 8-bit table lookup per activation (online phase, materialised tables);
* SwaNN: the 2PC part of an activation (A2B of 32-bit shares + ReLU; the Paillier switch
  around it is excluded);
* Falcon: ReLU on replicated shares (Algorithm 3), semi-honest and malicious;
* SHE: the ReLU unit of 5-bit values on real tfhe-rs gates (``--she`` elements only: each
  bootstrapped gate takes tens of milliseconds).

Run: ``.venv/bin/python benchmarks/bench_compare.py [--quick]``; writes
``figures/overview/bench_compare_timings.csv``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pandas as pd

from ppnn import paths
from ppnn.core import Ledger, Ring, share_additive
from ppnn.he.bfv.sim import BFVSim
from ppnn.protocols import gc_act


def _signed(rng, n, bits):
    return rng.integers(-(1 << (bits - 1)) + 1, 1 << (bits - 1), n)


def case_gc(n, rng, spec, split):
    v = _signed(rng, n, spec.k - 2 if spec.p is None else spec.k - 1)
    mod = spec.modulus
    c = rng.integers(0, mod, size=(n, 1), dtype=np.uint64)
    s = ((v[:, None].astype(object) - c.astype(object)) % mod).astype(np.uint64)

    def run():
        _, _, t = gc_act.garbled_activation(c, s, spec, rng)
        if split == "delphi":  # Delphi garbles in its preprocessing
            return {"online": t["evaluate_s"], "offline": t["garble_s"]}
        return {"online": t["evaluate_s"] + t["garble_s"]}

    led = Ledger(["client", "server"])
    gc_act.book_gc(led, n, gc_act.act_circuit(spec), split)
    return run, led


def case_tabula(n, rng):
    from ppnn.protocols.tabula import dealer_tables, function_table, relu, tabula_online

    ring = Ring(64)
    X = share_additive(ring.from_signed(_signed(rng, n, 15)), ring, rng)
    F = function_table(relu, 8)

    def run():
        T = dealer_tables(F, n, rng)
        led = Ledger(["client", "server"])
        t0 = time.perf_counter()
        tabula_online(X, T, 7, led)
        return {"online": time.perf_counter() - t0}

    led = Ledger(["client", "server"])
    tabula_online(X, dealer_tables(F, n, rng, ledger=led), 7, led)
    return run, led


def case_swann(n, rng):
    from ppnn.protocols.swann.twopc import TwoPC

    ring = Ring(32)
    X = share_additive(ring.from_signed(_signed(rng, n, 30)), ring, rng)

    def run(led=None):
        tpc = TwoPC(led or Ledger(["client", "server"]), ("client", "server"), rng)
        t0 = time.perf_counter()
        tpc.relu(tpc.a2b(X, 32))
        return {"online": time.perf_counter() - t0}

    led = Ledger(["client", "server"])
    run(led)
    return run, led


def case_falcon(n, rng, malicious):
    from ppnn.protocols.falcon import Falcon, relu

    fal = Falcon(np.random.default_rng(int(rng.integers(1 << 30))), malicious=malicious)
    x = fal.share_fixed(rng.normal(size=n))

    def run():
        t0 = time.perf_counter()
        with fal.protocol("relu"):
            relu(fal, x)
        return {"online": time.perf_counter() - t0}

    probe = Falcon(np.random.default_rng(1), malicious=malicious, ledger=Ledger(
        ["P0", "P1", "P2"]))
    with probe.protocol("relu"):
        relu(probe, probe.share_fixed(np.zeros(n)))
    return run, probe.ledger


def case_she(n, rng):
    from ppnn.experiments.she.runs import relu_unit_demo
    from ppnn.he.tfhe import TfheBackend

    be = TfheBackend()
    vals = _signed(rng, n, 5)

    def run():
        return {"online": relu_unit_demo(be, vals, bits=5)["seconds"]}

    return run, Ledger(["client", "server"])  # no communication: the server computes alone


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer elements and repetitions")
    ap.add_argument("--n", type=int, default=None, help="activations per run")
    ap.add_argument("--she", type=int, default=None, help="activations on real TFHE")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    n = args.n or (2048 if args.quick else 16384)
    n_she = args.she or (2 if args.quick else 8)
    reps = args.repeats or (2 if args.quick else 5)
    rng = np.random.default_rng(args.seed)
    p = BFVSim(n=2048).p
    cases = {
        "Delphi GC ReLU (Z_2^32)": (case_gc(n, rng, gc_act.ActSpec(32, 8, 1), "delphi"), n),
        "GAZELLE/GALA GC ReLU (mod p)": (case_gc(n, rng, gc_act.ActSpec(
            20, 6, 1, p=p, clip=600), "online"), n),
        "Tabula 8-bit table": (case_tabula(n, rng), n),
        "SwaNN 2PC (A2B + ReLU)": (case_swann(n, rng), n),
        "Falcon ReLU semi-honest": (case_falcon(n, rng, False), n),
        "Falcon ReLU malicious": (case_falcon(n, rng, True), n),
    }
    try:
        cases["SHE ReLU unit (real TFHE)"] = (case_she(n_she, rng), n_she)
    except ImportError as e:  # the tfhe-rs binding is optional
        print("SHE skipped:", e)
    samples: dict[str, dict[str, list]] = {k: {} for k in cases}
    for _ in range(reps):  # interleaved: every protocol sees the same machine load
        for name, ((run, _), m) in cases.items():
            for part, sec in run().items():
                samples[name].setdefault(part, []).append(sec / m)
    rows = []
    for name, ((_, led), m) in cases.items():
        med = {part: statistics.median(v) for part, v in samples[name].items()}
        rows.append({"protocol": name, "elements": m,
                     "online_us": 1e6 * med["online"],
                     "offline_us": 1e6 * med.get("offline", 0.0),
                     "online_bytes_per_relu": led.total_bytes("online") / m,
                     "total_bytes_per_relu": led.total_bytes() / m})
    df = pd.DataFrame(rows)
    ref = df.set_index("protocol").loc["Tabula 8-bit table"]
    df["online_vs_tabula"] = df["online_us"] / ref["online_us"]
    df["online_bytes_vs_tabula"] = df["online_bytes_per_relu"] / ref["online_bytes_per_relu"]
    pd.set_option("display.width", 200)
    print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    target = paths.figures_dir("overview") / "bench_compare_timings.csv"
    paths.atomic_write(target, df.to_csv(index=False))
    print("wrote", target)


if __name__ == "__main__":
    main()

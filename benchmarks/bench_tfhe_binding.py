"""Overhead and parallel speed-up of the tfhe-rs binding, measured side by side in one run.

(a) Latency of one AND gate through the binding (one call per gate) vs the pure-Rust
    `gate_bench` binary of the same crate (same tfhe-rs version, same DEFAULT_PARAMETERS).
    Target: binding / Rust <= 1.2.
(b) Throughput of one batched call on all cores (rayon) vs the same gates one call each.

Rounds alternate Rust and binding runs so that frequency drift hits both sides; each side
reports its median over rounds. The Rust binary is built with cargo first (incremental;
honours CARGO_TARGET_DIR like the Makefile's binding build).

Usage: python benchmarks/bench_tfhe_binding.py [OUT.csv] [--gates N] [--batch M] [--rounds R]
Default output: figures/she/bench_tfhe_binding.csv (written to a temp name, then renamed).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CRATE = ROOT / "lib" / "ppnn_tfhe"
DEFAULT_OUT = ROOT / "figures" / "she" / "bench_tfhe_binding.csv"

try:
    import ppnn_tfhe
except ImportError as exc:
    sys.exit(f"ppnn_tfhe is not importable ({exc}); build it with `make setup`.")


def build_rust_bench() -> Path:
    """Build `gate_bench` in release mode and return the path of the executable."""
    cargo = shutil.which("cargo")
    if cargo is None:
        sys.exit("cargo is needed to build the Rust reference benchmark (gate_bench)")
    target = Path(os.environ.get("CARGO_TARGET_DIR", CRATE / "target"))
    print("building gate_bench (cargo build --release --bin gate_bench) ...", flush=True)
    subprocess.run(
        [
            cargo,
            "build",
            "--quiet",
            "--release",
            "--bin",
            "gate_bench",
            "--manifest-path",
            str(CRATE / "Cargo.toml"),
        ],
        check=True,
    )
    return target / "release" / "gate_bench"


def rust_ms_per_gate(exe: Path, gates: int) -> float:
    """One run of the Rust binary: N AND gates one at a time on one thread."""
    out = subprocess.run([str(exe), str(gates)], check=True, capture_output=True, text=True)
    return float(json.loads(out.stdout.strip().splitlines()[-1])["ms_per_gate"])


def binding_ms_per_gate(key, a: list, b: list) -> float:
    """N AND gates through the binding, one single-element call per gate."""
    for _ in range(2):  # warm-up, as in gate_bench
        key.and_(a[0], b[0])
    start = time.perf_counter()
    for x, y in zip(a, b, strict=True):
        key.and_(x, y)
    return 1e3 * (time.perf_counter() - start) / len(a)


def batched_ms_per_gate(key, a, b) -> float:
    """One call evaluating a whole array of AND gates (rayon over all cores)."""
    start = time.perf_counter()
    key.and_(a, b)
    return 1e3 * (time.perf_counter() - start) / a.size


def write_csv(rows: list[dict], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    with tmp.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["metric", "value", "unit", "note"])
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=DEFAULT_OUT, help="CSV path")
    parser.add_argument("--gates", type=int, default=40, help="gates per latency round")
    parser.add_argument("--batch", type=int, default=64, help="gates in the batched call")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds per side")
    args = parser.parse_args()
    if min(args.gates, args.batch, args.rounds) < 1:
        parser.error("--gates, --batch and --rounds must be positive")

    exe = build_rust_bench()
    t0 = time.perf_counter()
    key = ppnn_tfhe.BooleanKey.generate()
    rng = np.random.default_rng(0)
    bits_a = rng.integers(0, 2, size=max(args.gates, args.batch), dtype=np.uint8)
    bits_b = rng.integers(0, 2, size=bits_a.size, dtype=np.uint8)

    # (a) one gate at a time: binding vs Rust, alternating rounds
    singles_a = [key.encrypt(bits_a[i : i + 1]) for i in range(args.gates)]
    singles_b = [key.encrypt(bits_b[i : i + 1]) for i in range(args.gates)]
    rust, binding = [], []
    for _ in range(args.rounds):
        rust.append(rust_ms_per_gate(exe, args.gates))
        binding.append(binding_ms_per_gate(key, singles_a, singles_b))
    rust_ms, binding_ms = statistics.median(rust), statistics.median(binding)

    # (b) batched call on all cores vs the same gates one call each
    batch_a = key.encrypt(bits_a[: args.batch])
    batch_b = key.encrypt(bits_b[: args.batch])
    one_a = [batch_a.take(np.array([i])) for i in range(args.batch)]
    one_b = [batch_b.take(np.array([i])) for i in range(args.batch)]
    seq, par = [], []
    for _ in range(args.rounds):
        seq.append(binding_ms_per_gate(key, one_a, one_b))
        par.append(batched_ms_per_gate(key, batch_a, batch_b))
    seq_ms, par_ms = statistics.median(seq), statistics.median(par)
    threads = ppnn_tfhe.num_threads()

    check = key.decrypt(key.and_(batch_a, batch_b))
    if not np.array_equal(check, bits_a[: args.batch] & bits_b[: args.batch]):
        sys.exit("batched AND gave a wrong result")

    params = f"tfhe {ppnn_tfhe.TFHE_VERSION} {key.parameters_name}"
    n, r = args.gates, args.rounds
    table = [
        ("rust_ms_per_gate", rust_ms, "ms", f"gate_bench, {n} AND one at a time, median of {r}"),
        ("binding_ms_per_gate", binding_ms, "ms", f"key.and_ on 1-element arrays, median of {r}"),
        ("binding_over_rust", binding_ms / rust_ms, "ratio", "target <= 1.2"),
        ("sequential_ms_per_gate", seq_ms, "ms", f"{args.batch} AND, one call each"),
        ("batched_ms_per_gate", par_ms, "ms", f"{args.batch} AND in one call, {threads} threads"),
        ("batched_speedup", seq_ms / par_ms, "ratio", "throughput batched / one at a time"),
    ]
    rows = [
        {"metric": m, "value": f"{v:.3f}", "unit": u, "note": f"{note}; {params}"}
        for m, v, u, note in table
    ]
    write_csv(rows, args.out)

    width = max(len(r["metric"]) for r in rows)
    print(f"\nTFHE binding benchmark ({params}, {threads} threads)")
    print(f"{'metric':<{width}}  {'value':>9}  unit")
    for r in rows:
        print(f"{r['metric']:<{width}}  {r['value']:>9}  {r['unit']}")
    print(f"\nwrote {args.out} ({time.perf_counter() - t0:.1f} s after the build)")


if __name__ == "__main__":
    main()

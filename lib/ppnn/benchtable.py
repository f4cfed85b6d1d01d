"""The ratio table of ``benchmarks/README.md``, made from the CSVs the benchmarks write.

``python -m ppnn.benchtable`` (the last step of ``make bench``) reads the CSV of every
benchmark in :data:`BENCHMARKS` under ``figures/``, picks its headline ratios and rewrites
the README's section between ``<!-- BEGIN GENERATED: ratios -->`` and
``<!-- END GENERATED: ratios -->`` through a temporary file and a rename. A benchmark whose
CSV is missing gets a "not run yet" row. Every number in the table is read from a CSV (labels
included); ``tests/test_benchtable.py`` fails when the committed table is not what the
committed CSVs give.

Main names: :data:`BENCHMARKS` (script, CSV, picker), :func:`rows`, :func:`ratio_table`,
:func:`generated_readme`, :func:`update_readme`. What each benchmark compares is in its
docstring and in ``benchmarks/README.md``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from . import paths
from .frontdoor import render

__all__ = ["Bench", "BENCHMARKS", "NOT_RUN", "rows", "ratio_table", "generated_readme",
           "update_readme"]

SECTION = "ratios"
NOT_RUN = "not run yet"
Picked = list[tuple[str, str]]  # (what is compared, the ratio)


@dataclass(frozen=True)
class Bench:
    """A benchmark's script, the CSV it writes (under ``figures/``) and its headline picker."""

    script: str
    csv: str
    pick: Callable[[pd.DataFrame], Picked]


def _x(v) -> str:
    """A ratio with three significant figures or so: ``0.27x``, ``13.0x``, ``1,681x``."""
    v = float(v)
    if not np.isfinite(v):
        return "—"
    return f"{v:,.0f}x" if v >= 100 else f"{v:.1f}x" if v >= 10 else f"{v:.2f}x"


def _span(values) -> str:
    lo, hi = _x(min(values)), _x(max(values))
    return lo if lo == hi else f"{lo}–{hi}"


def _compare(df: pd.DataFrame) -> Picked:
    ref = np.isclose(df["online_vs_tabula"], 1) & np.isclose(df["online_bytes_vs_tabula"], 1)
    base = df.loc[ref, "protocol"].iloc[0]
    return [(f"{r.protocol} / {base}, per ReLU",
             f"time {_x(r.online_vs_tabula)}, online bytes "
             + (_x(r.online_bytes_vs_tabula) if r.online_bytes_per_relu else "none"))
            for r in df[~ref].itertuples()]


def _distributed(df: pd.DataFrame) -> Picked:
    out = []
    for w, g in df.groupby("workload", sort=False):
        r = g.iloc[0]
        out += [(f"{w}: throughput, 2 workers / 1", _x(r.speedup_2w_vs_1w)),
                (f"{w}: seconds, Dask with 1 worker / in-process",
                 _x(r.overhead_1w_vs_in_process))]
    return out


def _falcon(df: pd.DataFrame) -> Picked:
    out = []
    relu = df[df["benchmark"] == "relu"]
    for r in relu[relu["mode"] == "ratio"].itertuples():
        size = relu.loc[relu["mode"] != "ratio", "case"].iloc[0]
        out.append((f"ReLU, {size}: {r.case}",
                    f"time {_x(r.seconds)}, online bytes {_x(r.online_MB)}"))
    for case, g in df[df["benchmark"] == "forward pass"].groupby("case", sort=False):
        out.append((f"{case}: private / plaintext forward pass, seconds",
                    ", ".join(f"{r.mode} {_x(r.overhead_x)}" for r in g.itertuples())))
    return out


def _gala_kernels(df: pd.DataFrame) -> Picked:
    return [(f"{r.kernel} {r.dims}: GAZELLE / GALA, server CPU"
             + (" (projected)" if str(r.kind).startswith("projected") else ""),
             _x(r.speedup) + ("" if pd.isna(r.paper_speedup) else
                              f" (paper {_x(r.paper_speedup)})"))
            for r in df.itertuples()]


def _gala_overhead(df: pd.DataFrame) -> Picked:
    return [(f"{op}: ours / bare sealapi, batch " + " / ".join(str(b) for b in g["batch"]),
             " / ".join(_x(r.wrapper_s / r.bare_s) for r in g.itertuples()))
            for op, g in df.groupby("op", sort=False)]


def _gala_tenseal(df: pd.DataFrame) -> Picked:
    gala = df["method"].str.startswith("GALA")
    base = df.loc[gala, "method"].iloc[0]
    return [(f"{m} / {base}, CPU seconds",
             ", ".join(f"{r.dims} {_x(r.ratio_vs_gala)}" for r in g.itertuples()))
            for m, g in df[~gala].groupby("method", sort=False)]


def _nn(df: pd.DataFrame) -> Picked:
    return [(f"fixed-point / float inference per image, {len(df)} MNIST networks",
             _span(df["fixed_over_float"]))]


def _she_relu(df: pd.DataFrame) -> Picked:
    ref = np.isclose(df["latency_vs_pbs"], 1)
    base = df[ref].iloc[0]
    return [(f"{r.case} / {base.case}: seconds per element, one at a time; in a batch",
             f"{_x(r.latency_vs_pbs)}; {_x(base.throughput_per_s / r.throughput_per_s)}")
            for r in df[~ref].itertuples()]


def _swann_e2e(df: pd.DataFrame) -> Picked:
    out = []
    for model, g in df.groupby("model", sort=False):
        t = g.set_index("scenario")["time_per_image_s"]
        out.append((f"{model}: two-server / client-server, seconds per image",
                    _x(t["two-server"] / t["client-server"])))
    return out


def _swann_multiexp(df: pd.DataFrame) -> Picked:
    return [(f"{layer}: naive gmpy2 / multiexp (phe / multiexp)",
             "; ".join(f"{r.rows} {_x(r.speedup_vs_naive)} ({_x(r.speedup_vs_phe)})"
                       for r in g.itertuples()))
            for layer, g in df.groupby("layer", sort=False)]


def _swann_packing(df: pd.DataFrame) -> Picked:
    rho = "/".join(str(int(v)) for v in df["rho"].unique())
    return [(f"unpacked / packed (rho = {rho}), {len(df)} layers",
             f"decryptions {_span(df['dec_ratio'])}, bytes {_span(df['bytes_ratio'])}, "
             f"client time {_span(df['client_dec_speedup'])}")]


def _tabula_online(df: pd.DataFrame) -> Picked:
    out = [(f"GC ReLU (garble + evaluate) / Tabula online, b = {r.bits}, per element",
            f"{_x(r.speedup_vs_gc_total)} (evaluate only: {_x(r.speedup_vs_gc_evaluate)})")
           for r in df[df["gc_total_us"].notna()].itertuples()]
    out.append(("Tabula online / bare numpy gather, lookups per second, b = "
                + " / ".join(str(b) for b in df["bits"]),
                " / ".join(_x(v) for v in df["fraction_of_gather_speed"])))
    return out


def _tabula_preprocessing(df: pd.DataFrame) -> Picked:
    r = df.loc[df["bits"].idxmax()]
    return [(f"published / ours, ms per table, b = {int(r.bits)}", _x(r.speedup))]


def _tfhe_binding(df: pd.DataFrame) -> Picked:
    v = df.set_index("metric")["value"]
    return [("binding / pure-Rust gate_bench, ms per AND gate", _x(v["binding_over_rust"])),
            ("one call per gate / one batched call, ms per gate", _x(v["batched_speedup"]))]


def _training(df: pd.DataFrame) -> Picked:
    out = []
    for (net, scheme), g in df.groupby(["network", "scheme"], sort=False):
        out.append((f"{net} ({scheme}): integer model's test error / paper's, "
                    + " -> ".join(g["schedule"]), " -> ".join(_x(v) for v in g["error_ratio"])))
    return out


def _values(df: pd.DataFrame) -> Picked:
    n = len(df)
    out = [(f"values recorded / off, seconds, {n} cases", _span(df["on_s"] / df["off_s"]))]
    if "baseline_over_off" in df.columns:
        rev = next(c[:-2] for c in df.columns
                   if c.endswith("_s") and c not in ("off_s", "on_s"))
        out.append((f"values off: {rev} / this checkout, seconds, {n} cases",
                    _span(df["baseline_over_off"])))
    return out


def _wire(df: pd.DataFrame) -> Picked:
    online = "online seconds (median)"
    first = df[df[online].notna()]  # the offline-first rows: their online phase is timed
    out = []
    for (case, family), g in first.groupby(["case", "family"], sort=False):
        loop = g.loc[g["network"] == "loopback", online].iloc[0]
        for _, r in g[g["network"] != "loopback"].iterrows():
            note = " (not shaped: ran on loopback)" if "NOT shaped" in r["shaping"] else ""
            out.append((f"{case} ({family}): online seconds, {r['network']} / loopback{note}",
                        _x(r[online] / loop)))
    return out


def _wire_vs_cpp(df: pd.DataFrame) -> Picked:
    return [(f"{r['case']} ({r['family']}, {r['link']}): ppnn online / C++ {r['C++ build']}",
             _x(r["ppnn / C++"])) for _, r in df.iterrows()]


def _wire_split(df: pd.DataFrame) -> Picked:
    out = []
    for _, r in df.iterrows():
        what = f"{r['case']} ({r['family']}, {r['link']})"
        out.append((f"{what}: wire path / a party's online CPU; ring / measured online",
                    f"{r['wire path share']:.0%}; {_x(r['ring / measured'])}"))
        for c in df.columns:
            if c.startswith("online / C++ "):
                build = c.removeprefix("online / C++ ")
                out.append((f"{what}: online / C++ {build}; with the wire path free",
                            f"{_x(r[c])}; {_x(r[f'ring, wire path free / C++ {build}'])}"))
    return out


#: every benchmark of ``benchmarks/`` that writes a CSV, in the README's order
BENCHMARKS: tuple[Bench, ...] = (
    Bench("bench_compare.py", "overview/bench_compare_timings.csv", _compare),
    Bench("bench_distributed.py", "overview/bench_distributed.csv", _distributed),
    Bench("bench_falcon.py", "falcon/bench_falcon_timings.csv", _falcon),
    Bench("bench_gala_kernels.py", "gala/bench_gala_kernels_timings.csv", _gala_kernels),
    Bench("bench_gala_overhead.py", "gala/bench_gala_overhead_timings.csv", _gala_overhead),
    Bench("bench_gala_tenseal.py", "gala/bench_gala_tenseal_timings.csv", _gala_tenseal),
    Bench("bench_nn_forward_train.py", "nn/bench_nn_forward_train_timings.csv", _nn),
    Bench("bench_she_relu.py", "she/bench_she_relu.csv", _she_relu),
    Bench("bench_swann_e2e.py", "swann/bench_e2e_timings.csv", _swann_e2e),
    Bench("bench_swann_multiexp.py", "swann/bench_multiexp_timings.csv", _swann_multiexp),
    Bench("bench_swann_packing.py", "swann/bench_packing_timings.csv", _swann_packing),
    Bench("bench_tabula_online.py", "tabula/bench_tabula_online_timings.csv", _tabula_online),
    Bench("bench_tabula_preprocessing.py", "tabula/bench_tabula_preprocessing_timings.csv",
          _tabula_preprocessing),
    Bench("bench_tfhe_binding.py", "she/bench_tfhe_binding.csv", _tfhe_binding),
    Bench("bench_training.py", "she/bench_training.csv", _training),
    Bench("bench_values.py", "overview/bench_values.csv", _values),
    Bench("bench_wire.py", "falcon/bench_wire.csv", _wire),
    Bench("bench_wire.py --cpp", "falcon/bench_wire_vs_cpp.csv", _wire_vs_cpp),
    Bench("bench_wire.py --split", "falcon/bench_wire_split.csv", _wire_split),
)


def rows(figures: Path | None = None) -> list[tuple[str, str, str, str]]:
    """``(script, what is compared, ratio, CSV)`` for every benchmark, read from the CSVs
    under ``figures`` (default: the project's ``figures/``)."""
    figures = Path(figures) if figures is not None else paths.figures_root()
    out = []
    for b in BENCHMARKS:
        csv = f"figures/{b.csv}"
        path = figures / b.csv
        if not path.is_file():
            out.append((b.script, "—", NOT_RUN, csv))
            continue
        try:
            picked = b.pick(pd.read_csv(path))
        except (KeyError, IndexError, AttributeError) as e:
            raise ValueError(f"{csv}: not the columns or rows {b.script} writes ({e!r}); "
                             "rerun the benchmark") from e
        out += [(b.script, what, ratio, csv) for what, ratio in picked]
    return out


def _cell(s: str) -> str:
    return s.replace("|", "\\|")


def ratio_table(figures: Path | None = None) -> str:
    lines = ["| benchmark | compared | ratio | CSV |", "|---|---|---|---|"]
    lines += [f"| `{s}` | {_cell(w)} | {_cell(r)} | `{c}` |" for s, w, r, c in rows(figures)]
    return "\n".join(lines) + "\n"


def _readme(root: Path | None) -> Path:
    return (root or paths.root()) / "benchmarks" / "README.md"


def generated_readme(root: Path | None = None, figures: Path | None = None) -> str:
    """``benchmarks/README.md`` of ``root`` with its ratio table made from ``figures``."""
    return render(_readme(root).read_text(encoding="utf-8"), {SECTION: ratio_table(figures)})


def update_readme(root: Path | None = None, figures: Path | None = None) -> Path:
    return paths.write_if_changed(_readme(root), generated_readme(root, figures))


if __name__ == "__main__":
    print(update_readme())
    sys.exit(0)

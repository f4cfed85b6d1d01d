"""Measured vs projected: the wire-mode table of 00_overview and REPORT.md.

Every LAN/WAN figure of the paper tables is a projection (:mod:`ppnn.core.netmodel`). This
module runs the families that have a wire mode (:data:`ppnn.wire.WIRE_FAMILIES`) as separate
processes over real sockets -- on plain loopback and on shaped links (:mod:`ppnn.wire.links`)
-- and puts the measured wall time beside the projection (:mod:`ppnn.wire.timing`).

* :func:`measured_vs_projected` -- the table for a notebook run: in quick mode a small one
  measured live (two families, MiniONN, loopback and LAN, one run each); in full mode the
  one the pipeline measured before any notebook started (``python -m ppnn.reproduce`` runs
  :func:`main` first, alone on the machine, so no other kernel's load is in the timings),
  or measured live when this run has none.
* :func:`key_separation` -- the real backends across processes (GALA on SEAL, SwaNN on
  Paillier), the secret key in the client's process only: one image each, what each
  process held.
* :func:`save_and_show` -- writes ``tables/overview_wire.md`` (which REPORT.md includes) and
  ``tables/overview_wire_timings.csv``, and shows the table.
* ``python -m ppnn.experiments.wire [--quick] [--out CSV]`` -- the pipeline's step.

The user's own network (an ONNX file, notebook 06) goes through the same
:func:`ppnn.wire.timing.measure` with ``plan=`` and ``x=``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

from ppnn import paths
from ppnn.report import projection_note
from ppnn.report import wire_error_summary as summary

__all__ = ["CSV_NAME", "NOT_COMPILABLE", "settings", "measure_all", "measure_model",
           "measured_vs_projected", "csv_path", "summary", "plot", "save_and_show",
           "projection_note", "main"]

#: the measured table of a full run, under ``figures/overview/`` (wall-clock: ``*_timings``)
CSV_NAME = "wire_measured_vs_projected_timings.csv"
_QUICK_FAMILIES = ("falcon_sh", "delphi_tabula")
#: (family, zoo network) pairs the table leaves out because the family cannot compile the
#: network: SHE's integer network has no activation after its last linear layer, and
#: falcon_lenet ends in a ReLU on its logits (``ppnn.compile`` raises)
NOT_COMPILABLE = (("she", "falcon_lenet"),)


def settings(quick: bool) -> dict:
    """Families, networks, links, repeats and the calibration run of a quick or full run."""
    from ppnn.wire import WIRE_FAMILIES
    from ppnn.wire.timing import MODELS

    if not isinstance(quick, bool):
        raise TypeError(f"quick must be True or False, got {quick!r}")
    if quick:
        return {"families": tuple(f for f in _QUICK_FAMILIES if f in WIRE_FAMILIES),
                "models": MODELS[:1], "links": ("lan",), "repeats": 1,
                "calibration": {"link": "20,100", "n": 200, "repeats": 1}}
    # base and LAN runs take seconds and the LAN's network term is a few ms of them: their
    # difference is run-to-run noise (3-4 processes on 2 cores: single runs spread +-12%),
    # so medians of 7, alternated; loopback (shown, not in a model): 3; a WAN run is
    # dominated by its latency (SwaNN: ~550 rounds x 35 ms): once
    return {"families": tuple(WIRE_FAMILIES), "models": MODELS, "links": ("lan", "wan"),
            "repeats": {"loopback": 3, "base": 7, "lan": 7, "wan": 1},
            "calibration": {"link": "20,100", "n": 1000, "repeats": 5}}


def csv_path() -> Path:
    return paths.figures_dir("overview") / CSV_NAME


def _measure(st: dict, jobs, seed: int, log) -> pd.DataFrame:
    """``jobs``: (family, model label, plan or None, images or None). Calibrate k, measure
    each job on loopback and the links of ``st`` (loopback only without root, said)."""
    from ppnn.wire import links, timing

    can, why = links.can_shape()
    link_list = st["links"] if can else ()
    if not can:
        log(f"shaped links not available ({why}): loopback rows only")
    k = 1.0
    if can:
        cal = timing.calibrate_latency(**st["calibration"])
        k = cal["k"]
        log(f"calibration: {k:.3f} one-way latencies per ledger round "
            f"(Falcon ReLU, {st['calibration']['n']} elements, {cal['link']}, "
            f"latency: {cal['latency']})")
    measured = []
    for fam, model, plan, x in jobs:
        t0 = time.perf_counter()
        measured.append(timing.measure(model, fam, link_list, repeats=st["repeats"],
                                       seed=seed, plan=plan, x=x))
        log(f"{fam} on {model}: measured in {time.perf_counter() - t0:.0f} s")
    return timing.table(measured, k)


def measure_all(quick: bool, seed: int = 0, *, log=print) -> pd.DataFrame:
    """Run every family of :func:`settings` on every network and link; the table of
    :func:`ppnn.wire.timing.table`. Without root (no namespaces) only loopback is run, and
    the rows say so."""
    st = settings(quick)
    for f, m in NOT_COMPILABLE:
        if f in st["families"] and m in st["models"]:
            log(f"{f} on {m}: left out (the family cannot compile the network)")
    return _measure(st, [(f, m, None, None) for f in st["families"] for m in st["models"]
                         if (f, m) not in NOT_COMPILABLE], seed, log)


def measure_model(net, params, calib, x, label: str, quick: bool, seed: int = 0, *,
                  log=print) -> tuple[pd.DataFrame, dict]:
    """Your network (e.g. from ONNX) through every wire-mode family: compiled with
    ``calib``, one image (two for SwaNN two-server) on loopback and the links of
    :func:`settings`. Returns the table and ``{family: why}`` for the families that cannot
    run the network."""
    import numpy as np

    from ppnn.protocols import api
    from ppnn.wire import WIRE_FAMILIES, timing

    st = settings(quick)
    jobs, skipped = [], {}
    for fam in WIRE_FAMILIES:
        try:
            plan = api.compile(fam, net, params, calib=calib)
        except ValueError as e:  # UnsupportedNetwork is a ValueError
            skipped[fam] = str(e)
            continue
        jobs.append((fam, label, plan, np.asarray(x[:timing.images_for(fam)])))
    return _measure(st, jobs, seed, log), skipped


def measured_vs_projected(quick: bool, seed: int = 0) -> pd.DataFrame:
    """The table a notebook shows: the pipeline's measurement of this run if there is one
    (full mode), else measured now."""
    p = csv_path()
    if not quick and p.exists():
        print(f"read {p.name}: measured by the pipeline before the notebooks ran")
        return pd.read_csv(p, dtype=object, keep_default_na=False)
    return measure_all(quick, seed)


#: the families whose real backend crosses processes in seconds on MiniONN, shown in
#: 00_overview (SHE on tfhe-rs takes ms per bootstrapped gate: tests run it on a tiny network)
KEY_SEPARATION_FAMILIES = ("gala_gc", "swann_cs")


def _online_bytes(res) -> dict:
    """The online class of a wire run: payload bytes measured on the sockets beside the
    ledger's booked bytes."""
    online = res.extra["wire"]["classes"]["online"]
    return {"online bytes (wire payload)": online["payload bytes"],
            "online bytes (booked)": online["ledger bytes"]}


def key_separation(seed: int = 0, model: str = "minionn_mnist", progress=None) -> pd.DataFrame:
    """One image of ``model`` through each of :data:`KEY_SEPARATION_FAMILIES` with
    ``backend="real"`` in wire mode (loopback): the secret key in the client's process only.
    One row per family: whether the logits equal the in-process run, which key object each
    process held, what the server's process got when it tried to decrypt (SEAL) or would get
    (Paillier: a stand-in that raises when read), the online bytes measured on the wire and
    booked, the key material that crossed, and the wall time (one run, loopback).
    ``progress``: a :class:`ppnn.widgets.Progress` (or anything with ``step(n, note)``),
    told when each family is done."""
    import numpy as np

    from ppnn import runner
    from ppnn.wire.timing import _plan

    rows = []
    for fam in KEY_SEPARATION_FAMILIES:
        plan, x = _plan(fam, model, 1)
        ref = runner.run(plan, x, seed)
        res = runner.run(plan, x, seed, backend="real", transport="tcp")
        same = bool(np.array_equal(res.logits, ref.logits))
        if fam == "gala_gc":
            info = res.extra["seal"]
            rows.append({
                "family": fam, "backend": "BFV on SEAL (TenSEAL), N = 8192",
                "logits = in-process": same,
                "client's process": ("secret key (SEAL's SecretKey)"
                                     if info["client_holds_secret_key"] else "no secret key"),
                "server's process": info["server_backend"] + (
                    " (public and Galois keys)" if not info["server_holds_secret_key"]
                    else " WITH the secret key"),
                "server decrypting": info["server_decrypt"],
                **_online_bytes(res),
                "keys sent (wire)": (f"{info['galois_key_bytes_serialized']:,} B Galois keys + "
                                     f"{info['public_key_bytes']:,} B public key"),
                "keys booked": f"{info['galois_key_bytes_booked']:,} B Galois keys",
                "wall s": round(res.extra["wire"]["seconds"], 2)})
        else:
            info = res.extra["swann"]
            client = next(v for v in info.values() if v["party"] == "client")
            server = next(v for v in info.values() if v["party"] == "server")
            n_bits = plan.info["key_bits"]
            rows.append({
                "family": fam, "backend": f"Paillier (phe + gmpy2), {n_bits}-bit N",
                "logits = in-process": same,
                "client's process": f"secret key ({client['secret key']})",
                "server's process": f"public key, {server['secret key']} for the secret key",
                "server decrypting": "refused: NotHeld raises when read (no secret key)",
                **_online_bytes(res),
                "keys sent (wire)": "none (the launcher gives every process the public N)",
                "keys booked": "none",
                "wall s": round(res.extra["wire"]["seconds"], 2)})
        if progress is not None:
            progress.step(1, f"{fam} done")
    return pd.DataFrame(rows)


def plot(df: pd.DataFrame):
    """Measured wall time beside the tables' projection and the calibrated model: one panel
    per link (LAN, WAN), one group of bars per family and network (log scale). Where the
    bars differ, the model is off."""
    import matplotlib.pyplot as plt
    import numpy as np

    d = df[df["network"] != "loopback"].copy()
    cols = {"measured s (median)": "measured (wire mode)",
            "projected s (tables)": "projected (the tables' model)",
            "calibrated s": "calibrated model"}
    if not len(d):
        fig, ax = plt.subplots(figsize=(6, 1.5))
        ax.text(0.5, 0.5, "no shaped links in this run (needs root): nothing to compare",
                ha="center", va="center")
        ax.set_axis_off()
        return fig
    for c in cols:
        d[c] = pd.to_numeric(d[c], errors="coerce")
    links = list(dict.fromkeys(d["network"]))
    width = max(len(g) for _, g in d.groupby("network"))
    fig, axes = plt.subplots(len(links), 1, figsize=(max(6.0, 0.75 * width + 2),
                                                     3.6 * len(links)), squeeze=False)
    for ax, link in zip(axes[:, 0], links):
        g = d[d["network"] == link]
        x = np.arange(len(g))
        for i, (c, lab) in enumerate(cols.items()):
            ax.bar(x + (i - 1) * 0.27, g[c], width=0.27, label=lab)
        ax.set_xticks(x, [f"{f}\n{m}" for f, m in zip(g["family"], g["model"])], fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("seconds per run")
        ax.set_title(f"{link}: measured vs projected (one image; SwaNN two-server: two)",
                     fontsize=10)
    axes[0, 0].legend(fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


_COLUMNS = ["family", "model", "images", "network", "latency by", "ledger bytes online",
            "wire bytes online", "ledger rounds", "measured depth",
            "latency-equivalent rounds", "compute in process s", "loopback s (median)",
            "base s (median)",
            "measured s (median)", "projected s (tables)", "tables error %",
            "network s measured", "network s projected", "network error %", "calibrated s",
            "calibrated error %"]

_PROSE = (
    "## Measured vs projected: the parties as processes on a real network stack",
    "",
    "Every LAN/WAN time in the tables above is a projection (`ppnn.core.netmodel`: "
    "in-process compute + rounds x latency + the busiest sender's bytes / bandwidth). Here "
    "the families with a wire mode run as separate processes over TCP (`ppnn.run(..., "
    "transport=\"tcp\")`), on plain loopback and on links shaped in network namespaces "
    "(veth, `tbf` for bandwidth; latency by `netem` or, where the kernel lacks it, held by "
    "the receiving transport -- column *latency by*), and the measured median wall time is "
    "put beside three models: **tables** (the projection the paper tables use), **network** "
    "(the link's extra time over the *base* run -- the same namespaces, veth pairs and "
    "receiving transport with no latency and no bandwidth limit -- against `netmodel.project` "
    "alone) and **calibrated** (the same run's base time + the longer of the parties' path, k x "
    "rounds x latency + their bytes / bandwidth, and the dealer's: its material / bandwidth "
    "on its own uplink beyond the dealer's own time in the base run -- it sends as it "
    "produces -- then a latency and the rounds after its last message; k fitted on a "
    "separate run). Wire bytes = "
    "ledger bytes + a 12-byte frame header per message. A wire run here starts one process "
    "per party (and a dealer) on this machine's cores, each also computing share components "
    "its party does not hold, on garbage (SPMD with garbage, the honesty check: every "
    "component in most families; Falcon's parties compute only their own in its "
    "multiplications and comparisons, its dealer none), so the tables' projection -- which "
    "adds the in-process compute -- underestimates what these processes take; the "
    "calibrated model replaces that compute by the measured base time.",
    "",
)


def save_and_show(df: pd.DataFrame) -> None:
    """Write ``tables/overview_wire_timings.csv`` (the whole table) and
    ``tables/overview_wire.md`` (prose, the table, the per-family error summary) -- both
    atomically -- say which files were written, and show the table and the summary. Returns
    nothing, so a cell ending in it shows the table once."""
    from IPython.display import Markdown, display

    from ppnn.report import to_markdown

    tdir = paths.tables_dir()
    out = [paths.atomic_write(tdir / "overview_wire_timings.csv", df.to_csv(index=False))]
    cols = [c for c in _COLUMNS if c in df.columns]
    summ = summary(df)
    md = [*_PROSE, to_markdown(df[cols].fillna("")), ""]
    if len(summ):
        md += ["Largest |error| per family and link over the networks measured (%):", "",
               to_markdown(summ), ""]
    out.append(paths.atomic_write(tdir / "overview_wire.md", "\n".join(md)))
    for p in out:
        print("wrote", p)
    display(Markdown("\n".join(md[len(_PROSE):])))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ppnn.experiments.wire",
                                 description="Measure the wire-mode table (issue 29).")
    ap.add_argument("--quick", action="store_true", help="the small quick-mode table")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help=f"CSV to write (default figures/overview/{CSV_NAME})")
    args = ap.parse_args(argv)
    df = measure_all(args.quick, args.seed, log=lambda s: print(s, flush=True))
    target = args.out or csv_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    paths.atomic_write(target, df.to_csv(index=False))
    print(f"wrote {target}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

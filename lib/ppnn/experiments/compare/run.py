"""Run the comparison and write its outputs (``make reproduce`` calls this via 00_overview).

Outputs (paths from :mod:`ppnn.paths`, written atomically):

* ``figures/tables/overview_comparison.csv`` and ``.md`` -- the table (measured compute and
  projected latency vary from run to run; the counted columns do not);
* ``figures/overview/comparison_counted.csv`` -- the counted columns only (byte-identical
  between runs with one seed);
* ``figures/overview/comparison_timings.csv`` -- per family the wall-clock dependent values;
  ``comparison_unit_costs_timings.csv`` -- the unit costs measured here;
* ``figures/overview/comparison_breakdown_timings.csv`` -- communication and projected WAN
  time per family and layer type;
* figures ``comparison_comm_latency`` and ``comparison_breakdown`` (SVG + PNG);
* with ``save(..., directory=...)`` (``python -m ppnn compare``) also the per-layer-kind
  breakdown (``comparison_layer_kinds`` figure and ``_timings.csv``) and each family's
  compile / run / count seconds (``comparison_seconds_timings.csv``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ppnn import paths, runner
from ppnn.core import WAN
from ppnn.protocols import api

from . import table
from .workload import FamilyResult, Units, Workload, make_workload

__all__ = ["Comparison", "SIZES", "run_comparison", "run_family", "save", "PREPARE"]

#: images per mode: ``n_run`` protocol runs (measured / counted), ``n_acc`` accuracy images
SIZES = {True: {"n_run": 1, "n_acc": 200}, False: {"n_run": 3, "n_acc": 2000}}


@dataclass
class Comparison:
    workload: Workload
    units: Units
    results: list[FamilyResult]
    frame: pd.DataFrame
    breakdown: pd.DataFrame
    guide: list[str]
    seconds: dict

    def result(self, key: str) -> FamilyResult:
        return next(r for r in self.results if r.key == key)


def _she_params(w: Workload):
    """SHE's weights are log-quantized: the zoo network is fine-tuned with quantized weights
    (cached; :func:`ppnn.experiments.she.models.trained`) before it is compiled."""
    from ppnn.experiments.she import models as she_models

    if w.net.name != "minionn_mnist" or w.dataset != "mnist":
        return w.net, w.params  # a user's network: compiled from its own weights
    fnet, shadow, _ = she_models.trained(w.net.name, "she", weight_bits=5, quick=w.quick,
                                         seed=w.seed)
    return fnet, shadow


#: per family, how the experiment prepares the float model before compiling it (default: the
#: workload's network and parameters as they are)
PREPARE = {"she": _she_params}


def run_family(key: str, w: Workload, units: Units, real: bool = False, count: bool = False,
               **options) -> FamilyResult:
    """Compile the workload's network for family ``key``, run the protocol on every run image
    (one image per run; two for SwaNN's two-server setting), check each run against the
    family's integer oracle, evaluate accuracy, and collect compute / storage / provenance.

    ``real``: run the first protocol run on the family's real backend where it has one
    (SwaNN: measured real-Paillier compute); ``count``: also :func:`ppnn.count` one run and
    check it books the first run's ledger (``extra["count_equals_run"]``); ``options`` go to
    :func:`ppnn.compile`. ``extra["seconds"]`` holds the wall-clock seconds of the compile,
    of the protocol runs (``ppnn.run`` only) and of the count."""
    fam = api.family(key)
    net, params = PREPARE.get(key, lambda w: (w.net, w.params))(w)
    t0 = time.perf_counter()
    plan = api.compile(key, net, params, calib=w.x_calib, **options)
    seconds = {"compile": time.perf_counter() - t0, "run": 0.0}
    rng = w.rng(key)
    per = fam.spec.images_per_run
    results, preds, oracle = [], [], []
    for j in range(-(-w.n_run // per)):
        imgs = w.x_acc[j * per:(j + 1) * per]
        if len(imgs) < per:  # two-server, odd run subset at the end of the images: repeat one
            imgs = np.concatenate([imgs, imgs[-1:]])
        backend = "real" if real and j == 0 and "real" in fam.spec.backends else "sim"
        t0 = time.perf_counter()
        res = runner.run(plan, imgs, seed=rng, backend=backend)
        seconds["run"] += time.perf_counter() - t0
        ref = plan.oracle(imgs)
        if fam.exact and not np.array_equal(np.asarray(res.logits, dtype=object),
                                            np.asarray(ref, dtype=object)):
            raise AssertionError(f"{fam.spec.name}: protocol logits differ from the integer "
                                 "oracle")
        results.append(res)
        preds += list(res.predictions)
        oracle += list(np.asarray(ref, np.float64).argmax(axis=1))
    extra: dict = {}
    if count:
        t0 = time.perf_counter()
        counted = api.count(plan, batch=per)
        seconds["count"] = time.perf_counter() - t0
        extra["count_equals_run"] = _same_ledger(counted, results[0].ledger)
    acc, acc_note = fam.accuracy_predictions(plan, w.x_acc, rng)
    c = fam.costs(plan, results, units)
    ledger, _ = api.split_one_time(results[0].ledger)
    return FamilyResult(
        key, plan, ledger, per, c.compute_s, c.compute_kind, c.compute_note,
        c.compute_by_class, c.storage_bytes, c.storage_note, np.asarray(acc), c.accuracy_note,
        np.array(preds[: w.n_run]), np.array(oracle[: w.n_run]), c.quantization, c.comm_note,
        api.layer_kinds(w.net), {**c.extra, **extra, "seconds": seconds})


def _same_ledger(a, b) -> bool:
    """Whether two ledgers book the same messages (sender, receiver, bits, round, phase,
    label) and the same operations."""
    def key(led):
        return (sorted((m.sender, m.receiver, m.bits, m.round, m.phase, m.label)
                       for m in led.messages), led.op_counts())

    return key(a) == key(b)


def timed_family(key: str, w: Workload, units: Units, real: bool, count: bool = False
                 ) -> tuple[FamilyResult, float]:
    """:func:`run_family` and its wall-clock seconds (a Dask task of the comparison)."""
    t0 = time.perf_counter()
    res = run_family(key, w, units, real=real, count=count)
    return res, time.perf_counter() - t0


def run_comparison(quick: bool = True, seed: int = 0, n_run: int | None = None,
                   n_acc: int | None = None, families=None, real_swann: bool | None = None,
                   progress=None, workload: Workload | None = None,
                   client=None) -> Comparison:
    """Run every family and every labelled variant (or ``families``) on the same network
    and images.

    Defaults per mode in :data:`SIZES`; ``real_swann`` (default: full mode only) measures
    SwaNN's compute on one real 2048-bit Paillier run per setting instead of projecting it.
    ``workload`` replaces the default MiniONN workload (e.g. a network from an ONNX file).
    ``progress`` (callable) receives one line per family. ``client``: a Dask client; the
    families then run side by side as tasks (each family's runs are seeded from the workload,
    so the table is the same; its compute columns are measured on the workers)."""
    registry = api.Families({**api.families(), **api.variants()})
    keys = list(registry) if families is None else list(families)
    bad = [k for k in keys if k not in registry]
    if bad:
        raise ValueError(f"unknown families {bad}; choose from {list(registry)}")
    size = SIZES[bool(quick)]
    w = workload or make_workload(quick, seed, n_run or size["n_run"], n_acc or size["n_acc"])
    units = Units(quick, seed)
    real = (not quick) if real_swann is None else bool(real_swann)
    results, secs = [], {}
    if client is not None:
        futures = [client.submit(timed_family, k, w, units, real and k.startswith("swann"),
                                 pure=False) for k in keys]
        for k, fut in zip(keys, futures):
            res, secs[k] = fut.result()
            results.append(res)
            if progress is not None:
                progress(f"{registry[k].name}: {secs[k]:.1f} s (on a Dask worker)")
    for k in keys if client is None else ():
        res, secs[k] = timed_family(k, w, units, real and k.startswith("swann"))
        results.append(res)
        if progress is not None:
            progress(f"{registry[k].name}: {secs[k]:.1f} s")
    df = table.comparison_frame(results, w)
    return Comparison(w, units, results, df, table.breakdown_frame(results, WAN),
                      table.decision_guide(df), secs)


def save(cmp: Comparison, figures: bool = True, directory: str | Path | None = None) -> list:
    """Write the table, the counted/timing CSVs, the breakdown and (``figures=True``) the two
    figures (a notebook that shows them saves them itself with :func:`ppnn.plotting.savefig`).

    By default into the pipeline's places (``figures/tables/overview_comparison.*``,
    ``figures/overview/comparison_*``); with ``directory`` everything goes into that one folder
    (``comparison.csv``, ``comparison.md``, ``comparison_counted.csv``, ... -- what
    ``python -m ppnn compare`` writes under ``build/``)."""
    from ppnn.plotting import savefig

    if directory is None:
        tdir, fdir, stem = paths.tables_dir(), paths.figures_dir("overview"), "overview_"
    else:
        tdir = fdir = Path(directory)
        stem = ""
    out = []
    out.append(paths.atomic_write(tdir / f"{stem}comparison.csv", cmp.frame.to_csv(index=False)))
    out.append(paths.atomic_write(tdir / f"{stem}comparison.md",
                                  "## One network, every protocol family\n\n"
                                  + table.to_markdown(cmp.frame, cmp.guide)))
    out.append(paths.atomic_write(fdir / "comparison_counted.csv",
                                  cmp.frame[table.COUNTED_COLUMNS].to_csv(index=False)))
    tim = cmp.frame[["key", "compute_s", "compute_kind", "lan_s", "wan_s"]].assign(
        run_seconds=cmp.frame["key"].map(cmp.seconds))
    out.append(paths.atomic_write(fdir / "comparison_timings.csv", tim.to_csv(index=False)))
    out.append(paths.atomic_write(fdir / "comparison_unit_costs_timings.csv",
                                  cmp.units.frame().to_csv(index=False)))
    out.append(paths.atomic_write(fdir / "comparison_breakdown_timings.csv",
                                  cmp.breakdown.to_csv(index=False)))
    kinds = None
    if directory is not None:  # a comparison of your own network: which layers dominate
        kinds = table.layer_kind_frame(cmp.results, cmp.workload, WAN)
        out.append(paths.atomic_write(fdir / "comparison_layer_kinds_timings.csv",
                                      kinds.to_csv(index=False)))
        out.append(paths.atomic_write(fdir / "comparison_seconds_timings.csv",
                                      table.seconds_frame(cmp.results).to_csv(index=False)))
    if not figures:
        return out
    import matplotlib.pyplot as plt

    figs = [("comparison_comm_latency", table.plot_comm_latency(cmp.frame)),
            ("comparison_breakdown", table.plot_breakdown(cmp.breakdown))]
    if kinds is not None:
        figs.append(("comparison_layer_kinds", table.plot_layer_kinds(kinds)))
    for name, fig in figs:
        out += savefig(fig, "overview", name, directory=directory)
        plt.close(fig)
    return out


def save_and_show(cmp: Comparison) -> None:
    """The overview notebook's reproduced table: :func:`save` it (without the figures, which
    the notebook saved when it showed them), say which files were written, and show the
    table as Markdown."""
    from IPython.display import Markdown, display

    for path in save(cmp, figures=False):
        print("wrote", path)
    display(Markdown(table.to_markdown(cmp.frame)))

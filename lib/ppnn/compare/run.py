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
* figures ``comparison_comm_latency`` and ``comparison_breakdown`` (SVG + PNG).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pandas as pd

from ppnn import paths
from ppnn.core import WAN

from . import table
from .families import FAMILIES, RUNNERS, FamilyResult, Units, Workload, make_workload

__all__ = ["Comparison", "SIZES", "run_comparison", "save"]

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


def run_comparison(quick: bool = True, seed: int = 0, n_run: int | None = None,
                   n_acc: int | None = None, families=None, real_swann: bool | None = None,
                   progress=None) -> Comparison:
    """Run every family (or ``families``) on the same network and images.

    Defaults per mode in :data:`SIZES`; ``real_swann`` (default: full mode only) measures
    SwaNN's compute on one real 2048-bit Paillier run per setting instead of projecting it.
    ``progress`` (callable) receives one line per family."""
    keys = list(FAMILIES) if families is None else list(families)
    bad = [k for k in keys if k not in RUNNERS]
    if bad:
        raise ValueError(f"unknown families {bad}; choose from {list(RUNNERS)}")
    size = SIZES[bool(quick)]
    w = make_workload(quick, seed, n_run or size["n_run"], n_acc or size["n_acc"])
    units = Units(quick, seed)
    real = (not quick) if real_swann is None else bool(real_swann)
    results, secs = [], {}
    for k in keys:
        t0 = time.perf_counter()
        kw = {"real": real} if k.startswith("swann") else {}
        results.append(RUNNERS[k](w, units, **kw))
        secs[k] = time.perf_counter() - t0
        if progress is not None:
            progress(f"{FAMILIES[k].name}: {secs[k]:.1f} s")
    df = table.comparison_frame(results, w)
    return Comparison(w, units, results, df, table.breakdown_frame(results, WAN),
                      table.decision_guide(df), secs)


def save(cmp: Comparison, figures: bool = True) -> list:
    """Write the table, the counted/timing CSVs, the breakdown and (``figures=True``) the two
    figures (a notebook that shows them saves them itself with :func:`ppnn.plotting.savefig`).
    """
    from ppnn.plotting import savefig

    out = []
    tdir, fdir = paths.tables_dir(), paths.figures_dir("overview")
    out.append(paths.atomic_write(tdir / "overview_comparison.csv",
                                  cmp.frame.to_csv(index=False)))
    out.append(paths.atomic_write(tdir / "overview_comparison.md",
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
    if not figures:
        return out
    import matplotlib.pyplot as plt

    for name, fig in (("comparison_comm_latency", table.plot_comm_latency(cmp.frame)),
                      ("comparison_breakdown", table.plot_breakdown(cmp.breakdown))):
        out += savefig(fig, "overview", name)
        plt.close(fig)
    return out

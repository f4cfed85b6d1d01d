"""One network, every protocol family: the cross-paper comparison of PPNN Lab.

``run_comparison(quick, seed)`` trains (or loads) MiniONN's MNIST network once and runs it
through every family implemented in :mod:`ppnn.protocols` -- Delphi + GC, Delphi + Tabula,
GAZELLE + GC, GALA + GC, SwaNN (client-server, two-server), SHE, Falcon (semi-honest,
malicious) -- on the same images, with one cost ledger per family and the shared time model;
``save(comparison)`` writes the table and the figures.

Modules: :mod:`.gc_act` (garbled activation circuits), :mod:`.delphi_gc` and :mod:`.hegc`
(the HE-GC end-to-end runners), :mod:`.families` (one runner per family),
:mod:`.table` (table, breakdown, decision guide, figures), :mod:`.run` (pipeline, outputs).
"""

from .families import FAMILIES, RUNNERS, FamilyResult, Units, Workload, make_workload
from .run import SIZES, Comparison, run_comparison, save
from .table import (
    COLUMNS,
    COUNTED_COLUMNS,
    breakdown_frame,
    comparison_frame,
    decision_guide,
    latency_frame,
    network_time_by_class,
    to_markdown,
)

__all__ = ["COLUMNS", "COUNTED_COLUMNS", "Comparison", "FAMILIES", "FamilyResult", "RUNNERS",
           "SIZES", "Units", "Workload", "breakdown_frame", "comparison_frame",
           "decision_guide", "latency_frame", "make_workload", "network_time_by_class",
           "run_comparison", "save", "to_markdown"]

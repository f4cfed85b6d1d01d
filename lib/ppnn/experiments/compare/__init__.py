"""One network, every protocol family: the cross-paper comparison of PPNN Lab.

``run_comparison(quick, seed)`` trains (or loads) MiniONN's MNIST network once -- or takes a
:class:`Workload` of your own network (e.g. from an ONNX file) -- and runs it through every
family of :func:`ppnn.families` on the same images, with one cost ledger per family and the
shared time model; ``save(comparison)`` writes the table and the figures
(``save_and_show(comparison)``: the table, shown too, for the notebook). The loop is one call
per family of the protocol interface (:mod:`ppnn.protocols.api`): compile, run, check
against the family's integer oracle, accuracy, and the family's compute / storage notes.

Modules: :mod:`.workload` (workload, unit costs, per-family result), :mod:`.run` (the loop,
outputs), :mod:`.table` (table, breakdowns by layer type and kind, decision guide,
figures), :mod:`.resnet` (a ResNet counted by every family, beside the comparison).
"""

from . import resnet
from .run import (
    PREPARE,
    SIZES,
    Comparison,
    run_comparison,
    run_family,
    save,
    save_and_show,
    timed_family,
)
from .table import (
    COLUMNS,
    COUNTED_COLUMNS,
    KINDS,
    breakdown_frame,
    comparison_frame,
    decision_guide,
    latency_frame,
    layer_kind_frame,
    network_time_by_class,
    seconds_frame,
    to_markdown,
)
from .workload import CLASSES, DATASETS, NETWORK, FamilyResult, Units, Workload, make_workload

__all__ = ["CLASSES", "COLUMNS", "COUNTED_COLUMNS", "Comparison", "DATASETS", "FamilyResult",
           "KINDS", "NETWORK", "PREPARE", "SIZES", "Units", "Workload", "breakdown_frame",
           "comparison_frame", "decision_guide", "latency_frame", "layer_kind_frame",
           "make_workload", "network_time_by_class", "resnet", "run_comparison", "run_family",
           "save", "save_and_show", "seconds_frame", "timed_family", "to_markdown"]

"""Ladders of counterfactuals: how far a reproduced number is from the paper's, and why.

A :class:`Ladder` starts from our value of a claim (a speed-up, a share, a size) and replaces
one of our assumptions at a time with the paper's -- the network geometry, the operation
counts, the per-operation unit costs, the baseline's implementation, the network model, the
batch -- recomputing the claim with the library at each :class:`Step`. Each step's value is
the claim recomputed with that assumption and every earlier one replaced; its factor is the
value over the previous step's. The ladder ends at the paper's value (within
:data:`REACHED`) or states the residual left unexplained.

Ladders are built by ``ppnn.experiments.<paper>.ladders`` from the same runs as the paper's
tables, saved with :func:`save` to ``figures/tables/ladders_<paper>.csv`` (one row per step)
and drawn by :func:`ppnn.plotting.waterfall`. :func:`needs_ladder` says which compared rows
must have one; :func:`key` is the link between a row and its ladder.

Main names: :class:`Ladder`, :class:`Step`, :data:`ASSUMPTIONS`, :func:`save`,
:func:`load`, :func:`needs_ladder`, :func:`key`.
"""

from __future__ import annotations

import dataclasses
import math

import pandas as pd

from ppnn import paths, report

__all__ = ["Ladder", "Step", "ASSUMPTIONS", "REACHED", "save", "load", "needs_ladder", "key",
           "frame", "COLUMNS"]

#: the kinds of assumption a step replaces (DESIGN.md, "Headlines and ladders")
ASSUMPTIONS = ("network geometry", "operation counts", "unit costs", "baseline implementation",
               "network model", "batch", "accounting", "paper's inconsistency")
#: a ladder reaches the paper's value when its last step is within this relative distance
REACHED = 0.10
#: the columns of a saved ladder file, one row per step (step 0: ours; the last: the paper's)
COLUMNS = ["key", "paper", "table", "row", "metric", "unit", "bound", "step", "assumption",
           "ours_as", "paper_as", "value", "factor", "source", "erratum", "verdict"]


def key(table: str, row: str, metric: str) -> str:
    """The link between a compared row (or headline) and its ladder."""
    return f"{table} | {row} | {metric}"


@dataclasses.dataclass(frozen=True)
class Step:
    """One counterfactual: ``assumption`` (one of :data:`ASSUMPTIONS`) replaced, from ours
    (``ours_as``) to the paper's (``paper_as``, with ``source``: where the paper states it),
    and ``value``, the claim recomputed with it and every earlier step. ``erratum``: the
    ``where`` of a ``data/errata.csv`` row when the step is the paper's own inconsistency."""

    assumption: str
    ours_as: str
    paper_as: str
    value: float
    source: str = ""
    erratum: str = ""

    def __post_init__(self):
        if self.assumption not in ASSUMPTIONS:
            raise ValueError(f"assumption must be one of {ASSUMPTIONS}, got {self.assumption!r}")
        if not (self.ours_as.strip() and self.paper_as.strip()):
            raise ValueError("a step names both our assumption and the paper's")
        if not (isinstance(self.value, int | float) and math.isfinite(self.value)
                and self.value > 0):
            raise ValueError(f"a step's value must be a positive finite number, got "
                             f"{self.value!r}")


@dataclasses.dataclass
class Ladder:
    """From ``ours`` to the paper's ``target`` for the claim ``(table, row, metric)`` of
    ``paper`` (``unit``: of ``ours`` and ``target``); :meth:`replace` adds a step.
    ``bound``: ``"="`` when the paper states its value, ``">"`` when it states a lower bound
    ("over 10x"): the ladder then reaches it at ``(1 - REACHED)`` of the bound or above."""

    paper: str
    table: str
    row: str
    metric: str
    ours: float
    target: float
    unit: str = "x"
    steps: list[Step] = dataclasses.field(default_factory=list)
    bound: str = "="

    def __post_init__(self):
        for name in ("ours", "target"):
            v = getattr(self, name)
            if not (isinstance(v, int | float) and math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a positive finite number, got {v!r}")
        if self.bound not in ("=", ">"):
            raise ValueError(f"bound must be '=' or '>', got {self.bound!r}")

    @property
    def key(self) -> str:
        return key(self.table, self.row, self.metric)

    def replace(self, assumption: str, ours_as: str, paper_as: str, value: float,
                source: str = "", erratum: str = "") -> Ladder:
        """Add the step that replaces ``assumption``; returns the ladder (to chain)."""
        self.steps.append(Step(assumption, ours_as, paper_as, float(value), source, erratum))
        return self

    @property
    def values(self) -> list[float]:
        """Ours, then every step's value."""
        return [self.ours, *(s.value for s in self.steps)]

    @property
    def factors(self) -> list[float]:
        """Each step's value over the one before."""
        v = self.values
        return [b / a for a, b in zip(v, v[1:])]

    @property
    def end(self) -> float:
        return self.values[-1]

    @property
    def residual(self) -> float:
        """The paper's value over the last step's: 1 when the ladder reaches it exactly."""
        return self.target / self.end

    @property
    def reached(self) -> bool:
        if self.bound == ">":
            return self.end >= (1 - REACHED) * self.target
        return abs(self.end / self.target - 1) <= REACHED

    @property
    def carrier(self) -> Step | None:
        """The step that moves the value most (by the size of its log factor)."""
        if not self.steps:
            return None
        i = max(range(len(self.steps)), key=lambda k: abs(math.log(self.factors[k])))
        return self.steps[i]

    @property
    def verdict(self) -> str:
        """``reproduced under the paper's assumptions (carried by: ...)`` or ``residual x``
        ``unexplained``."""
        if self.reached:
            c = self.carrier
            said = "reproduced under the paper's assumptions" + (
                f" (its bound: over {_fmt(self.target)})" if self.bound == ">" else "")
            return (said +
                    (f"; carried by {c.assumption} ({_fmt(self.factors[self.steps.index(c)])}x)"
                     if c is not None else " (ours already is the paper's)"))
        return f"residual {_fmt(self.residual)}x unexplained"


def _fmt(v: float) -> str:
    return f"{v:.3g}"


def frame(ladders: list[Ladder]) -> pd.DataFrame:
    """The ladders as one frame of :data:`COLUMNS`, one row per step (step 0: ours)."""
    rows = []
    for lad in ladders:
        base = {"key": lad.key, "paper": lad.paper, "table": lad.table, "row": lad.row,
                "metric": lad.metric, "unit": lad.unit, "bound": lad.bound,
                "verdict": lad.verdict}
        rows.append({**base, "step": 0, "assumption": "ours", "ours_as": "", "paper_as": "",
                     "value": lad.ours, "factor": 1.0, "source": "", "erratum": ""})
        for i, (s, f) in enumerate(zip(lad.steps, lad.factors), start=1):
            rows.append({**base, "step": i, "assumption": s.assumption, "ours_as": s.ours_as,
                         "paper_as": s.paper_as, "value": s.value, "factor": f,
                         "source": s.source, "erratum": s.erratum})
        rows.append({**base, "step": len(lad.steps) + 1, "assumption": "paper", "ours_as": "",
                     "paper_as": "", "value": lad.target, "factor": lad.residual,
                     "source": "", "erratum": ""})
    return pd.DataFrame(rows, columns=COLUMNS)


def save(paper: str, ladders: list[Ladder]) -> pd.DataFrame:
    """Write ``paper``'s ladders to ``figures/tables/ladders_<paper>.csv``; returns the frame.
    Two ladders of one key, or an erratum step naming no row of ``data/errata.csv``, are
    refused."""
    keys = [lad.key for lad in ladders]
    dup = {k for k in keys if keys.count(k) > 1}
    if dup:
        raise ValueError(f"two ladders for {sorted(dup)[:3]}")
    wrong = [lad.paper for lad in ladders if lad.paper != paper]
    if wrong:
        raise ValueError(f"ladders of {wrong[0]!r} saved as {paper!r}")
    cited = {s.erratum for lad in ladders for s in lad.steps if s.erratum}
    if cited:
        known = set(report.load_errata(paper)["where"])
        missing = cited - known
        if missing:
            raise ValueError(f"erratum steps cite rows not in data/errata.csv: {sorted(missing)}")
    df = frame(ladders)
    paths.atomic_write(paths.tables_dir() / f"ladders_{paper}.csv",
                       df.to_csv(index=False, float_format="%.6g"))
    return df


def load(paper: str) -> pd.DataFrame:
    """``figures/tables/ladders_<paper>.csv`` (empty frame when none was saved)."""
    p = paths.tables_dir() / f"ladders_{paper}.csv"
    if not p.exists():
        return pd.DataFrame(columns=COLUMNS)
    return pd.read_csv(p, keep_default_na=False, dtype={"row": str, "metric": str})


#: the claim statuses that need a ladder (magnitude not reached, too close, failed)
SHORT = ("direction holds, magnitude not reached", "too close to call", "claim fails")


def needs_ladder(compared: pd.DataFrame) -> pd.DataFrame:
    """The rows of a compared table (or of a headline table) that must have a ladder: every
    claim row whose status is in :data:`SHORT`."""
    return compared[compared["status"].isin(SHORT)]

"""Wall-clock bookkeeping per party, label and operation (for *measured* compute times).

The cost ledger counts what is exact (messages, operations); this module keeps what is not:
seconds of computation, attributed to the party that would do the work in a real deployment::

    timings = Timings(ledger)          # labels follow the ledger's current label
    with ledger.label("conv1"), timings.measure("server", "dot"):
        ...                            # server-side work

Timings are kept apart from counted values because they change from run to run; write them
to ``*_timings.csv`` files.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pandas as pd

from .ledger import Ledger

__all__ = ["Timings", "TimingRecord"]


@dataclass(frozen=True)
class TimingRecord:
    party: str
    label: str
    op: str
    seconds: float


class Timings:
    """Accumulates measured seconds per (party, label, op).

    Parameters
    ----------
    ledger : Ledger, optional
        If given, each record takes the ledger's current label (layer / protocol step).
    """

    def __init__(self, ledger: Ledger | None = None):
        self.ledger = ledger
        self.records: list[TimingRecord] = []
        self._active = 0

    @contextlib.contextmanager
    def measure(self, party: str, op: str) -> Iterator[None]:
        """Time the block and book it to ``party``; nested blocks are not double-counted."""
        if not isinstance(party, str) or not party:
            raise ValueError("party must be a non-empty string")
        if self._active:
            yield
            return
        self._active += 1
        t0 = time.perf_counter()
        try:
            yield
        finally:
            dt = time.perf_counter() - t0
            self._active -= 1
            label = self.ledger.current_label if self.ledger is not None else ""
            self.records.append(TimingRecord(party, label, op, dt))

    def add(self, party: str, op: str, seconds: float, label: str | None = None) -> None:
        """Book a duration measured elsewhere."""
        if seconds < 0:
            raise ValueError(f"seconds must be >= 0, got {seconds}")
        if label is None:
            label = self.ledger.current_label if self.ledger is not None else ""
        self.records.append(TimingRecord(party, label, op, float(seconds)))

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([r.__dict__ for r in self.records],
                            columns=["party", "label", "op", "seconds"])

    def total(self, party: str | None = None, label: str | None = None,
              op: str | None = None) -> float:
        """Seconds booked, filtered by party, label prefix and op."""
        s = 0.0
        for r in self.records:
            if party is not None and r.party != party:
                continue
            if op is not None and r.op != op:
                continue
            if label is not None and not (r.label == label or r.label.startswith(label + "/")):
                continue
            s += r.seconds
        return s

    def merge(self, other: Timings, prefix: str | None = None) -> None:
        pre = (prefix + "/") if prefix else ""
        for r in other.records:
            self.records.append(TimingRecord(r.party, pre + r.label, r.op, r.seconds))

"""Comparing the student's ledger with the library's: what crossed, in which round, from whom
to whom, how many bits, and (when recorded) which values.

Messages are compared *per flow*: everything one party sends another in one round of one
phase (two messages in one round from P0 to P1 weigh what one message of their total size
does -- the time model cannot tell them apart). Round numbers are compared by their order
within a phase. Values are compared as multisets of ring elements (the order in which a party
lays out its ``e_i`` and ``f_i`` in one message does not matter; *what* crosses does: a share
of ``x`` where the library sends ``x - a`` is a difference, and a leak).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ppnn.core import Ledger

from .registry import Verdict

__all__ = ["Flow", "flows", "compare_messages", "compare_ops", "summary", "ledger_mismatch",
           "closed_form_verdict"]


@dataclass(frozen=True)
class Flow:
    """What ``sender`` sent ``receiver`` in round ``round`` (counted from 1 in its phase)."""

    phase: str
    round: int
    sender: str
    receiver: str
    bits: int
    messages: int
    values: np.ndarray | None  # every element sent, flattened; None if not all recorded

    @property
    def key(self) -> tuple[str, int, str, str]:
        return (self.phase, self.round, self.sender, self.receiver)


def _value(ledger: Ledger, i: int) -> np.ndarray | None:
    rec = ledger.values.get(i)
    if rec is None or rec.kind != "array" or not rec.complete:
        return None
    return np.asarray(rec.array()).ravel()


def _as_u64(v: np.ndarray) -> np.ndarray:
    if v.dtype == object:
        return np.array([int(a) % (1 << 64) for a in v], dtype=np.uint64)
    return v.astype(np.uint64)


def flows(ledger: Ledger) -> list[Flow]:
    """The ledger's messages grouped by (phase, round, sender, receiver), rounds renumbered
    1, 2, ... per phase in the order they were booked."""
    order: dict[tuple[str, int], int] = {}
    acc: dict[tuple[str, int, str, str], list] = {}
    for i, m in enumerate(ledger.messages):
        rnd = order.setdefault((m.phase, m.round),
                               1 + sum(1 for (ph, _) in order if ph == m.phase))
        key = (m.phase, rnd, m.sender, m.receiver)
        entry = acc.setdefault(key, [0, 0, []])
        entry[0] += m.bits
        entry[1] += 1
        entry[2].append(_value(ledger, i))
    out = []
    for (phase, rnd, s, r), (bits, n, vals) in acc.items():
        values = None
        if all(v is not None for v in vals):
            values = np.concatenate([_as_u64(v) for v in vals])
        out.append(Flow(phase, rnd, s, r, bits, n, values))
    return sorted(out, key=lambda f: (f.phase != "offline", f.round, f.sender, f.receiver))


def summary(ledger: Ledger) -> str:
    """``online: 1 round, 2 messages, 256 bits; offline: ...`` (phases with messages)."""
    parts = []
    for ph in ("offline", "online"):
        n = ledger.n_messages(ph)
        if n:
            r = ledger.rounds(ph)
            parts.append(f"{ph}: {r} round{'s' * (r != 1)}, {n} message{'s' * (n != 1)}, "
                         f"{ledger.total_bits(ph)} bits")
    return "; ".join(parts) or "no messages"


def compare_messages(reference: Ledger, yours: Ledger, values: bool = True,
                     limit: int = 4) -> list[str]:
    """Differences between two ledgers' messages, in words (empty when they agree): rounds
    per phase, the flows of every round, their sizes, and (``values``) what crossed."""
    ref = {f.key: f for f in flows(reference)}
    got = {f.key: f for f in flows(yours)}
    diffs = []
    for ph in ("offline", "online"):
        a, b = reference.rounds(ph), yours.rounds(ph)
        if a != b:
            diffs.append(f"{ph} phase: the library uses {a} round{'s' * (a != 1)}, "
                         f"yours {b}")
    for key in sorted(set(ref) | set(got), key=lambda k: (k[0] != "offline", k[1], k[2], k[3])):
        ph, rnd, s, r = key
        where = f"{ph} round {rnd}, {s} -> {r}"
        f, g = ref.get(key), got.get(key)
        if g is None:
            diffs.append(f"{where}: the library sends {f.bits} bits, yours sends nothing")
        elif f is None:
            diffs.append(f"{where}: yours sends {g.bits} bits, the library sends nothing "
                         "(an extra message)")
        elif f.bits != g.bits:
            diffs.append(f"{where}: the library sends {f.bits} bits, yours {g.bits}")
        elif values and f.values is not None:
            if g.values is None:
                diffs.append(f"{where}: no value recorded -- pass what crosses "
                             "(ledger.send(..., value=v), ledger.exchange(..., values={party: v}))")
            elif f.values.size != g.values.size or not np.array_equal(np.sort(f.values),
                                                                      np.sort(g.values)):
                diffs.append(f"{where}: the right size, but not the values the library sends "
                             f"(library: {_head(f.values)}; yours: {_head(g.values)})")
    if len(diffs) > limit:
        diffs = diffs[:limit] + [f"... and {len(diffs) - limit} more"]
    return diffs


def ledger_mismatch(case: str, reference: Ledger, yours: Ledger, right: bool, wrong_output: str,
                    value_tip: str, record_tip: str | None = None,
                    values: bool = True) -> Verdict | None:
    """The "not yet" of a write-it-yourself check, or None when the student's ledger and
    output agree with the library's: the case, ``wrong_output`` if the output is not
    ``right``, the message differences (:func:`compare_messages`) and both summaries; the
    hint is ``record_tip`` when a value was not recorded, ``value_tip`` when the sizes agree
    but the values do not; ``values=False``: compare who sends whom how many bits in which
    round only (the checker judges the values by what the protocol guarantees)."""
    diffs = compare_messages(reference, yours, values=values)
    if not diffs and right:
        return None
    lines = [f"{case}:"] + ([] if right else [f"  {wrong_output}"])
    lines += [f"  {d}" for d in diffs]
    lines += [f"  library: {summary(reference)}", f"  yours:   {summary(yours)}"]
    tip = None
    if record_tip is not None and any("no value recorded" in d for d in diffs):
        tip = record_tip
    elif any("not the values" in d for d in diffs):
        tip = value_tip
    return Verdict(False, "\n".join(lines), tip)


def _head(v: np.ndarray, n: int = 3) -> str:
    vals = " ".join(str(int(a)) for a in v[:n])
    return f"[{vals}{' ...' if v.size > n else ''}]"


def compare_ops(reference: dict[str, int], yours: Ledger) -> list[str]:
    """Differences between expected operation counts and those booked on ``yours``."""
    got = {k: v for k, v in yours.op_counts().items() if v}
    want = {k: v for k, v in reference.items() if v}
    diffs = []
    for op in sorted(set(want) | set(got)):
        a, b = want.get(op, 0), got.get(op, 0)
        if a != b:
            diffs.append(f"{op}: the library books {a}, yours {b}")
    return diffs


def closed_form_verdict(exprs: tuple, cases, measure, labels,
                        unit: str = "the ledger") -> Verdict | None:
    """The "not yet" of a counting exercise, or None: the student's closed forms ``exprs``
    (sympy, in ``names``) evaluated at every size of ``cases`` (dicts name -> int) against
    ``measure(**case)``, a tuple of what the library's run booked (one entry per
    expression, named by ``labels``). The cases vary every size, so a formula that leaves
    one out, or a number, fails."""
    from .answers import at

    for case in cases:
        want = tuple(measure(**case))
        got = tuple(at(e, **case) for e in exprs)
        if got != want:
            where = ", ".join(f"{k} = {v}" for k, v in case.items())
            said = "; ".join(f"{lbl} {g if g is not None else 'not an integer'} (you) vs "
                             f"{w} ({unit})" for lbl, g, w in zip(labels, got, want) if g != w)
            return Verdict(False, f"at {where}: {said}")
    return None

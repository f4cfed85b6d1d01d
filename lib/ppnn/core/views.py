"""A party's *view*: everything it received and held during a run, step by step.

In the security definitions of these papers (semi-honest simulation), a protocol is private
for a party when its view -- its input, its randomness and the messages it received -- can be
simulated from its input and output alone. Here the view is data, read from a ledger that
recorded values (``Ledger(..., record_values=True)`` or ``ppnn.run(..., record_values=True)``):

    >>> v = ppnn.views(ledger, "server")          # one row per step the server saw
    >>> v[["step", "kind", "peer", "what", "shown"]]

and the privacy claim becomes an experiment a student can run: record the view for two
different secrets many times, and check with :func:`ks_test` (a two-sample Kolmogorov-Smirnov
test at a stated level) that the two samples cannot be told apart -- then break the protocol
(reuse a mask, skip the noise flooding) and watch the same test tell them apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .ledger import Ledger

__all__ = ["views", "timeline", "view_values", "ks_test", "ks_threshold", "KSResult",
           "EVERYONE", "ViewExperiment", "view_experiment"]

#: the seat that sees every message and every holding (the simulator's, not a party's)
EVERYONE = "everyone"

_COLUMNS = ["step", "message", "round", "phase", "label", "kind", "party", "peer", "what",
            "bits", "value", "shown"]


def _need_values(ledger: Ledger) -> None:
    if not isinstance(ledger, Ledger):
        raise TypeError(f"ledger must be a ppnn Ledger, got {type(ledger).__name__}")
    if not ledger.records_values:
        raise ValueError("this ledger did not record values: make it with "
                         "Ledger(parties, record_values=True) or run "
                         "ppnn.run(plan, x, record_values=True)")


def timeline(ledger: Ledger) -> pd.DataFrame:
    """Every step of a recorded run in order: each message (``kind='message'``, ``party`` its
    sender, ``peer`` its receiver) and each holding (``kind='held'``), with the value kept.
    ``message`` is the message's index in ``ledger.messages`` (-1 for a holding); a holding
    comes right before the message booked after it."""
    _need_values(ledger)
    rows = []
    for kind, i in ledger.events():
        if kind == "held":
            h = ledger.holds[i]
            rows.append({"message": -1, "round": 0, "phase": h.phase, "label": h.label,
                         "kind": "held", "party": h.party, "peer": "", "what": h.name,
                         "bits": 0, "value": h.value})
        elif kind == "message":
            m = ledger.messages[i]
            rows.append({"message": i, "round": m.round, "phase": m.phase, "label": m.label,
                         "kind": "message", "party": m.sender, "peer": m.receiver,
                         "what": m.what, "bits": m.bits, "value": ledger.values.get(i)})
    df = pd.DataFrame(rows, columns=_COLUMNS[1:-1])
    df.insert(0, "step", np.arange(1, len(df) + 1))
    df["shown"] = [v.text() if v is not None else "" for v in df["value"]]
    return df


def views(ledger: Ledger, party: str, sent: bool = False) -> pd.DataFrame:
    """``party``'s view of a recorded run: the messages it received (``kind='received'``,
    ``peer`` the sender) and what it held (``kind='held'``), in order, with their values;
    ``sent=True`` adds what it sent (a function of its view). ``party`` may be ``'dealer'``,
    or :data:`EVERYONE` for every step (the simulator's seat)."""
    tl = timeline(ledger)
    if party == EVERYONE:
        return tl
    if party not in ledger.parties and party != Ledger.DEALER:
        raise ValueError(f"party must be one of {(*ledger.parties, Ledger.DEALER, EVERYONE)}, "
                         f"got {party!r}")
    msg = (tl["kind"] == "message").to_numpy()
    recv = msg & (tl["peer"] == party).to_numpy()
    mine = msg & (tl["party"] == party).to_numpy() & sent
    held = ~msg & (tl["party"] == party).to_numpy()
    out = tl.assign(kind=np.where(recv, "received", np.where(held, "held", "sent")))
    # a received message's peer is its sender (and the row's party the viewer)
    out.loc[recv, ["party", "peer"]] = out.loc[recv, ["peer", "party"]].to_numpy()
    return out[recv | held | mine].reset_index(drop=True)


def view_values(ledger: Ledger, party: str, what: str | None = None,
                kind: str = "received") -> np.ndarray:
    """The recorded elements ``party`` received (or held: ``kind='held'``, or sent:
    ``kind='sent'``), concatenated in order (optionally only steps whose ``what`` contains
    ``what``): the sample a statistical test of the view reads."""
    if kind not in ("received", "held", "sent"):
        raise ValueError(f"kind must be 'received', 'held' or 'sent', got {kind!r}")
    v = views(ledger, party, sent=kind == "sent")
    v = v[v["kind"] == kind]
    if what is not None:
        v = v[v["what"].str.contains(what, regex=False)]
    parts = [r.head for r in v["value"] if r is not None and r.head is not None]
    return np.concatenate(parts) if parts else np.zeros(0)


@dataclass(frozen=True)
class KSResult:
    """A two-sample Kolmogorov-Smirnov test: ``statistic`` D = max |F_a - F_b|, rejected
    ("the samples differ") when D > ``threshold`` = c(alpha) sqrt((n + m) / (n m)),
    c(alpha) = sqrt(-ln(alpha / 2) / 2) (the asymptotic critical value)."""

    statistic: float
    threshold: float
    alpha: float
    n: int
    m: int

    @property
    def distinguishes(self) -> bool:
        """Whether the test tells the two samples apart at level ``alpha``."""
        return self.statistic > self.threshold

    def __str__(self) -> str:
        verdict = "tells them apart" if self.distinguishes else "cannot tell them apart"
        return (f"KS D = {self.statistic:.4f} vs threshold {self.threshold:.4f} "
                f"(alpha = {self.alpha:g}, n = {self.n}, m = {self.m}): {verdict}")


def ks_test(a, b, alpha: float = 0.001) -> KSResult:
    """Two-sample Kolmogorov-Smirnov test of samples ``a`` and ``b`` at level ``alpha``.

    Ring elements (unsigned integers) are compared as integers; the test is exact in the
    statistic and asymptotic in the threshold (fine from a few hundred samples on)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    a, b = np.sort(np.ravel(a)), np.sort(np.ravel(b))
    n, m = a.size, b.size
    if n < 2 or m < 2:
        raise ValueError(f"each sample needs at least 2 values, got {n} and {m}")
    both = np.concatenate([a, b])
    fa = np.searchsorted(a, both, side="right") / n
    fb = np.searchsorted(b, both, side="right") / m
    d = float(np.max(np.abs(fa - fb)))
    return KSResult(d, ks_threshold(n, m, alpha), float(alpha), int(n), int(m))


def ks_threshold(n: int, m: int, alpha: float = 0.001) -> float:
    """The asymptotic critical value of the two-sample KS statistic for samples of ``n`` and
    ``m`` at level ``alpha``: ``c(alpha) sqrt((n + m) / (n m))``,
    ``c(alpha) = sqrt(-ln(alpha / 2) / 2)``."""
    return math.sqrt(-math.log(alpha / 2) / 2) * math.sqrt((n + m) / (n * m))


@dataclass(frozen=True)
class ViewExperiment:
    """A party's view sampled for two secrets (or two pairs of secrets), and the KS test
    between the two samples; ``broken``: the deliberately broken variant of the protocol."""

    secrets: tuple
    samples: tuple[np.ndarray, np.ndarray]
    test: KSResult
    broken: bool = False


def view_experiment(sample, secrets, n: int, seed: int = 0, alpha: float = 0.001,
                    broken: bool = False, cls: type = ViewExperiment, **extra):
    """The view experiment of the notebooks: ``sample(secret, rng)`` (an array of what the
    party computes from its view) for each of the two ``secrets``, drawn in order from one
    generator seeded with ``seed``, and :func:`ks_test` of the two samples at level ``alpha``.
    ``n`` is the sample size each draw promises (>= 100, where the KS threshold holds);
    ``cls`` a :class:`ViewExperiment` subclass with the fields ``extra``."""
    if n < 100:
        raise ValueError(f"n must be >= 100 for the KS test's threshold to hold, got {n}")
    if len(secrets) != 2:
        raise ValueError(f"secrets must be two secrets to tell apart, got {secrets!r}")
    rng = np.random.default_rng(seed)
    samples = tuple(np.asarray(sample(s, rng)) for s in secrets)
    return cls(tuple(secrets), samples, ks_test(*samples, alpha=alpha), broken, **extra)


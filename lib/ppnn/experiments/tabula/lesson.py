"""01_tabula's protocol lessons: one lookup played step by step, and the server's view of the
blinded index ``y = x + s`` as an experiment.

The server sees ``y = x_trunc + s mod 2^b`` for each activation. With a fresh table (a fresh
``s``) per lookup, ``y`` is uniform whatever ``x`` is. The broken variant reuses one table for
two lookups (the mistake the single-use rule forbids): the server then sees
``y1 - y2 = x1 - x2``, and a two-sample KS test on that difference tells two pairs of secrets
apart at once. The tables come from the simulated dealer (the ideal preprocessing), seeded.
"""

from __future__ import annotations

import copy

import numpy as np

from ...core import Z2_64, Ledger, Ring, share_additive
from ...core.transcript import EVERY_ELEMENT
from ...core.views import ViewExperiment, view_experiment, view_values
from ...protocols import tabula as tb

__all__ = ["PARTIES", "lookup_demo", "index_view", "ViewExperiment",
           "index_view_experiment"]

PARTIES = ("client", "server")


def lookup_demo(x_int, b: int, d: int, rng: np.random.Generator, ring: Ring = Z2_64
                ) -> tuple[Ledger, np.ndarray]:
    """ReLU of a few signed integers by Tabula (dealer tables offline, one online exchange),
    every value recorded. Returns the ledger and ReLU(x >> d) as opened to the client."""
    led = Ledger(PARTIES, record_values=EVERY_ELEMENT)
    x_int = np.asarray(x_int, dtype=np.int64)
    X = share_additive(ring.from_signed(x_int), ring, rng)
    led.hold("client", "[x]_0", X.shares[0])
    led.hold("server", "[x]_1", X.shares[1])
    with led.label("preprocessing"):
        T = tb.dealer_tables(tb.function_table(tb.relu, b), x_int.size, rng, ring, led)
    with led.label("online"):
        Y = tb.tabula_online(X, T, d, led)
    with led.label("output"):
        out = Y.open_to(led, PARTIES, "client", "server's share of F(x)")
    led.hold("client", "F(x) = ReLU(x >> d)", ring.to_signed(out))
    return led, ring.to_signed(out)


def index_view(x1: int, x2: int, n: int, b: int, rng: np.random.Generator,
               reuse: bool = False) -> np.ndarray:
    """``y1 - y2 mod 2^b`` as the server computes it from its view, for ``n`` pairs of lookups
    of ``x1`` and ``x2`` (fresh tables, or -- ``reuse`` -- the first lookup's tables again)."""
    F = tb.function_table(tb.relu, b)
    ys = []
    first = None
    for xv in (x1, x2):
        led = Ledger(PARTIES, record_values=EVERY_ELEMENT)
        X = share_additive(np.full(n, xv, np.uint64), Z2_64, rng)
        if reuse and first is not None:
            T = copy.copy(first)
            T.used = False  # the broken variant: the same tables, read a second time
        else:
            T = tb.dealer_tables(F, n, rng)
            first = copy.copy(T)
        tb.tabula_online(X, T, 0, led)
        got = view_values(led, "server", what="x_trunc_0")  # the client's y_0
        own = view_values(led, "server", what="x_trunc_1", kind="sent")  # its own y_1
        ys.append((got + own) & np.uint64((1 << b) - 1))
    return (ys[0] - ys[1]) & np.uint64((1 << b) - 1)


def index_view_experiment(n: int = 2000, b: int = 8, seed: int = 0, reuse: bool = False,
                          alpha: float = 0.001) -> ViewExperiment:
    """:func:`index_view` for the secret pairs ``(0, 0)`` and ``(0, 5)``, KS-tested
    (``secrets``: the two pairs; ``broken``: ``reuse``)."""
    return view_experiment(lambda pair, rng: index_view(*pair, n, b, rng, reuse),
                           ((0, 0), (0, 5)), n, seed, alpha, reuse)

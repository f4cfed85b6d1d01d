"""01_tabula's protocol lessons: one lookup played step by step (and what the simulator sees of
it), the server's view of the blinded index ``y = x + s`` as an experiment, and local
truncation's errors against the ring size as a figure.

The server sees ``y = x_trunc + s mod 2^b`` for each activation. With a fresh table (a fresh
``s``) per lookup, ``y`` is uniform whatever ``x`` is. The broken variant reuses one table for
two lookups (the mistake the single-use rule forbids): the server then sees
``y1 - y2 = x1 - x2``, and a two-sample KS test on that difference tells two pairs of secrets
apart at once. The tables come from the simulated dealer (the ideal preprocessing), seeded.
"""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd

from ...core import Z2_64, Ledger, Ring, share_additive
from ...core.transcript import EVERY_ELEMENT
from ...core.views import ViewExperiment, view_experiment, view_values
from ...protocols import tabula as tb

__all__ = ["PARTIES", "lookup_demo", "truncation_outcomes", "index_view", "ViewExperiment",
           "index_view_experiment", "plot_truncation_errors"]

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


def truncation_outcomes(ledger: Ledger, x_int, d: int, b: int, reruns: int = 0,
                        rng: np.random.Generator | None = None, ring: Ring = Z2_64
                        ) -> pd.DataFrame:
    """What the simulator sees of a :func:`lookup_demo` run (everyone's values at once): per
    input ``x``, the exact ``x >> d``, what the two truncated shares the parties held sum to
    (read off the ledger, mod ``2^b``, signed), how far that is off (``+1``: local
    truncation's off-by-one, which happens with probability ``(x mod 2^d) / 2^d``, also
    given) and the ReLU opened to the client. ``reruns`` > 0: also how often each ``x`` is
    off by one over that many fresh sharings in ``ring`` (the demo's;
    :func:`ppnn.protocols.tabula.truncation_error_rates`, drawn from ``rng``)."""
    x_int = np.asarray(x_int, dtype=np.int64).reshape(-1)
    if not 0 < d < 63 or not 0 < b < 63:
        raise ValueError(f"d and b must be in 1..62, got d = {d}, b = {b}")
    mask = (1 << b) - 1
    held = [view_values(ledger, p, what=f"x_trunc_{i} mod 2^b", kind="held").astype(np.int64)
            for i, p in enumerate(PARTIES)]
    opened = view_values(ledger, "client", what="F(x) = ReLU", kind="held").astype(np.int64)
    if not held[0].size == held[1].size == opened.size == x_int.size:
        raise ValueError(f"the ledger holds {opened.size} lookups, x_int has {x_int.size}")
    got = (held[0] + held[1]) & mask
    got = np.where(got >= 1 << (b - 1), got - (1 << b), got)
    out = pd.DataFrame({"x": x_int, "x >> d (exact)": x_int >> d,
                        "truncated shares sum to": got, "off by": got - (x_int >> d),
                        "P(off by one)": (x_int & ((1 << d) - 1)) / 2**d,
                        "ReLU opened to the client": opened})
    if reruns < 0:
        raise ValueError(f"reruns must be >= 0, got {reruns}")
    if reruns:
        if rng is None:
            raise ValueError("reruns needs an rng to draw the fresh sharings from")
        out[f"off by one in {reruns:,} reruns"] = [
            tb.truncation_error_rates(np.array([v]), d, ring, rng, reruns)["off_by_one_rate"]
            for v in x_int]
    return out


def plot_truncation_errors(trunc: pd.DataFrame, value_bits: int = 14):
    """Local truncation's two errors against the ring size k, measured (points) and by their
    closed forms (lines): the off-by-one rate, the same at every k (the mean dropped fraction),
    and the catastrophic rate ``E|x| / 2^k`` with its bound ``2^(value_bits - k)``. ``trunc``:
    rows of :func:`ppnn.protocols.tabula.truncation_error_rates` (columns ``k, n,
    off_by_one_rate, predicted_off_by_one, catastrophic_rate, predicted_catastrophic``). A
    ring in which no catastrophic error was seen is drawn at ``1/n`` (an upper end of what
    could hide in ``n`` trials) as an open downward triangle."""
    import matplotlib.pyplot as plt

    from ... import plotting

    need = {"k", "n", "off_by_one_rate", "predicted_off_by_one", "catastrophic_rate",
            "predicted_catastrophic"}
    if need - set(trunc):
        raise ValueError(f"trunc lacks the columns {sorted(need - set(trunc))}")
    plotting.setup()
    t = trunc.sort_values("k")
    ks = np.linspace(t.k.min(), t.k.max(), 200)
    # E|x| / 2^k is one constant times 2^-k: scale the measured rows' prediction to any k
    mean_abs = float((t.predicted_catastrophic * 2.0**t.k).mean())
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    ax.plot(ks, np.full_like(ks, t.predicted_off_by_one.mean()), color="tab:blue", lw=1.5,
            label="off by one: E[(x mod 2^d) / 2^d] (closed form)")
    ax.plot(t.k, t.off_by_one_rate, "o", color="tab:blue", label="off by one, measured")
    ax.plot(ks, mean_abs / 2.0**ks, color="tab:red", lw=1.5,
            label="catastrophic: E|x| / 2^k (closed form)")
    ax.plot(ks, 2.0 ** (value_bits - ks), color="tab:red", lw=1, ls=":",
            label=f"catastrophic bound 2^({value_bits} - k)")
    seen = t.catastrophic_rate > 0
    ax.plot(t.k[seen], t.catastrophic_rate[seen], "s", color="tab:red",
            label="catastrophic, measured")
    if (~seen).any():
        ax.plot(t.k[~seen], 1 / t.n[~seen], "v", mfc="none", color="tab:red",
                label="catastrophic: none in n trials (below 1/n)")
    ax.set_yscale("log")
    ax.set_xlabel("ring bits k")
    ax.set_ylabel("rate per truncation")
    ax.set_title(f"Local truncation errors against the ring size (|x| < 2^{value_bits})",
                 fontsize=10)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    return fig

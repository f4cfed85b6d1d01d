"""02_gala's protocol lessons: one matrix-vector product played step by step, with the slot
diagram of each step on the same slider, and the key holder's view of the returned ciphertext
with and without noise flooding, as an experiment.

* :func:`matvec_demo` runs GAZELLE's or GALA's kernel between the two parties on the slot
  simulator at ``n = 16`` slots (a size a person can read: a 4 x 8 matrix), every value
  recorded, every HE operation a step of its own on the server's lane. The same operations, in
  the same order, move the partial products in :func:`~.figures.trace_matvec`'s slot diagram:
  :meth:`MatVecDemo.panel` draws the diagram as it stands after a player step.
  The slot simulator builds no ciphertext bytes: its ciphertexts are listed by size only.
  :func:`matvec_demo` with a real SEAL backend plays the same product on real BFV, where the
  ciphertexts are shown by size and digest.
* :func:`flood_view_experiment`: the client holds the secret key, so its view of
  ``[y - r]_C`` includes the ciphertext's noise (``SealBFV.phase_noise``). For two weight
  matrices of the server, the noise the client reads is a sample; without flooding a two-sample
  KS test tells the two weight matrices apart, with flooding it cannot.
* :func:`matvec_crossover` and :func:`plot_matvec_crossover`: GALA's and GAZELLE's Perms (and
  projected time) against the number of output rows ``n_o``, counted by running the kernels
  beside Table II's closed forms, with the ``n_o`` where GALA starts to need more Perms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...core import Ledger
from ...core.transcript import EVERY_ELEMENT
from ...core.views import KSResult, ks_test
from ...he.bfv.sim import BFVSim
from ...protocols.gala.protocol import LinearResult, run_linear
from ...sequence import steps
from .figures import plot_trace, trace_matvec
from .runs import matvec_kernel

__all__ = ["MatVecDemo", "matvec_demo", "trace_position", "FloodViewExperiment",
           "flood_view_experiment", "plot_flood_view", "matvec_crossover",
           "matvec_perm_forms", "plot_matvec_crossover"]

#: operations that move the slot diagram one step on (the kernels' order of work)
_MOVES = {"ScMult", "Perm", "Add", "PlainRaS"}


@dataclass
class MatVecDemo:
    """One recorded matrix-vector product: the ledger, the parties' shares, the inputs and the
    slot-diagram trace of the kernel (``trace_matvec``)."""

    method: str
    ledger: Ledger
    result: LinearResult
    W: np.ndarray
    x: np.ndarray
    trace: list
    n: int

    @property
    def correct(self) -> bool:
        """Whether the two shares reconstruct ``W x``."""
        return bool(np.array_equal(self.result.reveal(), self.W @ self.x))

    def rows(self):
        """The player's rows (one step per operation booking)."""
        return steps(self.ledger, None, split_ops=True)

    def panel(self, step: int):
        """The slot diagram after player ``step`` (None before the kernel's first product)."""
        k = trace_position(self.rows(), self.method, len(self.trace)).get(int(step), -1)
        if k < 0:
            return None
        n_o, n_i = self.W.shape
        return plot_trace(self.trace[: k + 1], f"{self.method}: the slots after step {step} "
                          f"(n_o={n_o}, n_i={n_i}, n={self.n})", max_rows=None)


def trace_position(rows, method: str, n_trace: int) -> dict[int, int]:
    """Player step -> index of the last slot-diagram step done by then.

    GAZELLE's trace starts with the products of the rotated input (HstPerm, ScMult), GALA's
    with the products of the unrotated input (ScMult) and then rotates the products (Perm);
    then both sum (Add) and run the rotate-and-sum steps: GAZELLE in HE (Perm, Add), GALA on the
    plaintext shares (PlainRaS, all of them in one booking). Naive: ScMult, then (Perm, Add)
    per step."""
    pos, k, seen_sum = {}, -1, False
    for r in rows.itertuples():
        if r.kind == "op" and r.what.split(" x")[0] in _MOVES:
            op = r.what.split(" x")[0]
            if op == "ScMult":
                k = 0
            elif op == "Perm" and method == "GALA" and not seen_sum:
                k += 1  # (c) rotate product g by g
            elif op == "Add":
                k += 1
                seen_sum = True
            elif op == "PlainRaS":
                k = n_trace - 1
        pos[int(r.step)] = min(k, n_trace - 1)
    return pos


def matvec_demo(method: str = "GALA", n_o: int = 4, n_i: int = 8, n: int = 16,
                seed: int = 0, he=None, W=None, x=None) -> MatVecDemo:
    """``W x`` by ``method`` (``'GAZELLE'``, ``'GALA'`` or ``'Naive'``) between client and
    server with every value recorded: the client's packed ``[x]_C``, the server's operations
    one by one, the masked ``[y - r]_C`` and the two shares. ``he``: a backend (default the
    slot simulator with ``n`` slots; a ``SealBFV`` plays it on real BFV); ``W``, ``x``: small
    integers (default drawn from ``seed``)."""
    if method not in ("Naive", "GAZELLE", "GALA"):
        raise ValueError(f"method must be 'Naive', 'GAZELLE' or 'GALA', got {method!r}")
    he = BFVSim(n=n) if he is None else he
    rng = np.random.default_rng(seed)
    W = rng.integers(-3, 4, (n_o, n_i)) if W is None else np.asarray(W)
    x = rng.integers(-3, 4, n_i) if x is None else np.asarray(x)
    if W.shape != (n_o, n_i) or x.shape != (n_i,):
        raise ValueError(f"W must be ({n_o}, {n_i}) and x ({n_i},), got {W.shape} and {x.shape}")
    led = Ledger([he.client, he.server], record_values=EVERY_ELEMENT)
    led.hold(he.client, "x (its input)", x)
    led.hold(he.server, "W (its weights)", W)
    res = run_linear(matvec_kernel(method, n_o, n_i, he.n), he, W, x, rng, led)
    if getattr(he, "real", False):  # the key holder can also read the noise (first 16)
        led.hold(he.client, "noise of [y - r]_C, read with its secret key",
                 np.round(he.phase_noise(res.returned).ravel()[:16]).astype(np.int64))
    led.hold(he.client, "its share y - r (read out)", res.client_share)
    led.hold(he.server, "its share r (read out)", res.server_share)
    trace = trace_matvec(method, n_o, n_i, he.n) if he.n <= 64 else []
    return MatVecDemo(method, led, res, W, x, trace, he.n)


@dataclass(frozen=True)
class FloodViewExperiment:
    """The noise the key-holding client reads in ``[y - r]_C`` for two weight matrices."""

    flooded: bool
    weights: tuple[str, str]
    samples: tuple[np.ndarray, np.ndarray]
    test: KSResult
    correct: bool


def flood_view_experiment(he, flooded: bool, n_o: int = 16, n_i: int = 128, reps: int = 2,
                          seed: int = 0, alpha: float = 0.001,
                          flood_bits: int | None = None,
                          method: str = "GALA") -> FloodViewExperiment:
    """The client's view of the returned ciphertext's noise (``he.phase_noise``, with its
    secret key) for the server's weights ``W = 1`` (every weight one) and ``W`` random in
    ``[-8, 8]``, over ``reps`` runs each, with flooding on (``flood_bits``, default the
    backend's own or 40) or off; KS test at level ``alpha`` on the two samples of noise
    coefficients. ``he`` must be a real SEAL backend that can flood (N = 8192); ``method``
    names the matrix-vector kernel (``"GALA"`` or ``"GAZELLE"``)."""
    if not getattr(he, "real", False):
        raise ValueError("he must be a real SEAL backend (SealBFV): the slot simulator has "
                         "no noise to read")
    rng = np.random.default_rng(seed)
    x = rng.integers(-1, 2, n_i)
    cases = (("W = 1", np.ones((n_o, n_i), np.int64)),
             ("W random in [-8, 8]", rng.integers(-8, 9, (n_o, n_i))))
    old = (he.flood_bits, he.flood_margin_bits)
    bits = flood_bits or he.flood_bits or 40
    samples, ok = [], True
    try:
        he.set_flooding(bits if flooded else 0)
        for _, W in cases:
            out = []
            for rep in range(reps):
                res = run_linear(matvec_kernel(method, n_o, n_i, he.n), he, W, x,
                                 np.random.default_rng(seed + 1 + rep))
                ok &= bool(np.array_equal(res.reveal(), W @ x))
                out.append(he.phase_noise(res.returned).ravel())
            samples.append(np.concatenate(out))
    finally:
        he.set_flooding(*old)
    test = ks_test(samples[0], samples[1], alpha=alpha)
    return FloodViewExperiment(flooded, (cases[0][0], cases[1][0]), tuple(samples), test, ok)


def plot_flood_view(experiments: list[FloodViewExperiment]):
    """One panel per experiment: histograms of the noise the client read for the two weight
    matrices (log-scaled |noise|), with the KS verdict in the title."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(experiments), figsize=(5.2 * len(experiments), 3.2),
                             squeeze=False)
    for ax, e in zip(axes[0], experiments):
        both = np.log2(np.abs(np.concatenate(e.samples)) + 1)
        bins = np.linspace(both.min(), both.max(), 41)
        for sample, name, color in zip(e.samples, e.weights, ("#1f77b4", "#d62728")):
            ax.hist(np.log2(np.abs(sample) + 1), bins=bins, alpha=0.55, color=color, label=name)
        verdict = "tells them apart" if e.test.distinguishes else "cannot tell them apart"
        ax.set_title(f"{'flooded' if e.flooded else 'not flooded'}: KS D = "
                     f"{e.test.statistic:.3f} (threshold {e.test.threshold:.3f})\n{verdict}",
                     fontsize=9)
        ax.set_xlabel("log2(|noise coefficient| + 1), read with the client's secret key")
        ax.legend(fontsize=8, frameon=False)
    axes[0][0].set_ylabel("coefficients")
    fig.tight_layout()
    return fig


def matvec_crossover(n_i: int = 2048, n: int = 2048, n_os=None, unit: pd.DataFrame | None = None
                     ) -> pd.DataFrame:
    """GAZELLE's and GALA's matrix-vector kernels (``n_o x n_i`` in ``n`` slots) run on the
    counting backend for each ``n_o`` in ``n_os`` (default: the powers of two from 1 to
    ``min(n, 4096 * n // n_i)``): one row per ``n_o`` with each method's Perm and HstPerm
    counts and, given measured ``unit`` costs (:func:`ppnn.protocols.gala.runtime.unit_costs`),
    its projected server time in ms (``"<method> ms"``: SEAL, a hoisted rotation costs a Perm;
    ``"GAZELLE hoisted ms"``: a hoisted rotation at the cost of one ScMult, GAZELLE's model)."""
    from ...protocols.gala.runtime import project_seconds

    if int(n) < 2 or int(n) & (int(n) - 1):
        raise ValueError(f"n must be a power of two >= 2 slots, got {n}")
    if not 1 <= int(n_i) <= int(n):
        raise ValueError(f"n_i must be in [1, n = {n}], got {n_i}")
    if n_os is None:
        n_os = [1 << j for j in range(int(n).bit_length()) if 1 << j <= n]
    rows = []
    for n_o in n_os:
        if not 1 <= int(n_o) <= int(n):
            raise ValueError(f"every n_o must be in [1, n = {n}], got {n_o}")
        row = {"n_o": int(n_o)}
        for method in ("GAZELLE", "GALA"):
            c = _count(method, int(n_o), int(n_i), int(n))
            row |= {f"{method} Perm": c["Perm"], f"{method} HstPerm": c["HstPerm"]}
            if unit is not None:
                row[f"{method} ms"] = 1e3 * project_seconds(c, unit)
                if method == "GAZELLE":
                    row["GAZELLE hoisted ms"] = 1e3 * project_seconds(c, unit, hoisting=True)
        rows.append(row)
    return pd.DataFrame(rows)


def _count(method: str, n_o: int, n_i: int, n: int) -> dict[str, int]:
    """The HE operations of one matrix-vector kernel, counted by running it."""
    from ...protocols.gala.costs import count_kernel
    from .runs import matvec_kernel

    return count_kernel(matvec_kernel(method, n_o, n_i, n))


def matvec_perm_forms(n_o, n_i: int, n: int) -> dict[str, np.ndarray]:
    """Table II's Perm counts as functions of ``n_o`` (a number or an array), with ``n_i`` and
    ``n`` fixed: GALA ``n_i n_o / n - 1``, GAZELLE ``log2(n / n_o)`` (one block,
    ``n_i n_o >= n``), from :data:`ppnn.protocols.gala.costs.PAPER_TABLE2`."""
    import sympy as sp

    from ...protocols.gala import costs

    n_o = np.asarray(n_o, dtype=float)
    out = {}
    for method in ("GAZELLE", "GALA"):
        expr = sp.sympify(costs.PAPER_TABLE2[method]["perm"]).subs(
            {costs.SYM["n_i"]: n_i, costs.SYM["n"]: n})
        out[method] = np.broadcast_to(
            sp.lambdify(costs.SYM["n_o"], expr, "numpy")(n_o), n_o.shape).astype(float)
    return out


def _crossover(n_o, gala, gazelle):
    """The first ``n_o`` at which ``gala > gazelle`` and the ``n_o`` just before it (linear
    interpolation of the difference in log2 n_o between them), or None."""
    n_o, diff = np.asarray(n_o, float), np.asarray(gala, float) - np.asarray(gazelle, float)
    above = np.flatnonzero(diff > 0)
    if not above.size or above[0] == 0:
        return None
    j = above[0]
    lo, hi = np.log2(n_o[j - 1]), np.log2(n_o[j])
    t = -diff[j - 1] / (diff[j] - diff[j - 1])
    return float(n_o[j]), float(2 ** (lo + t * (hi - lo)))


def plot_matvec_crossover(sweep: pd.DataFrame, n_i: int, n: int):
    """GALA against GAZELLE as ``n_o`` grows (a :func:`matvec_crossover` sweep, log2 x axis).
    Left: Perms, the counts of running the kernels as points on Table II's closed forms
    (:func:`matvec_perm_forms`) as lines, with the crossover marked where GALA's
    ``n_i n_o / n - 1`` overtakes GAZELLE's ``log2(n / n_o)``. Right, if the sweep has
    projected times: each method's projected server time (ms), GAZELLE twice (its hoisted
    rotations at a Perm each, as on SEAL, and at one ScMult each, as GAZELLE models them),
    with any crossover marked. Returns the figure."""
    import matplotlib.pyplot as plt

    from ... import plotting

    plotting.setup()
    timed = "GALA ms" in sweep
    fig, axes = plt.subplots(1, 2 if timed else 1, figsize=(11 if timed else 5.6, 3.6),
                             squeeze=False)
    axes = axes[0]
    n_o = sweep["n_o"].to_numpy()
    grid = np.geomspace(max(n_o.min(), n / n_i), n_o.max(), 200)
    forms = matvec_perm_forms(grid, n_i, n)
    colors = {"GAZELLE": "tab:blue", "GALA": "tab:orange"}
    label = {"GALA": "n_i n_o / n - 1", "GAZELLE": "log2(n / n_o)"}
    left = axes[0]
    for method, color in colors.items():
        left.plot(grid, forms[method], color=color, lw=1.5,
                  label=f"{method}: {label[method]} (Table II)")
        left.plot(n_o, sweep[f"{method} Perm"], "o", color=color,
                  label=f"{method}, counted")
    cross = _crossover(n_o, sweep["GALA Perm"], sweep["GAZELLE Perm"])
    if cross is not None:
        first, at = cross
        left.axvline(at, color="0.4", lw=0.9, ls="--")
        left.annotate(f"GALA needs more Perms\nfrom n_o = {first:g}", (at, 0.97),
                      xycoords=("data", "axes fraction"), xytext=(4, 0),
                      textcoords="offset points", fontsize=8, va="top", color="0.3")
    left.set_yscale("symlog", linthresh=1)
    left.set(xscale="log", ylim=(0, 2 * max(1, sweep[["GALA Perm", "GAZELLE Perm"]].max().max())),
             xlabel="output rows n_o", ylabel="Perms (unhoisted rotations)",
             title=f"Perms of W x, n_i = {n_i}, n = {n} slots")
    left.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    if timed:
        right = axes[1]
        for col, color, ls, name in (("GAZELLE ms", "tab:blue", "-", "GAZELLE (SEAL: a "
                                      "hoisted rotation costs a Perm)"),
                                     ("GAZELLE hoisted ms", "tab:blue", "--",
                                      "GAZELLE (hoisted rotation = one ScMult)"),
                                     ("GALA ms", "tab:orange", "-", "GALA")):
            right.plot(n_o, sweep[col], marker="o", ms=3, color=color, ls=ls, label=name)
        cross = _crossover(n_o, sweep["GALA ms"], sweep["GAZELLE hoisted ms"])
        if cross is not None:
            right.axvline(cross[1], color="0.4", lw=0.9, ls="--")
            right.annotate(f"GALA slower than hoisted\nGAZELLE from n_o = {cross[0]:g}",
                           (cross[1], 0.97), xycoords=("data", "axes fraction"),
                           xytext=(4, 0), textcoords="offset points", fontsize=8, va="top",
                           color="0.3")
        right.set(xscale="log", yscale="log", xlabel="output rows n_o",
                  ylabel="ms (projected, SEAL unit costs)",
                  title="Projected server time of W x")
        plotting.plain_log_ticks(right, "y")
    for ax in axes:
        ax.set_xticks(n_o, [f"{v:g}" for v in n_o], fontsize=7)
        ax.xaxis.set_minor_locator(plt.NullLocator())
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig

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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core import Ledger
from ...core.transcript import EVERY_ELEMENT
from ...core.views import KSResult, ks_test
from ...he.bfv.sim import BFVSim
from ...protocols.gala.protocol import LinearResult, run_linear
from ...sequence import steps
from .figures import plot_trace, trace_matvec
from .runs import matvec_kernel

__all__ = ["MatVecDemo", "matvec_demo", "trace_position", "FloodViewExperiment",
           "flood_view_experiment", "plot_flood_view"]

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

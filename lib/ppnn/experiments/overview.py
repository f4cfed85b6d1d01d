"""The overview notebook's protocol lessons: a Beaver product played step by step, and the
experiment that shows what the server's view of it does (and does not) reveal.

The view experiment: the client holds ``x``, both parties multiply ``x * y`` with a Beaver
triple, and the server sees ``e = x - a`` opened. For two secrets (``x = 0`` and
``x = 2^63``), ``n`` independent products each give one ``e``; a two-sample KS test
(:func:`ppnn.core.views.ks_test`) asks whether the server's samples tell the secrets apart.
With a fresh ``a`` per product they cannot (``e`` is uniform whatever ``x`` is); with the
broken dealer of :class:`ReusedMaskDealer` -- one ``a`` for every product, a *reused mask* --
``e`` moves with ``x`` and the same test tells them apart. Simulated: the dealer is trusted and
seeded, so this shows the protocol's logic, not the security of a real triple generator.
"""

from __future__ import annotations

import numpy as np

from ..core import Dealer, Ledger, Ring, beaver_mul, share_additive
from ..core.dealer import BeaverTriple
from ..core.transcript import EVERY_ELEMENT
from ..core.views import ViewExperiment, view_experiment, view_values

__all__ = ["PARTIES", "beaver_demo", "ReusedMaskDealer", "beaver_view", "ViewExperiment",
           "beaver_view_experiment"]

PARTIES = ("client", "server")


def beaver_demo(x, y, ring: Ring, rng: np.random.Generator) -> tuple[Ledger, np.ndarray]:
    """One Beaver product ``x * y`` (the client shares ``x``, the server ``y``) on a ledger
    that records every value: the shares each party holds, the dealer's triple shares, the
    masked ``e = x - a`` and ``f = y - b`` each party sends, and the opened product. Returns
    the ledger and the product."""
    led = Ledger(PARTIES, record_values=EVERY_ELEMENT)
    dealer = Dealer(rng, led, PARTIES)
    xs = share_additive(ring.check(np.asarray(x, np.uint64), "x"), ring, rng)
    ys = share_additive(ring.check(np.asarray(y, np.uint64), "y"), ring, rng)
    with led.label("input"), led.round():
        led.hold("client", "x (its input)", xs.reveal())
        led.send("client", "server", xs.shares[1].size * ring.bits, "share of x", xs.shares[1])
        led.hold("server", "y (its input)", ys.reveal())
        led.send("server", "client", ys.shares[0].size * ring.bits, "share of y", ys.shares[0])
    with led.label("beaver"):
        z = beaver_mul(xs, ys, dealer, led)
    with led.label("output"):
        out = z.open_to(led, PARTIES, "client", "share of z")
    led.hold("client", "z = x * y", out)
    return led, out


class ReusedMaskDealer(Dealer):
    """A broken dealer: every Beaver triple reuses one mask ``a`` (and ``b``) for all its
    elements -- the mistake of a seeded or cached mask. For teaching only."""

    def triple(self, ring: Ring, shape) -> BeaverTriple:
        a = np.full(shape, ring.random(self.rng, ()), dtype=np.uint64)
        b = np.full(shape, ring.random(self.rng, ()), dtype=np.uint64)
        t = BeaverTriple(self._share(a, ring), self._share(b, ring),
                         self._share(ring.mul(a, b), ring))
        n = int(np.prod(shape, dtype=np.int64))
        self._book(3 * n * ring.bits, "beaver triple",
                   self._values(t.a, t.b, t.c, names=("a", "b", "c")))
        return t


def beaver_view(secret: int, n: int, ring: Ring, rng: np.random.Generator,
                broken: bool = False) -> np.ndarray:
    """The ``e = x - a`` the server computes from its view (the client's share of ``e`` it
    received plus its own), for ``n`` products of the client's ``x = secret`` with random
    ``y``."""
    led = Ledger(PARTIES, record_values=EVERY_ELEMENT)
    dealer = (ReusedMaskDealer if broken else Dealer)(rng, led, PARTIES)
    xs = share_additive(ring.check(np.full(n, secret, np.uint64), "secret"), ring, rng)
    ys = share_additive(ring.random(rng, n), ring, rng)
    beaver_mul(xs, ys, dealer, led)
    got = view_values(led, "server", what="x-a").reshape(2, n)   # client's (e0, f0)
    own = view_values(led, "server", what="x-a", kind="sent").reshape(2, n)  # (e1, f1)
    return ring.add(got[0], own[0])


def beaver_view_experiment(n: int = 2000, seed: int = 0, broken: bool = False,
                           ring: Ring | None = None, alpha: float = 0.001) -> ViewExperiment:
    """Run :func:`beaver_view` for the secrets ``0`` and ``2^(k-1)`` and test the two samples
    at level ``alpha``."""
    ring = ring or Ring(64)
    return view_experiment(lambda s, rng: beaver_view(s, n, ring, rng, broken),
                           (0, 1 << (ring.k - 1)), n, seed, alpha, broken)

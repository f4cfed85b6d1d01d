"""The overview notebook's protocol lessons: a Beaver product played step by step, the
experiment that shows what the server's view of it does (and does not) reveal, and its cost
against the number of elements (ledger against closed form, bytes and projected time).

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
import pandas as pd

from ..core import LAN, WAN, Dealer, Ledger, Ring, beaver_mul, project, share_additive
from ..core.dealer import BeaverTriple
from ..core.transcript import EVERY_ELEMENT
from ..core.views import ViewExperiment, view_experiment, view_values

__all__ = ["PARTIES", "beaver_demo", "ReusedMaskDealer", "beaver_view", "ViewExperiment",
           "beaver_view_experiment", "beaver_costs", "beaver_closed_form", "plot_beaver_costs"]

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


def beaver_costs(ns, ring: Ring | None = None, seed: int = 0, networks=(LAN, WAN)
                 ) -> pd.DataFrame:
    """One Beaver product of ``n`` elements between client and server for each ``n`` in
    ``ns``, read off its ledger: online and offline bytes, online rounds and the projected
    online time on each of ``networks`` (``"<name> s"``, a projection)."""
    ring = ring or Ring(64)
    rows = []
    for n in ns:
        if int(n) < 1:
            raise ValueError(f"every n must be >= 1 element, got {n}")
        led = Ledger(PARTIES)
        dealer = Dealer(np.random.default_rng(seed), led, PARTIES)
        xs = share_additive(ring.random(dealer.rng, int(n)), ring, dealer.rng)
        beaver_mul(xs, xs, dealer)
        rows.append({"n": int(n), "online bytes": led.total_bytes("online"),
                     "offline bytes": led.total_bytes("offline"),
                     "online rounds": led.rounds("online"),
                     **{f"{net.name} s": project(led, net).total_s for net in networks}})
    return pd.DataFrame(rows)


def beaver_closed_form(n, k: int, networks=(LAN, WAN)) -> dict:
    """The closed forms of one two-party Beaver product of ``n`` (a number or an array) k-bit
    elements: online ``2 * 2nk`` bits in one round, offline ``2 * 3nk`` bits of dealer
    material, and per network one latency plus the busiest sender's ``2nk`` bits over the
    bandwidth."""
    n = np.asarray(n, dtype=float)
    out = {"online bytes": 2 * 2 * n * k / 8, "offline bytes": 2 * 3 * n * k / 8}
    for net in networks:
        out[f"{net.name} s"] = net.latency_s + 2 * n * k / 8 / net.bandwidth_Bps
    return out


def plot_beaver_costs(costs: pd.DataFrame, k: int, mark: int | None = None,
                      networks=(LAN, WAN)):
    """Two panels against the number of elements n (log-log): bytes online and offline, and
    the projected online time per network, the ledger's values as points and the closed forms
    (:func:`beaver_closed_form`) as lines; the time panel marks each network's latency, the
    floor of one round. ``mark``: an n drawn as a vertical line (the product run above)."""
    import matplotlib.pyplot as plt

    from .. import plotting

    plotting.setup()
    n_lo, n_hi = costs["n"].min(), costs["n"].max()
    grid = np.geomspace(n_lo, n_hi, 100)
    form = beaver_closed_form(grid, k, networks)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.6))
    for col, color in (("online bytes", "tab:blue"), ("offline bytes", "tab:orange")):
        left.plot(grid, form[col], color=color, lw=1.5,
                  label=f"{col.split()[0]}: {'2 * 2nk' if 'online' in col else '2 * 3nk'}"
                        " bits (closed form)")
        left.plot(costs["n"], costs[col], "o", color=color, label=f"{col.split()[0]}, ledger")
    left.set(xscale="log", yscale="log", xlabel="elements multiplied, n", ylabel="bytes",
             title=f"Bytes of one Beaver product (k = {k})")
    for net, color in zip(networks, ("tab:green", "tab:purple")):
        col = f"{net.name} s"
        right.plot(grid, form[col], color=color, lw=1.5,
                   label=f"{net.name}: latency + 2nk bits / bandwidth")
        right.plot(costs["n"], costs[col], "o", color=color, label=f"{net.name}, ledger")
        right.axhline(net.latency_s, color=color, ls=":", lw=1)
    right.set(xscale="log", yscale="log", xlabel="elements multiplied, n",
              ylabel="seconds (projected)", title="Projected online time: latency, then bytes")
    for ax in (left, right):
        plotting.plain_log_ticks(ax, "both")
        if mark is not None:
            ax.axvline(mark, color="0.5", lw=0.8, ls="--")
            ax.annotate(f"n = {mark:,}", (mark, 1), xycoords=("data", "axes fraction"),
                        xytext=(3, -3), textcoords="offset points", fontsize=7, color="0.4",
                        va="top")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig

"""Multiplication on shares.

* :func:`beaver_mul` -- elementwise product of additive shares with a Beaver triple
  (one online round: every party broadcasts its share of ``e = x - a`` and ``f = y - b``).
* :func:`beaver_matmul` -- matrix product with a matrix triple (openings of X - A and Y - B).
* :func:`beaver_and` -- AND of XOR shares with a bit triple.
* :func:`replicated_mul` -- 2-of-3 replicated product: local cross terms plus a zero sharing,
  then one resharing round (Pi sends its new component to P_{i-1}).

All are exact in the ring; fixed-point products need truncation afterwards
(:mod:`ppnn.core.truncation`).
"""

from __future__ import annotations

import numpy as np

from .dealer import Dealer
from .ledger import Ledger
from .ring import Ring
from .sharing import AdditiveShares, ReplicatedShares, XorShares
from .transcript import Parts

__all__ = ["beaver_mul", "beaver_matmul", "beaver_and", "replicated_mul", "zero_sharing"]


def _parties_for(x: AdditiveShares | XorShares, dealer: Dealer) -> tuple[str, ...]:
    if x.n_parties != len(dealer.parties):
        raise ValueError(f"shares are held by {x.n_parties} parties but the dealer serves "
                         f"{len(dealer.parties)}: {dealer.parties}")
    return dealer.parties


def beaver_mul(x: AdditiveShares, y: AdditiveShares, dealer: Dealer,
               ledger: Ledger | None = None) -> AdditiveShares:
    """Elementwise ``x * y`` on additive shares (1 online round, 2 elements per party)."""
    x._compatible(y)
    ledger = ledger or dealer.ledger
    parties = _parties_for(x, dealer)
    ring = x.ring
    t = dealer.triple(ring, x.shape)
    e_sh, f_sh = x - t.a, y - t.b
    n = int(np.prod(x.shape, dtype=np.int64))
    ledger.exchange(parties, 2 * n * ring.bits, "beaver: x-a, y-b",
                    values={p: Parts([e_sh.shares[i], f_sh.shares[i]], names=("x-a", "y-b"),
                                     shape=(2, *x.shape))
                            for i, p in enumerate(parties)} if ledger.records_values else None)
    e, f = e_sh.reveal(), f_sh.reveal()
    # z = c + e*b + f*a + e*f (the public e*f added once, by party 0)
    z = t.c + t.b.mul_public(e) + t.a.mul_public(f)
    return z.add_public(ring.mul(e, f))


def beaver_matmul(x: AdditiveShares, y: AdditiveShares, dealer: Dealer,
                  ledger: Ledger | None = None) -> AdditiveShares:
    """Matrix product ``X @ Y`` of shared matrices with a matrix triple (1 online round)."""
    if not isinstance(y, AdditiveShares) or x.ring != y.ring:
        raise ValueError("beaver_matmul needs AdditiveShares over the same ring")
    if len(x.shape) != 2 or len(y.shape) != 2 or x.shape[1] != y.shape[0]:
        raise ValueError(f"matmul shapes do not chain: {x.shape} @ {y.shape}")
    ledger = ledger or dealer.ledger
    parties = _parties_for(x, dealer)
    ring = x.ring
    t = dealer.matrix_triple(ring, x.shape, y.shape)
    e_sh, f_sh = x - t.a, y - t.b
    n = int(np.prod(x.shape)) + int(np.prod(y.shape))
    ledger.exchange(parties, n * ring.bits, "beaver matmul: X-A, Y-B",
                    values={p: Parts([e_sh.shares[i], f_sh.shares[i]], names=("X-A", "Y-B"))
                            for i, p in enumerate(parties)} if ledger.records_values else None)
    e, f = e_sh.reveal(), f_sh.reveal()
    shares = np.stack([
        ring.add(ring.add(t.c.shares[i], ring.matmul(e, t.b.shares[i])),
                 ring.matmul(t.a.shares[i], f))
        for i in range(x.n_parties)
    ])
    shares[0] = ring.add(shares[0], ring.matmul(e, f))
    return AdditiveShares(shares, ring)


def beaver_and(x: XorShares, y: XorShares, dealer: Dealer,
               ledger: Ledger | None = None) -> XorShares:
    """Bitwise AND of XOR shares (1 online round, 2k bits per element per party)."""
    x._compatible(y)
    ledger = ledger or dealer.ledger
    parties = _parties_for(x, dealer)
    t = dealer.bit_triples(x.shape, x.k)
    d_sh, e_sh = x ^ t.a, y ^ t.b
    n = int(np.prod(x.shape, dtype=np.int64))
    ledger.exchange(parties, 2 * n * x.k, "beaver AND: x^a, y^b",
                    values={p: Parts([d_sh.shares[i], e_sh.shares[i]], names=("x^a", "y^b"),
                                     shape=(2, *x.shape))
                            for i, p in enumerate(parties)} if ledger.records_values else None)
    d, e = d_sh.reveal(), e_sh.reveal()
    z = XorShares(t.c.shares ^ (t.b.shares & d) ^ (t.a.shares & e), x.k)
    return z ^ (d & e)


def zero_sharing(ring: Ring, rng: np.random.Generator, shape) -> np.ndarray:
    """3-out-of-3 sharing of zero (alpha_0 + alpha_1 + alpha_2 = 0), from pairwise PRF seeds."""
    r = ring.random(rng, (3, *shape))
    return ring.sub(r, np.roll(r, -1, axis=0))  # alpha_i = r_i - r_{i+1}


def replicated_mul(x: ReplicatedShares, y: ReplicatedShares, rng: np.random.Generator,
                   ledger: Ledger, parties=("P0", "P1", "P2"), what: str = "reshare"
                   ) -> ReplicatedShares:
    """Product of 2-of-3 replicated shares (one round; each party sends one element).

    ``z_i = x_i y_i + x_i y_{i+1} + x_{i+1} y_i + alpha_i`` is computed by Pi from its view;
    Pi then sends ``z_i`` to P_{i-1} so that every party again holds two components.
    """
    x._compatible(y)
    ring = x.ring
    X, Y = x.components, y.components
    X1, Y1 = np.roll(X, -1, axis=0), np.roll(Y, -1, axis=0)
    z = ring.add(ring.add(ring.mul(X, Y), ring.mul(X, Y1)), ring.mul(X1, Y))
    z = ring.add(z, zero_sharing(ring, rng, x.shape))
    bits = int(np.prod(x.shape, dtype=np.int64)) * ring.bits
    with ledger.round():
        for i in range(3):
            ledger.send(parties[i], parties[(i - 1) % 3], bits, what, value=z[i])
    return ReplicatedShares(z, ring)

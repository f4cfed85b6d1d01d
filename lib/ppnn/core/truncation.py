"""Truncation of fixed-point shares after a product.

* :func:`local_truncate` -- SecureML's local truncation for 2 parties (no communication):
  P0 computes ``floor(x0 / 2^d)``, P1 computes ``-floor(-x1 / 2^d)``. If |x| < 2^l and the
  shares are uniform in Z_2^k, the result is off by at most 1 (in the last place) except with
  probability at most ``2^(l-k)`` where it is catastrophically wrong.
* :func:`truncate_with_pair` -- ABY3/Falcon-style truncation with a dealer pair (r, r >> d):
  open ``x - r`` and add ``r >> d``; one round, exact up to +-1 in the last place.
"""

from __future__ import annotations

import numpy as np

from .dealer import Dealer
from .ledger import Ledger
from .sharing import AdditiveShares

__all__ = ["local_truncate", "truncate_with_pair", "local_truncation_failure_probability"]


def local_truncate(x: AdditiveShares, d: int) -> AdditiveShares:
    """SecureML local truncation by ``d`` bits of 2-party additive shares (no messages)."""
    if x.n_parties != 2:
        raise ValueError(f"local truncation is a 2-party protocol, got {x.n_parties} parties")
    ring = x.ring
    if not 0 < d < ring.k:
        raise ValueError(f"truncation by d={d} bits is outside 1..{ring.k - 1}")
    s0 = x.shares[0] >> np.uint64(d)
    s1 = ring.neg(ring.neg(x.shares[1]) >> np.uint64(d))
    return AdditiveShares(np.stack([s0, s1]), ring)


def local_truncation_failure_probability(value_bits: int, k: int) -> float:
    """The bound ``2^(l-k)`` on the probability that local truncation of ``|x| < 2^l`` in
    ``Z_2^k`` fails catastrophically: two uniform shares wrap with probability ``|x| / 2^k``
    (Tabula's appendix; SecureML's Thm 1 states the looser ``2^(l+1-k)``). The one formula
    of the notebooks, the glossary and the exercises."""
    if not 0 < value_bits < k:
        raise ValueError(f"value_bits must be in 1..{k - 1}, got {value_bits}")
    return 2.0 ** (value_bits - k)


def truncate_with_pair(x: AdditiveShares, d: int, dealer: Dealer,
                       ledger: Ledger | None = None) -> AdditiveShares:
    """Truncate by ``d`` bits using a preprocessed pair (r, r >> d): one online round."""
    ledger = ledger or dealer.ledger
    ring = x.ring
    pair = dealer.truncation_pair(ring, x.shape, d)
    masked = (x - pair.r).open(ledger, dealer.parties, what="truncation: x - r")
    shifted = ring.reduce(ring.to_signed(masked) >> d)
    return pair.r_trunc.add_public(shifted)

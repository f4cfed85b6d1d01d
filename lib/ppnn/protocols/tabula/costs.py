"""Closed-form costs of Tabula and of the baselines it is compared with.

Every formula exists twice: as a sympy expression (shown in the notebook) and as a plain
function (used by the tests, which check the ledger against it). Sizes are bits unless a
name says otherwise. ``p = 2^b`` table entries, ``k`` = bits of the share ring (64).

Baselines quoted by Tabula §4.1 are *formula-derived* here (we do not run them):

* CrypTFlow2 with preprocessed OT: at least 6 calls to 1-out-of-128 OT, each sending all 128
  bits, ``6 * 128 = 768`` bits per ReLU (Tabula's own assumption);
* Cheetah: ``11 * L`` bits per ReLU for L-bit inputs (Tabula §4.1);
* FSS (Boyle et al. 2019): both parties open an L-bit masked input, ``2 L`` bits per ReLU.
"""

from __future__ import annotations

import sympy as sp

__all__ = [
    "symbols", "online_expr", "preproc_expr", "dealer_expr", "storage_expr",
    "preproc_bits", "dealer_bits", "storage_bits_per_party", "tabula_online_bits",
    "cryptflow2_relu_bits", "cheetah_relu_bits", "fss_relu_bits", "paper_preproc_bits",
    "catastrophic_probability", "all_calls_succeed",
]

p, k, b, n = sp.symbols("p k b n", positive=True, integer=True)


def symbols():
    """The sympy symbols (p, k, b, n)."""
    return p, k, b, n


def online_expr():
    """Online bits for n activations with b-bit tables: each party sends b bits per call."""
    return 2 * b * n


def preproc_expr(variant: str = "published"):
    """Client<->server preprocessing bits per table (both directions)."""
    share = 2 * p  # XOR shares of P and Q
    if variant == "published":
        return share + 4 * p**2 + 4 * p * k  # p^2 Beaver ANDs (2 bits/party) + p Beaver mults
    if variant == "ours":
        return share + 4 * p + 2 * (p + 1) * k  # rank-one triple openings
    if variant == "paper_claim":
        return 2 * p**2  # §3.3: "2 (256)^2 = 131072 bits = 16 KB per table"
    raise ValueError(f"variant must be 'published', 'ours' or 'paper_claim', got {variant!r}")


def dealer_expr(variant: str = "published"):
    """Dealer (pre-preprocessing) bits per table delivered to the two parties together."""
    if variant == "published":
        return 2 * (3 * p**2 + 3 * p * k)
    if variant == "ours":
        return 2 * ((2 * p + p**2) + (1 + 2 * p) * k)
    raise ValueError(f"variant must be 'published' or 'ours', got {variant!r}")


def storage_expr():
    """Bits one party stores per table: p ring elements plus its b-bit share of s."""
    return p * k + b


def _ev(expr, **vals) -> int:
    return int(expr.subs({p: vals.get("p", 0), k: vals.get("k", 64), b: vals.get("b", 0),
                          n: vals.get("n", 0)}))


def preproc_bits(bits: int, variant: str = "published", ring_bits: int = 64) -> int:
    return _ev(preproc_expr(variant), p=1 << bits, k=ring_bits)


def paper_preproc_bits(bits: int) -> int:
    return _ev(preproc_expr("paper_claim"), p=1 << bits)


def dealer_bits(bits: int, variant: str = "published", ring_bits: int = 64) -> int:
    return _ev(dealer_expr(variant), p=1 << bits, k=ring_bits)


def storage_bits_per_party(bits: int, ring_bits: int = 64) -> int:
    return _ev(storage_expr(), p=1 << bits, k=ring_bits, b=bits)


def tabula_online_bits(n_calls: int, bits: int) -> int:
    return _ev(online_expr(), b=bits, n=n_calls)


def cryptflow2_relu_bits() -> int:
    """Tabula §4.1's CrypTFlow2 estimate: 6 x (1-of-128 OT with preprocessing) = 768 bits."""
    return 6 * 128


def cheetah_relu_bits(L: int) -> int:
    """Tabula §4.1's Cheetah estimate: 11 L bits per ReLU."""
    return 11 * int(L)


def fss_relu_bits(L: int) -> int:
    """FSS ReLU (Boyle et al.): each party opens its L-bit masked input share: 2 L bits."""
    return 2 * int(L)


def catastrophic_probability(value_bits: int, ring_bits: int) -> float:
    """Appendix: P(catastrophic truncation error) <= 2^(value_bits - ring_bits) per call
    (:func:`ppnn.core.local_truncation_failure_probability`)."""
    from ppnn.core import local_truncation_failure_probability

    return local_truncation_failure_probability(value_bits, ring_bits)


def all_calls_succeed(value_bits: int, ring_bits: int, relus: float, calls: float) -> float:
    """Probability that ``calls`` inferences with ``relus`` truncations each all succeed."""
    import math

    q = catastrophic_probability(value_bits, ring_bits)
    return math.exp(relus * calls * math.log1p(-q))

"""What a BFV parameter set buys: the 128-bit bound on the modulus, and the per-session
statistical distance of noise flooding.

**The modulus bound.** For ring dimension ``N`` (ternary secret, error sigma 3.2), the
Homomorphic Encryption Standard's 128-bit table, which SEAL enforces
(``CoeffModulus::MaxBitCount(N, sec_level_type::tc128)``), allows at most
:data:`MAX_Q_BITS_128` bits of *total* coefficient modulus -- the ciphertext primes and SEAL's
special (key-switching) prime together. GAZELLE and GALA ran ``N = 2048`` with a 60-bit ``q``
(gala.txt §V: "a 60-bit pseudo-Mersenne prime ... for a 128-bit security level"): 6 bits above
the 54 the table allows at ``N = 2048``. :func:`check_128` raises on such a set.

**Flooding per session.** Flooding adds to every returned coefficient a uniform term on
``[-B, B)`` with ``B = 2^(lambda_s + margin) * max(model noise)`` (see
:meth:`ppnn.he.bfv.base.PackedBackend.flood`): the statistical distance between the flooded
noise for two weight matrices is at most ``2^-lambda_s`` per *coefficient*. The key-holding
client sees ``N`` coefficients per ciphertext, ``C`` ciphertexts per query and ``Q`` queries
under one key pair, so the session's distance is at most ``N * C * Q * 2^-lambda_s`` (a union
bound). :func:`flood_bits_for_session` picks ``lambda_s`` for a stated session security
``kappa``: ``lambda_s = kappa + ceil(log2(N * C * Q))``.
"""

from __future__ import annotations

import math

__all__ = ["MAX_Q_BITS_128", "max_q_bits_128", "check_128", "flood_bits_for_session",
           "session_log2_distance", "SESSION_KAPPA", "SESSION_QUERIES"]

#: the HE Standard's (and SEAL's) largest total coefficient modulus, in bits, for 128-bit
#: security with a ternary secret (SEAL's ``SEAL_HE_STD_PARMS_128_TC``)
MAX_Q_BITS_128 = {1024: 27, 2048: 54, 4096: 109, 8192: 218, 16384: 438, 32768: 881}

#: statistical security per session of the HE+GC families' flooding: 2^-40, the statistical
#: parameter of the garbled circuits and OT these families already run with; 80 bits (SwaNN's
#: masking) would need N = 16384 (see :func:`flood_bits_for_session`)
SESSION_KAPPA = 40
#: queries one key pair answers before the client makes a new one (2^20, about a million)
SESSION_QUERIES = 1 << 20


def max_q_bits_128(poly_degree: int) -> int:
    """The 128-bit bound on ``log2 q`` (all primes, special prime included) for ``N``."""
    if poly_degree not in MAX_Q_BITS_128:
        raise ValueError(f"poly_degree must be one of {sorted(MAX_Q_BITS_128)}, got "
                         f"{poly_degree!r}")
    return MAX_Q_BITS_128[poly_degree]


def check_128(poly_degree: int, total_q_bits: int, what: str = "the parameters") -> None:
    """Raise ``ValueError`` unless ``total_q_bits <= max_q_bits_128(poly_degree)``."""
    bound = max_q_bits_128(poly_degree)
    if not 0 < int(total_q_bits) <= bound:
        raise ValueError(f"{what}: a {total_q_bits}-bit q at N = {poly_degree} is not 128-bit "
                         f"secure (the HE Standard allows at most {bound} bits at this N)")


def _positive(name: str, v) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"{name} must be an int >= 1, got {v!r}")
    return int(v)


def flood_bits_for_session(kappa: int, poly_degree: int, ciphertexts: int, queries: int) -> int:
    """Flooding bits per coefficient (``lambda_s``) for a session distance ``<= 2^-kappa``:
    ``kappa + ceil(log2(N * ciphertexts * queries))`` (``ciphertexts``: returned per query)."""
    kappa = _positive("kappa", kappa)
    n = (_positive("poly_degree", poly_degree) * _positive("ciphertexts", ciphertexts)
         * _positive("queries", queries))
    return kappa + math.ceil(math.log2(n))


def session_log2_distance(flood_bits: int, poly_degree: int, ciphertexts: int,
                          queries: int) -> float:
    """``log2`` of the union bound ``N * C * Q * 2^-flood_bits`` on the key holder's
    statistical distance over a session (``inf``-free: flooding off gives ``0.0``, no bound)."""
    if flood_bits <= 0:
        return 0.0
    return min(0.0, math.log2(_positive("poly_degree", poly_degree)
                              * _positive("ciphertexts", ciphertexts)
                              * _positive("queries", queries)) - flood_bits)

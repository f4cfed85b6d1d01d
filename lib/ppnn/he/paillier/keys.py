"""Paillier key pairs (``phe``'s generator) and the two-out-of-two split of the private key
for the two-server setting (SwaNN §4.2)."""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass

from gmpy2 import invert
from phe import paillier as _phe

#: the paper's modulus size: about 112-bit security (NIST SP 800-57 Part 1 rates 2048-bit
#: RSA/IFC at 112 bits; 128-bit security takes 3072 bits)
KEY_BITS = 2048
PublicKey = _phe.PaillierPublicKey
PrivateKey = _phe.PaillierPrivateKey


def keygen(n_bits: int = KEY_BITS) -> tuple[PublicKey, PrivateKey]:
    """Generate a Paillier key pair with an ``n_bits``-bit modulus (phe's secure generator).

    The default, 2048 bits, gives about 112-bit security, 3072 about 128 (NIST SP 800-57)."""
    if not isinstance(n_bits, int) or isinstance(n_bits, bool):
        raise TypeError(f"n_bits must be an int, got {type(n_bits).__name__}")
    if n_bits < 128 or n_bits % 2:
        raise ValueError(f"n_bits must be an even number >= 128, got {n_bits}")
    return _phe.generate_paillier_keypair(n_length=n_bits)


# ----------------------------------------------------------------------------------------
# keys for the two-server setting
# ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class KeyShare:
    """One server's share ``d_i`` of the decryption exponent (``d_1 + d_2 = d``)."""

    public_key: PublicKey
    index: int
    d: int
    stat_bits: int = 128

    @property
    def wire_bits(self) -> int:
        """Bits of the share as sent: a signed integer of fixed width, ``|d_i| < N^2
        2^stat_bits < 2^(2 log2 N + stat_bits)`` plus a sign bit, with ``log2 N`` the key's
        size -- the same for every key of this size (the length of the particular ``d_i``
        would leak about it, and would make a ledger vary by run; so would the length of
        ``N^2``, which is ``2 log2 N`` or one bit less depending on the key)."""
        return 2 * int(self.public_key.n).bit_length() + self.stat_bits + 1

    def __repr__(self) -> str:  # never print the share itself
        return f"KeyShare(index={self.index}, N={int(self.public_key.n).bit_length()} bits)"


def split_private_key(private_key: PrivateKey, stat_bits: int = 128) -> tuple[KeyShare, KeyShare]:
    """Split the secret key into two additive shares of ``d = λ·(λ⁻¹ mod N)`` (§4.2).

    ``c^d = (1 + N)^{m·d} · r^{N·d} = 1 + mN mod N²`` because ``d ≡ 1 (mod N)`` and
    ``λ | d``. ``d1`` is uniform in ``[0, N²·2^stat_bits)``, so it hides ``d`` (and λ)
    statistically; ``d2 = d − d1`` is negative (its partial decryption uses ``c⁻¹``).
    """
    if not isinstance(private_key, PrivateKey):
        raise TypeError("private_key must be a phe PaillierPrivateKey")
    if not isinstance(stat_bits, int) or stat_bits < 40:
        raise ValueError(f"stat_bits must be an int >= 40, got {stat_bits}")
    pk = private_key.public_key
    n = int(pk.n)
    p, q = int(private_key.p), int(private_key.q)
    lam = (p - 1) * (q - 1) // math.gcd(p - 1, q - 1)
    d = lam * int(invert(lam, n))
    d1 = secrets.randbelow((n * n) << stat_bits)
    return KeyShare(pk, 1, d1, stat_bits), KeyShare(pk, 2, d - d1, stat_bits)

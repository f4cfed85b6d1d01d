"""Paillier encryption (``phe`` keys, ``gmpy2`` arithmetic) with SwaNN's optimisations (§5.1).

Paillier with ``g = N + 1``, ``[m] = (1 + mN) · r^N mod N²``, is additively homomorphic
(``[a]·[b] = [a + b]``, ``[a]^k = [k·a]``): all SwaNN needs for its linear layers and for the
interactive square of Protocol 1.

* :func:`keygen` (a :data:`KEY_BITS`-bit modulus by default, as in the paper: about 112-bit
  security), :func:`encode_int` / :func:`decode_int`, :func:`encode_fixed`;
* :class:`Paillier` -- operations on arrays of ciphertexts (:class:`CipherArray`), each booked
  on a :class:`~ppnn.core.Ledger` (``Enc``, ``Dec``, ``PartialDec``, ``paillier_exp``,
  ``paillier_exp_bits``, ``paillier_mul``, ``paillier_inv``) and optionally timed per party;
* packing (:class:`PackingLayout`, :meth:`Paillier.pack`; a value that does not fit its slot
  raises) and multi-exponentiation (:func:`multiexp_plan`, :class:`MultiExpPlan`,
  :meth:`Paillier.dot`, :meth:`Paillier.gather_dot`);
* two-out-of-two threshold decryption for the two-server setting (§4.2):
  :func:`split_private_key`, :class:`KeyShare`, :class:`PartialDecryption`;
* :class:`SimulatedPaillier` -- the same interface and exactly the same operation counts on
  plaintexts (``[m]`` is ``m mod N``), which makes counting full networks fast; the tests
  check that both backends agree.

See also
--------
docs/protocols.md : Paillier and SwaNN's switching (packing, multi-exponentiation, the split
    key). docs/security.md : the key size.
"""

from .ciphertexts import CipherArray, PackingLayout, PartialDecryption
from .encoding import decode_int, encode_fixed, encode_int
from .keys import KEY_BITS, KeyShare, PrivateKey, PublicKey, keygen, split_private_key
from .multiexp import MultiExpPlan, multiexp_plan
from .real import DJNObfuscator, Paillier
from .simulated import SimulatedPaillier

__all__ = [
    "KEY_BITS", "PublicKey", "PrivateKey", "keygen", "encode_int", "decode_int", "encode_fixed",
    "CipherArray", "Paillier", "SimulatedPaillier", "PackingLayout", "KeyShare",
    "PartialDecryption", "split_private_key", "multiexp_plan", "MultiExpPlan", "DJNObfuscator",
]

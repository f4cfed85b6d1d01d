"""Paillier encryption (``phe`` keys, ``gmpy2`` arithmetic) with SwaNN's optimisations (§5.1).

Paillier [Paillier 1999] with ``g = N + 1``: ``[m] = (1 + mN) · r^N mod N²``. It is additively
homomorphic, ``[a]·[b] = [a + b]`` and ``[a]^k = [k·a]``, which is all SwaNN needs for its linear
layers (Conv, FC, scaled mean pool) and for the interactive square of Protocol 1.

This module offers

* :func:`keygen` (2048-bit modulus by default, as in the paper: about 112-bit security, the
  NIST SP 800-57 rating of 2048-bit RSA/IFC -- not 128, which takes 3072 bits), signed encoding
  (:func:`encode_int` / :func:`decode_int`) and fixed-point encoding (:func:`encode_fixed`);
* :class:`Paillier` -- the operations on arrays of ciphertexts (:class:`CipherArray`), each
  booked on a :class:`~ppnn.core.Ledger` (``Enc``, ``Dec``, ``PartialDec``, ``paillier_exp``,
  ``paillier_exp_bits``, ``paillier_mul``, ``paillier_inv``) and, optionally, timed per party;
* the two optimisations of §5.1:

  - **packing** [Bianchi et al. 2010] (:class:`PackingLayout`, :meth:`Paillier.pack`):
    ``[x̂] = ∏_m [x_m]^{(2^s)^m}`` with slots of ``s = t + κ`` bits and
    ``ρ = ⌊log₂N / s⌋`` values per ciphertext; a value that does not fit its slot raises
  (the declared width, and the actual values: the simulator's plaintexts, or the lab's copy
  of a real ciphertext's, :attr:`CipherArray.shadow`);
  - **multi-exponentiation** (:func:`multiexp_plan`, :meth:`Paillier.dot`,
    :meth:`Paillier.gather_dot`) for ``∏ a_i^{b_i} mod N²``: the Lim–Lee approach of
    precomputing, for each group of ``h`` bases, the products of all ``2^h`` subsets, and
    sharing one squaring chain among all bases. For matrix products the tables of one input
    vector (or one convolution patch) are shared by every weight row;

* **two-out-of-two threshold decryption** for the two-server setting (§4.2):
  :func:`split_private_key` splits ``d = λ·(λ⁻¹ mod N)`` (``d ≡ 0 mod λ``, ``d ≡ 1 mod N``)
  into integers ``d = d1 + d2`` with ``d1`` uniform in ``[0, N²·2^σ)``; a server's partial
  decryption is ``c^{d_i} mod N²``; only the product of both partials equals ``1 + mN``.

:class:`SimulatedPaillier` has the same interface and books exactly the same operation counts
but keeps plaintexts (``[m]`` is represented by ``m mod N``); it makes counting full networks
fast. Tests check that both backends agree.

Per-ciphertext big-integer work is a Python loop over gmpy2 numbers (it cannot be vectorized
in numpy); everything that can be computed on plain integers (exponent bit columns, counts) is.
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

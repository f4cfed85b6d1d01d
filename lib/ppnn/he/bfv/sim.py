"""Numpy slot simulator of packed BFV (and a values-free counting mode).

A "ciphertext" is its slot vector in the clear (int64 residues mod p) plus the noise of the
paper's model; every operation is the exact slotwise arithmetic BFV performs, so outputs equal
the real backend's bit for bit while the counts and the modelled noise are identical by
construction (both inherit :class:`~ppnn.he.bfv.base.PackedBackend`). With ``values=False``
nothing but shapes and noise is tracked: that is how whole networks (ResNet-152: millions of
ScMults) are *counted* by running the very same kernels.
"""

from __future__ import annotations

import numpy as np

from ppnn.core import Ledger, is_prime

from .base import Ct, NoiseModel, PackedBackend, _prod

__all__ = ["BFVSim", "batching_prime", "default_noise_model"]


def batching_prime(bits: int, poly_degree: int) -> int:
    """Largest prime ``p`` of exactly ``bits`` bits with ``p = 1 (mod 2N)`` (SEAL's batching
    condition; SEAL's ``PlainModulus.Batching`` also searches downwards from ``2^bits``)."""
    if not 2 <= bits <= 30:
        raise ValueError(f"plain modulus bits must be in [2, 30], got {bits}")
    m = 2 * poly_degree
    top = ((1 << bits) - 2) // m * m + 1
    for p in range(top, 1 << (bits - 1), -m):
        if is_prime(p):
            return p
    raise ValueError(f"no {bits}-bit prime = 1 mod {m}")


def default_noise_model(poly_degree: int, p: int, q_bits: int) -> NoiseModel:
    """Textbook noise growth used when no SEAL calibration is at hand.

    ScMult multiplies the noise by about ``sqrt(N) * p / 2`` (a batch-encoded plaintext has
    coefficients spread over [-p/2, p/2]); key switching in SEAL (with a special prime) adds a
    small multiple of the fresh noise. Calibrate on the real backend with
    :func:`ppnn.he.bfv.seal.calibrate_noise_model` for numbers that match SEAL.
    A fresh ciphertext's budget is estimated as ``log2(q / p) - log2(2 * N * 6 sigma)``
    (public-key encryption noise bounded by ``N * 6 sigma`` with sigma = 3.2).
    """
    fresh = q_bits - np.log2(p) - np.log2(2 * poly_degree * 6 * 3.2)
    return NoiseModel(eta_mult=float(np.sqrt(poly_degree) * p / 2), eta_rot=1.0,
                      fresh_bits=float(fresh), source="textbook estimate")


class BFVSim(PackedBackend):
    """Slot-level simulator of BFV with the same interface as :class:`SealBFV`.

    Parameters
    ----------
    n : slots per ciphertext (default 2048, GALA's setting).
    p : plaintext modulus (default: the 20-bit batching prime for ``poly_degree``).
    poly_degree, q_bits : set only the wire size of a ciphertext (GAZELLE/GALA: N = 2048,
        a 60-bit q: 30 KB per ciphertext).
    values : ``False`` tracks shapes and noise only (counting mode).
    flood_bits : noise flooding before a ciphertext leaves the server (0: off); the slot values
        are unchanged, the model noise and the counts are those of the real backend.
    special_bits : bits of the key-switching prime (SEAL's N = 8192: 44): the 128-bit bound
        (:attr:`total_q_bits`) and the size of a Galois key read it.
    key_primes : ciphertext primes of ``q`` (SEAL's N = 8192: 4): a Galois key holds one
        key-switching pair per prime when there is a special prime.
    """

    def __init__(self, n: int = 2048, p: int | None = None, poly_degree: int | None = None,
                 q_bits: int = 60, noise_model: NoiseModel | None = None, values: bool = True,
                 ledger: Ledger | None = None, chunk_bytes: int = 1 << 26,
                 flood_bits: int = 0, special_bits: int = 0, key_primes: int = 1):
        N = int(poly_degree or n)
        p = int(p) if p is not None else batching_prime(20, N)
        super().__init__(n, p, N, q_bits, noise_model or default_noise_model(N, p, q_bits),
                         ledger, special_bits=special_bits)
        if isinstance(key_primes, bool) or not isinstance(key_primes, int) or key_primes < 1:
            raise ValueError(f"key_primes must be an int >= 1, got {key_primes!r}")
        self.key_primes = key_primes
        self.tracks_values = bool(values)
        self.name = "sim" if values else "count"
        self._chunk = int(chunk_bytes)
        self.set_flooding(flood_bits)

    # -- data operations (int64 residues; batch axes first, slot axis last) ------------------
    def _encrypt(self, v, shape):
        return v.copy() if self.tracks_values else None

    def _decrypt(self, ct: Ct) -> np.ndarray:
        if not self.tracks_values:
            raise ValueError("a counting backend (values=False) cannot decrypt")
        return np.broadcast_to(ct.data, ct.shape + (self.n,)).copy()

    def _encode(self, v, shape):
        return None

    def _bcast(self, data, shape):
        return np.broadcast_to(data, tuple(shape) + (self.n,))

    def _add(self, a, b, shape):
        if not self.tracks_values:
            return None, False
        return (self._bcast(a.data, a.shape) + self._bcast(b.data, b.shape)) % self.p, False

    def _plain_add(self, ct, pt, shape, sign):
        if not self.tracks_values:
            return None, False
        return (self._bcast(ct.data, ct.shape) + sign * pt.values) % self.p, False

    def _mul_plain(self, ct, pt, shape):
        if not self.tracks_values:
            return None
        return (self._bcast(ct.data, ct.shape) * pt.values) % self.p

    def _mul_plain_sum(self, ct, pt, shape, axes, out_shape):
        if not self.tracks_values:
            return None
        nd = len(shape)
        keep = [i for i in range(nd) if i not in axes]
        a = np.broadcast_to(ct.data.reshape((1,) * (nd - ct.ndim) + ct.data.shape),
                            shape + (self.n,))
        b = np.broadcast_to(pt.values.reshape((1,) * (nd - len(pt.shape)) + pt.values.shape),
                            shape + (self.n,))
        perm = list(axes) + keep + [nd]
        a = a.transpose(perm).reshape((-1,) + out_shape + (self.n,))
        b = b.transpose(perm).reshape((-1,) + out_shape + (self.n,))
        acc = np.zeros(out_shape + (self.n,), dtype=np.int64)
        per = max(1, self._chunk // max(1, 8 * _prod(out_shape) * self.n))
        for s in range(0, a.shape[0], per):  # chunks of ciphertexts (memory), not elements
            acc = (acc + ((a[s:s + per] * b[s:s + per]) % self.p).sum(axis=0)) % self.p
        return acc

    def _sum(self, ct, axes, out_shape):
        if not self.tracks_values:
            return None
        return ct.data.sum(axis=axes) % self.p

    def _rotate(self, ct, steps, shape, hoisted=False):
        if not self.tracks_values:
            return None
        if hoisted:
            src = ct.data[..., None, :]
        else:
            src = ct.data.reshape((1,) * (len(shape) - ct.ndim) + ct.data.shape)
        src = np.broadcast_to(src, tuple(shape) + (self.n,))
        if np.ndim(steps) == 0:
            return np.roll(src, -int(steps), axis=-1)
        idx = (np.arange(self.n) + steps[..., None]) % self.n
        return np.take_along_axis(src, idx, axis=-1)

    def _flood(self, ct, log2_bound):
        # the flooding noise changes no slot value: only the model noise moves (see base)
        return ct.data.copy() if self.tracks_values else None

    def _index(self, ct: Ct, idx) -> Ct:
        idx = idx if isinstance(idx, tuple) else (idx,)
        if any(i is Ellipsis or i is None for i in idx):
            raise ValueError("Ct indexing supports ints, slices and index arrays (no ... / None)")
        noise = ct.noise[idx]
        data = ct.data[idx] if self.tracks_values else None
        return Ct(self, noise.shape, data, noise, ct.ntt)

    def _reshape(self, ct: Ct, shape) -> Ct:
        noise = ct.noise.reshape(shape)
        data = ct.data.reshape(noise.shape + (self.n,)) if self.tracks_values else None
        return Ct(self, noise.shape, data, noise, ct.ntt)

    def _stack(self, cts, axis):
        if not self.tracks_values:
            return None
        return np.stack([c.data for c in cts], axis=axis)

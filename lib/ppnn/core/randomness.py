"""Two kinds of randomness: simulation seeds and masks that protect real ciphertexts.

* **Simulation seed** -- the ``rng`` (:class:`numpy.random.Generator`) every protocol takes.
  It draws what only the simulator sees or what no real cryptography protects: the shares
  of the simulated 2PC / 3PC engines, the ideal dealer's material, Delphi's preprocessing
  masks (its HE is counted, not run), the masks of the *simulated* HE backends, test inputs.
  Seeding it makes counted values, transcripts and figures reproducible -- a feature.
* **Secret mask** -- a value that hides a plaintext inside a *real* ciphertext or a *real*
  garbled circuit from the party that can decrypt or decode it: SwaNN's ``r`` (Protocols 1
  and 2) and ``r'`` (Protocol 3) on real Paillier, GALA / GAZELLE's share mask ``r`` in
  ``[y - r]_C`` on real SEAL, the output mask of every garbled activation. A seeded numpy
  generator is not a cryptographic generator (PCG64's state is recoverable from its output,
  and a seed is guessable), so these come from :class:`SecureRandom`: the operating system's
  CSPRNG (``os.urandom``), uniform by rejection sampling.

Keys are drawn by the crypto libraries themselves (``phe``, SEAL, tfhe-rs) and garbled-circuit
labels from ``os.urandom`` (:mod:`ppnn.he.gc`); this module does not touch them.

:func:`mask_source` is the one switch protocol code uses: ``mask_source(rng, real)`` returns
``rng`` when nothing real is protected (simulated backend: reproducible) and a
:class:`SecureRandom` otherwise. Both offer ``integers(low, high, size, dtype, endpoint)``
with numpy's semantics for integer ranges up to ``2^64``; the ring draws, sharings and dealers
of :mod:`ppnn.core` (and SwaNN's 2PC) take either (:func:`is_source`), so a process can deal
or share from the CSPRNG (wire mode on a real backend, :mod:`ppnn.wire`).

**Test-only seeding.** ``with seeded_for_tests(seed):`` makes every :class:`SecureRandom`
created inside draw a deterministic stream (SHAKE-256 of the seed and a counter), so a test
can replay a real-backend run. Nothing else seeds the secure source; never use it outside
tests.
"""

from __future__ import annotations

import contextlib
import hashlib
import os

import numpy as np

__all__ = ["SecureRandom", "mask_source", "seeded_for_tests", "is_source", "check_source"]

_TEST_SEED: list[int | None] = [None]  # set only by seeded_for_tests()


@contextlib.contextmanager
def seeded_for_tests(seed: int):
    """TEST ONLY: :class:`SecureRandom` objects created inside draw a reproducible stream."""
    if not isinstance(seed, int | np.integer):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    old = _TEST_SEED[0]
    _TEST_SEED[0] = int(seed)
    try:
        yield
    finally:
        _TEST_SEED[0] = old


class SecureRandom:
    """Uniform integers from the OS CSPRNG, with :meth:`numpy.random.Generator.integers`'
    interface (integer dtypes, ranges of at most ``2^64`` values).

    Rejection sampling: words of the smallest width holding ``high - low - 1`` are masked to
    its bit length and kept when below the range, so every value is exactly uniform."""

    def __init__(self):
        seed = _TEST_SEED[0]
        self.seeded = seed is not None
        self._seed = b"ppnn-test-mask-seed:" + str(seed).encode() if self.seeded else b""
        self._counter = 0

    def bytes(self, n: int) -> bytes:
        if not self.seeded:
            return os.urandom(n)
        self._counter += 1
        return hashlib.shake_256(self._seed + self._counter.to_bytes(8, "little")).digest(n)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint: bool = False):
        if high is None:
            low, high = 0, low
        low, high = int(low), int(high) + (1 if endpoint else 0)
        span = high - low
        if not 1 <= span <= 1 << 64:
            raise ValueError(f"SecureRandom.integers needs 1 <= high - low <= 2^64, got "
                             f"[{low}, {high})")
        dtype = np.dtype(dtype)
        if dtype.kind not in "iu":
            raise TypeError(f"dtype must be an integer type, got {dtype}")
        info = np.iinfo(dtype)
        if low < info.min or high - 1 > info.max:
            raise ValueError(f"[{low}, {high}) does not fit {dtype}")
        shape = () if size is None else (
            (int(size),) if isinstance(size, int | np.integer) else tuple(int(s) for s in size))
        n = int(np.prod(shape, dtype=np.int64))
        bits = (span - 1).bit_length()
        word = np.dtype(f"<u{max(1, 1 << max(0, (bits - 1).bit_length() - 3))}")
        out = np.empty(n, dtype=np.uint64)
        filled = 0
        while filled < n:
            want = n - filled
            draw = want + want // 2 + 16  # acceptance >= 1/2
            w = np.frombuffer(self.bytes(draw * word.itemsize), dtype=word).astype(np.uint64)
            if bits < 64:
                w &= np.uint64((1 << bits) - 1)
                if span < 1 << bits:
                    w = w[w < np.uint64(span)]
            take = w[:want]
            out[filled:filled + take.size] = take
            filled += take.size
        if low:
            res = (out.astype(object) + low).astype(dtype) if dtype.kind == "i" and low < 0 \
                else (out + np.uint64(low)).astype(dtype)
        else:
            res = out.astype(dtype)
        return res.reshape(shape) if shape else res[0]


def is_source(rng) -> bool:
    """Whether ``rng`` can draw protocol randomness: a :class:`numpy.random.Generator` or a
    :class:`SecureRandom` (code that takes either draws with ``integers`` only)."""
    return isinstance(rng, np.random.Generator | SecureRandom)


def check_source(rng) -> None:
    """A ``TypeError`` unless :func:`is_source`."""
    if not is_source(rng):
        raise TypeError("rng must be a numpy.random.Generator (seed it explicitly) or a "
                        f"ppnn.core.randomness.SecureRandom, got {type(rng).__name__}")


def mask_source(rng: np.random.Generator, real: bool):
    """Where a mask comes from: ``rng`` (simulation seed) when ``real`` is false, a fresh
    :class:`SecureRandom` when the mask protects a real ciphertext or garbled circuit."""
    return SecureRandom() if real else rng

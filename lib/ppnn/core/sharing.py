"""Secret sharing schemes, with the party axis first.

* :class:`AdditiveShares` -- n-of-n additive shares over Z_2^k (2-of-2 for Delphi/Tabula/SwaNN).
  ``shares[i]`` is party i's share; ``sum(shares) = x mod 2^k``.
* :class:`ReplicatedShares` -- 2-of-3 replicated shares over Z_2^k (Falcon/ABY3). The secret is
  split into three additive components ``x = x0 + x1 + x2``; party ``Pi`` holds
  ``(x_i, x_{i+1})``. ``components`` has shape ``(3, *shape)``.
* :class:`XorShares` -- n-of-n Boolean (XOR) shares of k-bit strings (k = 1 for single bits).

``open(...)`` reconstructs *through the ledger* (every party's missing piece is booked as a
message); ``reveal()`` reconstructs in the simulator without booking (for tests and oracles).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .ledger import Ledger
from .randomness import check_source
from .ring import Ring

__all__ = [
    "AdditiveShares",
    "ReplicatedShares",
    "XorShares",
    "share_additive",
    "share_replicated",
    "share_xor",
]


def _check_rng(rng) -> None:
    check_source(rng)


def _check_parties(parties, n: int, scheme: str) -> tuple[str, ...]:
    parties = tuple(parties)
    if len(parties) != n:
        raise ValueError(f"{scheme} shares are held by {n} parties, got {len(parties)}: {parties}")
    return parties


@dataclass
class AdditiveShares:
    """Additive shares over ``ring``: ``shares`` has shape ``(n_parties, *shape)``."""

    shares: np.ndarray
    ring: Ring

    def __post_init__(self) -> None:
        self.shares = np.asarray(self.shares, dtype=np.uint64)
        if self.shares.ndim < 1 or self.shares.shape[0] < 2:
            raise ValueError("additive shares need a leading party axis of length >= 2")

    @property
    def n_parties(self) -> int:
        return self.shares.shape[0]

    @property
    def shape(self) -> tuple[int, ...]:
        return self.shares.shape[1:]

    def _compatible(self, other: AdditiveShares) -> None:
        if not isinstance(other, AdditiveShares):
            raise TypeError(f"expected AdditiveShares, got {type(other).__name__}")
        if other.ring != self.ring:
            raise ValueError(f"ring mismatch: {self.ring!r} vs {other.ring!r}")
        if other.n_parties != self.n_parties:
            raise ValueError(f"party count mismatch: {self.n_parties} vs {other.n_parties}")
        if other.shape != self.shape:
            raise ValueError(f"share shape mismatch: {self.shape} vs {other.shape}")

    def reveal(self) -> np.ndarray:
        """Reconstruct in the simulator (no messages booked)."""
        return self.ring.sum(self.shares, axis=0)

    def open(self, ledger: Ledger, parties, what: str = "open") -> np.ndarray:
        """Every party sends its share to every other party (one round); returns x."""
        parties = _check_parties(parties, self.n_parties, "additive")
        ledger.exchange(parties, int(np.prod(self.shape, dtype=np.int64)) * self.ring.bits, what,
                        values=dict(zip(parties, self.shares)))
        return self.reveal()

    def open_to(self, ledger: Ledger, parties, receiver: str, what: str = "open") -> np.ndarray:
        """All parties send their shares to ``receiver`` only (one round)."""
        parties = _check_parties(parties, self.n_parties, "additive")
        if receiver not in parties:
            raise ValueError(f"receiver {receiver!r} is not one of {parties}")
        bits = int(np.prod(self.shape, dtype=np.int64)) * self.ring.bits
        with ledger.round():
            for i, p in enumerate(parties):
                if p != receiver:
                    ledger.send(p, receiver, bits, what, value=self.shares[i])
        return self.reveal()

    # -- local linear operations --------------------------------------------------------
    def __add__(self, other):
        if isinstance(other, AdditiveShares):
            self._compatible(other)
            return AdditiveShares(self.ring.add(self.shares, other.shares), self.ring)
        return self.add_public(other)

    def __sub__(self, other):
        if isinstance(other, AdditiveShares):
            self._compatible(other)
            return AdditiveShares(self.ring.sub(self.shares, other.shares), self.ring)
        return self.add_public(self.ring.neg(self.ring.reduce(other)))

    def __neg__(self):
        return AdditiveShares(self.ring.neg(self.shares), self.ring)

    def add_public(self, c) -> AdditiveShares:
        """Add a public constant (party 0 adds it)."""
        c = self.ring.reduce(np.broadcast_to(np.asarray(c), self.shape))
        out = self.shares.copy()
        out[0] = self.ring.add(out[0], c)
        return AdditiveShares(out, self.ring)

    def mul_public(self, c) -> AdditiveShares:
        """Multiply by a public integer constant (elementwise, broadcast)."""
        c = self.ring.reduce(np.asarray(c))
        return AdditiveShares(self.ring.mul(self.shares, c), self.ring)

    def matmul_public(self, w) -> AdditiveShares:
        """Right-multiply each share by a public integer matrix: x @ W."""
        w = self.ring.reduce(w)
        return AdditiveShares(np.stack([self.ring.matmul(s, w) for s in self.shares]), self.ring)

    def reshape(self, *shape) -> AdditiveShares:
        return AdditiveShares(self.shares.reshape(self.n_parties, *shape), self.ring)

    def __getitem__(self, idx) -> AdditiveShares:
        idx = idx if isinstance(idx, tuple) else (idx,)
        return AdditiveShares(self.shares[(slice(None), *idx)], self.ring)


def share_additive(x, ring: Ring, rng: np.random.Generator, n_parties: int = 2) -> AdditiveShares:
    """Split ring elements ``x`` into ``n_parties`` uniformly random additive shares."""
    _check_rng(rng)
    if n_parties < 2:
        raise ValueError(f"need at least 2 parties, got {n_parties}")
    x = ring.check(x, "secret")
    rand = ring.random(rng, (n_parties - 1, *x.shape))
    last = ring.sub(x, ring.sum(rand, axis=0))
    return AdditiveShares(np.concatenate([rand, last[None]], axis=0), ring)


@dataclass
class ReplicatedShares:
    """2-of-3 replicated shares: additive ``components`` (3, *shape); Pi holds (x_i, x_{i+1})."""

    components: np.ndarray
    ring: Ring

    def __post_init__(self) -> None:
        # held in the algebra's own dtype (uint64 for Ring; Falcon's Z_p and Z_2 are smaller)
        self.components = np.asarray(self.components,
                                     dtype=getattr(self.ring, "dtype", np.uint64))
        if self.components.ndim < 1 or self.components.shape[0] != 3:
            raise ValueError(
                f"replicated shares need exactly 3 components (party axis), got "
                f"{self.components.shape[:1]}"
            )

    @property
    def shape(self) -> tuple[int, ...]:
        return self.components.shape[1:]

    def view(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """What party Pi holds: (x_i, x_{i+1})."""
        if i not in (0, 1, 2):
            raise ValueError(f"party index must be 0, 1 or 2, got {i}")
        return self.components[i], self.components[(i + 1) % 3]

    def reveal(self) -> np.ndarray:
        return self.ring.sum(self.components, axis=0)

    def open(self, ledger: Ledger, parties=("P0", "P1", "P2"), what: str = "open") -> np.ndarray:
        """Semi-honest opening: Pi sends x_{i+1} to P_{i-1} (whose view is (x_{i-1}, x_i))."""
        parties = _check_parties(parties, 3, "replicated")
        bits = int(np.prod(self.shape, dtype=np.int64)) * self.ring.bits
        with ledger.round():
            for i in range(3):
                ledger.send(parties[i], parties[(i - 1) % 3], bits, what,
                            value=self.components[(i + 1) % 3])
        return self.reveal()

    def _compatible(self, other: ReplicatedShares) -> None:
        if not isinstance(other, ReplicatedShares):
            raise TypeError(f"expected ReplicatedShares, got {type(other).__name__}")
        if other.ring != self.ring:
            raise ValueError(f"ring mismatch: {self.ring!r} vs {other.ring!r}")
        if other.shape != self.shape:
            raise ValueError(f"share shape mismatch: {self.shape} vs {other.shape}")

    def __add__(self, other):
        if isinstance(other, ReplicatedShares):
            self._compatible(other)
            return ReplicatedShares(self.ring.add(self.components, other.components), self.ring)
        return self.add_public(other)

    def __sub__(self, other):
        if isinstance(other, ReplicatedShares):
            self._compatible(other)
            return ReplicatedShares(self.ring.sub(self.components, other.components), self.ring)
        return self.add_public(self.ring.neg(self.ring.reduce(other)))

    def __neg__(self):
        return ReplicatedShares(self.ring.neg(self.components), self.ring)

    def add_public(self, c) -> ReplicatedShares:
        """Add a public constant to component 0 (held by P0 and P2)."""
        c = self.ring.reduce(np.broadcast_to(np.asarray(c), self.shape))
        out = self.components.copy()
        out[0] = self.ring.add(out[0], c)
        return ReplicatedShares(out, self.ring)

    def mul_public(self, c) -> ReplicatedShares:
        return ReplicatedShares(self.ring.mul(self.components, self.ring.reduce(np.asarray(c))),
                                self.ring)

    def reshape(self, *shape) -> ReplicatedShares:
        return ReplicatedShares(self.components.reshape(3, *shape), self.ring)

    def __getitem__(self, idx) -> ReplicatedShares:
        idx = idx if isinstance(idx, tuple) else (idx,)
        return ReplicatedShares(self.components[(slice(None), *idx)], self.ring)


def share_replicated(x, ring: Ring, rng: np.random.Generator) -> ReplicatedShares:
    """2-of-3 replicated sharing of ring elements ``x``."""
    _check_rng(rng)
    x = ring.check(x, "secret")
    r = ring.random(rng, (2, *x.shape))
    last = ring.sub(x, ring.add(r[0], r[1]))
    return ReplicatedShares(np.concatenate([r, last[None]], axis=0), ring)


@dataclass
class XorShares:
    """XOR shares of k-bit strings: ``shares`` (n_parties, *shape) uint64, XOR = secret."""

    shares: np.ndarray
    k: int = 1

    def __post_init__(self) -> None:
        self.shares = np.asarray(self.shares, dtype=np.uint64)
        Ring(self.k)  # validates 1..64
        if self.shares.ndim < 1 or self.shares.shape[0] < 2:
            raise ValueError("XOR shares need a leading party axis of length >= 2")

    @property
    def n_parties(self) -> int:
        return self.shares.shape[0]

    @property
    def shape(self) -> tuple[int, ...]:
        return self.shares.shape[1:]

    def reveal(self) -> np.ndarray:
        return np.bitwise_xor.reduce(self.shares, axis=0)

    def open(self, ledger: Ledger, parties, what: str = "open") -> np.ndarray:
        parties = _check_parties(parties, self.n_parties, "XOR")
        ledger.exchange(parties, int(np.prod(self.shape, dtype=np.int64)) * self.k, what,
                        values=dict(zip(parties, self.shares)))
        return self.reveal()

    def _compatible(self, other: XorShares) -> None:
        if not isinstance(other, XorShares):
            raise TypeError(f"expected XorShares, got {type(other).__name__}")
        if other.k != self.k or other.n_parties != self.n_parties or other.shape != self.shape:
            raise ValueError(
                f"XOR share mismatch: k {self.k}/{other.k}, parties {self.n_parties}/"
                f"{other.n_parties}, shape {self.shape}/{other.shape}"
            )

    def __xor__(self, other):
        if isinstance(other, XorShares):
            self._compatible(other)
            return XorShares(self.shares ^ other.shares, self.k)
        c = np.asarray(other, dtype=np.uint64) & np.uint64((1 << self.k) - 1 if self.k < 64
                                                            else np.iinfo(np.uint64).max)
        out = self.shares.copy()
        out[0] = out[0] ^ c
        return XorShares(out, self.k)

    def and_public(self, c) -> XorShares:
        return XorShares(self.shares & np.asarray(c, dtype=np.uint64), self.k)


def share_xor(x, k: int, rng: np.random.Generator, n_parties: int = 2) -> XorShares:
    """XOR-share k-bit values ``x`` among ``n_parties``."""
    _check_rng(rng)
    ring = Ring(k)
    x = ring.check(x, "secret")
    rand = ring.random(rng, (n_parties - 1, *x.shape))
    last = x ^ np.bitwise_xor.reduce(rand, axis=0)
    return XorShares(np.concatenate([rand, last[None]], axis=0), k)

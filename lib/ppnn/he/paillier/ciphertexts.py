"""Arrays of Paillier ciphertexts, the packing layout of SwaNN §5.1, and partial decryptions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.transcript import SIZE_ONLY
from .encoding import _as_int_objects
from .keys import PublicKey


class CipherArray:
    """An array of Paillier ciphertexts (gmpy2 integers mod N²) under one public key.

    In a :class:`SimulatedPaillier` the entries are plaintext residues mod N instead, and
    ``simulated`` is True; the two kinds never mix.

    ``shadow`` (real ciphertexts made by a :class:`Paillier` backend) is the lab's copy of
    the plaintexts, residues mod N, carried along by every operation: the simulation knows
    them because it made every value. No party reads it, it is never sent or serialized;
    it only lets the lab refuse what no party could see under encryption (a value too wide
    for its packing slot, :meth:`Paillier.pack`). ``None`` for ciphertexts built by hand.
    """

    __slots__ = ("data", "public_key", "simulated", "shadow")

    def __init__(self, data: np.ndarray, public_key: PublicKey, simulated: bool = False,
                 shadow: np.ndarray | None = None):
        data = np.asarray(data, dtype=object)
        self.data, self.public_key, self.simulated = data, public_key, bool(simulated)
        self.shadow = None if shadow is None or self.simulated else \
            np.asarray(shadow, dtype=object).reshape(data.shape)

    @property
    def known_plaintexts(self) -> np.ndarray | None:
        """The plaintexts (residues mod N) as the lab knows them: the entries themselves on
        the simulator, the ``shadow`` of real ciphertexts, ``None`` if unknown."""
        return self.data if self.simulated else self.shadow

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def size(self) -> int:
        return int(self.data.size)

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, idx) -> CipherArray:
        return CipherArray(np.asarray(self.data[idx], dtype=object), self.public_key,
                           self.simulated, None if self.shadow is None else self.shadow[idx])

    def reshape(self, *shape) -> CipherArray:
        return CipherArray(self.data.reshape(*shape), self.public_key, self.simulated,
                           None if self.shadow is None else self.shadow.reshape(*shape))

    def ravel(self) -> CipherArray:
        return self.reshape(-1)

    def bits(self) -> int:
        """Size on the wire: ``size × 2·log₂N`` bits."""
        return self.size * 2 * int(self.public_key.n).bit_length()

    def serialize(self) -> bytes:
        """The ciphertexts as sent: each element of ``Z_{N²}`` as ``2·log₂N / 8`` big-endian
        bytes, in C order (what a recording ledger hashes). Raises on a simulated array, whose
        entries are plaintexts: record :meth:`wire` instead."""
        if self.simulated:
            raise ValueError("a simulated CipherArray holds plaintexts, not ciphertexts: it "
                             "has no wire form (record CipherArray.wire())")
        width = (2 * int(self.public_key.n).bit_length() + 7) // 8
        return b"".join(int(v).to_bytes(width, "big") for v in self.data.ravel())

    def wire(self):
        """What a ledger records for this array when it crosses: the array itself (kept as
        size + SHA-256 digest of :meth:`serialize`, serialized only by a recording ledger), or
        :data:`~ppnn.core.transcript.SIZE_ONLY` on the simulator, which never builds the
        ciphertexts (its entries are the plaintexts, which must not show in a view)."""
        return SIZE_ONLY if self.simulated else self

    def check_compatible(self, other: CipherArray, what: str = "ciphertexts") -> None:
        if not isinstance(other, CipherArray):
            raise TypeError(f"{what}: expected CipherArray, got {type(other).__name__}")
        if other.public_key != self.public_key:
            raise ValueError(f"{what}: ciphertexts under different public keys cannot be "
                             "combined (mismatched public keys)")
        if other.simulated != self.simulated:
            raise ValueError(f"{what}: cannot mix simulated and real ciphertexts")

    @staticmethod
    def concatenate(parts: list[CipherArray]) -> CipherArray:
        if not parts:
            raise ValueError("concatenate needs at least one CipherArray")
        for p in parts[1:]:
            parts[0].check_compatible(p, "concatenate")
        shadows = [p.shadow for p in parts]
        shadow = None if any(s is None for s in shadows) else \
            np.concatenate([s.ravel() for s in shadows])
        return CipherArray(np.concatenate([p.data.ravel() for p in parts]), parts[0].public_key,
                           parts[0].simulated, shadow)

    def __repr__(self) -> str:
        kind = "simulated " if self.simulated else ""
        return (f"CipherArray({kind}shape={self.shape}, "
                f"N={int(self.public_key.n).bit_length()} bits)")


@dataclass(frozen=True)
class PackingLayout:
    """Slots of ``slot_bits`` bits in one plaintext of a modulus with ``n_bits`` bits (§5.1).

    ``rho = ⌊(n_bits − 1) / slot_bits⌋`` values fit in one ciphertext (the paper's
    ``⌊log₂N/(t+κ)⌋``; one bit is kept in reserve so that a full packing stays below N).
    Slot ``m`` holds ``x_m · (2^slot_bits)^m``.
    """

    slot_bits: int
    n_bits: int

    def __post_init__(self) -> None:
        if not isinstance(self.slot_bits, int) or self.slot_bits < 1:
            raise ValueError(f"slot_bits must be a positive int, got {self.slot_bits}")
        if self.slot_bits > self.n_bits - 1:
            raise ValueError(f"slot_bits={self.slot_bits} does not fit a {self.n_bits}-bit "
                             f"modulus (at most {self.n_bits - 1})")

    @property
    def rho(self) -> int:
        return (self.n_bits - 1) // self.slot_bits

    def n_packed(self, count: int) -> int:
        return -(-int(count) // self.rho)

    def groups(self, count: int) -> list[range]:
        return [range(i, min(i + self.rho, count)) for i in range(0, count, self.rho)]

    def check_values(self, values) -> np.ndarray:
        """``values`` (signed integers) as a flat object array; ``ValueError`` naming the first
        that does not fit its slot, ``[0, 2^slot_bits)``: a wider value would carry into the
        next slot and corrupt its neighbour's value."""
        arr = _as_int_objects(values, "packed value").ravel()
        s = self.slot_bits
        bad = np.flatnonzero((arr < 0) | (arr >= (1 << s)))
        if bad.size:
            i = int(bad[0])
            v = int(arr[i])
            where = f"value {i} (slot {i % self.rho} of packed plaintext {i // self.rho})"
            if v < 0:
                raise ValueError(f"packing overflow: {where} is negative ({v}): it does not "
                                 f"fit a slot of {s} bits (allowed [0, 2^{s}))")
            raise ValueError(f"packing overflow: {where} has {v.bit_length()} bits: it does "
                             f"not fit a slot of {s} bits (allowed [0, 2^{s})) and would carry "
                             "into the next slot")
        return arr

    def pack_plain(self, values) -> list[int]:
        """Plaintext packing ``Σ x_m 2^{s m}`` per group of ρ values (raises on overflow)."""
        arr = self.check_values(values)
        out = []
        for g in self.groups(arr.size):
            acc = 0
            for m in reversed(g):
                acc = (acc << self.slot_bits) | int(arr[m])
            out.append(acc)
        return out

    def unpack_plain(self, packed, count: int) -> np.ndarray:
        """Inverse of :meth:`pack_plain`: ``count`` slot values as Python ints."""
        packed = [int(v) for v in np.asarray(packed, dtype=object).ravel()]
        if len(packed) != self.n_packed(count):
            raise ValueError(f"{count} values need {self.n_packed(count)} packed plaintexts, "
                             f"got {len(packed)}")
        mask = (1 << self.slot_bits) - 1
        out = []
        for v, g in zip(packed, self.groups(count)):
            if v < 0 or v >> (self.slot_bits * len(g)):
                raise ValueError("packed plaintext has bits beyond its slots (slot overflow)")
            out.extend((v >> (self.slot_bits * j)) & mask for j in range(len(g)))
        return np.array(out, dtype=object)


class PartialDecryption(CipherArray):
    """``c^{d_i} mod N²`` for every ciphertext, made with key share ``index``."""

    __slots__ = ("index",)

    def __init__(self, data, public_key, simulated: bool, index: int):
        super().__init__(data, public_key, simulated)
        self.index = index


def _check_partials(backend, p1, p2) -> None:
    """Both key shares' partial decryptions, of this backend's key and the same shape."""
    for p in (p1, p2):
        if not isinstance(p, PartialDecryption):
            raise TypeError("combine needs two PartialDecryption objects")
        backend._own(p, "combine")
    if {p1.index, p2.index} != {1, 2}:
        raise ValueError("combine needs the partial decryptions of both key shares "
                         f"(got shares {p1.index} and {p2.index})")
    if p1.shape != p2.shape:
        raise ValueError(f"partial decryptions differ in shape: {p1.shape} vs {p2.shape}")

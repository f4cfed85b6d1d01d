"""Paillier encryption (``phe`` keys, ``gmpy2`` arithmetic) with SwaNN's optimisations (§5.1).

Paillier [Paillier 1999] with ``g = N + 1``: ``[m] = (1 + mN) · r^N mod N²``. It is additively
homomorphic, ``[a]·[b] = [a + b]`` and ``[a]^k = [k·a]``, which is all SwaNN needs for its linear
layers (Conv, FC, scaled mean pool) and for the interactive square of Protocol 1.

This module offers

* :func:`keygen` (2048-bit modulus by default, as in the paper), signed encoding
  (:func:`encode_int` / :func:`decode_int`) and fixed-point encoding (:func:`encode_fixed`);
* :class:`Paillier` -- the operations on arrays of ciphertexts (:class:`CipherArray`), each
  booked on a :class:`~ppnn.core.Ledger` (``Enc``, ``Dec``, ``PartialDec``, ``paillier_exp``,
  ``paillier_exp_bits``, ``paillier_mul``, ``paillier_inv``) and, optionally, timed per party;
* the two optimisations of §5.1:

  - **packing** [Bianchi et al. 2010] (:class:`PackingLayout`, :meth:`Paillier.pack`):
    ``[x̂] = ∏_m [x_m]^{(2^s)^m}`` with slots of ``s = t + κ`` bits and
    ``ρ = ⌊log₂N / s⌋`` values per ciphertext; a value that does not fit its slot raises;
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

from __future__ import annotations

import contextlib
import math
import secrets
from dataclasses import dataclass

import numpy as np
from gmpy2 import invert, mpz, powmod
from phe import paillier as _phe

from ..core.ledger import Ledger
from ..core.timing import Timings

__all__ = [
    "KEY_BITS", "PublicKey", "PrivateKey", "keygen", "encode_int", "decode_int", "encode_fixed",
    "CipherArray", "Paillier", "SimulatedPaillier", "PackingLayout", "KeyShare",
    "PartialDecryption", "split_private_key", "multiexp_plan", "MultiExpPlan", "DJNObfuscator",
]

KEY_BITS = 2048
PublicKey = _phe.PaillierPublicKey
PrivateKey = _phe.PaillierPrivateKey


def keygen(n_bits: int = KEY_BITS) -> tuple[PublicKey, PrivateKey]:
    """Generate a Paillier key pair with an ``n_bits``-bit modulus (phe's secure generator)."""
    if not isinstance(n_bits, int) or isinstance(n_bits, bool):
        raise TypeError(f"n_bits must be an int, got {type(n_bits).__name__}")
    if n_bits < 128 or n_bits % 2:
        raise ValueError(f"n_bits must be an even number >= 128, got {n_bits}")
    return _phe.generate_paillier_keypair(n_length=n_bits)


# ----------------------------------------------------------------------------------------
# encodings
# ----------------------------------------------------------------------------------------
def _as_int_objects(m, what: str) -> np.ndarray:
    """Integers (numpy ints, Python ints, object arrays of ints) as an object array."""
    arr = np.asarray(m, dtype=object) if not isinstance(m, np.ndarray) else m
    if arr.dtype.kind == "f":
        raise TypeError(f"{what}: got floating-point values; use encode_fixed() first")
    if arr.dtype.kind in "iub":
        return arr.astype(object)
    if arr.dtype != object:
        raise TypeError(f"{what}: expected integers, got dtype {arr.dtype}")
    flat = arr.ravel()
    for v in flat[: min(flat.size, 8)]:
        if not isinstance(v, int | np.integer | type(mpz(0))) or isinstance(v, bool):
            raise TypeError(f"{what}: expected integers, got {type(v).__name__}")
    return arr


def encode_int(m, public_key: PublicKey) -> np.ndarray:
    """Signed integers → residues in ``[0, N)`` (negative ``m`` becomes ``N + m``).

    Raises ``ValueError`` if ``|m|`` exceeds ``N/3`` (phe's ``max_int``): larger values could not
    be told apart from negative ones after homomorphic operations.
    """
    arr = _as_int_objects(m, "plaintext")
    n, lim = int(public_key.n), int(public_key.max_int)
    flat = [int(v) for v in arr.ravel()]
    if flat and (max(flat) > lim or min(flat) < -lim):
        raise ValueError(f"plaintext magnitude must be <= N/3 ≈ 2^{lim.bit_length()} for this "
                         f"{n.bit_length()}-bit key; got a {max(map(abs, flat)).bit_length()}-bit "
                         "value")
    return np.array([mpz(v % n) for v in flat], dtype=object).reshape(arr.shape)


def decode_int(residues, public_key: PublicKey) -> np.ndarray:
    """Residues in ``[0, N)`` → signed Python ints (values above ``N/2`` are negative)."""
    n = int(public_key.n)
    half = n // 2
    arr = np.asarray(residues, dtype=object)
    out = [int(v) - n if int(v) > half else int(v) for v in arr.ravel()]
    return np.array(out, dtype=object).reshape(arr.shape)


def encode_fixed(x, frac_bits: int, bits: int | None = None) -> np.ndarray:
    """Reals → ``round(x·2^frac_bits)`` as int64; with ``bits``: ``|v| < 2^(bits-1)``."""
    if not isinstance(frac_bits, int) or not 0 <= frac_bits <= 52:
        raise ValueError(f"frac_bits must be an int in [0, 52], got {frac_bits}")
    arr = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError("encode_fixed: input contains NaN or infinity")
    v = np.rint(arr * (1 << frac_bits))
    lim = float(1 << (bits - 1)) if bits is not None else float(1 << 62)
    if bits is not None and not 2 <= bits <= 63:
        raise ValueError(f"bits must be in [2, 63], got {bits}")
    if v.size and (v.max() >= lim or v.min() < -lim):
        raise ValueError(f"fixed-point values out of range: |x·2^{frac_bits}| must be < {lim:.0f}"
                         f" (bits={bits}); got [{arr.min()}, {arr.max()}]")
    return v.astype(np.int64)


# ----------------------------------------------------------------------------------------
# containers
# ----------------------------------------------------------------------------------------
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


class CipherArray:
    """An array of Paillier ciphertexts (gmpy2 integers mod N²) under one public key.

    In a :class:`SimulatedPaillier` the entries are plaintext residues mod N instead, and
    ``simulated`` is True; the two kinds never mix.
    """

    __slots__ = ("data", "public_key", "simulated")

    def __init__(self, data: np.ndarray, public_key: PublicKey, simulated: bool = False):
        data = np.asarray(data, dtype=object)
        self.data, self.public_key, self.simulated = data, public_key, bool(simulated)

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
                           self.simulated)

    def reshape(self, *shape) -> CipherArray:
        return CipherArray(self.data.reshape(*shape), self.public_key, self.simulated)

    def ravel(self) -> CipherArray:
        return self.reshape(-1)

    def bits(self) -> int:
        """Size on the wire: ``size × 2·log₂N`` bits."""
        return self.size * 2 * int(self.public_key.n).bit_length()

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
        return CipherArray(np.concatenate([p.data.ravel() for p in parts]), parts[0].public_key,
                           parts[0].simulated)

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
        arr = _as_int_objects(values, "packed value").ravel()
        lim = 1 << self.slot_bits
        bad = [int(v) for v in arr if not 0 <= int(v) < lim]
        if bad:
            raise ValueError(f"packing overflow: value {bad[0]} does not fit a slot of "
                             f"{self.slot_bits} bits (allowed [0, 2^{self.slot_bits}))")
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


# ----------------------------------------------------------------------------------------
# multi-exponentiation plan (shared by the real and simulated backends)
# ----------------------------------------------------------------------------------------
@dataclass
class MultiExpPlan:
    """How ``∏_i a_i^{W[r, i]}`` is evaluated for every row ``r`` of ``W`` (Lim–Lee style).

    ``W`` is made non-negative by an offset ``o = max(0, -min W)``: each row uses exponents
    ``W + o`` and the result is multiplied by ``(∏ a_i)^{-o}`` (one power and one inversion per
    input vector, shared by all rows). Bases are split into groups of ``h``; bit column ``j`` of
    group ``g`` selects a precomputed subset product ``idx[r, j, g]``.
    """

    h: int
    offset: int
    t: np.ndarray          # (rows,) bit length of the largest shifted exponent of the row
    idx: np.ndarray        # (rows, max_t, groups) subset index per bit (MSB first)
    group_sizes: list[int]

    @property
    def table_mults(self) -> int:
        return sum((1 << g) - 1 - g for g in self.group_sizes)

    def row_mults(self) -> np.ndarray:
        """Multiplications per row: ``t − 1`` squarings + (non-zero selections − 1)."""
        nnz = (self.idx != 0).sum(axis=(1, 2))
        return np.where(self.t > 0, (self.t - 1) + (nnz - 1), 0)

    def total_mults(self) -> int:
        """All modular multiplications of one evaluation (tables, rows, offset correction)."""
        n_groups = len(self.group_sizes)
        corr = (n_groups - 1 + len(self.t)) if self.offset else 0
        return int(self.table_mults + self.row_mults().sum() + corr)


def _choose_h(n_bases: int, n_rows: int, t: int) -> int:
    """Group size minimising tables + rows (expected cost, a deterministic formula)."""
    best, best_cost = 1, math.inf
    for h in range(1, 9):
        groups = -(-n_bases // h)
        cost = groups * ((1 << h) - 1 - h) + n_rows * t * groups * (1 - 2.0 ** -h)
        if cost < best_cost:
            best, best_cost = h, cost
    return best


def multiexp_plan(W, h: int | None = None) -> MultiExpPlan:
    """Plan the multi-exponentiation of integer exponents ``W`` (rows × bases)."""
    W = np.asarray(W)
    if W.dtype.kind not in "iu":
        raise TypeError(f"exponents must be an integer array, got dtype {W.dtype}")
    if W.ndim != 2 or W.shape[1] == 0:
        raise ValueError(f"exponents must be a non-empty (rows, bases) matrix, got {W.shape}")
    W = W.astype(np.int64)
    offset = max(0, -int(W.min()))
    Wp = W + offset
    if int(Wp.max()) >= 1 << 62:
        raise ValueError("exponents must stay below 2^62 for the multi-exponentiation plan")
    maxbits = int(Wp.max()).bit_length()
    t = np.array([int(r.max()).bit_length() for r in Wp], dtype=np.int64)
    rows, n = Wp.shape
    if h is None:
        h = _choose_h(n, rows, max(maxbits, 1))
    if not 1 <= h <= 12:
        raise ValueError(f"group size h must be in 1..12, got {h}")
    groups = -(-n // h)
    pad = groups * h - n
    Wg = np.pad(Wp, ((0, 0), (0, pad))).reshape(rows, groups, h)
    bits = np.arange(max(maxbits, 1) - 1, -1, -1, dtype=np.int64)  # MSB first
    colbits = (Wg[:, None, :, :] >> bits[None, :, None, None]) & 1   # rows, bits, groups, h
    idx = (colbits << np.arange(h, dtype=np.int64)).sum(axis=-1)
    # rows with a shorter top bit: their leading columns are zero anyway; keep one layout
    sizes = [min(h, n - g * h) for g in range(groups)]
    return MultiExpPlan(h, offset, t, idx, sizes)


# ----------------------------------------------------------------------------------------
# keys for the two-server setting
# ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class KeyShare:
    """One server's share ``d_i`` of the decryption exponent (``d_1 + d_2 = d``)."""

    public_key: PublicKey
    index: int
    d: int

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
    return KeyShare(pk, 1, d1), KeyShare(pk, 2, d - d1)


class PartialDecryption(CipherArray):
    """``c^{d_i} mod N²`` for every ciphertext, made with key share ``index``."""

    __slots__ = ("index",)

    def __init__(self, data, public_key, simulated: bool, index: int):
        super().__init__(data, public_key, simulated)
        self.index = index


# ----------------------------------------------------------------------------------------
# the backends
# ----------------------------------------------------------------------------------------
class DJNObfuscator:
    """Randomizers ``h_s^α mod N²`` of the Damgård–Jurik–Nielsen variant (as in ABY).

    ``h = −x² mod N`` for a random ``x`` and ``h_s = h^N mod N²`` are fixed once per public key;
    an encryption then needs ``h_s^α`` with a short ``α`` (``⌈n/2⌉`` bits), computed from a
    fixed-base table of ``h_s^{d·2^{wj}}`` (``⌈|α|/w⌉`` multiplications instead of a full
    ``r^N``). The ciphertexts are ordinary Paillier ciphertexts ``(1+N)^m · (h^α)^N``.
    """

    _cache: dict[int, DJNObfuscator] = {}

    def __init__(self, public_key: PublicKey, window: int = 8):
        n = mpz(public_key.n)
        self.n2 = n * n
        self.alpha_bits = (int(n).bit_length() + 1) // 2
        self.window = window
        x = mpz(secrets.randbelow(int(n) - 2) + 2)
        h_s = powmod((-x * x) % n, n, self.n2)
        self.tables = []
        base = h_s
        for _ in range(-(-self.alpha_bits // window)):
            row = [mpz(1), base]
            for _ in range(2, 1 << window):
                row.append(row[-1] * base % self.n2)
            self.tables.append(row)
            base = row[-1] * base % self.n2          # h_s^{2^{w(j+1)}}

    @classmethod
    def for_key(cls, public_key: PublicKey) -> DJNObfuscator:
        key = int(public_key.n)
        if key not in cls._cache:
            cls._cache[key] = cls(public_key)
        return cls._cache[key]

    def __call__(self):
        alpha = secrets.randbits(self.alpha_bits)
        mask, w = (1 << self.window) - 1, self.window
        acc = None
        for j, row in enumerate(self.tables):
            d = (alpha >> (w * j)) & mask
            if d:
                acc = row[d] if acc is None else acc * row[d] % self.n2
        return acc if acc is not None else mpz(1)


class Paillier:
    """Paillier operations on :class:`CipherArray` s, booked on a ledger and timed per party.

    Parameters
    ----------
    public_key : phe PaillierPublicKey
    ledger : Ledger, optional
        Operation counts are booked here with the acting ``party``.
    timings : Timings, optional
        Wall-clock seconds per party and operation.
    obfuscation : "djn" or "standard"
        How encryptions randomize: ``"standard"`` raises a fresh ``r`` to the power N (as
        ``phe`` does, one 2048-bit exponentiation mod N²); ``"djn"`` uses
        :class:`DJNObfuscator` (short exponent, fixed-base table), the Paillier variant of ABY
        that SwaNN's implementation used. Both give valid Paillier ciphertexts.
    """

    simulated = False

    def __init__(self, public_key: PublicKey, ledger: Ledger | None = None,
                 timings: Timings | None = None, obfuscation: str = "djn"):
        if not isinstance(public_key, PublicKey):
            raise TypeError("public_key must be a phe PaillierPublicKey")
        if obfuscation not in ("djn", "standard"):
            raise ValueError(f"obfuscation must be 'djn' or 'standard', got {obfuscation!r}")
        self.pk = public_key
        self.n = mpz(public_key.n)
        self.n2 = mpz(public_key.nsquare)
        self.ledger, self.timings = ledger, timings
        self.obfuscation = obfuscation
        self._djn = DJNObfuscator.for_key(public_key) \
            if obfuscation == "djn" and not self.simulated else None
        self.last_multiexp_mults = 0  # multiplications actually performed (real backend)

    # -- sizes --------------------------------------------------------------------------
    @property
    def n_bits(self) -> int:
        return int(self.n).bit_length()

    @property
    def ct_bits(self) -> int:
        """Bits of one ciphertext (an element of Z_{N²})."""
        return 2 * self.n_bits

    def layout(self, slot_bits: int) -> PackingLayout:
        return PackingLayout(slot_bits, self.n_bits)

    # -- bookkeeping ----------------------------------------------------------------------
    def _book(self, op: str, count: int, party: str) -> None:
        if self.ledger is not None and count:
            self.ledger.count(op, int(count), party)

    def _timed(self, party: str, op: str):
        return self.timings.measure(party, op) if self.timings is not None \
            else contextlib.nullcontext()

    def _wrap(self, data) -> CipherArray:
        return CipherArray(np.asarray(data, dtype=object), self.pk, self.simulated)

    def _own(self, c, what: str) -> CipherArray:
        if not isinstance(c, CipherArray):
            raise TypeError(f"{what}: expected CipherArray, got {type(c).__name__}")
        if c.public_key != self.pk:
            raise ValueError(f"{what}: ciphertext was made under a different public key "
                             "(mismatched public keys)")
        if c.simulated != self.simulated:
            raise ValueError(f"{what}: {'simulated' if c.simulated else 'real'} ciphertext "
                             f"given to a {'simulated' if self.simulated else 'real'} backend")
        return c

    def _check_sk(self, private_key) -> None:
        if not isinstance(private_key, PrivateKey):
            raise TypeError("private_key must be a phe PaillierPrivateKey")
        if private_key.public_key != self.pk:
            raise ValueError("private key does not belong to this public key")

    # -- group primitives (overridden by the simulator) ---------------------------------
    ONE = mpz(1)

    def _obfuscator(self):
        if self._djn is not None:
            return self._djn()
        r = mpz(secrets.randbelow(int(self.n) - 1) + 1)
        return powmod(r, self.n, self.n2)

    def _enc(self, m):
        return (1 + m * self.n) * self._obfuscator() % self.n2

    def _trivial(self, m):
        """``(1 + N)^m = 1 + mN``: an encryption of a public value without randomness."""
        return (1 + m * self.n) % self.n2

    def _mul(self, a, b):
        return a * b % self.n2

    def _pow(self, a, e):
        return powmod(a, e, self.n2)

    def _inv(self, a):
        return invert(a, self.n2)

    def _dec(self, private_key, c):
        return mpz(private_key.raw_decrypt(int(c)))

    def _partial(self, c, d: int):
        if d < 0:
            return powmod(invert(c, self.n2), -d, self.n2)
        return powmod(c, d, self.n2)

    def _combine_one(self, u):
        if (u - 1) % self.n:
            raise ValueError("partial decryptions do not combine to a plaintext: both servers' "
                             "key shares are needed")
        return (u - 1) // self.n

    # -- encryption / decryption ---------------------------------------------------------
    def encrypt(self, m, party: str) -> CipherArray:
        """Encrypt signed integers (fresh randomness ``r^N`` for every value)."""
        res = encode_int(m, self.pk)
        with self._timed(party, "Enc"):
            out = [self._enc(v) for v in res.ravel()]
        self._book("Enc", res.size, party)
        return self._wrap(np.array(out, dtype=object).reshape(res.shape))

    def encrypt_trivial(self, m) -> CipherArray:
        """``1 + mN`` for public values (no randomness; never sent without rerandomizing)."""
        res = encode_int(m, self.pk)
        return self._wrap(np.array([self._trivial(v) for v in res.ravel()],
                                   dtype=object).reshape(res.shape))

    def decrypt(self, private_key: PrivateKey, c: CipherArray, party: str) -> np.ndarray:
        """Decrypt to signed Python ints (CRT decryption by the key holder)."""
        self._check_sk(private_key)
        c = self._own(c, "decrypt")
        with self._timed(party, "Dec"):
            res = [self._dec(private_key, v) for v in c.data.ravel()]
        self._book("Dec", c.size, party)
        return decode_int(np.array(res, dtype=object).reshape(c.shape), self.pk)

    def decrypt_raw(self, private_key: PrivateKey, c: CipherArray, party: str) -> np.ndarray:
        """Decrypt to residues in ``[0, N)`` (packed plaintexts are not signed)."""
        self._check_sk(private_key)
        c = self._own(c, "decrypt")
        with self._timed(party, "Dec"):
            res = [int(self._dec(private_key, v)) for v in c.data.ravel()]
        self._book("Dec", c.size, party)
        return np.array(res, dtype=object).reshape(c.shape)

    def rerandomize(self, c: CipherArray, party: str) -> CipherArray:
        """Multiply by a fresh ``r^N`` (an encryption of 0) before a ciphertext leaves."""
        c = self._own(c, "rerandomize")
        with self._timed(party, "Enc"):
            out = [self._mul(v, self._obfuscator()) for v in c.data.ravel()]
        self._book("Enc", c.size, party)
        return self._wrap(np.array(out, dtype=object).reshape(c.shape))

    # -- threshold decryption (two-server setting) ---------------------------------------
    def partial_decrypt(self, share: KeyShare, c: CipherArray, party: str) -> PartialDecryption:
        if not isinstance(share, KeyShare):
            raise TypeError("share must be a KeyShare from split_private_key()")
        if share.public_key != self.pk:
            raise ValueError("key share belongs to a different public key")
        c = self._own(c, "partial_decrypt")
        with self._timed(party, "PartialDec"):
            out = [self._partial(v, share.d) for v in c.data.ravel()]
        self._book("PartialDec", c.size, party)
        return PartialDecryption(np.array(out, dtype=object).reshape(c.shape), self.pk,
                                 self.simulated, share.index)

    def combine(self, p1: PartialDecryption, p2: PartialDecryption, party: str,
                signed: bool = True) -> np.ndarray:
        """Combine both servers' partial decryptions into the plaintexts."""
        _check_partials(self, p1, p2)
        with self._timed(party, "Dec"):
            res = [int(self._combine_one(self._mul(a, b)))
                   for a, b in zip(p1.data.ravel(), p2.data.ravel())]
        self._book("paillier_mul", p1.size, party)
        arr = np.array(res, dtype=object).reshape(p1.shape)
        return decode_int(arr, self.pk) if signed else arr

    # -- homomorphic operations ----------------------------------------------------------
    def add(self, a: CipherArray, b: CipherArray, party: str) -> CipherArray:
        """``[a]·[b] = [a + b]`` elementwise."""
        a, b = self._own(a, "add"), self._own(b, "add")
        if a.shape != b.shape:
            raise ValueError(f"add: shapes differ {a.shape} vs {b.shape}")
        with self._timed(party, "add"):
            out = [self._mul(x, y) for x, y in zip(a.data.ravel(), b.data.ravel())]
        self._book("paillier_mul", a.size, party)
        return self._wrap(np.array(out, dtype=object).reshape(a.shape))

    def add_plain(self, c: CipherArray, m, party: str) -> CipherArray:
        """``[x]·(1 + mN) = [x + m]`` for public (or own) integers ``m``."""
        c = self._own(c, "add_plain")
        res = encode_int(np.broadcast_to(np.asarray(m, dtype=object), c.shape), self.pk)
        with self._timed(party, "add"):
            out = [self._mul(x, self._trivial(v)) for x, v in zip(c.data.ravel(), res.ravel())]
        self._book("paillier_mul", c.size, party)
        return self._wrap(np.array(out, dtype=object).reshape(c.shape))

    def neg(self, c: CipherArray, party: str) -> CipherArray:
        """``[x]⁻¹ = [−x]``."""
        c = self._own(c, "neg")
        with self._timed(party, "inv"):
            out = [self._inv(x) for x in c.data.ravel()]
        self._book("paillier_inv", c.size, party)
        return self._wrap(np.array(out, dtype=object).reshape(c.shape))

    def sub(self, a: CipherArray, b: CipherArray, party: str) -> CipherArray:
        """``[a]·[b]⁻¹ = [a − b]``."""
        return self.add(a, self.neg(b, party), party)

    def mul_plain(self, c: CipherArray, k, party: str) -> CipherArray:
        """``[x]^k = [k·x]`` elementwise (one exponentiation per element, inverse if k < 0)."""
        c = self._own(c, "mul_plain")
        ks = _as_int_objects(np.broadcast_to(np.asarray(k), c.shape), "scalar").ravel()
        with self._timed(party, "exp"):
            out = []
            for x, kk in zip(c.data.ravel(), ks):
                kk = int(kk)
                out.append(self._pow(self._inv(x), -kk) if kk < 0 else self._pow(x, kk))
        self._book("paillier_exp", len(ks), party)
        self._book("paillier_exp_bits", sum(abs(int(v)).bit_length() for v in ks), party)
        self._book("paillier_inv", sum(int(v) < 0 for v in ks), party)
        return self._wrap(np.array(out, dtype=object).reshape(c.shape))

    def sum(self, c: CipherArray, party: str) -> CipherArray:
        """``∏ [x_i] = [Σ x_i]`` over the whole array (a 1-element array)."""
        c = self._own(c, "sum")
        with self._timed(party, "add"):
            vals = list(c.data.ravel())
            acc = vals[0]
            for v in vals[1:]:
                acc = self._mul(acc, v)
        self._book("paillier_mul", c.size - 1, party)
        return self._wrap(np.array([acc], dtype=object))

    def sum_windows(self, c: CipherArray, index, party: str) -> CipherArray:
        """Sum pooling: output ``p`` is ``∏_j c[index[p, j]]`` (entries −1 are padding)."""
        c = self._own(c, "sum_windows")
        index = np.asarray(index)
        flat = c.data.ravel()
        out = []
        n_mul = 0
        with self._timed(party, "add"):
            for row in index:
                sel = row[row >= 0]
                if sel.size == 0:
                    out.append(self._trivial(mpz(0)))
                    continue
                acc = flat[sel[0]]
                for j in sel[1:]:
                    acc = self._mul(acc, flat[j])
                n_mul += sel.size - 1
                out.append(acc)
        self._book("paillier_mul", n_mul, party)
        return self._wrap(np.array(out, dtype=object))

    # -- dot products (Conv, FC) ---------------------------------------------------------
    def dot(self, c: CipherArray, W, party: str, method: str = "multiexp",
            h: int | None = None) -> CipherArray:
        """Encrypted matrix-vector product ``[W @ x]`` from ``[x]`` (eq. (1) of the paper).

        ``method="multiexp"`` uses one Lim–Lee plan whose tables are shared by all rows;
        ``"naive"`` raises each ``[x_i]`` to ``W[r, i]`` and multiplies (the unoptimised
        baseline of Table 1).
        """
        c = self._own(c, "dot").ravel()
        W = np.asarray(W)
        if W.ndim != 2 or W.shape[1] != c.size:
            raise ValueError(f"dot: weights {W.shape} do not match {c.size} ciphertexts")
        index = np.arange(c.size)[None, :]
        return self.gather_dot(c, index, W, party, method, h).reshape(-1)

    def gather_dot(self, c: CipherArray, index, W, party: str, method: str = "multiexp",
                   h: int | None = None) -> CipherArray:
        """Convolution as gathered dot products: output ``[r, p] = ∏_j c[index[p,j]]^{W[r,j]}``.

        ``index`` (patches × taps) holds positions in ``c.ravel()``; −1 marks zero padding
        (skipped, as ``[0]^w = 1``). Tables of one patch are shared by all ``W`` rows.
        Returns a (rows, patches) CipherArray.
        """
        if method not in ("multiexp", "naive"):
            raise ValueError(f"method must be 'multiexp' or 'naive', got {method!r}")
        c = self._own(c, "gather_dot")
        flat = c.data.ravel()
        index = np.asarray(index)
        W = np.asarray(W)
        if W.dtype.kind not in "iu":
            raise TypeError(f"weights must be integers (encode them first), got {W.dtype}")
        if index.ndim != 2 or W.ndim != 2 or W.shape[1] != index.shape[1]:
            raise ValueError(f"gather_dot: index {index.shape} and weights {W.shape} disagree")
        if index.size and (index.max() >= flat.size or index.min() < -1):
            raise ValueError("gather_dot: index out of range")
        W = W.astype(np.int64)
        out = np.empty((W.shape[0], index.shape[0]), dtype=object)
        with self._timed(party, "dot"):
            if method == "naive":
                self._gather_naive(flat, index, W, out, party)
            else:
                self._gather_multiexp(flat, index, W, out, party, h)
        return self._wrap(out)

    def _gather_naive(self, flat, index, W, out, party) -> None:
        n_exp = n_bits = n_inv = n_mul = 0
        absW = np.abs(W)
        bitlen = np.zeros_like(absW)
        nz = absW > 0
        bitlen[nz] = np.floor(np.log2(absW[nz])).astype(np.int64) + 1
        for p, row in enumerate(index):
            valid = row >= 0
            cols = np.nonzero(valid)[0]
            bases = [flat[j] for j in row[valid]]
            for r in range(W.shape[0]):
                acc = None
                for k, col in enumerate(cols):
                    w = int(W[r, col])
                    if w == 0:
                        continue
                    if w < 0:  # as phe does: invert the ciphertext, raise it to |w|
                        term = self._pow(self._inv(bases[k]), -w)
                        n_inv += 1
                    else:
                        term = self._pow(bases[k], w)
                    if acc is None:
                        acc = term
                    else:
                        acc = self._mul(acc, term)
                        n_mul += 1
                out[r, p] = acc if acc is not None else self._trivial(mpz(0))
            wv = W[:, cols]
            n_exp += int((wv != 0).sum())
            n_bits += int(bitlen[:, cols].sum())
        self._book("paillier_exp", n_exp, party)
        self._book("paillier_exp_bits", n_bits, party)
        self._book("paillier_inv", n_inv, party)
        self._book("paillier_mul", n_mul, party)

    def _gather_multiexp(self, flat, index, W, out, party, h) -> None:
        full = multiexp_plan(W, h)
        h = full.h
        n_mul = n_inv = n_exp = n_bits = 0
        performed = 0
        plans: dict[bytes, MultiExpPlan] = {}
        for p, row in enumerate(index):
            valid = row >= 0
            if valid.all():
                plan, cols = full, None
            else:
                key = valid.tobytes()
                if key not in plans:
                    plans[key] = multiexp_plan(W[:, valid], h)
                plan, cols = plans[key], valid
            bases = [flat[j] for j in row[valid]]
            res, done = self._multiexp(bases, plan)
            performed += done
            out[:, p] = res
            n_mul += plan.total_mults()
            if plan.offset:
                n_exp += 1
                n_bits += plan.offset.bit_length()
                n_inv += 1
            del cols
        self.last_multiexp_mults = performed
        self._book("paillier_mul", n_mul, party)
        self._book("paillier_exp", n_exp, party)
        self._book("paillier_exp_bits", n_bits, party)
        self._book("paillier_inv", n_inv, party)

    def _multiexp(self, bases, plan: MultiExpPlan):
        """Lim–Lee multi-exponentiation of ``bases`` for every row of ``plan``.

        Returns the results and the number of modular multiplications performed (which the
        tests compare with :meth:`MultiExpPlan.total_mults`).
        """
        n2 = self.n2
        done = 0
        tables = []
        for g, size in enumerate(plan.group_sizes):
            grp = bases[g * plan.h: g * plan.h + size]
            T = [self.ONE] * (1 << size)
            for s in range(1, 1 << size):
                low = s & -s
                rest = s ^ low
                b = grp[low.bit_length() - 1]
                if rest:
                    T[s] = T[rest] * b % n2
                    done += 1
                else:
                    T[s] = b
            tables.append(T)
        results = []
        idx = plan.idx.tolist()          # plain lists: numpy scalar indexing is slow here
        maxbits = plan.idx.shape[1]
        for r, t in enumerate(plan.t.tolist()):
            acc = None
            for cols in idx[r][maxbits - t:]:
                if acc is not None:
                    acc = acc * acc % n2
                    done += 1
                for s, T in zip(cols, tables):
                    if s:
                        if acc is None:
                            acc = T[s]
                        else:
                            acc = acc * T[s] % n2
                            done += 1
            results.append(acc if acc is not None else self.ONE)
        if plan.offset:
            prod = tables[0][-1]
            for T in tables[1:]:
                prod = prod * T[-1] % n2
                done += 1
            corr = self._inv(self._pow(prod, plan.offset))
            results = [v * corr % n2 for v in results]
            done += len(results)
        return results, done

    # -- packing (§5.1, eq. (2)) ---------------------------------------------------------
    def pack(self, c: CipherArray, layout: PackingLayout, value_bits: int,
             party: str) -> CipherArray:
        """``[x̂] = ∏_m [x_m]^{(2^s)^m}`` for groups of ``ρ`` ciphertexts (Horner's rule).

        ``value_bits`` is what the packing party knows about the plaintexts: every one is in
        ``[0, 2^value_bits)``. It must fit the slot, otherwise a carry would spill into the
        next slot: that raises ``ValueError``.
        """
        c = self._own(c, "pack").ravel()
        if not isinstance(layout, PackingLayout):
            raise TypeError("layout must be a PackingLayout")
        if layout.n_bits != self.n_bits:
            raise ValueError(f"layout is for a {layout.n_bits}-bit modulus, key has "
                             f"{self.n_bits} bits")
        if value_bits > layout.slot_bits:
            raise ValueError(f"packing overflow: {value_bits}-bit values do not fit slots of "
                             f"{layout.slot_bits} bits")
        s = layout.slot_bits
        shift = mpz(1) << s
        out = []
        n_mul = 0
        with self._timed(party, "pack"):
            for g in layout.groups(c.size):
                acc = c.data[g[-1]]
                for m in reversed(g[:-1]):
                    acc = self._mul(self._pow(acc, shift), c.data[m])
                n_mul += (len(g) - 1) * (s + 1)
                out.append(acc)
        self._book("paillier_mul", n_mul, party)  # s squarings + 1 multiplication per slot
        return self._wrap(np.array(out, dtype=object))


class SimulatedPaillier(Paillier):
    """Same interface and operation counts as :class:`Paillier`, on plaintexts mod N.

    ``[m]`` is represented by ``m mod N``; the group operations become ``+``, ``·k`` and
    ``−``. Nothing is hidden: this backend exists to count full networks quickly and is
    checked against the real one in the tests.
    """

    simulated = True
    ONE = 0

    def _obfuscator(self):
        return 0

    def _enc(self, m):
        return int(m) % int(self.n)

    def _trivial(self, m):
        return int(m) % int(self.n)

    def _mul(self, a, b):
        return (a + b) % int(self.n)

    def _pow(self, a, e):
        return (a * int(e)) % int(self.n)

    def _inv(self, a):
        return (-a) % int(self.n)

    def _dec(self, private_key, c):
        return mpz(c)

    def _partial(self, c, d: int):
        return int(c)

    def _combine_one(self, u):
        return u

    def combine(self, p1, p2, party, signed=True):
        _check_partials(self, p1, p2)
        res = np.array([int(a) for a in p1.data.ravel()], dtype=object).reshape(p1.shape)
        self._book("paillier_mul", p1.size, party)
        return decode_int(res, self.pk) if signed else res

    def _gather_multiexp(self, flat, index, W, out, party, h) -> None:
        full = multiexp_plan(W, h)
        n = int(self.n)
        n_mul = n_inv = n_exp = n_bits = 0
        plans: dict[bytes, MultiExpPlan] = {}
        vals = np.array([int(v) for v in flat] + [0], dtype=object)  # index -1 → 0 (padding)
        G = vals[index]                                              # patches × taps
        res = W.astype(object) @ G.T                                 # rows × patches
        for row in index:
            valid = row >= 0
            if valid.all():
                plan = full
            else:
                key = valid.tobytes()
                if key not in plans:
                    plans[key] = multiexp_plan(W[:, valid], full.h)
                plan = plans[key]
            n_mul += plan.total_mults()
            if plan.offset:
                n_exp += 1
                n_bits += plan.offset.bit_length()
                n_inv += 1
        out[:, :] = np.vectorize(lambda v: int(v) % n, otypes=[object])(res)
        self._book("paillier_mul", n_mul, party)
        self._book("paillier_exp", n_exp, party)
        self._book("paillier_exp_bits", n_bits, party)
        self._book("paillier_inv", n_inv, party)

    def _gather_naive(self, flat, index, W, out, party) -> None:
        n = int(self.n)
        vals = np.array([int(v) for v in flat] + [0], dtype=object)
        G = vals[index]
        res = W.astype(object) @ G.T
        out[:, :] = np.vectorize(lambda v: int(v) % n, otypes=[object])(res)
        absW = np.abs(W)
        bitlen = np.zeros_like(absW)
        nz = absW > 0
        bitlen[nz] = np.floor(np.log2(absW[nz])).astype(np.int64) + 1
        n_exp = n_bits = n_inv = n_mul = 0
        for row in index:
            cols = np.nonzero(row >= 0)[0]
            wv = W[:, cols]
            nnz_rows = (wv != 0).sum(axis=1)
            n_exp += int(nnz_rows.sum())
            n_bits += int(bitlen[:, cols].sum())
            n_inv += int((wv < 0).sum())
            n_mul += int(np.maximum(nnz_rows - 1, 0).sum())
        self._book("paillier_exp", n_exp, party)
        self._book("paillier_exp_bits", n_bits, party)
        self._book("paillier_inv", n_inv, party)
        self._book("paillier_mul", n_mul, party)


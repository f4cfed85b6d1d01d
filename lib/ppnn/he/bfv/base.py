"""The packed-HE interface both BFV backends implement (GALA §II-C, GAZELLE §3).

A backend (:class:`PackedBackend`) holds the BFV parameters and keys of one client-server
session and offers the operations the GALA paper counts, on *batches* of ciphertexts
(numpy-style shapes: "multiply every input ciphertext by every kernel plaintext" is one call):

=====================  ===================================================  ==========
operation              what it computes on each slot vector                 booked as
=====================  ===================================================  ==========
``encrypt``            client encrypts a slot vector                        ``Enc``
``decrypt``            client decrypts                                      ``Dec``
``add``                ``[x] + [y]``                                        ``Add``
``add_plain/sub_plain``  ``[x] +/- s`` (share generation)                   ``AddPlain``
``mul_plain``          ``[x ⊙ s]`` (scalar multiplication, ScMult)          ``ScMult``
``rotate``             ``[x]`` rotated left by ``k`` slots (a Perm)         ``Perm``
``rotate_hoisted``     rotations of one ciphertext sharing one              ``DecPerm`` +
                       decomposition (GAZELLE's hoisting)                   ``HstPerm``
``flood``              sanitizes a ciphertext before it leaves the server   ``Enc``, ``2 Add``,
                       (:meth:`PackedBackend.flood`)                        ``Flood``
=====================  ===================================================  ==========

Rotation ``k`` means slot ``j`` of the result holds slot ``j + k (mod n)`` of the input
(SEAL's ``rotate_rows`` with a positive step). Every ciphertext (:class:`Ct`) carries the
noise of the paper's model (:class:`NoiseModel`). The counting, broadcasting, noise model
and argument checks live here, once; a backend implements only the ``_``-prefixed data
operations, so the operation counts of two backends agree by construction (tested).

See also
--------
docs/protocols.md : packed HE (the noise model, GAZELLE's and GALA's slot layouts).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ppnn.core import Ledger

__all__ = ["Ct", "Pt", "NoiseModel", "PackedBackend", "OPS", "is_pow2"]

OPS = ("Enc", "Dec", "Encode", "Add", "AddPlain", "ScMult", "Perm", "DecPerm", "HstPerm",
       "Flood")


def is_pow2(x: int) -> bool:
    return isinstance(x, int | np.integer) and x > 0 and (int(x) & (int(x) - 1)) == 0


@dataclass(frozen=True)
class NoiseModel:
    """GALA §II-C noise model, in units of a fresh ciphertext's noise ``eta_0``.

    ``budget(eta)`` turns a modelled noise into bits of SEAL-style invariant noise budget:
    ``fresh_bits - log2(eta / eta_0)`` (each doubling of the noise costs one bit).
    """

    eta_mult: float
    eta_rot: float
    eta0: float = 1.0
    fresh_bits: float = 0.0
    source: str = ""

    def __post_init__(self) -> None:
        for name in ("eta_mult", "eta_rot", "eta0"):
            v = getattr(self, name)
            if not (isinstance(v, int | float) and v >= 0 and math.isfinite(v)):
                raise ValueError(f"NoiseModel.{name} must be a finite number >= 0, got {v!r}")
        if self.eta0 <= 0:
            raise ValueError(f"NoiseModel.eta0 must be > 0, got {self.eta0}")

    def budget(self, eta) -> np.ndarray:
        return self.fresh_bits - np.log2(np.asarray(eta, dtype=float) / self.eta0)


class Ct:
    """A batch of ciphertexts of shape ``shape`` (one slot vector of ``n`` slots each)."""

    __slots__ = ("backend", "shape", "data", "noise", "ntt", "_cache")

    def __init__(self, backend: PackedBackend, shape, data, noise, ntt: bool = False):
        self.backend = backend
        self.shape = tuple(int(s) for s in shape)
        self.data = data
        if isinstance(noise, np.ndarray) and noise.shape == self.shape and noise.dtype == float:
            self.noise = noise
        else:
            self.noise = np.broadcast_to(np.asarray(noise, dtype=float), self.shape).copy()
        self.ntt = ntt
        self._cache = None

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getitem__(self, idx) -> Ct:
        return self.backend._index(self, idx)

    def reshape(self, *shape) -> Ct:
        if len(shape) == 1 and isinstance(shape[0], tuple | list):
            shape = tuple(shape[0])
        return self.backend._reshape(self, tuple(shape))

    def __repr__(self) -> str:
        return f"Ct(shape={self.shape}, backend={self.backend.name})"


class Pt:
    """A batch of encoded plaintexts (server side). ``values`` is ``None`` when the backend
    only counts (no slot values are tracked)."""

    __slots__ = ("shape", "values", "data")

    def __init__(self, shape, values, data=None):
        self.shape = tuple(int(s) for s in shape)
        self.values = values
        self.data = data

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self) -> str:
        return f"Pt(shape={self.shape})"


def _norm_axis(axis, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int | np.integer) else tuple(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} out of range for a batch of {ndim} dimensions")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {axis}")
    return tuple(sorted(out))


class PackedBackend:
    """Common part of the BFV backends: checks, broadcasting, counting, noise model, timing.

    Parameters
    ----------
    n : logical slot count of one ciphertext (GALA's ``n``), a power of two.
    p : plaintext modulus (prime, ``p = 1 mod 2N`` for batching).
    poly_degree : ring dimension ``N`` (sets the size of a ciphertext on the wire).
    q_bits : bits of the ciphertext modulus a ciphertext carries (wire size).
    noise_model : :class:`NoiseModel` tracked for every ciphertext.
    special_bits : bits of the key-switching (special) prime, not carried by ciphertexts but
        part of the modulus the 128-bit bound applies to (:attr:`total_q_bits`).
    ledger : where operation counts go (``None``: nothing is booked); see :meth:`recording`.
    """

    name = "abstract"
    tracks_values = True
    real = False  # True: real ciphertexts (masks then come from the OS CSPRNG)

    def __init__(self, n: int, p: int, poly_degree: int, q_bits: int, noise_model: NoiseModel,
                 ledger: Ledger | None = None, server: str = "server", client: str = "client",
                 special_bits: int = 0):
        if not is_pow2(n) or n < 2:
            raise ValueError(f"slot count n must be a power of two >= 2, got {n}")
        if not isinstance(p, int | np.integer) or p < 3 or p >= 1 << 31:
            raise ValueError(f"plaintext modulus p must be an int in [3, 2^31), got {p}")
        self.n = int(n)
        self.p = int(p)
        self.poly_degree = int(poly_degree)
        self.q_bits = int(q_bits)
        if isinstance(special_bits, bool) or not isinstance(special_bits, int | np.integer) \
                or special_bits < 0:
            raise ValueError(f"special_bits must be an int >= 0, got {special_bits!r}")
        self.special_bits = int(special_bits)
        self.key_primes = 1  # ciphertext primes (one key-switching pair each); see galois_key_bits
        self.noise_model = noise_model
        self.ledger = ledger
        self.server = server
        self.client = client
        self._steps: set[int] = set()
        self.timing: dict[str, list] = {}
        self.time_ops = False
        self.flood_bits = 0          # statistical security parameter lambda_s (0: no flooding)
        self.flood_margin_bits = 8   # bits added to the model's noise to bound any weights'

    def set_flooding(self, bits: int, margin_bits: int = 8) -> None:
        """Flood every ciphertext the server returns with ``bits`` bits of statistical
        security (``0`` turns flooding off); see :meth:`flood`."""
        for name, v in (("bits", bits), ("margin_bits", margin_bits)):
            if not isinstance(v, int | np.integer) or v < 0:
                raise ValueError(f"flooding {name} must be an int >= 0, got {v!r}")
        if bits and self.noise_model.fresh_bits - bits - margin_bits < 1:
            raise ValueError(
                f"flooding with lambda_s={bits} (+{margin_bits} margin) bits needs a fresh "
                f"noise budget above {bits + margin_bits} bits; these parameters have "
                f"{self.noise_model.fresh_bits:.0f} (N={self.poly_degree}, {self.q_bits}-bit q)"
                "; use a larger ciphertext modulus (SEAL: N=8192)")
        self.flood_bits, self.flood_margin_bits = int(bits), int(margin_bits)

    # -- sizes ------------------------------------------------------------------------------
    @property
    def total_q_bits(self) -> int:
        """Bits of the whole coefficient modulus (ciphertext primes + special prime): what
        :func:`ppnn.he.bfv.security.check_128` bounds."""
        return self.q_bits + self.special_bits

    @property
    def ciphertext_bits(self) -> int:
        """Bits of one ciphertext on the wire: two polynomials of ``N`` coefficients mod q."""
        return 2 * self.poly_degree * self.q_bits

    @property
    def galois_key_bits(self) -> int:
        """Bits of one Galois (rotation) key (overridden by the real backend). Without a special
        prime (``special_bits = 0``, the papers' single 60-bit q): one pair of polynomials mod
        q. With one: SEAL's layout, one key-switching pair of ``N`` coefficients mod the whole
        modulus per ciphertext prime (``key_primes``)."""
        if not self.special_bits:
            return 2 * self.poly_degree * self.q_bits
        return self.key_primes * 2 * self.poly_degree * self.total_q_bits

    # -- booking / timing -------------------------------------------------------------------
    @contextlib.contextmanager
    def recording(self, ledger: Ledger | None):
        """Book every operation inside on ``ledger`` (restores the previous one after)."""
        old = self.ledger
        self.ledger = ledger
        try:
            yield self
        finally:
            self.ledger = old

    def _count(self, op: str, k: int, party: str | None = None) -> None:
        if self.ledger is not None and k:
            self.ledger.count(op, int(k), party or self.server)

    def _timed(self, op: str):
        return _Timer(self, op) if self.time_ops else _NULL

    # -- rotation keys ----------------------------------------------------------------------
    @property
    def rotation_steps(self) -> frozenset[int]:
        return frozenset(self._steps)

    def keygen(self, steps: Iterable[int]) -> list[int]:
        """Client side: create Galois keys for left rotations by ``steps`` (mod n).

        Returns the steps that were new (the protocol books their transfer)."""
        new = sorted({int(s) % self.n for s in steps} - {0} - self._steps)
        if new:
            self._make_keys(new)
            self._steps.update(new)
        return new

    @contextlib.contextmanager
    def key_scope(self):
        """Rotation keys created inside are dropped on exit (the earlier set comes back).

        For experiments that run many independent layers on one backend: keys accumulate
        otherwise, and on real SEAL at N = 8192 each Galois key is over a megabyte: a sweep
        over many layer dimensions would hold thousands of them."""
        saved = (set(self._steps), self._key_state())
        try:
            yield self
        finally:
            self._steps = saved[0]
            self._set_key_state(saved[1])

    def _key_state(self):
        return None

    def _set_key_state(self, state) -> None:
        pass

    def _check_steps(self, steps: np.ndarray) -> None:
        missing = sorted({int(s) for s in np.unique(steps)} - {0} - self._steps)
        if missing:
            have = sorted(self._steps)
            more = "..." if len(have) > 12 else ""
            raise ValueError(
                f"no Galois key for rotation step(s) {missing[:8]} (mod n={self.n}); the client "
                f"generated keys for {have[:12]}{more}; call keygen(steps) first"
            )

    # -- plaintext values -------------------------------------------------------------------
    def _reduce(self, values, what: str) -> np.ndarray:
        v = np.asarray(values)
        if v.dtype.kind not in "iu":
            if v.dtype.kind == "f" and np.all(np.isfinite(v)) and np.all(v == np.round(v)):
                v = v.astype(np.int64)
            else:
                raise TypeError(f"{what} must be integers (fixed-point encoded), got {v.dtype}")
        if v.ndim < 1 or v.shape[-1] != self.n:
            raise ValueError(f"{what} must have a last axis of n={self.n} slots, got {v.shape}")
        half = (self.p - 1) // 2
        lo, hi = (int(v.min()), int(v.max())) if v.size else (0, 0)
        if lo < -half or hi >= self.p:
            raise ValueError(
                f"{what} out of range for plaintext modulus p={self.p}: values must lie in "
                f"[-{half}, {half}] (signed) or [0, {self.p - 1}], got [{lo}, {hi}]; "
                "use a wider plain modulus or smaller fixed-point scales")
        return np.mod(v.astype(np.int64), self.p)

    # -- the interface ----------------------------------------------------------------------
    def encrypt(self, values) -> Ct:
        """Client encrypts slot vectors ``values`` (shape ``(..., n)``)."""
        v = self._reduce(values, "encrypt(values)")
        shape = v.shape[:-1]
        with self._timed("Enc"):
            data = self._encrypt(v, shape)
        self._count("Enc", int(np.prod(shape, dtype=np.int64)), self.client)
        return Ct(self, shape, data, self.noise_model.eta0)

    def decrypt(self, ct: Ct) -> np.ndarray:
        """Client decrypts; returns residues in ``[0, p)`` of shape ``ct.shape + (n,)``."""
        self._check_ct(ct, "decrypt(ct)")
        with self._timed("Dec"):
            out = self._decrypt(ct)
        self._count("Dec", ct.size, self.client)
        return out

    def encode(self, values: np.ndarray | Callable[[], np.ndarray] | None,
               shape: Sequence[int] | None = None) -> Pt:
        """Server encodes plaintext slot vectors. ``values`` may be a callable (only called by
        backends that track values) and then ``shape`` (the batch shape) is required."""
        if callable(values) or values is None:
            if shape is None:
                raise ValueError("encode(callable) needs the batch shape")
            if not self.tracks_values:
                return Pt(tuple(shape), None)
        with self._timed("Encode"):  # the server's weight preparation, all of it
            if callable(values):
                values = values()
            v = self._reduce(values, "encode(values)")
            if shape is not None and tuple(shape) != v.shape[:-1]:
                raise ValueError(f"encode: values have batch shape {v.shape[:-1]}, "
                                 f"expected {tuple(shape)}")
            data = self._encode(v, v.shape[:-1])
        return Pt(v.shape[:-1], v, data)

    def add(self, a: Ct, b: Ct) -> Ct:
        self._check_ct(a, "add(a)")
        self._check_ct(b, "add(b)")
        shape = a.shape if a.shape == b.shape else self._bshape(a.shape, b.shape, "add")
        with self._timed("Add"):
            data, ntt = self._add(a, b, shape)
        self._count("Add", _prod(shape))
        return Ct(self, shape, data, a.noise + b.noise if a.shape == b.shape else
                  np.broadcast_to(a.noise, shape) + b.noise, ntt)

    def sub_plain(self, ct: Ct, pt: Pt) -> Ct:
        return self._plain_op(ct, pt, -1)

    def add_plain(self, ct: Ct, pt: Pt) -> Ct:
        return self._plain_op(ct, pt, +1)

    def _plain_op(self, ct: Ct, pt: Pt, sign: int) -> Ct:
        self._check_ct(ct, "add_plain(ct)")
        self._check_pt(pt, "add_plain(pt)")
        shape = self._bshape(ct.shape, pt.shape, "add_plain")
        with self._timed("AddPlain"):
            data, ntt = self._plain_add(ct, pt, shape, sign)
        self._count("AddPlain", _prod(shape))
        return Ct(self, shape, data, np.broadcast_to(ct.noise, shape), ntt)

    def mul_plain(self, ct: Ct, pt: Pt) -> Ct:
        """ScMult: slotwise product of ciphertexts and plaintexts (broadcast batch shapes)."""
        self._check_ct(ct, "mul_plain(ct)")
        self._check_pt(pt, "mul_plain(pt)")
        shape = self._bshape(ct.shape, pt.shape, "mul_plain")
        with self._timed("ScMult"):
            data = self._mul_plain(ct, pt, shape)
        self._count("ScMult", _prod(shape))
        noise = np.broadcast_to(ct.noise, shape) * self.noise_model.eta_mult
        return Ct(self, shape, data, noise, ntt=True)

    def mul_plain_sum(self, ct: Ct, pt: Pt, axis) -> Ct:
        """``sum over axis of mul_plain(ct, pt)`` without holding every product (ScMult + Add)."""
        self._check_ct(ct, "mul_plain_sum(ct)")
        self._check_pt(pt, "mul_plain_sum(pt)")
        shape = self._bshape(ct.shape, pt.shape, "mul_plain_sum")
        axes = _norm_axis(axis, len(shape))
        out_shape = tuple(s for i, s in enumerate(shape) if i not in axes)
        with self._timed("ScMultSum"):
            data = self._mul_plain_sum(ct, pt, shape, axes, out_shape)
        self._count("ScMult", _prod(shape))
        self._count("Add", _prod(shape) - _prod(out_shape))
        noise = (np.broadcast_to(ct.noise, shape) * self.noise_model.eta_mult).sum(axis=axes)
        return Ct(self, out_shape, data, noise, ntt=True)

    def sum(self, ct: Ct, axis=None) -> Ct:
        """Add the ciphertexts along ``axis`` (``size - out_size`` Adds)."""
        self._check_ct(ct, "sum(ct)")
        axes = _norm_axis(axis, ct.ndim)
        out_shape = tuple(s for i, s in enumerate(ct.shape) if i not in axes)
        if any(ct.shape[a] == 0 for a in axes):
            raise ValueError("cannot sum over an empty axis")
        with self._timed("Add"):
            data = self._sum(ct, axes, out_shape)
        self._count("Add", ct.size - _prod(out_shape))
        return Ct(self, out_shape, data, ct.noise.sum(axis=axes), ct.ntt)

    def rotate(self, ct: Ct, steps) -> Ct:
        """Perm: rotate each ciphertext left by ``steps`` (int or array broadcast to the batch)."""
        self._check_ct(ct, "rotate(ct)")
        if isinstance(steps, int | np.integer):  # fast path: one step for the whole batch
            k = int(steps) % self.n
            if k and k not in self._steps:
                self._check_steps(np.array([k]))
            with self._timed("Perm"):
                data = self._rotate(ct, k, ct.shape)
            self._count("Perm", ct.size if k else 0)
            return Ct(self, ct.shape, data, ct.noise + (self.noise_model.eta_rot if k else 0.0))
        st = np.mod(np.asarray(steps, dtype=np.int64), self.n)
        shape = self._bshape(ct.shape, st.shape, "rotate")
        st = np.broadcast_to(st, shape)
        self._check_steps(st)
        with self._timed("Perm"):
            data = self._rotate(ct, st, shape)
        nz = st != 0
        self._count("Perm", int(nz.sum()))
        noise = np.broadcast_to(ct.noise, shape) + nz * self.noise_model.eta_rot
        return Ct(self, shape, data, noise)

    def rotate_hoisted(self, ct: Ct, steps: Sequence[int]) -> Ct:
        """Rotations of every ciphertext by each of ``steps`` (result shape
        ``ct.shape + (len(steps),)``): one DecPerm per ciphertext plus one HstPerm per non-zero
        step (GAZELLE's hoisting; SEAL has no hoisting API, so the real backend performs plain
        rotations and the *counts* follow GAZELLE's accounting)."""
        self._check_ct(ct, "rotate_hoisted(ct)")
        st = np.mod(np.asarray(list(steps), dtype=np.int64).reshape(-1), self.n)
        if st.size == 0:
            raise ValueError("rotate_hoisted needs at least one step")
        self._check_steps(st)
        shape = ct.shape + (st.size,)
        with self._timed("HstPerm"):
            data = self._rotate(ct, np.broadcast_to(st, shape), shape, hoisted=True)
        nnz = int((st != 0).sum())
        self._count("DecPerm", ct.size if nnz else 0)
        self._count("HstPerm", ct.size * nnz)
        noise = ct.noise[..., None] + (st != 0) * self.noise_model.eta_rot
        return Ct(self, shape, data, noise)

    def flood_log2_bound(self, ct: Ct) -> float:
        """log2 of the flooding bound ``B`` in units of ``eta_0`` for the batch ``ct``.

        ``B = 2^(lambda_s + margin) * max(eta)``: the §II-C model's noise of the batch (a
        function of the public shapes and operations only, never of the weights: calibrated
        with uniformly random plaintexts, which is what any batch-encoded weight vector looks
        like) times ``2^margin`` to bound every weight vector (one ScMult grows the noise by at
        most ``N p / 2``, the calibrated typical growth is about ``sqrt(N) p / 2``), times
        ``2^lambda_s``: the statistical distance between the flooded noise of two weight
        matrices is at most ``N * 2^-lambda_s`` per ciphertext."""
        return self._flood_log2_bound(ct.noise, self.flood_bits)

    def _flood_log2_bound(self, noise, bits: int) -> float:
        return float(np.log2(np.max(noise))) + self.flood_margin_bits + bits

    def _flooded_noise(self, noise, bits: int) -> tuple[float, np.ndarray]:
        """``(log2 B, noise after flooding)`` of ciphertexts of model noise ``noise`` flooded
        with ``bits`` (lambda_s): the model :meth:`flood` applies."""
        log2_b = self._flood_log2_bound(noise, bits)
        return log2_b, noise + 2.0 ** log2_b + self.noise_model.eta0

    def flooded_budget(self, noise, bits: int | None = None) -> float:
        """Bits of noise budget left after flooding ciphertexts of model noise ``noise`` (an
        array: one batch of returned ciphertexts, or its largest entry) with ``bits`` of
        statistical security (default: the backend's ``flood_bits``): the smallest over the
        batch. :meth:`flood` refuses a batch for which this is below 1 bit; the noise depends on
        the public shapes and operations only, so a protocol can check it before it runs."""
        bits = self.flood_bits if bits is None else int(bits)
        _, noise = self._flooded_noise(np.asarray(noise, dtype=float), bits)
        return float(np.min(self.noise_model.budget(noise)))

    def flood(self, ct: Ct) -> Ct:
        """Server: sanitize ciphertexts before they leave (noise flooding, circuit privacy).

        The server adds a fresh public-key encryption of zero (re-randomizes ``c1``, which is
        otherwise a known linear function of the weights) and ``(E, 0)`` with every
        coefficient of ``E`` uniform in ``[-B, B)``, ``B`` = :meth:`flood_log2_bound` (in the
        noise units of the backend). The returned noise is then ``E + e + e'`` with
        ``|e + e'| <= 2^-lambda_s B``: its distribution is statistically independent of the
        weights. Booked as ``Enc`` (server), two ``Add`` and one ``Flood`` per ciphertext.
        Raises ``ValueError`` when the flooded noise would not decrypt (budget < 1 bit)."""
        self._check_ct(ct, "flood(ct)")
        if not self.flood_bits:
            raise ValueError("flooding is off: call set_flooding(bits) first")
        log2_b, noise = self._flooded_noise(ct.noise, self.flood_bits)
        left = float(np.min(self.noise_model.budget(noise)))
        if left < 1:
            raise ValueError(
                f"flooding with lambda_s={self.flood_bits} bits leaves {left:.1f} bits of noise "
                f"budget (the kernel left {float(np.min(self.model_budget(ct))):.1f}): "
                f"decryption would fail; use a larger ciphertext modulus")
        with self._timed("Flood"):
            data = self._flood(ct, log2_b)
        self._count("Enc", ct.size)
        self._count("Add", 2 * ct.size)
        self._count("Flood", ct.size)
        return Ct(self, ct.shape, data, noise)

    def stack(self, cts: Sequence[Ct], axis: int = 0) -> Ct:
        """Stack ciphertext batches of equal shape along a new axis (no HE work)."""
        cts = list(cts)
        if not cts:
            raise ValueError("stack needs at least one ciphertext batch")
        for c in cts:
            self._check_ct(c, "stack")
            if c.shape != cts[0].shape:
                raise ValueError(f"stack: shapes differ {c.shape} vs {cts[0].shape}")
        ax = axis % (cts[0].ndim + 1)
        data = self._stack(cts, ax)
        noise = np.stack([c.noise for c in cts], axis=ax)
        ntt = all(c.ntt for c in cts)
        if not ntt and any(c.ntt for c in cts):
            cts = [self._from_ntt(c) for c in cts]
            data = self._stack(cts, ax)
        return Ct(self, noise.shape, data, noise, ntt)

    def for_products(self, ct: Ct) -> Ct:
        """The same ciphertexts, prepared once for many ScMults (NTT form on SEAL; a no-op on
        the simulator). Slices of the result keep the prepared form. No operation is booked."""
        self._check_ct(ct, "for_products(ct)")
        return self._for_products(ct)

    def _for_products(self, ct: Ct) -> Ct:
        return ct

    def noise_budget(self, ct: Ct) -> np.ndarray:
        """Remaining noise budget in bits: measured by SEAL on the real backend, the model's
        prediction on the simulator."""
        return self.model_budget(ct)

    def model_budget(self, ct: Ct) -> np.ndarray:
        return self.noise_model.budget(ct.noise)

    # -- helpers ----------------------------------------------------------------------------
    def _check_ct(self, ct, what: str) -> None:
        if not isinstance(ct, Ct):
            raise TypeError(f"{what} must be a Ct, got {type(ct).__name__}")
        if ct.backend is not self:
            raise ValueError(f"{what} belongs to another backend ({ct.backend.name})")

    def _check_pt(self, pt, what: str) -> None:
        if not isinstance(pt, Pt):
            raise TypeError(f"{what} must be a Pt (use backend.encode), got {type(pt).__name__}")

    @staticmethod
    def _bshape(a, b, what: str) -> tuple[int, ...]:
        try:
            return tuple(np.broadcast_shapes(tuple(a), tuple(b)))
        except ValueError:
            raise ValueError(f"{what}: batch shapes {tuple(a)} and {tuple(b)} do not "
                             "broadcast") from None

    # -- to implement -----------------------------------------------------------------------
    def _make_keys(self, steps: list[int]) -> None:
        pass

    def _encrypt(self, v, shape):
        raise NotImplementedError

    def _decrypt(self, ct):
        raise NotImplementedError

    def _encode(self, v, shape):
        return None

    def _add(self, a, b, shape):
        raise NotImplementedError

    def _plain_add(self, ct, pt, shape, sign):
        raise NotImplementedError

    def _mul_plain(self, ct, pt, shape):
        raise NotImplementedError

    def _mul_plain_sum(self, ct, pt, shape, axes, out_shape):
        raise NotImplementedError

    def _sum(self, ct, axes, out_shape):
        raise NotImplementedError

    def _rotate(self, ct, steps, shape, hoisted: bool = False):
        raise NotImplementedError

    def _flood(self, ct, log2_bound):
        raise NotImplementedError

    def _index(self, ct: Ct, idx) -> Ct:
        raise NotImplementedError

    def _reshape(self, ct: Ct, shape) -> Ct:
        raise NotImplementedError

    def _stack(self, cts, axis):
        raise NotImplementedError

    def _from_ntt(self, ct: Ct) -> Ct:
        return ct


class _Timer:
    """Adds the CPU time of the block to ``backend.timing[op]``."""

    __slots__ = ("backend", "op", "t0")

    def __init__(self, backend, op):
        self.backend, self.op = backend, op

    def __enter__(self):
        self.t0 = time.process_time()

    def __exit__(self, *exc):
        rec = self.backend.timing.setdefault(self.op, [0, 0.0])
        rec[0] += 1
        rec[1] += time.process_time() - self.t0
        return False


_NULL = contextlib.nullcontext()


def _prod(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))

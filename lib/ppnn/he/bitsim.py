"""TFHE gate backends: the common interface and a numpy bit simulator.

A *gate backend* (:class:`GateBackend`) evaluates Boolean gates (:data:`GATES`) element-wise
on whole arrays of encrypted bits (:class:`Bits`). Two backends share this interface, so
every circuit is written once:

* :class:`BitSimulator` (here) evaluates the gates on plaintext bits with numpy;
* :class:`ppnn.he.tfhe.TfheBackend` evaluates them on real tfhe-rs ciphertexts through the
  project's binding ``ppnn_tfhe``.

Both keep the same *public* bookkeeping per bit, computed here from what the server has
anyway: ``trivial`` / ``const`` (public constants as tfhe-rs's trivial ciphertexts, with its
shortcuts for gates on them, so the simulator books the same bootstraps;
``public_constants=False`` turns them off), ``md`` (multiplicative depth: consecutive
AND-type gates, :data:`AND_LIKE`) and ``gd`` (bootstrap depth).

Counters: ``backend.gates[name]`` counts element-wise evaluations that ran at least one
bootstrap (HGOPs), ``backend.bootstraps`` the programmable bootstraps (a MUX of three
encrypted inputs runs two), ``backend.ops`` all element-wise evaluations including shortcuts
and the free NOTs (the binding's ``op_count``). With a ``ledger`` the backend also books
``gate_AND`` ... and ``bootstrap`` operations for ``party`` under the ledger's current label.

See also
--------
docs/protocols.md : TFHE gates (the trivial-bit rules and the two depths).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.transcript import SIZE_ONLY

__all__ = ["Bits", "GateBackend", "BitSimulator", "GATES", "AND_LIKE", "SIM_CIPHERTEXT_BYTES"]

#: gate names in counter order (NOT is free and counted separately)
GATES = ("and", "or", "xor", "nand", "nor", "xnor", "mux")
#: gates that add one level of multiplicative depth
AND_LIKE = frozenset({"and", "or", "nand", "nor", "mux"})

_TRUTH = {
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "nand": lambda a, b: 1 - (a & b),
    "nor": lambda a, b: 1 - (a | b),
    "xnor": lambda a, b: 1 - (a ^ b),
}
#: input value that fixes the output of a gate whatever the other input is (tfhe-rs shortcut):
#: gate -> (absorbing input value, output value); XOR/XNOR have none
_ABSORB = {"and": (0, 0), "nand": (0, 1), "or": (1, 1), "nor": (1, 0)}

#: bytes of one serialized tfhe-rs 1.8 Boolean ciphertext under DEFAULT_PARAMETERS (small LWE
#: key, n = 805: 806 u32 coefficients = 3,224 bytes, plus bincode's tags and lengths); the real
#: backend reports the binding's ``serialized_size`` (a test checks they agree).
SIM_CIPHERTEXT_BYTES = 3260

_ids = itertools.count(1)


@dataclass(eq=False, repr=False)
class Bits:
    """An array of encrypted bits held by a gate backend (shape like a numpy array).

    ``data`` is the backend's payload (plaintext bits for the simulator, a ``ppnn_tfhe.BitArray``
    for tfhe-rs). ``trivial``, ``const``, ``md`` and ``gd`` are public metadata (see the module
    docstring); they never depend on secret values.
    """

    backend: GateBackend
    data: Any
    trivial: np.ndarray
    const: np.ndarray
    md: np.ndarray
    gd: np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        return self.trivial.shape

    @property
    def size(self) -> int:
        return int(self.trivial.size)

    def __len__(self) -> int:
        return self.shape[0]

    def take(self, indices) -> Bits:
        """Bits at flat ``indices`` (result has the indices' shape); no gates."""
        return self.backend.take(self, indices)

    def reshape(self, *shape) -> Bits:
        return self.backend.reshape(self, shape[0] if len(shape) == 1 else shape)

    def __repr__(self) -> str:
        return (f"Bits(shape={self.shape}, backend={self.backend.name}, "
                f"trivial={int(self.trivial.sum())}, max_md={int(self.md.max(initial=0))})")


def _bit_array(bits, what: str = "bits") -> np.ndarray:
    arr = np.asarray(bits)
    if arr.dtype == bool:
        return arr.astype(np.uint8)
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{what} must be an integer or bool array of 0/1, got dtype {arr.dtype}")
    if arr.size and (arr.min() < 0 or arr.max() > 1):
        raise ValueError(f"{what} must hold only 0 and 1, got values in "
                         f"[{arr.min()}, {arr.max()}]")
    return arr.astype(np.uint8)


class GateBackend:
    """Common interface and public bookkeeping of TFHE gate backends.

    Subclasses supply the payload operations ``_encrypt``, ``_decrypt``, ``_trivial``,
    ``_binary``, ``_not``, ``_mux``, ``_take``, ``_concat``, ``_reshape`` and
    ``ciphertext_bytes``.

    Parameters
    ----------
    public_constants : bool
        True: constants are trivial ciphertexts (tfhe-rs's shortcuts apply). False: constants
        are copies of one encrypted 0 supplied by the client (every gate bootstraps).
    ledger : ppnn.core.Ledger, optional
        Where gate and bootstrap counts are booked.
    party : str
        The party that evaluates the gates (default ``"server"``).
    """

    name = "abstract"

    def __init__(self, public_constants: bool = True, ledger=None, party: str = "server"):
        if not isinstance(public_constants, bool):
            raise TypeError(f"public_constants must be a bool, got {public_constants!r}")
        self.public_constants = public_constants
        self.ledger = ledger
        self.party = party
        self.key_id = next(_ids)
        self._zero: Bits | None = None
        self.reset_counts()

    # -- counters ------------------------------------------------------------------------
    def reset_counts(self) -> None:
        self.gates: dict[str, int] = dict.fromkeys(GATES, 0)
        self.ops: dict[str, int] = dict.fromkeys((*GATES, "not"), 0)
        self.bootstraps = 0

    @property
    def hgops(self) -> int:
        """Homomorphic gate operations: element-wise gate evaluations that bootstrapped."""
        return sum(self.gates.values())

    def counts(self) -> dict[str, int]:
        """Snapshot: bootstrapped evaluations by gate name, ``hgops`` and ``bootstraps``."""
        return {**self.gates, "hgops": self.hgops, "bootstraps": self.bootstraps}

    def _book(self, gate: str, evaluations: int, bootstraps: int) -> None:
        self.gates[gate] += evaluations
        self.bootstraps += bootstraps
        if self.ledger is not None and evaluations:
            self.ledger.count(f"gate_{gate.upper()}", evaluations, self.party)
            self.ledger.count("bootstrap", bootstraps, self.party)

    # -- checks --------------------------------------------------------------------------
    def _own(self, x, what: str) -> Bits:
        if not isinstance(x, Bits):
            raise TypeError(f"{what} must be Bits from a gate backend, got {type(x).__name__}")
        if x.backend is not self:
            raise ValueError(
                f"{what} belongs to another key (backend {x.backend.name} #{x.backend.key_id}, "
                f"this is {self.name} #{self.key_id}): ciphertexts can only be used with the "
                "key that produced them")
        return x

    def _same(self, **named: Bits) -> tuple[int, ...]:
        items = [(k, self._own(v, k)) for k, v in named.items()]
        shape = items[0][1].shape
        for k, v in items[1:]:
            if v.shape != shape:
                raise ValueError(f"shape mismatch: {items[0][0]} has shape {shape} but {k} has "
                                 f"shape {v.shape} (gates are element-wise; no broadcasting)")
        return shape

    def _make(self, data, trivial, const, md, gd) -> Bits:
        return Bits(self, data, np.asarray(trivial, bool), np.asarray(const, np.uint8),
                    np.asarray(md, np.int32), np.asarray(gd, np.int32))

    # -- client side ---------------------------------------------------------------------
    def encrypt(self, bits) -> Bits:
        """Encrypt an array of 0/1 under this backend's key (the client's step)."""
        arr = _bit_array(bits)
        z = np.zeros(arr.shape, np.int32)
        return self._make(self._encrypt(arr), np.zeros(arr.shape, bool), np.zeros_like(arr),
                          z, z.copy())

    def decrypt(self, x: Bits) -> np.ndarray:
        """Decrypt to a uint8 array of the same shape (the client's step)."""
        self._own(x, "x")
        return np.asarray(self._decrypt(x.data), np.uint8).reshape(x.shape)

    def set_encrypted_zero(self, zero: Bits) -> None:
        """Give the server an encrypted 0 (one ciphertext from the client) for constants."""
        zero = self._own(zero, "zero")
        if zero.size != 1 or bool(zero.trivial.any()):
            raise ValueError("zero must be a single encrypted (non-trivial) bit")
        self._zero = zero.reshape((1,))

    # -- server side: constants ----------------------------------------------------------
    def trivial(self, bits) -> Bits:
        """Trivial (noiseless, public) ciphertexts of constants."""
        arr = _bit_array(bits)
        z = np.zeros(arr.shape, np.int32)
        return self._make(self._trivial(arr), np.ones(arr.shape, bool), arr, z, z.copy())

    def constant(self, bits) -> Bits:
        """Public constants as this backend represents them (see ``public_constants``)."""
        arr = _bit_array(bits)
        if self.public_constants:
            return self.trivial(arr)
        if self._zero is None:
            self.set_encrypted_zero(self.encrypt(np.zeros(1, np.uint8)))
        pool = self.concat([self._zero, self.not_(self._zero)])
        return self.take(pool, arr.astype(np.int64))

    def zeros(self, shape) -> Bits:
        return self.constant(np.zeros(shape, np.uint8))

    # -- server side: gates --------------------------------------------------------------
    def _gate2(self, gate: str, a: Bits, b: Bits) -> Bits:
        shape = self._same(a=a, b=b)
        ta, tb = a.trivial, b.trivial
        both_enc = ~ta & ~tb
        both_triv = ta & tb
        out_t = both_triv.copy()
        out_c = np.where(both_triv, _TRUTH[gate](a.const, b.const), 0).astype(np.uint8)
        md = np.zeros(shape, np.int32)
        gd = np.zeros(shape, np.int32)
        # exactly one input trivial: the encrypted one passes (maybe negated) or is absorbed
        one_a, one_b = ta & ~tb, tb & ~ta  # one_a: a is the trivial one, b is encrypted
        for triv, enc, mask in ((a, b, one_a), (b, a, one_b)):
            if not mask.any():
                continue
            if gate in _ABSORB:
                absorb_in, absorb_out = _ABSORB[gate]
                absorbed = mask & (triv.const == absorb_in)
                out_t |= absorbed
                out_c[absorbed] = absorb_out
                passed = mask & ~absorbed
            else:
                passed = mask
            md[passed] = enc.md[passed]
            gd[passed] = enc.gd[passed]
        md[both_enc] = np.maximum(a.md, b.md)[both_enc] + (gate in AND_LIKE)
        gd[both_enc] = np.maximum(a.gd, b.gd)[both_enc] + 1
        n = int(both_enc.sum())
        self.ops[gate] += a.size
        self._book(gate, n, n)
        data = self._binary(gate, a.data, b.data)
        return self._make(data, out_t, out_c, md, gd)

    def and_(self, a: Bits, b: Bits) -> Bits:
        return self._gate2("and", a, b)

    def or_(self, a: Bits, b: Bits) -> Bits:
        return self._gate2("or", a, b)

    def xor(self, a: Bits, b: Bits) -> Bits:
        return self._gate2("xor", a, b)

    def nand(self, a: Bits, b: Bits) -> Bits:
        return self._gate2("nand", a, b)

    def nor(self, a: Bits, b: Bits) -> Bits:
        return self._gate2("nor", a, b)

    def xnor(self, a: Bits, b: Bits) -> Bits:
        return self._gate2("xnor", a, b)

    def not_(self, a: Bits) -> Bits:
        """NOT: free (negates the LWE ciphertext; no bootstrap, depth unchanged)."""
        a = self._own(a, "a")
        self.ops["not"] += a.size
        const = np.where(a.trivial, 1 - a.const, 0).astype(np.uint8)
        return self._make(self._not(a.data), a.trivial.copy(), const, a.md.copy(), a.gd.copy())

    def mux(self, c: Bits, a: Bits, b: Bits) -> Bits:
        """Element-wise ``c ? a : b``.

        tfhe-rs: two bootstraps when all three inputs are encrypted; with a trivial condition a
        copy of the selected branch; with an encrypted condition and a trivial branch one
        AND/OR of ``c`` (or ``NOT c``) with the other branch (``a=1: c OR b``,
        ``a=0: NOT c AND b``, ``b=1: a OR NOT c``, ``b=0: c AND a``), itself shortcut if that
        branch is trivial too.
        """
        shape = self._same(c=c, a=a, b=b)
        tc, ta, tb = c.trivial, a.trivial, b.trivial
        out_t = np.zeros(shape, bool)
        out_c = np.zeros(shape, np.uint8)
        md = np.zeros(shape, np.int32)
        gd = np.zeros(shape, np.int32)
        boots = np.zeros(shape, np.int64)
        # trivial condition: a copy of the selected branch
        for mask, src in ((tc & (c.const == 1), a), (tc & (c.const == 0), b)):
            out_t[mask] = src.trivial[mask]
            out_c[mask] = src.const[mask]
            md[mask] = src.md[mask]
            gd[mask] = src.gd[mask]
        # encrypted condition, both branches encrypted: the real MUX
        full = ~tc & ~ta & ~tb
        md[full] = np.maximum(np.maximum(c.md, a.md), b.md)[full] + 1
        gd[full] = np.maximum(np.maximum(c.gd, a.gd), b.gd)[full] + 1
        boots[full] = 2
        # encrypted condition, a trivial branch: one AND/OR of (NOT) c with the other branch
        part = ~tc & (ta | tb)
        is_or = np.where(ta, a.const, b.const) == 1
        oth_t = np.where(ta, tb, False)  # if a is trivial the other operand is b, else a
        oth_c = np.where(ta, b.const, a.const)
        oth_md, oth_gd = np.where(ta, b.md, a.md), np.where(ta, b.gd, a.gd)
        absorbed = part & oth_t & (oth_c == is_or)  # OR with 1 -> 1, AND with 0 -> 0
        out_t[absorbed] = True
        out_c[absorbed] = is_or[absorbed]
        passed = part & oth_t & ~absorbed  # (NOT) c itself
        md[passed] = c.md[passed]
        gd[passed] = c.gd[passed]
        one = part & ~oth_t
        md[one] = np.maximum(c.md, oth_md)[one] + 1
        gd[one] = np.maximum(c.gd, oth_gd)[one] + 1
        boots[one] = 1
        self.ops["mux"] += c.size
        self._book("mux", int((boots > 0).sum()), int(boots.sum()))
        return self._make(self._mux(c.data, a.data, b.data), out_t, out_c, md, gd)

    # -- routing (no gates) --------------------------------------------------------------
    def take(self, x: Bits, indices) -> Bits:
        """Bits at flat ``indices`` of ``x``; the result has the shape of ``indices``."""
        x = self._own(x, "x")
        idx = np.asarray(indices)
        if not np.issubdtype(idx.dtype, np.integer):
            raise TypeError(f"indices must be integers, got dtype {idx.dtype}")
        if idx.size and (idx.min() < 0 or idx.max() >= x.size):
            raise IndexError(f"indices must lie in [0, {x.size}), got [{idx.min()}, {idx.max()}]")
        idx = idx.astype(np.int64)
        flat = (x.trivial.reshape(-1), x.const.reshape(-1), x.md.reshape(-1), x.gd.reshape(-1))
        return self._make(self._take(x.data, idx), *(f[idx] for f in flat))

    def concat(self, parts: list[Bits]) -> Bits:
        """Flatten and concatenate (1-D result); no gates."""
        if not parts:
            raise ValueError("concat needs at least one Bits")
        parts = [self._own(p, f"parts[{i}]") for i, p in enumerate(parts)]
        cat = [np.concatenate([getattr(p, f).reshape(-1) for p in parts])
               for f in ("trivial", "const", "md", "gd")]
        return self._make(self._concat([p.data for p in parts]), *cat)

    def reshape(self, x: Bits, shape) -> Bits:
        x = self._own(x, "x")
        shape = (shape,) if isinstance(shape, int | np.integer) else tuple(int(s) for s in shape)
        if int(np.prod(shape)) != x.size:
            raise ValueError(f"cannot reshape {x.shape} ({x.size} bits) to {shape}")
        return self._make(self._reshape(x.data, shape), x.trivial.reshape(shape),
                          x.const.reshape(shape), x.md.reshape(shape), x.gd.reshape(shape))

    def message_bytes(self, x: Bits) -> int:
        """Bytes to send the *encrypted* (non-trivial) bits of ``x`` between parties."""
        self._own(x, "x")
        return (x.size - int(x.trivial.sum())) * self.ciphertext_bytes

    def wire(self, parts) -> Any:
        """What a recording ledger keeps for a message carrying the encrypted bits of
        ``parts`` (a list of :class:`Bits`): here :data:`~ppnn.core.transcript.SIZE_ONLY`, as
        a backend without real ciphertexts has nothing to show (the simulator's payload is
        the plaintext bits). :class:`ppnn.he.tfhe.TfheBackend` returns the serialized
        ciphertexts. Call it only when the ledger records values (it may serialize)."""
        for i, p in enumerate(parts):
            self._own(p, f"parts[{i}]")
        return SIZE_ONLY

    # -- payload hooks -------------------------------------------------------------------
    ciphertext_bytes: int = 0

    def _encrypt(self, bits: np.ndarray):
        raise NotImplementedError

    def _decrypt(self, data):
        raise NotImplementedError

    def _trivial(self, bits: np.ndarray):
        raise NotImplementedError

    def _binary(self, gate: str, a, b):
        raise NotImplementedError

    def _not(self, a):
        raise NotImplementedError

    def _mux(self, c, a, b):
        raise NotImplementedError

    def _take(self, data, idx: np.ndarray):
        raise NotImplementedError

    def _concat(self, datas: list):
        raise NotImplementedError

    def _reshape(self, data, shape: tuple[int, ...]):
        raise NotImplementedError


class BitSimulator(GateBackend):
    """Evaluates TFHE gate circuits on plaintext bits (numpy), booking the same gates, bootstraps
    and depths as tfhe-rs would.

    "Encryption" is the identity on bits; the object stands in for a key (mixing Bits of two
    simulators raises, like mixing tfhe-rs keys). ``ciphertext_bytes`` is the size of one
    tfhe-rs Boolean ciphertext (used for message sizes).
    """

    name = "bitsim"

    def __init__(self, public_constants: bool = True, ledger=None, party: str = "server",
                 ciphertext_bytes: int = SIM_CIPHERTEXT_BYTES):
        super().__init__(public_constants, ledger, party)
        self.ciphertext_bytes = int(ciphertext_bytes)

    def _encrypt(self, bits):
        return bits.copy()

    def _decrypt(self, data):
        return data

    def _trivial(self, bits):
        return bits.copy()

    def _binary(self, gate, a, b):
        return _TRUTH[gate](a, b).astype(np.uint8)

    def _not(self, a):
        return (1 - a).astype(np.uint8)

    def _mux(self, c, a, b):
        return np.where(c == 1, a, b).astype(np.uint8)

    def _take(self, data, idx):
        return data.reshape(-1)[idx]

    def _concat(self, datas):
        return np.concatenate([d.reshape(-1) for d in datas])

    def _reshape(self, data, shape):
        return data.reshape(shape)

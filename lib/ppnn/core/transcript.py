"""What crossed, not only how much: the values a :class:`~ppnn.core.ledger.Ledger` keeps when
it is made with ``record_values=True``.

A recorded value is a :class:`Recorded` summary, never a reference to the protocol's array:

* an array (a share, a masked value, an opened value): its shape, dtype and a *copy* of its
  first ``max_elements`` elements (flattened, C order) -- the whole array when it is small;
* a real ciphertext (``bytes``, or an object with ``serialize()``, a Paillier
  ``EncryptedNumber``): its size in bytes and a short SHA-256 digest. A ciphertext's bits carry
  nothing a party can read without the key, so its digest is all a view needs;
* material the simulation books by size and never materializes (counted HE in a cost-only
  phase, OT-extension columns, a trusted dealer's ideal tables): pass :data:`SIZE_ONLY`; it is
  kept as ``kind="size only"`` so a view still lists the message and says why no value shows;
* anything else: its type name.

:class:`ValueBudget` bounds the memory: each message keeps at most ``max_elements`` elements,
and once ``max_bytes`` are used up later values keep only their shape and dtype
(``Recorded.head is None``; :attr:`ValueBook.dropped` counts them), so a whole-network run stays
within the budget whatever its size.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

__all__ = ["Recorded", "ValueBudget", "ValueBook", "Hold", "SIZE_ONLY", "Parts",
           "EVERY_ELEMENT", "parts_text"]


class Parts:
    """A value sent as the concatenation of several arrays (flattened, in order, cast to
    ``dtype``) -- a dealer's components of several sharings -- recorded without building the
    concatenation: the ledger keeps its total size and its first elements only. ``names``
    (one per array, e.g. ``("a", "b", "c")`` for a Beaver triple) say what each part is: the
    recorded value's :meth:`Recorded.text` names them with their shapes. ``shape``: the
    recorded value's shape (default: flat, ``(size,)``; e.g. ``(2, n)`` for two stacked
    parts of ``n``)."""

    __slots__ = ("arrays", "dtype", "names", "shape")

    def __init__(self, arrays, dtype=None, names=None, shape=None):
        self.arrays = tuple(np.asarray(a) for a in arrays)
        self.dtype = np.dtype(dtype) if dtype is not None else (
            np.result_type(*self.arrays) if self.arrays else np.dtype(np.uint64))
        if names is not None:
            names = tuple(names)
            if len(names) != len(self.arrays) or not all(
                    isinstance(n, str) and n for n in names):
                raise ValueError(f"names must be {len(self.arrays)} non-empty strings (one "
                                 f"per part), got {names!r}")
        self.names = names
        if shape is not None and int(np.prod(shape, dtype=np.int64)) != self.size:
            raise ValueError(f"shape {tuple(shape)} does not hold the {self.size} elements "
                             "of the parts")
        self.shape = None if shape is None else tuple(int(d) for d in shape)

    @property
    def size(self) -> int:
        return sum(int(a.size) for a in self.arrays)

    def array(self) -> np.ndarray:
        """The concatenation itself (tests; the ledger never builds it)."""
        return np.concatenate([np.ravel(a).astype(self.dtype) for a in self.arrays])


class _SizeOnly:
    """The value of a message whose bits the simulation counts but never builds."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "SIZE_ONLY"


#: pass as ``Ledger.send(..., value=SIZE_ONLY)`` for material booked by size only
SIZE_ONLY = _SizeOnly()

#: bytes charged per recorded value for its metadata (dataclass, shape tuple, strings)
_OVERHEAD = 256


@dataclass(frozen=True)
class ValueBudget:
    """Memory bounds of a recorded transcript.

    Parameters
    ----------
    max_elements : int or None
        Elements kept per message (the first ones, flattened); None keeps every element.
    max_bytes : int
        Bytes of values and metadata kept in all; past it, values keep shape and dtype only.
    """

    max_elements: int | None = 64
    max_bytes: int = 32 << 20

    def __post_init__(self):
        if self.max_elements is not None and (not isinstance(self.max_elements, int)
                                              or self.max_elements < 1):
            raise ValueError(f"max_elements must be an int >= 1 or None, got {self.max_elements!r}")
        if not isinstance(self.max_bytes, int) or self.max_bytes < 0:
            raise ValueError(f"max_bytes must be an int >= 0, got {self.max_bytes!r}")


#: a budget that keeps every element of every message (lessons and exercises on a handful of
#: elements, where the player must show whole values)
EVERY_ELEMENT = ValueBudget(max_elements=None)


@dataclass(frozen=True)
class Recorded:
    """A value that crossed (or that a party held), as kept by the ledger."""

    kind: str                 # "array", "ciphertext", "size only" or "opaque"
    shape: tuple
    dtype: str
    size: int                 # elements of an array; bytes of a ciphertext
    head: np.ndarray | None   # first elements (arrays), None when over the budget
    digest: str = ""          # ciphertexts: first 12 hex digits of SHA-256
    parts: tuple = ()         # a concatenation of named parts: ((name, shape), ...)

    @property
    def complete(self) -> bool:
        """Whether every element was kept (:meth:`array` can rebuild the value)."""
        return self.kind == "array" and self.head is not None and self.head.size == self.size

    def array(self) -> np.ndarray:
        """The whole recorded array (only when :attr:`complete`)."""
        if not self.complete:
            raise ValueError(f"only {0 if self.head is None else self.head.size} of "
                             f"{self.size} elements were recorded (raise max_elements)")
        return self.head.reshape(self.shape)

    def text(self, n: int = 6) -> str:
        """A short human-readable rendering: ``[3 17 250 ...] (8 elements)``, ``[0 1 ...]
        (32 x 2)``, or the named parts of a concatenation: ``[...] a, b, c (3 each)``."""
        if self.kind == "ciphertext":
            return f"ciphertext {self.size} B #{self.digest}"
        if self.kind == "size only":
            return "(size only: simulated, not materialized)"
        if self.kind == "opaque":
            return f"<{self.dtype}>"
        if self.head is None:
            what = parts_text(self.parts) if self.parts else self.shape
            return f"{what} {self.dtype} (not kept: budget)"
        vals = " ".join(_fmt(v) for v in self.head[:n])
        more = " ..." if self.size > n else ""
        whole_vector = len(self.shape) <= 1 and self.size <= n  # every element on show
        shape = "" if whole_vector else (f" ({self.size} elements)" if len(self.shape) == 1
                                         else f" ({_dims(self.shape)})")
        if self.parts:
            shape = f" {parts_text(self.parts)}"
        return f"[{vals}{more}]{shape}"


def _dims(shape: tuple) -> str:
    return " x ".join(str(int(d)) for d in shape) if shape else "1"


def parts_text(parts) -> str:
    """``((name, shape), ...)`` in words: ``'a, b, c (3 each)'``, or
    ``'s_0 (5), [T]_0 (5 x 256)'`` when the shapes differ."""
    groups: list[tuple[list[str], tuple]] = []
    for name, shape in parts:
        if groups and groups[-1][1] == tuple(shape):
            groups[-1][0].append(name)
        else:
            groups.append(([name], tuple(shape)))
    return ", ".join(f"{', '.join(names)} ({_dims(shape)}{' each' if len(names) > 1 else ''})"
                     for names, shape in groups)


def _fmt(v) -> str:
    if isinstance(v, float | np.floating):
        return f"{float(v):.4g}"
    return str(v)


@dataclass(frozen=True)
class Hold:
    """A party's local value at a named step (``Ledger.hold``): ``at`` messages were booked
    before it."""

    party: str
    name: str
    at: int
    phase: str
    label: str
    value: Recorded


def _ciphertext_bytes(value) -> bytes | None:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    ser = getattr(value, "serialize", None)
    if callable(ser):
        try:
            out = ser()
        except Exception:  # noqa: BLE001 - a binding that cannot serialize is shown opaque
            return None
        return out if isinstance(out, bytes) else None
    ct = getattr(value, "ciphertext", None)  # phe.EncryptedNumber
    if callable(ct):
        c = int(ct(be_secure=False))
        return c.to_bytes(max(1, (c.bit_length() + 7) // 8), "big")
    return None


class ValueBook:
    """Summarizes values into :class:`Recorded` within a :class:`ValueBudget`."""

    def __init__(self, budget: ValueBudget):
        self.budget = budget
        self.used = 0
        self.dropped = 0

    def record(self, value) -> Recorded:
        if isinstance(value, Recorded):
            return value
        if value is SIZE_ONLY:
            self.used += _OVERHEAD
            return Recorded("size only", (), "", 0, None)
        if isinstance(value, Parts):
            return self._parts(value)
        if isinstance(value, list | tuple) and value and all(
                _ciphertext_bytes(v) is not None for v in value[:1]):
            parts = [_ciphertext_bytes(v) for v in value]
            if all(p is not None for p in parts):
                return self._ciphertext(parts, (len(parts),))
        raw = _ciphertext_bytes(value)
        if raw is not None:
            return self._ciphertext([raw], ())
        try:
            arr = np.asarray(value)
        except Exception:  # noqa: BLE001 - not array-like: keep its type only
            arr = None
        if arr is None or (arr.dtype == object and arr.size and not isinstance(
                arr.flat[0], int | np.integer)):
            self.used += _OVERHEAD
            return Recorded("opaque", (), type(value).__name__, 0, None)
        n = arr.size if self.budget.max_elements is None else min(arr.size,
                                                                   self.budget.max_elements)
        per = 32 if arr.dtype == object else arr.dtype.itemsize
        cost = _OVERHEAD + n * per
        if self.used + cost > self.budget.max_bytes:
            self.dropped += 1
            return Recorded("array", tuple(arr.shape), str(arr.dtype), int(arr.size), None)
        self.used += cost
        head = np.array(arr.reshape(-1)[:n], copy=True)
        return Recorded("array", tuple(arr.shape), str(arr.dtype), int(arr.size), head)

    def _parts(self, parts: Parts) -> Recorded:
        """The concatenation of ``parts`` (flattened), summarized without being built."""
        size, dtype = parts.size, parts.dtype
        named = (tuple((name, tuple(a.shape)) for name, a in zip(parts.names, parts.arrays))
                 if parts.names else ())
        shape = parts.shape or (size,)
        n = size if self.budget.max_elements is None else min(size, self.budget.max_elements)
        cost = _OVERHEAD + n * dtype.itemsize
        if self.used + cost > self.budget.max_bytes:
            self.dropped += 1
            return Recorded("array", shape, str(dtype), size, None, parts=named)
        self.used += cost
        head, left = [], n
        for a in parts.arrays:
            if left <= 0:
                break
            take = np.ravel(a)[:left].astype(dtype, copy=True)
            head.append(take)
            left -= take.size
        head = np.concatenate(head) if head else np.zeros(0, dtype)
        return Recorded("array", shape, str(dtype), size, head, parts=named)

    def _ciphertext(self, parts: list[bytes], shape: tuple) -> Recorded:
        """Ciphertext bytes sent as ``parts`` (in order): their total size and the digest of
        their concatenation, hashed part by part (never joined: garbled tables run to tens
        of MB)."""
        size = sum(len(p) for p in parts)
        if self.used + _OVERHEAD > self.budget.max_bytes:
            self.dropped += 1
            return Recorded("ciphertext", shape, "bytes", size, None)
        self.used += _OVERHEAD
        h = hashlib.sha256()
        for p in parts:
            h.update(p)
        return Recorded("ciphertext", shape, "bytes", size, None, h.hexdigest()[:12])

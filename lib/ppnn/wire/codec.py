"""What a wire-mode process sends its launcher: arrays and plain data, never a pickle.

The launcher holds every input and key of a run, so nothing a party's process returns may
run code in it (under ``falcon_mal``'s threat model a party is malicious). :func:`encode`
turns a message into bytes and :func:`decode` rebuilds it, from a JSON tree and raw array
buffers only::

    b"PPNW" | header length (uint32, little-endian) | JSON header | buffers

Accepted: ``None``, ``bool``, ``int`` (any size; also ``gmpy2.mpz`` and whatever else has
``__index__``, rebuilt as ``int``), ``float``, ``str``, ``bytes``, lists, tuples, dicts
(any accepted keys), numpy arrays of booleans and numbers (their bytes and a checked
dtype), numpy arrays of objects whose elements are accepted scalars, numpy scalars, and
:class:`~ppnn.core.ledger.Ledger` (as :meth:`~ppnn.core.ledger.Ledger.to_plain`, rebuilt
with :meth:`~ppnn.core.ledger.Ledger.from_plain`). Anything else is a ``TypeError`` in the
sending process, and a message that does not decode is a ``ValueError`` in the launcher.

What the launcher sends a process (its job and task) stays pickled: the launcher is the
trusted side, and a process receives only its own task.
"""

from __future__ import annotations

import json
import math
import operator
import struct

import numpy as np

from ppnn.core.ledger import Ledger

__all__ = ["encode", "decode", "MAGIC"]

MAGIC = b"PPNW"
_HEAD = struct.Struct("<I")
_KINDS = "biufc"  # numpy dtype kinds an array may have: bool, int, uint, float, complex
_SCALARS = (type(None), bool, int, float, str)


def _tree(v, bufs: list, path: str):
    if type(v) in _SCALARS:
        return v
    if isinstance(v, np.ndarray):
        if v.dtype.kind == "O":
            flat = [_tree(e, bufs, f"{path}[...]") for e in v.reshape(-1)]
            if not all(type(e) in _SCALARS for e in flat):
                raise TypeError(f"{path}: an object array's elements must be numbers, strings "
                                "or None")
            return {"$objects": flat, "shape": list(v.shape)}
        if v.dtype.kind not in _KINDS or v.dtype.fields is not None:
            raise TypeError(f"{path}: arrays of dtype {v.dtype} are not accepted")
        bufs.append(np.ascontiguousarray(v).tobytes())
        return {"$array": len(bufs) - 1, "dtype": v.dtype.str, "shape": list(v.shape)}
    if isinstance(v, np.generic):
        if v.dtype.kind not in _KINDS:
            raise TypeError(f"{path}: numpy scalars of dtype {v.dtype} are not accepted")
        return {"$scalar": v.dtype.str, "value": _tree(v.item(), bufs, path)}
    if isinstance(v, bytes | bytearray):
        bufs.append(bytes(v))
        return {"$bytes": len(bufs) - 1}
    if isinstance(v, list):
        return [_tree(e, bufs, f"{path}[{i}]") for i, e in enumerate(v)]
    if isinstance(v, tuple):
        return {"$tuple": [_tree(e, bufs, f"{path}[{i}]") for i, e in enumerate(v)]}
    if isinstance(v, dict):
        if all(type(k) is str and not k.startswith("$") for k in v):
            return {k: _tree(e, bufs, f"{path}[{k!r}]") for k, e in v.items()}
        return {"$dict": [[_tree(k, bufs, f"{path} (key)"), _tree(e, bufs, f"{path}[{k!r}]")]
                          for k, e in v.items()]}
    if isinstance(v, Ledger):
        return {"$ledger": _tree(v.to_plain(), bufs, path)}
    if isinstance(v, int | float | str):  # subclasses: their plain value
        return (int if isinstance(v, int) else float if isinstance(v, float) else str)(v)
    try:
        return operator.index(v)  # gmpy2.mpz and other integers
    except TypeError:
        pass
    raise TypeError(f"{path}: a value of type {type(v).__module__}.{type(v).__qualname__} "
                    "cannot be sent to the launcher (arrays, plain data and ledgers only)")


def encode(message) -> bytes:
    """``message`` as bytes (see the module docstring); a ``TypeError`` names the first
    value that is not accepted."""
    bufs: list[bytes] = []
    tree = _tree(message, bufs, "message")
    head = json.dumps({"tree": tree, "buffers": [len(b) for b in bufs]},
                      separators=(",", ":")).encode()
    return b"".join([MAGIC, _HEAD.pack(len(head)), head, *bufs])


def _dtype(s) -> np.dtype:
    if not isinstance(s, str):
        raise ValueError(f"a dtype must be a string, got {s!r}")
    dt = np.dtype(s)
    if dt.kind not in _KINDS or dt.fields is not None or dt.subdtype is not None:
        raise ValueError(f"dtype {s!r} is not accepted")
    return dt


def _shape(s) -> tuple[int, ...]:
    if not isinstance(s, list) or not all(type(n) is int and n >= 0 for n in s):
        raise ValueError(f"a shape must be a list of ints >= 0, got {s!r}")
    return tuple(s)


def _value(t, bufs: list[memoryview]):
    if t is None or type(t) in (bool, int, float, str):
        return t
    if isinstance(t, list):
        return [_value(e, bufs) for e in t]
    if not isinstance(t, dict):
        raise ValueError(f"unexpected JSON value {t!r}")
    tags = [k for k in t if k.startswith("$")]
    if not tags:
        return {k: _value(e, bufs) for k, e in t.items()}
    tag = tags[0]
    if tag == "$tuple":
        return tuple(_value(e, bufs) for e in t[tag])
    if tag == "$dict":
        return {_key(_value(k, bufs)): _value(e, bufs) for k, e in t[tag]}
    if tag == "$array":
        dt, shape, raw = _dtype(t["dtype"]), _shape(t["shape"]), bufs[t[tag]]
        n = math.prod(shape)
        if len(raw) != n * dt.itemsize:
            raise ValueError(f"an array of shape {shape} and dtype {dt} needs "
                             f"{n * dt.itemsize} bytes, its buffer has {len(raw)}")
        return np.frombuffer(raw, dtype=dt).reshape(shape).copy()
    if tag == "$objects":
        shape, flat = _shape(t["shape"]), t[tag]
        if not isinstance(flat, list) or len(flat) != math.prod(shape):
            raise ValueError(f"an object array of shape {shape} needs as many elements")
        out = np.empty(len(flat), dtype=object)
        out[:] = [_value(e, bufs) for e in flat]
        return out.reshape(shape)
    if tag == "$scalar":
        return _dtype(t[tag]).type(_value(t["value"], bufs))
    if tag == "$bytes":
        return bytes(bufs[t[tag]])
    if tag == "$ledger":
        return Ledger.from_plain(_value(t[tag], bufs))
    raise ValueError(f"unknown tag {tag!r}")


def _key(k):
    if isinstance(k, list | dict | np.ndarray):
        raise ValueError(f"a dict key must be hashable plain data, got {type(k).__name__}")
    return k


def decode(data: bytes):
    """The message :func:`encode` made of ``data``; a ``ValueError`` says what is wrong with
    data that did not come from :func:`encode`. Reads JSON and raw buffers only."""
    data = memoryview(data)
    if bytes(data[:4]) != MAGIC or len(data) < 4 + _HEAD.size:
        raise ValueError("not a message of ppnn.wire.codec (no PPNW header)")
    (n,) = _HEAD.unpack(data[4:4 + _HEAD.size])
    at = 4 + _HEAD.size + n
    if at > len(data):
        raise ValueError(f"the JSON header states {n} bytes, the message has "
                         f"{len(data) - 4 - _HEAD.size}")
    try:
        head = json.loads(bytes(data[4 + _HEAD.size:at]))
        sizes = head["buffers"]
        tree = head["tree"]
    except (ValueError, KeyError, TypeError, RecursionError) as e:
        raise ValueError(f"the JSON header does not parse: {e}") from None
    if not isinstance(sizes, list) or not all(type(s) is int and s >= 0 for s in sizes):
        raise ValueError("the header's buffer sizes must be ints >= 0")
    if at + sum(sizes) != len(data):
        raise ValueError(f"the buffers take {sum(sizes)} bytes, the message has "
                         f"{len(data) - at} after its header")
    bufs = []
    for s in sizes:
        bufs.append(data[at:at + s])
        at += s
    try:
        return _value(tree, bufs)
    except (KeyError, IndexError, TypeError, RecursionError) as e:
        raise ValueError(f"a malformed value: {type(e).__name__}: {e}") from None

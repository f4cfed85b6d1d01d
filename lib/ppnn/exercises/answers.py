"""Reading a student's answer: integers, tuples of integers, integer arrays (mod 2^k or mod
p), with a :class:`~ppnn.exercises.registry.WrongType` that names what came instead."""

from __future__ import annotations

import numpy as np

from .registry import WrongType

__all__ = ["as_int", "as_int_tuple", "as_int_array", "returned", "show"]


def _name(x) -> str:
    return type(x).__name__


def as_int(value, what: str = "the answer") -> int:
    """A Python int from an int or numpy integer (not a bool, not a float)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise WrongType(f"{what} is a {_name(value)} ({value!r:.40}), not an int")
    return int(value)


def as_int_tuple(value, n: int, what: str = "the answer") -> tuple[int, ...]:
    """A tuple of ``n`` ints (from a tuple, list or 1-D integer array)."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, tuple | list) or len(value) != n:
        raise WrongType(f"{what} must be a tuple of {n} ints, got {_name(value)} "
                        f"({value!r:.60})")
    return tuple(as_int(v, f"entry {i} of {what}") for i, v in enumerate(value))


def as_int_array(value, shape: tuple[int, ...] | None = None,
                 what: str = "the answer") -> np.ndarray:
    """Integers as an object array of Python ints (any size: residues mod 2^64 or signed),
    checked against ``shape`` when given."""
    if isinstance(value, bool):
        raise WrongType(f"{what} is a bool, not integers")
    try:
        arr = np.asarray(value)
    except Exception as e:  # noqa: BLE001 - ragged lists and the like
        raise WrongType(f"{what} cannot be read as an integer array ({e})") from None
    if arr.dtype == object:
        if not all(isinstance(v, int | np.integer) and not isinstance(v, bool)
                   for v in arr.ravel()):
            raise WrongType(f"{what} must hold integers, got {arr.dtype} entries")
    elif arr.dtype.kind not in "iu":
        raise WrongType(f"{what} must hold integers, got dtype {arr.dtype}"
                        + (" (floats: give the ring elements)" if arr.dtype.kind == "f" else ""))
    if shape is not None and arr.shape != tuple(shape) and arr.size != int(np.prod(shape)):
        raise WrongType(f"{what} must have shape {tuple(shape)}, got {arr.shape}")
    out = np.empty(arr.size, dtype=object)
    out[:] = [int(v) for v in arr.ravel()]
    return out if shape is None else out.reshape(shape)


def returned(value, kind: type | tuple[type, ...], what: str) -> None:
    """Raise :class:`WrongType` unless the student's function returned a ``kind``."""
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__
                                                                         for k in kind)
        raise WrongType(f"{what} returned a {_name(value)}, not {names}")


def show(values, n: int = 4) -> str:
    """The first ``n`` integers of an array, as Python ints: ``[85, -71, 3, ...]``."""
    flat = [int(v) for v in np.asarray(values, dtype=object).ravel()]
    return "[" + ", ".join(map(str, flat[:n])) + (", ...]" if len(flat) > n else "]")

"""Reading a student's answer: integers, tuples of integers, integer arrays (mod 2^k or mod
p), with a :class:`~ppnn.exercises.registry.WrongType` that names what came instead."""

from __future__ import annotations

import numpy as np

from .registry import WrongType

__all__ = ["as_int", "as_int_tuple", "as_int_array", "returned", "show", "as_closed_form", "at",
           "depends_on"]


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
        # Python ints stay Python ints: numpy would turn [2**63, -1] into float64
        arr = (np.array(value, dtype=object) if isinstance(value, list | tuple)
               else np.asarray(value))
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


def show(values, n: int = 4, bits: int | None = None) -> str:
    """The first ``n`` integers of an array, as Python ints: ``[85, -71, 3, ...]``; with
    ``bits``, as signed residues mod ``2^bits`` (so two arrays given in different
    representations read alike)."""
    flat = [int(v) for v in np.asarray(values, dtype=object).ravel()]
    if bits is not None:
        m = 1 << bits
        flat = [(v % m) - m if v % m >= m // 2 else v % m for v in flat]
    return "[" + ", ".join(map(str, flat[:n])) + (", ...]" if len(flat) > n else "]")


def as_closed_form(value, names: tuple[str, ...], n_out: int = 1,
                   what: str = "the answer") -> tuple:
    """A counting exercise's answer: ``n_out`` sympy expressions (a tuple when ``n_out >
    1``) in the symbols ``names``. A function (a wrapper around the library's call) or a bare
    number is refused: the exercise asks for the derivation, a formula in the sizes."""
    import sympy as sp

    want = f"a sympy expression in {', '.join(names)}" + (
        f" (a tuple of {n_out})" if n_out > 1 else "")
    if callable(value) and not isinstance(value, sp.Basic):
        raise WrongType(f"{what} must be {want}, not a function: write the closed form, "
                        "e.g. sp.symbols(...) and the formula, not a call of the library")
    parts = tuple(value) if n_out > 1 and isinstance(value, tuple | list) else (value,)
    if len(parts) != n_out:
        raise WrongType(f"{what} must be {want}, got {len(parts)} values")
    out = []
    for i, p in enumerate(parts):
        label = what if n_out == 1 else f"entry {i} of {what}"
        if isinstance(p, bool) or not isinstance(p, int | np.integer | sp.Basic):
            raise WrongType(f"{label} must be a sympy expression in {', '.join(names)}, got "
                            f"{_name(p)} ({p!r:.40})")
        expr = sp.sympify(p)
        if not expr.free_symbols:
            raise WrongType(f"{label} is the number {expr}: the exercise asks for the formula, "
                            f"a sympy expression in {', '.join(names)}")
        stray = sorted(str(s) for s in expr.free_symbols if str(s) not in names)
        if stray:
            raise WrongType(f"{label} uses {', '.join(stray)}; the sizes are "
                            f"{', '.join(names)}")
        out.append(expr)
    return tuple(out)


def at(expr, **sizes) -> int | None:
    """``expr`` evaluated at ``sizes`` (symbols matched by name) as an int, None when it is
    not an integer there."""
    import sympy as sp

    subs = {s: sizes[str(s)] for s in expr.free_symbols}
    v = sp.nsimplify(sp.simplify(expr.subs(subs)))
    return int(v) if v.is_integer else None


def depends_on(exprs, names) -> set[str]:
    """The names among ``names`` that some expression of ``exprs`` uses."""
    return {str(s) for e in exprs for s in e.free_symbols} & set(names)

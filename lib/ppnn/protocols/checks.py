"""What the front door checks before a family sees a caller's arguments.

:mod:`ppnn.protocols.api` calls these once per ``compile`` / ``run`` (in process, on Dask and
on the wire alike): images and calibration images (numbers, shape, finite, inside the
family's declared input range), float parameters (per-layer dicts of finite numeric arrays
of the network's shapes) and seeds. Each raises an :mod:`ppnn.errors` class whose message
names the argument and the allowed range.
"""

from __future__ import annotations

import numpy as np

from ppnn.errors import InvalidArgument, InvalidType

__all__ = ["real_array", "check_images", "check_params", "check_seed", "check_int"]


def real_array(x, name: str, float64: bool = True) -> np.ndarray:
    """``x`` as a float64 array (``float64=False``: as its own numeric dtype), or
    :class:`InvalidType` if it is not an array of real numbers (strings, complex numbers,
    ragged nesting, None)."""
    if x is None:
        raise InvalidType(f"{name} must be an array of real numbers, got None")
    try:
        a = np.asarray(x)
    except (ValueError, TypeError) as e:  # ragged nesting
        raise InvalidType(f"{name} must be an array of real numbers, got {type(x).__name__} "
                          f"({e})") from None
    if a.dtype.kind not in "biuf":
        if a.dtype.kind == "O":
            try:
                return np.asarray(a, np.float64)
            except (ValueError, TypeError):
                pass
        raise InvalidType(f"{name} must be an array of real numbers, got dtype {a.dtype} "
                          f"({type(x).__name__})")
    return a.astype(np.float64, copy=False) if float64 else a


def _where(a: np.ndarray, bad: np.ndarray) -> str:
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    return f"{int(bad.sum())} of {a.size} values, the first at index {idx} is {float(a[idx])!r}"


def check_images(x, shape: tuple[int, ...], lo: float, hi: float, name: str, who: str,
                 why: str = "") -> np.ndarray:
    """Images for a network of input ``shape``: a float64 ``(N, *shape)`` array (one image
    of ``shape`` gets a batch axis), finite, every value in ``[lo, hi]`` -- the input range
    that ``who`` declares (``why``: how it encodes a pixel)."""
    a = real_array(x, name)
    shape = tuple(shape)
    if a.shape == shape:
        a = a[None]
    if a.shape[1:] != shape or len(a) == 0:
        raise InvalidArgument(f"{name} must have shape (N, {', '.join(map(str, shape))}) with "
                              f"N >= 1, got {a.shape}")
    bad = ~np.isfinite(a)
    if bad.any():
        raise InvalidArgument(f"{name} must be finite: {_where(a, bad)} (NaN or infinity)")
    out = (a < lo) | (a > hi)
    if out.any():
        raise InvalidArgument(
            f"{name} must lie in [{lo:g}, {hi:g}], the input range of {who}"
            f"{' (' + why + ')' if why else ''}: got values in [{a.min():g}, {a.max():g}], "
            f"{_where(a, out)}; nothing is clipped or wrapped")
    return a


def _arrays(params, where: str):
    """Yield ``(path, value)`` of every parameter, checking the nesting as it goes."""
    if not isinstance(params, list | tuple):
        raise InvalidType(f"{where} must be a list of per-layer dicts (as ppnn.nn.init_params "
                          f"or ppnn.nn.from_onnx return), got {type(params).__name__}")
    for i, p in enumerate(params):
        if not isinstance(p, dict):
            raise InvalidType(f"{where}[{i}] must be a dict of arrays, got {type(p).__name__}")
        for key, v in p.items():
            if isinstance(v, list | tuple) and key in ("body", "shortcut"):
                yield from _arrays(v, f"{where}[{i}][{key!r}]")
            else:
                yield f"{where}[{i}][{key!r}]", v


def check_params(net, params, name: str = "params") -> None:
    """Float parameters of ``net``: per-layer dicts of finite real arrays of the shapes
    :func:`ppnn.nn.check_params` expects."""
    from ppnn.nn import check_params as shapes

    for where, v in _arrays(params, name):
        a = real_array(v, where, float64=False)
        bad = ~np.isfinite(a)
        if bad.any():
            raise InvalidArgument(f"{where} must be finite: {_where(a, bad)} (NaN or infinity)")
    try:
        shapes(net, params)
    except ValueError as e:
        raise InvalidArgument(str(e)) from None


def check_seed(seed, name: str = "seed"):
    """A seed: an int >= 0, a ``numpy.random.SeedSequence`` or a ``numpy.random.Generator``."""
    if isinstance(seed, np.random.Generator | np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise InvalidType(f"{name} must be an int >= 0, a numpy SeedSequence or a numpy "
                          f"Generator, got {type(seed).__name__} {seed!r}")
    if seed < 0:
        raise InvalidArgument(f"{name} must be an int >= 0, got {seed}")
    return int(seed)


def check_int(value, name: str, lo: int, hi: int | None = None) -> int:
    """``value`` as an int in ``[lo, hi]`` (``hi`` None: no upper bound); bools refused."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise InvalidType(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if value < lo or (hi is not None and value > hi):
        rng = f"in [{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise InvalidArgument(f"{name} must be an int {rng}, got {value}")
    return int(value)

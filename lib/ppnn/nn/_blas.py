"""Pin the number of OpenBLAS threads while training.

The small, thin matrix products of im2col training run fastest on one thread, and on a shared
2-core machine multi-threaded OpenBLAS is several times *slower* (threads wait on each other).
numpy does not expose the setting, so we call OpenBLAS's own setter through ctypes when the
library numpy loaded can be found; otherwise this is a no-op.
"""

from __future__ import annotations

import ctypes
from contextlib import contextmanager

from ..numerics import openblas_libraries

_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
            "openblas_set_num_threads64_", "openblas_set_num_threads")
_GETTERS = ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
            "openblas_get_num_threads64_", "openblas_get_num_threads")


def _openblas():
    for lib in openblas_libraries():
        setter = next((getattr(lib, s) for s in _SETTERS if hasattr(lib, s)), None)
        getter = next((getattr(lib, g) for g in _GETTERS if hasattr(lib, g)), None)
        if setter is not None and getter is not None:
            return setter, getter
    return None


@contextmanager
def blas_threads(n: int):
    """Run the block with ``n`` OpenBLAS threads (restored afterwards)."""
    funcs = _openblas()
    if funcs is None:
        yield
        return
    setter, getter = funcs
    before = int(getter())
    setter(ctypes.c_int(n))
    try:
        yield
    finally:
        setter(ctypes.c_int(before))

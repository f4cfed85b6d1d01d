"""Which floating-point kernels this process runs, and the pin that makes them the same on
every x86-64 CPU (:mod:`ppnn.numerics.env`).

``python -m ppnn.numerics``          prints :func:`status`
``python -m ppnn.numerics install``  writes the virtual environment's ``ppnn-numerics.pth``
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
import sysconfig
import warnings
from pathlib import Path

from . import env

__all__ = ["status", "fingerprint", "pinned", "warn_if_unpinned", "install", "PTH_NAME",
           "openblas_libraries"]

PTH_NAME = "ppnn-numerics.pth"
_CORENAME = ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
             "openblas_get_corename64_", "openblas_get_corename")


def openblas_libraries() -> list[ctypes.CDLL]:
    """The OpenBLAS libraries loaded in this process (numpy's, once numpy is imported), as
    ctypes handles -- for asking or setting what numpy does not expose."""
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({ln.split()[-1] for ln in f
                            if "openblas" in ln.lower() and ".so" in ln.split()[-1]})
    except OSError:
        return []
    libs = []
    for path in paths:
        try:
            libs.append(ctypes.CDLL(path))
        except OSError:
            continue
    return libs


def _blas_core() -> str:
    """The kernel family the loaded OpenBLAS runs (``'unknown'`` if it cannot be asked)."""
    import numpy  # noqa: F401  (loads OpenBLAS)

    for lib in openblas_libraries():
        for name in _CORENAME:
            if hasattr(lib, name):
                fn = getattr(lib, name)
                fn.restype = ctypes.c_char_p
                return fn().decode()
    return "unknown"


def _avx512_loops() -> bool:
    """Whether numpy dispatches its AVX-512 SIMD loops in this process."""
    from numpy._core._multiarray_umath import __cpu_features__ as feats

    return bool(feats.get("AVX512F")) and bool(feats.get("AVX512_SKX"))


@functools.cache  # the kernels are chosen once per process, when numpy loads
def _status() -> tuple:
    core, avx512 = _blas_core(), _avx512_loops()
    return core, avx512, env.can_pin(), os.environ.get(env.OPT_OUT, "") not in ("", "0")


def status() -> dict:
    """The kernels in force: OpenBLAS core, numpy's AVX-512 loops, and whether that is the
    pin of :mod:`ppnn.numerics.env` (``pinned``) or the CPU's own choice."""
    core, avx512, can, opted_out = _status()
    return {"blas_core": core, "numpy_avx512_loops": avx512,
            "pinned": core == env.PIN["OPENBLAS_CORETYPE"] and not avx512, "cpu_can_pin": can,
            "opted_out": opted_out}


def pinned() -> bool:
    """Whether this process runs the pinned kernels."""
    return status()["pinned"]


def fingerprint() -> str:
    """A short name of the kernels in force, e.g. ``'Haswell/avx2'`` (pinned on any CPU) or
    ``'SkylakeX/avx512'``: float results computed under equal fingerprints are bit-identical."""
    s = status()
    return f"{s['blas_core']}/{'avx512' if s['numpy_avx512_loops'] else 'avx2'}"


_warned = False


def warn_if_unpinned(what: str = "trained weights") -> None:
    """Warn once per process when the CPU could run the pinned kernels but this process does
    not (numpy was loaded before the pin, or the ``.pth`` is not installed)."""
    global _warned
    s = status()
    if _warned or s["pinned"] or not s["cpu_can_pin"] or s["opted_out"]:
        return
    _warned = True
    warnings.warn(f"numerics not pinned (OpenBLAS {s['blas_core']}, numpy AVX-512 loops "
                  f"{'on' if s['numpy_avx512_loops'] else 'off'}): {what} may differ in the "
                  "last bits from other machines' and from the committed results. "
                  "Run `python -m ppnn.numerics install` once (make setup does), then restart.",
                  RuntimeWarning, stacklevel=3)


def install(site_packages: str | None = None) -> Path:
    """Write ``ppnn-numerics.pth`` into ``site_packages`` (default: this interpreter's
    purelib): one line that runs :func:`ppnn.numerics.env.apply` at every start-up of this
    environment's interpreter, before numpy loads. Written to a temp name, then renamed."""
    target = Path(site_packages or sysconfig.get_paths()["purelib"])
    if not target.is_dir():
        raise ValueError(f"site_packages must be an existing directory, got {str(target)!r}")
    src = Path(env.__file__).resolve()
    line = f"import runpy; runpy.run_path({str(src)!r})['apply']()\n"
    pth = target / PTH_NAME
    tmp = pth.with_name(pth.name + ".tmp")
    tmp.write_text(line)
    os.replace(tmp, pth)
    return pth


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["install"]:
        print(f"wrote {install()} (takes effect in new processes)")
        return 0
    if argv:
        print("usage: python -m ppnn.numerics [install]", file=sys.stderr)
        return 2
    for k, v in status().items():
        print(f"{k:20s} {v}")
    return 0

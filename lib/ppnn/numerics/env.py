"""Pin the floating-point kernels numpy and OpenBLAS pick at run time (standard library only).

numpy's OpenBLAS is built for several CPU families and picks a matrix-product kernel when it
loads (``SkylakeX`` on a CPU with AVX-512, ``Haswell`` on AVX2 CPUs, ...); numpy picks SIMD
loops for ``exp``, ``log``, ``power`` ... the same way (AVX-512 builds use other float64
algorithms). Different kernels sum in other orders, so the same float training gives other
bits on another CPU, and everything computed from trained weights follows.

:func:`apply` sets two environment variables that fix both choices to the AVX2 + FMA family
every x86-64-v3 CPU (Intel since Haswell, 2013; AMD since
Excavator/Zen) has: ``OPENBLAS_CORETYPE=Haswell`` and
``NPY_DISABLE_CPU_FEATURES`` for the AVX-512 loops. Both are read when numpy loads, so this
module must run first: the virtual environment's ``ppnn-numerics.pth`` (written by
``python -m ppnn.numerics install``) runs it at interpreter start-up, before anything imports
numpy. It imports nothing but the standard library for that reason.

Set ``PPNN_NATIVE_NUMERICS=1`` to keep the CPU's own kernels (faster on some CPUs; the bits
of trained weights then depend on the CPU). A CPU below x86-64-v3 is left alone, since
the pinned kernels would not run on it.
"""

from __future__ import annotations

import os

#: the environment that fixes the kernels (an AVX2 + FMA CPU is required to run them)
PIN = {"OPENBLAS_CORETYPE": "Haswell",
       "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"}
#: CPU flags (``/proc/cpuinfo``) of x86-64-v3, the level the pinned kernels run at (numpy's
#: X86_V3 loops; OpenBLAS's Haswell kernels): a CPU with fewer gets other loops, so no pin
NEEDS = ("avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe")
OPT_OUT = "PPNN_NATIVE_NUMERICS"


def cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> frozenset[str]:
    """The flags of the first CPU listed in ``cpuinfo`` (empty when unreadable)."""
    try:
        with open(cpuinfo) as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def can_pin(flags: frozenset[str] | None = None) -> bool:
    """Whether this CPU runs the pinned kernels (x86-64-v3: AVX2, FMA, BMI, ...)."""
    flags = cpu_flags() if flags is None else flags
    return all(f in flags for f in NEEDS)


def apply(environ=None, flags: frozenset[str] | None = None) -> bool:
    """Set :data:`PIN` in ``environ`` (default ``os.environ``) unless opted out or the CPU
    cannot run the kernels; values already set by the user are kept. Returns whether the
    pin is in force afterwards."""
    environ = os.environ if environ is None else environ
    if environ.get(OPT_OUT, "") not in ("", "0") or not can_pin(flags):
        return False
    for key, value in PIN.items():
        environ.setdefault(key, value)
    return all(environ.get(k) == v for k, v in PIN.items())

"""GALA (Zhang, Xin, Wu 2021): rotation-frugal packed-HE linear layers for HE-GC inference.

* :mod:`.layout` -- slot layouts shared with the GAZELLE baselines
* :mod:`.protocol` -- the client/server flow of one linear layer and its shares
* :mod:`.matvec` -- row-encoding-share-RaS matrix-vector (§III-A)
* :mod:`.conv` -- kernel-grouping convolution (§III-B)

Baselines (naive, diagonal, GAZELLE hybrid, SISO, GAZELLE MIMO): :mod:`ppnn.protocols.gazelle`.
"""

from .conv import ConvKernel, GalaConv
from .layout import ConvLayout, MatVecLayout, next_pow2, plain_ras
from .matvec import GalaMatVec, MatVecKernel
from .protocol import LinearKernel, LinearResult, centered, run_linear

__all__ = ["ConvKernel", "ConvLayout", "GalaConv", "GalaMatVec", "LinearKernel", "LinearResult",
           "MatVecKernel", "MatVecLayout", "centered", "next_pow2", "plain_ras", "run_linear"]

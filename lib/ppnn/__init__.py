"""PPNN Lab: privacy-preserving neural network protocols in simulated multi-party mode.

Subpackages
-----------
core       rings, fixed point, sharing, dealer, cost ledger, network time model
nn         layer specs, network zoo, numpy forward passes, trainer, quantizers
data       MNIST / Fashion-MNIST from registry packages (hash-verified)
he         cryptographic backends (BFV, Paillier, TFHE, garbled circuits)
protocols  one module per paper (tabula, gala, swann, she, falcon) and baselines, every
           family behind one interface: ``families()``, ``compile``, ``run``, ``count``
runner     the front door's ``run``: picks the transport (in process, Dask, wire)
wire       wire mode: one OS process per party over TCP
distributed protocol runs and sweeps on a Dask cluster
experiments the runs, sweeps and paper tables behind the notebooks (``experiments.compare``)
report     paper-vs-reproduced tables
reproduce  the papermill pipeline
"""

from ._version import __version__
from .core.views import views
from .protocols.api import (
    Plan,
    Result,
    UnsupportedNetwork,
    compile,
    count,
    families,
    variants,
)
from .runner import run

__all__ = ["Plan", "Result", "UnsupportedNetwork", "compile", "count", "families", "run",
           "variants", "views", "__version__"]

"""Packed BFV for GALA/GAZELLE: one interface, a real SEAL backend and a numpy slot simulator.

``SealBFV`` (real, :mod:`.seal`) and ``BFVSim`` (simulated, :mod:`.sim`; ``values=False`` for
counting whole networks) share :class:`~.base.PackedBackend`: identical operation counts and
the same §II-C noise model; the real one additionally reports SEAL's measured noise budget.
"""

from .base import OPS, Ct, NoiseModel, PackedBackend, Pt, is_pow2
from .sim import BFVSim, batching_prime, default_noise_model

__all__ = ["OPS", "BFVSim", "Ct", "NoiseModel", "PackedBackend", "Pt", "SealBFV",
           "batching_prime", "calibrate_noise_model", "default_noise_model", "is_pow2"]


def __getattr__(name):  # the SEAL backend imports tenseal lazily
    if name in ("SealBFV", "calibrate_noise_model"):
        from . import seal
        return getattr(seal, name)
    raise AttributeError(name)

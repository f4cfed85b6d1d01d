"""SwaNN (Tillem, Bozdemir, Önen, SECRYPT 2020): Paillier + 2PC, switching between the two.

Modules: :mod:`.twopc` (ABY-style arithmetic/Boolean sharing), :mod:`.switching` (Protocols
1-3, client-server and two-server roles), :mod:`.model` (the integer network the protocols
compute), :mod:`.bounds` (worst-case value bounds: which inputs fit the widths),
:mod:`.inference` (end-to-end runs), :mod:`.costs` (closed-form counts, projections). The
paper's experiments and tables: :mod:`ppnn.experiments.swann`.
"""

from .inference import SwannKeys, run_inference
from .model import FixedPointPlan, SwannModel
from .switching import (
    KeyHolderDecryption,
    Masking,
    Roles,
    SplitKeyDecryption,
    bool_to_phe,
    phe_to_2pc,
    secure_square,
)
from .twopc import OTCostModel, TwoPC

__all__ = ["FixedPointPlan", "KeyHolderDecryption", "Masking", "OTCostModel", "Roles",
           "SplitKeyDecryption", "SwannKeys", "SwannModel", "TwoPC", "bool_to_phe",
           "phe_to_2pc", "run_inference", "secure_square"]

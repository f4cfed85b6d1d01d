"""SHE (Lou & Jiang, NeurIPS 2019): TFHE gate-level ReLU / max-pool and shift-accumulate networks.

* ``circuits``    -- gate circuits on encrypted integers: ripple-carry adder, mixed-bitwidth
  accumulator, free arithmetic shifts, ReLU and max units (Fig. 2), multiplier (TCN),
  shift-accumulate dot product; closed forms of their gate counts
* ``quant``       -- logarithmic / uniform weight quantizers and the compiled integer network
* ``network``     -- client/server encrypted inference on any gate backend, per-layer costs
* ``costs``       -- counted costs of networks too large to evaluate gate by gate (Tables 5-6)
* ``latency``     -- seconds per bootstrapped gate and per encryption on a gate backend
* ``family``      -- SHE behind the one protocol interface (:mod:`ppnn.protocols.api`)

The trained models, the notebook's runs, the paper's tables and the schematics are in
:mod:`ppnn.experiments.she`.

Backends (``ppnn.he.bitsim.BitSimulator``, ``ppnn.he.tfhe.TfheBackend``) share one interface.
"""

from . import circuits
from .circuits import Word, decrypt_word, encrypt_word

__all__ = ["circuits", "Word", "encrypt_word", "decrypt_word"]

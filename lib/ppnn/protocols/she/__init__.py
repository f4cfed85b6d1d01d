"""SHE (Lou & Jiang, NeurIPS 2019): TFHE gate-level ReLU / max-pool and shift-accumulate networks.

``circuits`` holds the gate circuits on encrypted integers (adder, mixed-bitwidth accumulator,
shift, ReLU and max units, multiplier, shift-accumulate dot product).
"""

from . import circuits
from .circuits import Word, decrypt_word, encrypt_word

__all__ = ["circuits", "Word", "encrypt_word", "decrypt_word"]

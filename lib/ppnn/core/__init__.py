"""Shared building blocks: rings, fixed point, sharing, dealer, multiplication, ledger, time model.

Re-exports the public names so notebooks can write ``from ppnn.core import Ledger, Ring``.
"""

from .beaver import beaver_and, beaver_matmul, beaver_mul, replicated_mul, zero_sharing
from .dealer import BeaverTriple, BitTriple, Dealer, MatrixTriple, TruncationPair
from .fixed import FixedPoint
from .ledger import PHASES, Ledger, Message
from .netmodel import LAN, PRESETS, WAN, Network, Projection, project, project_counts
from .ring import Z2_32, Z2_64, PrimeField, Ring, is_prime
from .sharing import (
    AdditiveShares,
    ReplicatedShares,
    XorShares,
    share_additive,
    share_replicated,
    share_xor,
)
from .truncation import local_truncate, local_truncation_failure_probability, truncate_with_pair

__all__ = [
    "AdditiveShares", "BeaverTriple", "BitTriple", "Dealer", "FixedPoint", "LAN", "Ledger",
    "MatrixTriple", "Message", "Network", "PHASES", "PRESETS", "PrimeField", "Projection",
    "ReplicatedShares", "Ring", "TruncationPair", "WAN", "XorShares", "Z2_32", "Z2_64",
    "beaver_and", "beaver_matmul", "beaver_mul", "is_prime", "local_truncate",
    "local_truncation_failure_probability", "project", "project_counts", "replicated_mul",
    "share_additive", "share_replicated", "share_xor", "truncate_with_pair", "zero_sharing",
]

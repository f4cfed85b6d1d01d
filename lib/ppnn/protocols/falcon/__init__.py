"""Falcon (Wagh et al., PETS 2021): honest-majority 3-party protocols for private deep learning.

Replicated secret sharing over Z_2^32 among P0, P1, P2, semi-honest and malicious (abort);
private compare over Z_37, the wrap function, DReLU/ReLU, max-pool, pow, division, batch norm,
and secure training and inference of the paper's networks.
"""

from .algebra import Zp, bits_of, ring_matmul, wrap2, wrap3
from .compare import (
    bit_inject,
    drelu,
    private_compare,
    product_tree,
    relu,
    select_share,
    wrap3_protocol,
)
from .runtime import ACTIONS, PARTIES, RSS, Deviation, Falcon, MaliciousAbort, truncate_aby3_plain

__all__ = [
    "ACTIONS", "Deviation", "Falcon", "MaliciousAbort", "PARTIES", "RSS", "Zp", "bit_inject",
    "bits_of", "drelu", "private_compare", "product_tree", "relu", "ring_matmul",
    "select_share", "truncate_aby3_plain", "wrap2", "wrap3", "wrap3_protocol",
]

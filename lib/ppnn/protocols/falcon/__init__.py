"""Falcon (Wagh et al., PETS 2021): honest-majority 3-party protocols for private deep learning.

Replicated secret sharing over Z_2^32 among P0, P1, P2, semi-honest and malicious (abort);
private compare over Z_37, the wrap function, DReLU/ReLU, max-pool, pow, division, batch norm,
and secure training and inference of the paper's networks.

Modules: ``algebra`` (Z_L, Z_2, Z_37, exact BLAS ring products), ``runtime`` (the parties,
openings, products, truncation, malicious checks, deviations), ``comparison`` (Algorithms 1-3),
``pooling`` (Algorithm 4), ``numeric`` (Algorithms 5-7), ``network`` (layers, inference,
training), ``costs`` (closed forms), ``latency`` (measured unit costs for projections),
``tamper`` (deviation harness), ``catalog`` (standard protocol instances), ``family`` (Falcon
behind the one protocol interface). Notebook 05's runs: :mod:`ppnn.experiments.falcon`.

Deliberate deviations from the paper (each explained where it is implemented):

* private compare works on ``ell + 1`` bit positions (``2r`` vs ``2x + 1``) so it is exact
  for equal inputs and ``x = 2^ell - 1``;
* truncation pairs carry the shared top bit of ``r`` (plain ABY3 pairs fail often in 32 bits);
* malicious products are verified with dealer triples (Furukawa et al.), batched once per
  protocol; preprocessing is a trusted dealer booked offline (Falcon's Fig. 6 is not run);
* 13 fractional bits (§3.1), not 16 (§5.1), which cannot work in Z_2^32;
* batch-norm means are truncations, and a convolution's output error is pre-scaled before
  its weight gradient, to stay inside the range of Z_2^32.
"""

from .algebra import Zp, bits_of, ring_matmul, wrap2, wrap3
from .comparison import (
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

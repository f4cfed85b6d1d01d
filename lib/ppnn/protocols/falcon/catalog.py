"""Small standard instances of every Falcon protocol (for tampering, costs and the notebook)."""

from __future__ import annotations

import numpy as np

from .comparison import bit_inject, drelu, private_compare, relu, select_share, wrap3_protocol
from .numeric import batchnorm_backward, batchnorm_forward, divide, inverse_sqrt, pow2_bound
from .pooling import maxpool, maxpool_backward
from .runtime import Falcon

__all__ = ["PROTOCOLS", "protocol_instances"]


def _vals(fal: Falcon, n: int, lo: float = -3.0, hi: float = 3.0, seed: int = 11):
    return fal.share_fixed(np.random.default_rng(seed).uniform(lo, hi, n))


def _pc(fal: Falcon, n: int):
    R, F = fal.ring, fal.field
    g = np.random.default_rng(5)
    r, x = R.random(g, n), R.random(g, n)
    from .algebra import bits_of
    beta = g.integers(0, 2, n).astype(np.uint64)
    return private_compare(fal, fal.share(bits_of(R, r), F), x, fal.share(beta, fal.bit),
                           fal.share(beta, F), fal.share(F.random_nonzero(g, n), F))


def _reconstruct(fal, n):
    with fal.protocol("reconstruct"):
        return fal.open(_vals(fal, n), "open", "plain")


def _mul(fal, n):
    with fal.protocol("mult"):
        return fal.mul_fixed(_vals(fal, n), _vals(fal, n, seed=12))


def _matmul(fal, n):
    g = np.random.default_rng(3)
    x = fal.share_fixed(g.uniform(-1, 1, (n, 4)))
    w = fal.share_fixed(g.uniform(-1, 1, (4, 3)))
    with fal.protocol("matmul"):
        return fal.matmul_fixed(x, w)


def _trunc(fal, n):
    with fal.protocol("truncate"):
        return fal.truncate(_vals(fal, n), 5)


def _sel(fal, n):
    b = fal.share(np.random.default_rng(2).integers(0, 2, n).astype(np.uint64), fal.bit)
    return select_share(fal, _vals(fal, n), _vals(fal, n, seed=4), b)


def _inject(fal, n):
    b = fal.share(np.random.default_rng(2).integers(0, 2, n).astype(np.uint64), fal.bit)
    with fal.protocol("bit_inject"):
        return bit_inject(fal, b)


def _maxpool_bwd(fal, n):
    mx, ind = maxpool(fal, _vals(fal, 4 * n).reshape(n, 4))
    return maxpool_backward(fal, ind, _vals(fal, n, seed=8))


def _bn(fal, n):
    g = np.random.default_rng(9)
    x = fal.share_fixed(g.normal(0.5, 1.5, (8, 2)))
    gamma, beta = fal.share_fixed(np.ones(2)), fal.share_fixed(np.zeros(2))
    y, cache = batchnorm_forward(fal, x, gamma, beta)
    return batchnorm_backward(fal, fal.share_fixed(g.normal(0, 0.1, (8, 2))), cache)


def _product_then(fal, n, then):
    """A product still pending (its multiplication check not yet opened) when ``then`` opens
    a plain value that depends on it: the composite case verify-before-open exists for."""
    with fal.protocol("mult, then a protocol that opens"):
        z = fal.mul_fixed(_vals(fal, n, 0.5, 1.5), _vals(fal, n, 0.5, 1.5, seed=12))
        return then(fal, z)


def _then_pow(fal, z):
    return pow2_bound(fal, z)


def _then_divide(fal, z):
    return divide(fal, _vals(fal, z.shape[0], seed=6), z)


def _then_maxpool(fal, z):
    return maxpool(fal, z.reshape(-1, 2))


PROTOCOLS = {
    "reconstruct": _reconstruct,
    "mult (fixed point)": _mul,
    "matmul (fixed point)": _matmul,
    "truncation": _trunc,
    "bit injection": _inject,
    "select share": _sel,
    "private compare": _pc,
    "wrap3": lambda fal, n: wrap3_protocol(fal, _vals(fal, n)),
    "drelu": lambda fal, n: drelu(fal, _vals(fal, n)),
    "relu": lambda fal, n: relu(fal, _vals(fal, n)),
    "maxpool + derivative": _maxpool_bwd,
    "pow": lambda fal, n: pow2_bound(fal, _vals(fal, n, 0.1, 3.0)),
    "division": lambda fal, n: divide(fal, _vals(fal, n), _vals(fal, n, 0.1, 3.0, seed=6)),
    "inverse sqrt": lambda fal, n: inverse_sqrt(fal, _vals(fal, n, 0.1, 3.0)),
    "batch norm (forward + backward)": _bn,
    # composite: a product pending when pow, division or maxpool opens (issue 28)
    "mult -> pow": lambda fal, n: _product_then(fal, n, _then_pow),
    "mult -> division": lambda fal, n: _product_then(fal, n, _then_divide),
    "mult -> maxpool": lambda fal, n: _product_then(fal, 2 * n, _then_maxpool),
}


def protocol_instances(n: int = 3) -> dict:
    """``{name: protocol(fal)}`` on ``n`` elements each (closures for the harness)."""
    return {name: (lambda fal, f=fn: f(fal, n)) for name, fn in PROTOCOLS.items()}

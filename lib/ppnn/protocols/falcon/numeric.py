"""Pow, division, inverse square root and batch normalisation (Falcon §3.7, Alg. 5-7).

Definitions and parameters chosen here (the transcribed text lacks the paper's formulas):

* **Pow** (Algorithm 5): for a positive shared fixed-point integer ``b``, find ``alpha`` with
  ``2^alpha <= b < 2^(alpha+1)`` by binary search over the ``ceil(log2 ell) = 5`` bits of
  ``alpha``, most significant first: test ``DReLU(b - 2^(alpha_sofar + 2^i))`` and open the
  bit. Exactly the bits of ``alpha`` are revealed, nothing else. A non-positive ``b`` yields
  ``alpha = 0``, which division rejects (see below). Malicious: each bit is a plain opening,
  so every product it depends on (private compare's, and those of a caller such as batch
  norm's variance) is verified before it is opened -- a tampered product aborts the run
  before a bit derived from it is public.
* **Division** (Algorithm 6, Goldschmidt with the Catrina-Saxena initial approximation): scale
  ``b`` to ``b~ = b / 2^(alpha + 1 - f)`` in ``[0.5, 1)``; ``w0 = 2.9142 - 2 b~``;
  ``eps0 = 1 - b~ w0``; ``a / b~ ~= a w0 (1 + eps0)(1 + eps0^2)`` (Eq. 12: relative error
  below ``0.0858^4 ~ 5e-5``), then multiply by ``2^(f - alpha - 1)``.
  Supported divisors: ``2^-8 <= b < 2^(ell - 3 - f)`` (``2^16`` for ell = 32, f = 13); outside
  this range (also zero or negative divisors) the revealed ``alpha`` triggers a ValueError.
* **Inverse square root** (Eq. 13, Newton): ``x_{n+1} = x_n (3 - b x_n^2) / 2`` from the public
  start ``x_0 = 2^-ceil((alpha - f) / 2)`` (so ``x_0 sqrt(b)`` lies in ``[0.70, 1.42)``, inside
  Newton's basin ``(0, sqrt 3)``), 4 iterations, run on the normalised ``b 2^(-2s)``.

Range of a 32-bit ring with 13 fractional bits: a product of two shared values must stay
below 16 in magnitude (the raw product carries 26 fractional bits and truncation needs
``|x| < 2^30``). Hence: division needs ``|a| < 4`` and ``|a / b| < 2^16``; batch norm scales
``x - mu`` by 1/4 before squaring and so supports ``|x - mu| < 16``.
* **Batch norm** (Algorithm 7): ``mu = mean(x)``, ``var = mean((x - mu)^2)``,
  ``inv = 1/sqrt(var + eps)``, ``x^ = (x - mu) inv``, ``y = gamma x^ + beta``; backward
  ``dx = inv (dx^ - mean(dx^) - x^ mean(dx^ x^))`` with ``dx^ = gamma dy`` (means, not
  ``m`` times sums: ``m dx^`` would overflow the ring).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .comparison import drelu
from .runtime import RSS, Falcon

__all__ = ["pow2_bound", "divide", "inverse_sqrt", "batchnorm_forward", "batchnorm_backward",
           "BNCache", "DIV_W0", "DIV_MIN", "pow_iterations"]

DIV_W0 = 2.9142  # Catrina-Saxena: 1/x ~ 2.9142 - 2x on [0.5, 1)
DIV_MIN = 2.0 ** -8  # smallest supported divisor
BN_EPS = 2.0 ** -10
NEWTON_ITERS = 4
BN_PRESHIFT = 2  # (x - mu) is scaled by 2^-2 before squaring


def pow_iterations(k: int) -> int:
    """Number of bits of ``alpha`` searched by Algorithm 5: ``ceil(log2 ell)``."""
    return math.ceil(math.log2(k))


def pow2_bound(fal: Falcon, b: RSS) -> np.ndarray:
    """Algorithm 5: public ``alpha`` with ``2^alpha <= b < 2^(alpha+1)`` (b as a ring integer)."""
    ring = fal.ring
    with fal.protocol("pow"):
        alpha = np.zeros(b.shape, dtype=np.int64)
        for i in reversed(range(pow_iterations(fal.k))):
            cand = alpha + (1 << i)
            two_c = ring.reduce(np.left_shift(np.uint64(1), cand.astype(np.uint64)))
            # a plain opening: everything it depends on is verified first (private compare
            # leaves nothing unverified; products of the caller are checked there too)
            bit = fal.open(drelu(fal, b.add_public(ring.neg(two_c))),
                           f"pow bit {i}: open b >= 2^candidate", "plain")
            alpha = alpha + (bit.astype(np.int64) << i)
        return alpha


def mul_pow2(fal: Falcon, x: RSS, e, what: str) -> RSS:
    """Multiply by the public powers of two ``2^e`` (``e`` per element, any sign): a local
    shift for ``e >= 0`` and a truncation for ``e < 0`` (always one round, for uniformity)."""
    e = np.broadcast_to(np.asarray(e, dtype=np.int64), x.shape)
    up = fal.ring.reduce(np.left_shift(np.uint64(1), np.maximum(e, 0).astype(np.uint64)))
    return fal.truncate(x.mul_public(up), np.maximum(-e, 0), what)


def divide(fal: Falcon, a: RSS, b: RSS) -> RSS:
    """Algorithm 6: fixed-point ``a / b`` for shared ``a`` and positive shared ``b``."""
    if a.shape != b.shape:
        raise ValueError(f"divide needs equal shapes, got {a.shape} and {b.shape}")
    f, k = fal.f, fal.k
    with fal.protocol("division"):
        alpha = pow2_bound(fal, b)  # its bits were opened on verified products only
        lo, hi = f + int(math.log2(DIV_MIN)), k - 3
        if alpha.size and (alpha.min() < lo or alpha.max() > hi):
            raise ValueError(
                f"divisor b outside the supported range [{DIV_MIN}, {2.0 ** (hi + 1 - f)}) "
                f"(zero or negative divisors included): bounding powers 2^(alpha-f) with alpha "
                f"in [{alpha.min()}, {alpha.max()}], allowed [{lo}, {hi}]")
        b_n = mul_pow2(fal, b, f - alpha - 1, "division: scale b into [0.5, 1)")
        w0 = b_n.mul_public(fal.ring.neg(2)).add_public(fal.fp.encode(DIV_W0))
        both = fal.mul_fixed(_cat(b_n, a), _cat(w0, w0), "division: b~ w0, a w0")
        bw0, aw0 = _split(both, a.shape)
        eps0 = (-bw0).add_public(fal.fp.encode(1.0))
        both = fal.mul_fixed(_cat(eps0, aw0), _cat(eps0, eps0.add_public(fal.fp.encode(1.0))),
                             "division: eps0^2, a w0 (1 + eps0)")
        eps1, q1 = _split(both, a.shape)
        q2 = fal.mul_fixed(q1, eps1.add_public(fal.fp.encode(1.0)), "division: q (1 + eps1)")
        return mul_pow2(fal, q2, f - alpha - 1, "division: scale back by 2^(f - alpha - 1)")


def _cat(x: RSS, y: RSS) -> RSS:
    return RSS(np.concatenate([x.components.reshape(3, -1), y.components.reshape(3, -1)],
                              axis=1), x.ring)


def _split(z: RSS, shape) -> tuple[RSS, RSS]:
    n = int(np.prod(shape, dtype=np.int64))
    return z[:n].reshape(*shape), z[n:].reshape(*shape)


def inverse_sqrt(fal: Falcon, b: RSS) -> RSS:
    """``1 / sqrt(b)`` for positive shared fixed-point ``b`` by Newton's method (Eq. 13).

    With ``alpha = pow(b)`` and ``s = ceil((alpha - f) / 2)``, iterating on ``b`` from the
    public start ``x0 = 2^-s`` is the same as iterating on ``b~ = b 2^(-2s)`` (in ``[0.5, 2)``)
    from ``x0 = 1`` and scaling the result by ``2^-s``; the second form keeps every product
    near 1, which a 32-bit ring needs (``b x`` would overflow for ``b > 256``).
    """
    f = fal.f
    with fal.protocol("inverse_sqrt"):
        alpha = pow2_bound(fal, b)
        if alpha.size and alpha.min() < 1:
            raise ValueError("inverse_sqrt needs a positive input b >= 2^-(frac_bits - 1), "
                             f"got a bounding power 2^{int(alpha.min()) - f}")
        s = -(-(alpha - f) // 2)  # ceil((alpha - f) / 2)
        bn = mul_pow2(fal, b, -2 * s, "rsqrt: b~ = b 2^(-2s)")
        # iteration 0 from x0 = 1 is local up to the halving: x1 = (3 - b~) / 2
        x = fal.truncate((-bn).add_public(fal.fp.encode(3.0)), 1, "rsqrt iter 0: (3 - b~) / 2")
        for it in range(1, NEWTON_ITERS):
            bx = fal.mul_fixed(bn, x, f"rsqrt iter {it}: b~ x")
            bxx = fal.mul_fixed(bx, x, f"rsqrt iter {it}: b~ x^2")
            t = (-bxx).add_public(fal.fp.encode(3.0))
            x = fal.truncate(fal.mul(x, t, f"rsqrt iter {it}: x (3 - b~ x^2)"), f + 1,
                             f"rsqrt iter {it}: / 2")
        return mul_pow2(fal, x, -s, "rsqrt: scale by 2^-s")


@dataclass
class BNCache:
    """What the forward pass keeps for back-propagation."""

    xhat: RSS
    inv: RSS
    gamma: RSS
    m: int


def _sum_rows(x: RSS) -> RSS:
    return RSS(x.ring.sum(x.components, axis=1), x.ring)


def _bcast(v: RSS, shape) -> RSS:
    return RSS(np.broadcast_to(v.components[:, None], (3, *shape)).copy(), v.ring)


def mean_rows(fal: Falcon, x: RSS, what: str) -> RSS:
    """Column means of ``x`` (m, C): the local column sum divided by ``m``. For ``m = 2^e``
    one truncation by ``e``; otherwise truncate by ``e = ceil(log2 m)`` and multiply by the
    public ``2^e / m`` in ``(0.5, 1]`` (a second round) -- multiplying the sum by ``1/m``
    directly would lose most of the precision of ``1/m`` at 13 fractional bits."""
    m = x.shape[0]
    e = (m - 1).bit_length()
    s = _sum_rows(x)
    if e == 0:
        return s
    s = fal.truncate(s, e, f"{what}: sum / 2^{e}")
    if (1 << e) == m:
        return s
    return fal.mul_public_fixed(s, (1 << e) / m, f"{what}: * 2^{e}/{m}")


def _row(v: RSS) -> RSS:
    """Per-column values as a (1, C) row that broadcasts over the batch in a product."""
    return v.reshape(1, *v.shape)


def batchnorm_forward(fal: Falcon, x: RSS, gamma: RSS, beta: RSS,
                      eps: float = BN_EPS) -> tuple[RSS, BNCache]:
    """Algorithm 7 on ``x`` of shape ``(m, C)`` (batch rows, features/channels columns)."""
    if len(x.shape) != 2:
        raise ValueError(f"batchnorm expects (m, C) shares, got shape {x.shape}")
    m, C = x.shape
    if gamma.shape != (C,) or beta.shape != (C,):
        raise ValueError(f"gamma and beta must have shape ({C},), got {gamma.shape}, {beta.shape}")
    with fal.protocol("batchnorm"):
        mu = mean_rows(fal, x, "bn: mean")
        xc = x - _bcast(mu, x.shape)
        xq = fal.truncate(xc, BN_PRESHIFT, "bn: (x - mu) / 4")  # keeps (x - mu)^2 in range
        sq = fal.mul_fixed(xq, xq, "bn: ((x - mu) / 4)^2")
        var = mean_rows(fal, sq, "bn: variance").mul_public(4 ** BN_PRESHIFT)
        inv = inverse_sqrt(fal, var.add_public(fal.fp.encode(eps)))
        xhat = fal.mul_fixed(xc, _row(inv), "bn: x^ = (x - mu) inv")
        y = fal.mul_fixed(xhat, _row(gamma), "bn: gamma x^") + _bcast(beta, x.shape)
        return y, BNCache(xhat, inv, gamma, m)


def batchnorm_backward(fal: Falcon, dy: RSS, cache: BNCache) -> tuple[RSS, RSS, RSS]:
    """Gradients ``(dx, dgamma, dbeta)`` of batch norm (multiplications only)."""
    xhat, inv, gamma = cache.xhat, cache.inv, cache.gamma
    shape = dy.shape
    with fal.protocol("batchnorm_backward"):
        prod = fal.mul_fixed(_cat(dy, dy), _cat(xhat, _bcast(gamma, shape)),
                             "bn back: dy x^, gamma dy")
        dyx, dxh = _split(prod, shape)
        dgamma, dbeta = _sum_rows(dyx), _sum_rows(dy)
        t = fal.mul_fixed(dxh, xhat, "bn back: dx^ x^")
        means = mean_rows(fal, RSS(np.concatenate([dxh.components, t.components], axis=2),
                                   dy.ring), "bn back: means of dx^, dx^ x^")
        mean1, mean2 = means[:shape[1]], means[shape[1]:]
        xs2 = fal.mul_fixed(xhat, _row(mean2), "bn back: x^ mean(dx^ x^)")
        inner = dxh - _bcast(mean1, shape) - xs2
        dx = fal.mul_fixed(inner, _row(inv), "bn back: dx = inv (dx^ - mean - x^ mean)")
        return dx, dgamma, dbeta

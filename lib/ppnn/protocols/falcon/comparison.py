"""Comparison protocols: private compare, wrap, DReLU, ReLU (Falcon §3.3-3.5, Alg. 1-3).

Definitions used (the text of this copy lost its formulas; these are the published ones):

* ``wrap2(a, b) = 1`` iff ``a + b >= L`` (Eq. 2); the exact wrap of three components
  ``theta`` counts how often ``a0 + a1 + a2`` passes ``L`` (0, 1 or 2; Eq. 3); the paper's
  "wrap function" Wrap3 is that count mod 2 (Eq. 4).
* Eq. 10 (integer identity behind Algorithm 2): with ``x = a + r`` opened,
  ``beta_j = wrap2(a_j, r_j)``, ``delta = wrap3(x_0, x_1, x_2)``, ``eta = (r > x)`` and
  ``alpha = wrap3(r_0, r_1, r_2)``: ``theta = sum beta_j + delta - eta - alpha``.
* Eq. 11 (the MSB identity): ``MSB(a) = MSB(a0) + MSB(a1) + MSB(a2) + Wrap3(2a0, 2a1, 2a2)``
  mod 2, because the carry into the top bit is the wrap of the lower ``ell - 1`` bits, i.e.
  the wrap of the doubled components; ``DReLU(a) = 1 - MSB(a)``.

Private compare (Algorithm 1) -- one deliberate deviation: the paper compares ``ell`` bit
positions and evaluates ``r > x`` as ``r >= x + 1``, which is wrong when ``x = L - 1``
(``x + 1`` wraps), and its blinded variant disagrees with the unblinded one when the two
inputs are equal. We compare ``2r`` with ``2x + 1`` on ``ell + 1`` bit positions: the two are
never equal, both blinded branches are exact, and the product tree still takes
``ceil(log2(ell + 2))`` rounds (the random mask ``m`` joins the tree as one more factor).
"""

from __future__ import annotations

import math

import numpy as np

from .algebra import bits_of, wrap2, wrap3
from .runtime import RSS, Falcon

__all__ = ["private_compare", "wrap3_protocol", "drelu", "relu", "bit_inject",
           "select_share", "product_tree", "pc_factors", "pc_material"]


def product_tree(fal: Falcon, factors: RSS, what: str, verify_before_last: bool = False
                 ) -> RSS:
    """Product over the first value axis by a binary tree of multiplications (one round per
    level): factor ``i`` of the first half meets factor ``i + half`` (an odd one out waits for
    the next level). Each level multiplies two contiguous blocks, so the elements of every
    comparison stay side by side in memory.

    ``verify_before_last``: in the round of the last level, also open the checks of every
    earlier product (malicious; no extra round)."""
    level = 0
    while factors.shape[0] > 1:
        n = factors.shape[0]
        half = n // 2
        prod = fal.mul(factors[:half], factors[half:2 * half], f"{what} level {level}",
                       verify_pending=verify_before_last and n == 2)
        if n % 2:
            comps = np.concatenate([prod.components, factors.components[:, n - 1:]], axis=1)
            prod = RSS(comps, factors.ring)
        factors = prod
        level += 1
    return factors[0]


def pc_factors(k: int) -> int:
    """Number of factors in the product of Algorithm 1 step 9: ``ell + 1`` terms and ``m``."""
    return k + 2


def private_compare(fal: Falcon, r_bits: RSS, x, beta2: RSS, betap: RSS, m: RSS) -> RSS:
    """Algorithm 1: shares in Z_2 of ``(r > x)`` for shared bits of ``r`` and public ``x``.

    Parameters
    ----------
    r_bits : shares over Z_p of the bits of ``r`` (LSB first), shape ``(n, ell)``.
    x : public ring elements, shape ``(n,)``.
    beta2, betap : the same random bit ``beta`` shared in Z_2 and in Z_p (shape ``(n,)``).
    m : random nonzero blinding factor in Z_p (shape ``(n,)``).

    Steps (comparing ``S = 2r`` with ``T = 2x + 1`` on ``ell + 1`` positions ``i``):

    * ``w[i] = S[i] XOR T[i] = S[i] + T[i] - 2 T[i] S[i]`` (local, ``T`` public);
    * step 5: ``u[i] = (-1)^beta (S[i] - T[i])`` -- one multiplication by ``1 - 2 beta`` at
      the ``ell`` positions ``i >= 1``; at ``i = 0`` (``S[0] = 0``, ``T[0] = 1``) ``u[0] =
      -(1 - 2 beta)`` is local, so the product has ``ell`` elements as in the paper;
    * ``c[i] = u[i] + 1 + sum_{k > i} w[k]``. For ``beta = 0`` some ``c[i] = 0`` iff
      ``S < T`` (iff ``r <= x``); for ``beta = 1`` iff ``S > T`` (iff ``r > x``);
    * step 9: open ``d = m * prod_i c[i]`` (a product tree, then one opening);
    * ``beta' = (d != 0)`` and the output is ``beta' XOR beta = (r > x)``.

    Malicious: ``d`` hides everything but the masked bit ``beta'`` only if every factor
    ``c[i]`` is genuine. A tampered product of step 5 or of the tree could make ``d = 0``
    exactly when a chosen ``c[i]`` takes a chosen value -- a test of the bits of ``r``
    (hence of the secret behind ``x``) that ``m`` and ``beta`` do not mask. So the checks of
    every earlier product (those of this protocol and any still pending from the caller) are
    opened in the round of the tree's last level, before ``d`` is opened; an error ``e`` in
    the last level itself only turns the opened value into ``d + e`` (the adversary learns
    ``d``, as it would anyway), and its check is opened in the same round as ``d``. Private
    compare therefore returns with nothing unverified, at no extra round. The public ``x``
    (from Wrap3's masked opening) is uniform whatever the shared input was, so a tampered
    input of the caller cannot steer this protocol.
    """
    F = fal.field
    with fal.protocol("private_compare"):
        n, k = r_bits.shape
        x = np.asarray(x, dtype=np.uint64)
        # arrays are position-major, (k + 1, n) per component: every step below works on whole
        # contiguous rows of one bit position
        t_bits = bits_of(fal.ring, x, dtype=F.dtype).T                        # (k, n)
        T = np.concatenate([np.ones((1, n), F.dtype), t_bits], axis=0)        # bits of 2x+1
        S = np.concatenate([np.zeros((3, 1, n), F.dtype),
                            r_bits.components.transpose(0, 2, 1)], axis=1)    # bits of 2r
        # w = S xor T = S + T - 2 T S: where T = 1 negate S, then add T to component 0.
        # S + T (-S - S) selects -S where T = 1 (exact in the storage dtype's wrap-around)
        w = F.neg(S) - S
        w *= T
        w += S
        w[0] = F.add(w[0], T)
        # suffix sums sum_{k > i} w[k], one bit position at a time (vectorized over the
        # elements and components; at most (k + 1)(p - 1) < 3 (p - 1)^2 fits F.wide)
        suffix = np.zeros_like(S)
        acc = np.zeros((3, n), dtype=F.wide)
        for i in range(k - 1, -1, -1):
            acc += w[:, i + 1]
            suffix[:, i] = F.mod(acc.copy())
        sign = betap.mul_public(F.reduce(-2)).add_public(1)                    # 1 - 2 beta
        s_minus_t = S[:, 1:].copy()
        s_minus_t[0] = F.sub(s_minus_t[0], T[1:])
        u = fal.mul(sign.reshape(1, n), RSS(s_minus_t, F), "pc step 5: u = (-1)^beta (S - T)")
        # position 0 (S[0] = 0, T[0] = 1): u[0] = -(1 - 2 beta), no product needed
        u_all = np.concatenate([F.neg(sign.components)[:, None, :], u.components], axis=1)
        c = RSS(F.add(u_all, suffix), F).add_public(1)
        factors = RSS(np.concatenate([c.components, m.components[:, None, :]], axis=1), F)
        d_sh = product_tree(fal, factors, "pc step 9: m * prod c",
                            verify_before_last=fal.VERIFY_BEFORE_OPEN)
        # d, and in the same round the check of the tree's last level (judged after d)
        d_item = (d_sh, "pc step 9: open d", "blinded", None, "d = m * prod c (opened)")
        if fal.malicious and fal.VERIFY_BEFORE_OPEN:
            d, = fal.open_many([d_item], verify_pending=True, checks_last=True)
        else:
            d = fal.open(*d_item)
        beta_prime = (d != 0).astype(np.uint64)
        return beta2.add_public(beta_prime)


def pc_material(fal: Falcon, shape) -> tuple[RSS, RSS, RSS]:
    """Preprocessing for private compare: a random bit in Z_2 and Z_p, a mask in Z_p^*."""
    g = fal.dealer.rngs["pc"]
    beta = g.integers(0, 2, size=shape).astype(np.uint64)
    m = fal.field.random_nonzero(g, shape).astype(np.uint64)
    out = (fal.dealer.share(beta, fal.bit, "pc"), fal.dealer.share(beta, fal.field, "pc"),
           fal.dealer.share(m, fal.field, "pc"))
    n = int(np.prod(shape, dtype=np.int64))
    fal.dealer.book(2 * n * (1 + 2 * fal.field.bits), "private compare: beta (Z_2, Z_p), m",
                    *out)
    return out


def wrap3_protocol(fal: Falcon, a: RSS) -> RSS:
    """Algorithm 2: shares in Z_2 of ``Wrap3(a_0, a_1, a_2) mod 2`` for ``a`` over Z_L.

    Preprocessing: random ``r`` over Z_L, its bits shared over Z_p, ``alpha = Wrap3(r)`` in Z_2.

    1. ``x_j = a_j + r_j`` and ``beta_j = wrap2(a_j, r_j)`` (local; ``beta_j`` is held by the
       two parties holding component ``j``, so the ``beta_j`` form a Z_2 sharing);
    2. open ``x`` (each party learns all three ``x_j``; masked by the uniform ``r``, whose
       three components are uniform too, so ``x``, its components and ``delta`` reveal
       nothing about ``a`` -- even a wrong ``a`` built on an unverified product);
    3. ``delta = Wrap3(x_0, x_1, x_2)`` (public);
    4. ``eta = (r > x)`` by private compare;
    5. ``theta = beta_0 + beta_1 + beta_2 + delta + eta + alpha`` mod 2 (Eq. 10 mod 2).
    """
    ring = fal.ring
    with fal.protocol("wrap3"):
        n = a.shape
        g = fal.dealer.rngs["wrap"]
        r = ring.random(g, n)
        r_sh = fal.dealer.share(r, ring, "wrap")
        r_bits = fal.dealer.share(bits_of(ring, r, dtype=fal.field.dtype), fal.field, "wrap")
        alpha = fal.dealer.share(fal._material("wrap3 alpha", wrap3(ring, *r_sh.components),
                                               fal.bit), fal.bit, "wrap")
        size = int(np.prod(n, dtype=np.int64))
        fal.dealer.book(2 * size * (ring.bits + ring.k * fal.field.bits + 1),
                        "wrap3: r, bits of r in Z_p, alpha", r_sh, r_bits, alpha)
        x_sh = a + r_sh
        beta = RSS(wrap2(ring, a.components, r_sh.components), fal.bit)
        x, xc = fal.open_components(x_sh, "wrap3 step 2: open x = a + r", "masked", "wrap3 r")
        delta = wrap3(ring, *xc)
        b2, bp, m = pc_material(fal, n)
        flat = (int(np.prod(n, dtype=np.int64)),)
        eta = private_compare(fal, r_bits.reshape(*flat, ring.k), x.reshape(flat),
                              b2.reshape(*flat), bp.reshape(*flat), m.reshape(*flat)).reshape(*n)
        return (beta + eta + alpha).add_public(delta)


def drelu(fal: Falcon, a: RSS) -> RSS:
    """Algorithm 3 (first half): ``DReLU(a) = 1 XOR MSB(a)`` as shares in Z_2, via Eq. 11."""
    ring = fal.ring
    with fal.protocol("drelu"):
        msb_comps = RSS(ring.msb(a.components), fal.bit)
        doubled = a.mul_public(2)
        theta = wrap3_protocol(fal, doubled)
        return (msb_comps + theta).add_public(1)


def bit_inject(fal: Falcon, b: RSS, what: str = "bit injection: open b xor c") -> RSS:
    """A shared bit over Z_2 -> the same bit over Z_L (Falcon §3.2, Select Shares).

    Preprocessing: a random bit ``c`` shared over Z_2 and over Z_L. Open ``e = b XOR c``; then
    ``b = c`` if ``e = 0`` and ``1 - c`` otherwise, i.e. ``b = e + (1 - 2e) c`` (local).
    """
    ring = fal.ring
    g = fal.dealer.rngs["bits"]
    c = g.integers(0, 2, size=b.shape).astype(np.uint64)
    c2 = fal.dealer.share(c, fal.bit, "bits")
    cL = fal.dealer.share(fal._material("bit c (Z_L)", c, ring), ring, "bits")
    fal.dealer.book(2 * int(np.prod(b.shape, dtype=np.int64)) * (1 + ring.bits),
                    "random bit in Z_2 and Z_L", c2, cL)
    e = fal.open(b + c2, what, "masked", "bit c")
    return cL.mul_public(ring.reduce(1 - 2 * e.astype(np.int64))).add_public(e)


def select_share(fal: Falcon, x: RSS, y: RSS, b: RSS, what: str = "select share") -> RSS:
    """``Pi_SS(x, y, b)``: ``x`` if ``b = 0`` else ``y`` (b shared over Z_2): x + b (y - x)."""
    with fal.protocol("select_share"):
        bL = bit_inject(fal, b)
        return x + fal.mul(bL, y - x, what)


def relu(fal: Falcon, a: RSS) -> tuple[RSS, RSS]:
    """Algorithm 3: ``(ReLU(a), DReLU(a))`` -- ReLU = a * DReLU(a) via bit injection.

    Returns the ReLU over Z_L and DReLU over Z_L (0/1, kept for back-propagation)."""
    with fal.protocol("relu"):
        d = drelu(fal, a)
        dL = bit_inject(fal, d)
        return fal.mul(dL, a, "relu: a * DReLU(a)"), dL


def rounds_pc(k: int) -> int:
    """Rounds of private compare: step 5, the product tree, the opening of d."""
    return 1 + math.ceil(math.log2(pc_factors(k))) + 1

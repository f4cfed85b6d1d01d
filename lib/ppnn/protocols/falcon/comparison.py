"""Comparison protocols: private compare, wrap, DReLU, ReLU (Falcon §3.3-3.5, Alg. 1-3).

Definitions used (the published formulas; the transcribed text lacks them):

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

from ppnn.core import bits as core_bits

from .algebra import wrap2, wrap3
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


def private_compare(fal: Falcon, r_bits: RSS, x, beta2: RSS, betap: RSS, m: RSS, *,
                    position_major: bool = False) -> RSS:
    """Algorithm 1: shares in Z_2 of ``(r > x)`` for shared bits of ``r`` and public ``x``.

    Parameters
    ----------
    r_bits : shares over Z_p of the bits of ``r`` (LSB first), shape ``(n, ell)``.
    x : public ring elements, shape ``(n,)``.
    beta2, betap : the same random bit ``beta`` shared in Z_2 and in Z_p (shape ``(n,)``).
    m : random nonzero blinding factor in Z_p (shape ``(n,)``).
    position_major : ``r_bits`` has shape ``(ell, n)`` instead, and is material used once:
        its components become the step-5 operand ``S - T`` in place (Wrap3 hands over its
        material this way, saving a transposed copy of ``ell x n`` elements per component).

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
    # the components this process computes: all three in the simulation, a wire party's two
    # (the third is garbage there, see ppnn.wire.falcon), none in the wire dealer's process;
    # the local steps below run on these rows only
    rows = fal._rows()
    with fal.protocol("private_compare"):
        k, n = r_bits.shape if position_major else r_bits.shape[::-1]
        x = np.asarray(x, dtype=np.uint64)
        # arrays are position-major, (k + 1, n) per component, and every local step below
        # works on one bit position and one component at a time: rows of n elements, whose
        # few temporaries stay small (no array of the whole comparison is made and dropped)
        pp = F.dtype.type(F.p)
        tmp, scratch, ti = np.empty(n, F.dtype), np.empty(n, F.dtype), np.empty(n, F.dtype)
        word = np.uint32 if k <= 32 else np.uint64
        xw, bit = x.astype(word), np.empty(n, word)  # bit i of the public x, one at a time

        def fold(v):  # v mod p in place, for v < 2p (unsigned: v - p wraps above v if v < p)
            np.subtract(v, pp, out=scratch)
            np.minimum(v, scratch, out=v)

        # S - T at positions 1..k (position 0: S[0] = 0, T[0] = 1), built in place from the
        # bits of 2r (component c of S at position i is component c of r's bit i - 1); and
        # the factors of step 9, c[i] = u[i] + 1 + sum_{j > i} w[j] and m, whose suffix sums
        # (with the 1 on component 0) are formed here, u added after step 5
        if position_major:  # (a ledger that records values holds the material: a copy)
            s_minus_t = r_bits.components
            if fal.ledger.records_values:
                s_minus_t = s_minus_t.copy()
        else:
            s_minus_t = np.empty((3, k, n), F.dtype)
            for r in rows:
                s_minus_t[r] = r_bits.components[r].T
        del r_bits
        factors = np.empty((3, k + 2, n), F.dtype)
        for r in rows:
            factors[r, k] = 1 if r == 0 else 0
        for i in range(k - 1, -1, -1):
            np.right_shift(xw, word(i), out=bit)
            bit &= word(1)
            np.copyto(ti, bit, casting="unsafe")  # T at position i + 1
            for r in rows:
                # w = S xor T = S + T - 2 T S at position i + 1: per component S_c + T (p -
                # 2 S_c), i.e. S_c where T = 0 and p - S_c where T = 1 (exact in uint8's
                # wrap-around), plus T on component 0; then folded into [0, p)
                sr = s_minus_t[r, i]
                np.multiply(sr, 2, out=tmp)
                np.subtract(pp, tmp, out=tmp)
                tmp *= ti
                tmp += sr
                if r == 0:
                    tmp += ti
                fold(tmp)
                np.add(factors[r, i + 1], tmp, out=factors[r, i])
                fold(factors[r, i])
            if 0 in rows:  # S - T on component 0: + p - T, folded
                s0 = s_minus_t[0, i]
                s0 += pp
                s0 -= ti
                fold(s0)
        fal._not_computed(s_minus_t, F, rows)
        del xw, bit
        sign = betap.mul_public(F.reduce(-2)).add_public(1)                    # 1 - 2 beta
        u = fal.mul(sign.reshape(1, n), RSS(s_minus_t, F), "pc step 5: u = (-1)^beta (S - T)")
        del s_minus_t  # (memory: the product is in u)
        # c = u + suffix, where position 0 has u[0] = -(1 - 2 beta) with no product needed
        for r in rows:  # both terms reduced: their sum is below 2p
            f = factors[r]
            f[0] += F.neg(sign.components[r])
            fold(f[0])
            f[1:k + 1] += u.components[r]
            for i in range(1, k + 1):
                fold(f[i])
            f[k + 1] = m.components[r]
        fal._not_computed(factors, F, rows)
        del u
        factors = RSS(factors, F)
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
                    *out, names=("beta (Z_2)", "beta (Z_p)", "m"))
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
        # the bits of r position-major, (ell, *n): private compare's layout (it consumes them)
        r_bits = fal.dealer.share(core_bits.bits_of(r, ring.k, axis=0, dtype=fal.field.dtype),
                                  fal.field, "wrap")
        alpha = fal.dealer.share(fal._material("wrap3 alpha", wrap3(ring, *r_sh.components),
                                               fal.bit), fal.bit, "wrap")
        size = int(np.prod(n, dtype=np.int64))
        fal.dealer.book(2 * size * (ring.bits + ring.k * fal.field.bits + 1),
                        "wrap3: r, bits of r in Z_p, alpha", r_sh, r_bits, alpha,
                        names=("r", "bits of r", "alpha"))
        x_sh = a + r_sh
        beta = RSS(wrap2(ring, a.components, r_sh.components), fal.bit)
        x, xc = fal.open_components(x_sh, "wrap3 step 2: open x = a + r", "masked", "wrap3 r")
        delta = wrap3(ring, *xc)
        b2, bp, m = pc_material(fal, n)
        flat = (int(np.prod(n, dtype=np.int64)),)
        r_bits = r_bits.reshape(ring.k, *flat)
        eta = private_compare(fal, r_bits, x.reshape(flat), b2.reshape(*flat),
                              bp.reshape(*flat), m.reshape(*flat), position_major=True
                              ).reshape(*n)
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
                    "random bit in Z_2 and Z_L", c2, cL, names=("c (Z_2)", "c (Z_L)"))
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

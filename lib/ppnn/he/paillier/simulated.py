"""The simulated Paillier backend: plaintexts mod N instead of ciphertexts, exactly the
same interface and operation counts as :class:`~.real.Paillier` (checked by the tests); it
makes counting whole networks fast."""

from __future__ import annotations

import numpy as np
from gmpy2 import mpz

from .ciphertexts import _check_partials
from .encoding import decode_int
from .multiexp import MultiExpPlan, multiexp_plan
from .real import Paillier


class SimulatedPaillier(Paillier):
    """Same interface and operation counts as :class:`Paillier`, on plaintexts mod N.

    ``[m]`` is represented by ``m mod N``; the group operations become ``+``, ``·k`` and
    ``−``. Nothing is hidden: this backend exists to count full networks quickly and is
    checked against the real one in the tests.
    """

    simulated = True
    ONE = 0

    def _obfuscator(self):
        return 0

    def _enc(self, m):
        return int(m) % int(self.n)

    def _trivial(self, m):
        return int(m) % int(self.n)

    def _mul(self, a, b):
        return (a + b) % int(self.n)

    def _pow(self, a, e):
        return (a * int(e)) % int(self.n)

    def _inv(self, a):
        return (-a) % int(self.n)

    def _dec(self, private_key, c):
        return mpz(c)

    def _partial(self, c, d: int):
        return int(c)

    def _combine_one(self, u):
        return u

    def combine(self, p1, p2, party, signed=True):
        _check_partials(self, p1, p2)
        res = np.array([int(a) for a in p1.data.ravel()], dtype=object).reshape(p1.shape)
        self._book("paillier_mul", p1.size, party)
        return decode_int(res, self.pk) if signed else res

    def _gather_multiexp(self, flat, index, W, out, party, h) -> None:
        full = multiexp_plan(W, h)
        n = int(self.n)
        n_mul = n_inv = n_exp = n_bits = 0
        plans: dict[bytes, MultiExpPlan] = {}
        vals = np.array([int(v) for v in flat] + [0], dtype=object)  # index -1 → 0 (padding)
        G = vals[index]                                              # patches × taps
        res = W.astype(object) @ G.T                                 # rows × patches
        for row in index:
            valid = row >= 0
            if valid.all():
                plan = full
            else:
                key = valid.tobytes()
                if key not in plans:
                    plans[key] = multiexp_plan(W[:, valid], full.h)
                plan = plans[key]
            n_mul += plan.total_mults()
            if plan.offset:
                n_exp += 1
                n_bits += plan.offset.bit_length()
                n_inv += 1
        out[:, :] = np.vectorize(lambda v: int(v) % n, otypes=[object])(res)
        self._book("paillier_mul", n_mul, party)
        self._book("paillier_exp", n_exp, party)
        self._book("paillier_exp_bits", n_bits, party)
        self._book("paillier_inv", n_inv, party)

    def _gather_naive(self, flat, index, W, out, party) -> None:
        n = int(self.n)
        vals = np.array([int(v) for v in flat] + [0], dtype=object)
        G = vals[index]
        res = W.astype(object) @ G.T
        out[:, :] = np.vectorize(lambda v: int(v) % n, otypes=[object])(res)
        absW = np.abs(W)
        bitlen = np.zeros_like(absW)
        nz = absW > 0
        bitlen[nz] = np.floor(np.log2(absW[nz])).astype(np.int64) + 1
        n_exp = n_bits = n_inv = n_mul = 0
        for row in index:
            cols = np.nonzero(row >= 0)[0]
            wv = W[:, cols]
            nnz_rows = (wv != 0).sum(axis=1)
            n_exp += int(nnz_rows.sum())
            n_bits += int(bitlen[:, cols].sum())
            n_inv += int((wv < 0).sum())
            n_mul += int(np.maximum(nnz_rows - 1, 0).sum())
        self._book("paillier_exp", n_exp, party)
        self._book("paillier_exp_bits", n_bits, party)
        self._book("paillier_inv", n_inv, party)
        self._book("paillier_mul", n_mul, party)

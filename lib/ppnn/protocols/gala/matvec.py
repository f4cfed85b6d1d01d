"""GALA's row-encoding-share-RaS matrix-vector multiplication (GALA §III-A, Fig. 5).

Server steps on the client's packed ``[x_pack]_C`` (layout in :mod:`.layout`):

(a) row-wise weight encoding: ``G = n_i n_o / n`` plaintexts ``w_g`` (``w_g[t] =
    W[(t - g) mod n_o, pi(t)]``) -- :meth:`MatVecLayout.row_plaintexts`;
(b) ``[u_g] = w_g ⊙ [x_pack]``: ``G`` ScMults straight on the input, no input rotation;
(c) rotate ``[u_g]`` by ``g`` and add: ``G - 1`` Perms and ``G - 1`` Adds give one ciphertext
    whose ``n/n_o`` blocks of ``n_o`` slots are still to be accumulated;
(d) share-RaS: the server masks that ciphertext with ``r`` and the *plaintext* shares are
    rotated-and-summed by each party (``log2(n/n_o)`` cheap plaintext steps each), replacing
    GAZELLE's ``log2(n/n_o)`` HE Perms.

Blocks (dimensions beyond ``n``): products of column blocks that are rotated by the same ``g``
are added *before* the rotation (first-Add-second-Perm), so a row block costs ``C G`` ScMults,
``G - 1`` Perms and ``C G - 1`` Adds.
"""

from __future__ import annotations

import numpy as np

from ppnn.core import Ledger
from ppnn.he.bfv.base import Ct, PackedBackend

from .layout import MatVecLayout, plain_ras
from .protocol import LinearKernel

__all__ = ["MatVecKernel", "GalaMatVec"]


class MatVecKernel(LinearKernel):
    """Common part of the matrix-vector kernels: layout, bounds and the plaintext oracle."""

    def __init__(self, n_o: int, n_i: int, n: int):
        self.layout = MatVecLayout(n_o, n_i, n)

    @property
    def n_o(self) -> int:
        return self.layout.n_o

    @property
    def n_i(self) -> int:
        return self.layout.n_i

    def _check_weights(self, W) -> np.ndarray:
        W = np.asarray(W)
        if W.dtype.kind not in "iu":
            raise TypeError(f"weights must be integers (fixed-point encoded), got {W.dtype}")
        if W.shape != (self.n_o, self.n_i):
            raise ValueError(f"weight matrix must have shape (n_o, n_i) = ({self.n_o}, "
                             f"{self.n_i}), got {W.shape}")
        return W.astype(np.int64)

    def output_bound(self, W, x_bound: int) -> int:
        W = self._check_weights(W)
        return int(np.abs(W).sum(axis=1).max()) * int(x_bound)

    def plaintext(self, W, x) -> np.ndarray:
        return self._check_weights(W) @ np.asarray(x, dtype=np.int64)

    def pack_input(self, x: np.ndarray) -> np.ndarray:
        return self.layout.pack_input(x)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n_o={self.n_o}, n_i={self.n_i}, n={self.layout.n})"


class GalaMatVec(MatVecKernel):
    """GALA row-encoding-share-RaS (Table II: Perm ``n_i n_o/n - 1``, no HstPerm)."""

    name = "GALA"
    reference = "GALA §III-A3, Fig. 5"

    def rotation_steps(self) -> list[int]:
        return list(range(1, self.layout.G))

    def evaluate(self, he: PackedBackend, ct_x: Ct, W) -> Ct:
        L = self.layout
        # (a) row-wise encoding of every block (server, plaintext)
        w = he.encode(lambda: L.row_plaintexts(self._check_weights(W)),
                      shape=(L.R, L.C, L.G))
        # (b) ScMult on the unrotated input; column blocks with the same g are added first
        u = he.mul_plain_sum(ct_x.reshape(L.C, 1), w, axis=1)            # (R, G)
        # (c) rotate product g by g and add: one ciphertext per row block
        u = he.rotate(u, np.arange(L.G)[None, :])
        return he.sum(u, axis=1)                                          # (R,)

    def read_out(self, slots: np.ndarray, p: int, ledger: Ledger | None, party: str):
        # (d) share-RaS on the party's plaintext share
        L = self.layout
        if ledger is not None and L.M > 1:
            ledger.count("PlainRaS", L.R * len(L.ras_steps), party)
        return L.read_out(plain_ras(slots, L.b_o, p))

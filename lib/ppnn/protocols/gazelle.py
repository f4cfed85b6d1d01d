"""Baselines GALA is compared with, written against the same packed-HE backend interface.

* :class:`NaiveMatVec` -- one ciphertext per output row, RaS over ``log2 n_i`` (GALA §III-A1,
  Fig. 3);
* :class:`DiagonalMatVec` -- Halevi-Shoup diagonal method [31] (GALA Table V "Diagonal");
* :class:`GazelleMatVec` -- GAZELLE's hybrid: diagonal encoding, input packing, hoisted input
  rotations, RaS in HE (GALA §III-A2, Fig. 4; Juvekar et al. 2018 §5.3);
* :class:`SisoConv` -- single-input single-output convolution by raster-scan rotations
  (GALA §III-B1, Fig. 6);
* :class:`GazelleConv` -- GAZELLE's output-rotation MIMO convolution (GALA §III-B2, Fig. 7).

Kernel interface and the two-party flow: :mod:`ppnn.protocols.gala.protocol`.
"""

from __future__ import annotations

import math

import numpy as np

from ppnn.core import Ledger
from ppnn.he.bfv.base import Ct, PackedBackend
from ppnn.protocols.gala.conv import ConvKernel
from ppnn.protocols.gala.matvec import MatVecKernel

__all__ = ["NaiveMatVec", "DiagonalMatVec", "GazelleMatVec", "SisoConv", "GazelleConv"]


class NaiveMatVec(MatVecKernel):
    """Naive method (Table II: ``n_o log2 n_i`` Perm, ``n_o`` ScMult, ``n_o log2 n_i`` Add).

    (a) each row ``w_r`` is a plaintext (zero-padded); (b) ``[u_r] = w_r ⊙ [x]``; (c) RaS:
    rotate by ``n_i/2, n_i/4, ..., 1`` and add, leaving ``(W x)_r`` in slot 0 of ciphertext
    ``r`` -- ``n_o`` output ciphertexts. Column blocks (``n_i > n``) are added before the RaS.
    """

    name = "Naive"
    reference = "GALA §III-A1, Fig. 3"

    def _steps(self) -> list[int]:
        b = self.layout.b_i
        return [b >> (k + 1) for k in range(int(math.log2(b)))]

    def rotation_steps(self) -> list[int]:
        return self._steps()

    def pack_input(self, x: np.ndarray) -> np.ndarray:
        L = self.layout
        x = np.asarray(x)
        if x.shape != (L.n_i,):
            raise ValueError(f"input vector must have shape (n_i,) = ({L.n_i},), got {x.shape}")
        out = np.zeros((L.C, L.n), dtype=np.int64)
        xp = np.zeros(L.ni_pad, dtype=np.int64)
        xp[: L.n_i] = x
        out[:, : L.b_i] = xp.reshape(L.C, L.b_i)
        return out

    def _row_plaintexts(self, W) -> np.ndarray:
        L = self.layout
        Wp = np.zeros((L.n_o, L.ni_pad), dtype=np.int64)
        Wp[:, : L.n_i] = self._check_weights(W)
        out = np.zeros((L.n_o, L.C, L.n), dtype=np.int64)
        out[:, :, : L.b_i] = Wp.reshape(L.n_o, L.C, L.b_i)
        return out

    def evaluate(self, he: PackedBackend, ct_x: Ct, W) -> Ct:
        L = self.layout
        w = he.encode(lambda: self._row_plaintexts(W), shape=(L.n_o, L.C))   # (a)
        u = he.mul_plain_sum(ct_x, w, axis=1)                                 # (b) (n_o,)
        for k in self._steps():                                               # (c) RaS
            u = he.add(u, he.rotate(u, k))
        return u

    def read_out(self, slots: np.ndarray, p: int, ledger: Ledger | None, party: str):
        return np.mod(np.asarray(slots)[..., 0], p)


class DiagonalMatVec(MatVecKernel):
    """Halevi-Shoup diagonal method [31] on the matrix padded to a ``d x d`` square.

    ``[x]`` is packed periodically (period ``d``), rotated by ``0..d-1`` (hoisted: ``d - 1``
    HstPerm), each rotation multiplied by one generalized diagonal and all added:
    ``d`` ScMult, ``d - 1`` Add, no Perm (GALA Table V, "Diagonal" column, with ``d = n_i``).
    """

    name = "Diagonal"
    reference = "Halevi & Shoup 2014 [31]; GALA Table V"

    def __init__(self, n_o: int, n_i: int, n: int):
        super().__init__(n_o, n_i, n)
        self.d = max(self.layout.no_pad, self.layout.ni_pad)
        if self.d > n:
            raise ValueError(f"the diagonal baseline needs max(n_o, n_i) <= n = {n} after "
                             f"padding to powers of two, got {self.d}")

    def rotation_steps(self) -> list[int]:
        return list(range(1, self.d))

    def pack_input(self, x: np.ndarray) -> np.ndarray:
        L = self.layout
        x = np.asarray(x)
        if x.shape != (L.n_i,):
            raise ValueError(f"input vector must have shape (n_i,) = ({L.n_i},), got {x.shape}")
        xp = np.zeros(self.d, dtype=np.int64)
        xp[: L.n_i] = x
        return np.tile(xp, L.n // self.d)[None, :]

    def _diagonals(self, W) -> np.ndarray:
        L = self.layout
        Wp = np.zeros((self.d, self.d), dtype=np.int64)
        Wp[: L.n_o, : L.n_i] = self._check_weights(W)
        t = np.arange(L.n)[None, :] % self.d
        k = np.arange(self.d)[:, None]
        return Wp[t, (t + k) % self.d]

    def evaluate(self, he: PackedBackend, ct_x: Ct, W) -> Ct:
        w = he.encode(lambda: self._diagonals(W), shape=(self.d,))
        rot = he.rotate_hoisted(ct_x[0], list(range(self.d)))                 # (d,)
        return he.mul_plain_sum(rot, w, axis=0).reshape(1)

    def read_out(self, slots: np.ndarray, p: int, ledger: Ledger | None, party: str):
        return np.mod(np.asarray(slots)[0, : self.layout.n_o], p)


class GazelleMatVec(MatVecKernel):
    """GAZELLE hybrid (Table II: Perm ``log2(n/n_o)``, HstPerm ``n_i n_o/n - 1``).

    (a) diagonal encoding of ``W`` into ``G = n_i n_o / n`` plaintexts; (b) hoisted rotations
    of ``[x_pack]`` by ``0..G-1``; (c) ``G`` ScMults and ``G - 1`` Adds; (d) RaS in HE:
    ``log2(n/n_o)`` Perms and Adds leave ``W x`` in the first ``n_o`` slots.
    """

    name = "GAZELLE"
    reference = "GALA §III-A2, Fig. 4; GAZELLE §5.3"

    def rotation_steps(self) -> list[int]:
        return list(range(1, self.layout.G)) + self.layout.ras_steps

    def evaluate(self, he: PackedBackend, ct_x: Ct, W) -> Ct:
        L = self.layout
        w = he.encode(lambda: L.hybrid_plaintexts(self._check_weights(W)),
                      shape=(L.R, L.C, L.G))                                  # (a)
        rot = he.rotate_hoisted(ct_x, list(range(L.G)))                       # (b) (C, G)
        u = he.mul_plain_sum(rot, w, axis=(1, 2))                             # (c) (R,)
        for k in L.ras_steps:                                                 # (d) RaS
            u = he.add(u, he.rotate(u, k))
        return u

    def read_out(self, slots: np.ndarray, p: int, ledger: Ledger | None, party: str):
        return self.layout.read_out(np.mod(slots, p))


class SisoConv(ConvKernel):
    """Single-input single-output convolution (GALA §III-B1): ``k^2 - 1`` HstPerm (one
    DecPerm), ``k^2`` ScMult, ``k^2 - 1`` Add, one output ciphertext."""

    name = "SISO"
    reference = "GALA §III-B1, Fig. 6"

    def __init__(self, H: int, W: int, k: int, n: int, pad: int | None = None, stride: int = 1):
        super().__init__(1, 1, H, W, k, n, pad, stride)
        if self.layout.split:
            raise ValueError(f"SISO convolution needs the {H}x{W} channel in one ciphertext "
                             f"(next_pow2(H W) <= n = {n}); a tiled channel needs the MIMO "
                             "kernels (GazelleConv / GalaConv)")

    def rotation_steps(self) -> list[int]:
        return sorted({o % self.layout.n for o in self.layout.offsets} - {0})

    def evaluate(self, he: PackedBackend, ct_x: Ct, K) -> Ct:
        L = self.layout
        rot = self._input_rotations(he, ct_x[0])                              # (a) (taps,)
        w = he.encode(lambda: L.diagonal_plaintexts(self._check_weights(K), 0)[0, 0],
                      shape=(L.k * L.k,))                                     # (b)
        return he.mul_plain_sum(rot, w, axis=0).reshape(1)                    # (c)


class GazelleConv(ConvKernel):
    """GAZELLE output-rotation MIMO (Table III: Perm ``c_i c_o (c_n - 1) / c_n^2``).

    Each ``c_n x c_n`` block (output group ``o``, input ciphertext ``a``) is convolved on its
    own: SISO-like products summed over taps, then each of its ``c_n`` diagonals is rotated to
    the common kernel order and added; the ``c_i/c_n`` block results are added last.
    """

    name = "GAZELLE"
    reference = "GALA §III-B2, Fig. 7; GAZELLE §5.4"

    def evaluate(self, he: PackedBackend, ct_x: Ct, K) -> Ct:
        L = self.layout
        rot = self._input_rotations(he, ct_x).reshape(L.ct_in, 1, -1)  # (ct_in, 1, taps)
        rot = he.for_products(rot)  # NTT form once, reused by every output group
        kernel_order = (np.arange(L.c_n) * L.u)[None, :]
        outs = []
        for o in self._out_groups():
            y = None
            for a in self._input_chunks(o):  # streamed over input ciphertexts (memory only)
                w = self._encode_group(he, K, o, a)                           # (a, c_n, taps)
                z = he.mul_plain_sum(rot[a], w, axis=2)                       # (a, c_n)
                z = he.rotate(z, kernel_order)                                # every block
                part = he.sum(z)                                              # blocks, inputs
                y = part if y is None else he.add(y, part)
            outs.append(y)
        return he.stack(outs)

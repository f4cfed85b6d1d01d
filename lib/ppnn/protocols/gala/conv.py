"""GALA's kernel-grouping (first-Add-second-Perm) MIMO convolution (GALA §III-B3, Fig. 8).

Client: ``c_i`` channels packed ``c_n`` per ciphertext (:class:`ConvLayout`; a channel larger
than ``n`` slots is tiled as in GAZELLE and each tile is packed like a channel). Server, for each of
the ``c_o / c_n`` output ciphertexts ("newly formed blocks" of ``c_n`` kernels):

(a) the input rotations of every tap are computed once per input ciphertext (``c_i/c_n``
    DecPerms, ``c_i (k^2 - 1) / c_n`` HstPerms, shared by all output groups);
(b) every diagonally encoded kernel vector is multiplied with its rotated input (SISO-like
    convolutions, ``c_i k^2`` ScMults per group) and -- the kernel grouping -- the products
    that belong to the *same kernel order* ``d`` are added across all ``c_i / c_n`` input
    ciphertexts *before* any output rotation;
(c) the ``c_n`` added vectors are rotated by ``d u'`` to the common kernel order (``c_n - 1``
    Perms per group instead of GAZELLE's ``c_i/c_n (c_n - 1)``) and summed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ppnn.core import Ledger
from ppnn.he.bfv.base import Ct, PackedBackend

from .layout import ConvLayout
from .protocol import LinearKernel

__all__ = ["ConvKernel", "GalaConv", "GroupedConv"]


class ConvKernel(LinearKernel):
    """Common part of the convolution kernels: layout, bounds and the plaintext oracle."""

    def __init__(self, c_i: int, c_o: int, H: int, W: int, k: int, n: int,
                 pad: int | None = None, stride: int = 1):
        self.layout = ConvLayout(c_i, c_o, H, W, k, n, pad, stride)
        self.groups: Sequence[int] | None = None  # evaluate only these output ciphertexts

    def _check_weights(self, K) -> np.ndarray:
        L = self.layout
        K = np.asarray(K)
        if K.dtype.kind not in "iu":
            raise TypeError(f"kernels must be integers (fixed-point encoded), got {K.dtype}")
        if K.shape != (L.c_o, L.c_i, L.k, L.k):
            raise ValueError(f"kernels must have shape (c_o, c_i, k, k) = ({L.c_o}, {L.c_i}, "
                             f"{L.k}, {L.k}), got {K.shape}")
        return K.astype(np.int64)

    def output_bound(self, K, x_bound: int) -> int:
        K = self._check_weights(K)
        return int(np.abs(K).reshape(K.shape[0], -1).sum(axis=1).max()) * int(x_bound)

    def plaintext(self, K, x) -> np.ndarray:
        """Direct convolution (zero padding, stride) in exact integers."""
        L = self.layout
        K = self._check_weights(K)
        x = np.asarray(x, dtype=np.int64)
        P, s, k = L.padding, L.stride, L.k
        xp = np.pad(x, ((0, 0), (P, P), (P, P)))
        ho, wo = L.out_hw
        win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(1, 2))
        win = win[:, : s * (ho - 1) + 1: s, : s * (wo - 1) + 1: s]     # (c_i, ho, wo, k, k)
        return np.einsum("oikl,iyxkl->oyx", K, win)

    def pack_input(self, x: np.ndarray) -> np.ndarray:
        return self.layout.pack_input(x)

    def read_out(self, slots: np.ndarray, p: int, ledger: Ledger | None, party: str):
        return self.layout.read_out(np.mod(slots, p))

    def rotation_steps(self) -> list[int]:
        L = self.layout
        return sorted({o % L.n for o in L.offsets} | {d * L.u for d in range(1, L.c_n)})

    def _out_groups(self) -> list[int]:
        L = self.layout
        return list(range(L.ct_out)) if self.groups is None else [int(o) for o in self.groups]

    def _input_rotations(self, he: PackedBackend, ct_x: Ct) -> Ct:
        """(a) HstPerm of every input ciphertext by every tap offset: shape (ct_in, k*k)."""
        return he.rotate_hoisted(ct_x, self.layout.offsets)

    def _encode_group(self, he: PackedBackend, K, o: int, a: slice = slice(None)):
        L = self.layout
        n_a = len(range(L.ct_in)[a])
        return he.encode(lambda: L.diagonal_plaintexts(self._check_weights(K), o, a),
                         shape=(n_a, L.c_n, L.k * L.k))

    #: at most this many kernel plaintexts are encoded at once (memory: a SEAL plaintext in
    #: both forms is ~100 KB at N = 4096); larger layers stream over input ciphertexts
    max_plaintexts = 4096

    def _input_chunks(self, o: int) -> list[slice]:
        """The input ciphertexts output ciphertext ``o`` needs (all of them unless a large
        channel is tiled: only those of its tiles, ``layout.input_ranges``), in consecutive
        slices each encoding <= max_plaintexts."""
        L = self.layout
        lo, hi = (int(v) for v in L.input_ranges[o])
        per = max(1, self.max_plaintexts // (L.c_n * L.k * L.k))
        return [slice(s, min(hi, s + per)) for s in range(lo, hi, per)]

    def __repr__(self) -> str:
        L = self.layout
        tiles = f", {L.tiles} tiles" if L.split else ""
        return (f"{type(self).__name__}({L.H}x{L.W}@{L.c_i} -> {L.k}x{L.k}@{L.c_o}, "
                f"n={L.n}, c_n={L.c_n}{tiles})")


class GalaConv(ConvKernel):
    """GALA kernel grouping (Table III: Perm ``c_o (c_n - 1) / c_n``)."""

    name = "GALA"
    reference = "GALA §III-B3, Fig. 8"

    def evaluate(self, he: PackedBackend, ct_x: Ct, K) -> Ct:
        L = self.layout
        rot = self._input_rotations(he, ct_x).reshape(L.ct_in, 1, -1)  # (ct_in, 1, taps)
        rot = he.for_products(rot)  # NTT form once, reused by every output group
        kernel_order = np.arange(L.c_n) * L.u
        outs = []
        for o in self._out_groups():                                      # output ciphertexts
            z = None
            for a in self._input_chunks(o):  # streamed over input ciphertexts (memory only)
                w = self._encode_group(he, K, o, a)                       # (a, c_n, taps)
                # (b) SISO-like products, first Add over input ciphertexts and taps ...
                part = he.mul_plain_sum(rot[a], w, axis=(0, 2))           # (c_n,)
                z = part if z is None else he.add(z, part)
            # (c) ... second Perm: bring kernel order d home, then sum
            outs.append(he.sum(he.rotate(z, kernel_order)))
        return he.stack(outs)


class GroupedConv(LinearKernel):
    """A grouped convolution (``groups = g``) as ``g`` independent convolutions of ``c_i / g``
    to ``c_o / g`` channels, each by ``kernel`` (a :class:`ConvKernel` of one group's shape):
    the client packs each group's channels on their own ciphertexts, one batch for all
    groups, and the server evaluates the groups one after another -- ``g`` times one group's
    operations, as :func:`~ppnn.protocols.gala.costs.network_counts` counts them (GALA
    Table IX, AlexNet). One message each way, like any linear layer."""

    def __init__(self, kernel: ConvKernel, groups: int):
        if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
            raise ValueError(f"groups must be an int >= 1, got {groups!r}")
        self.kernel, self.g = kernel, groups
        self.layout = kernel.layout  # one group's
        self.name, self.reference = kernel.name, kernel.reference

    def _split(self, K) -> list:
        if K is None:  # the counting backend: shapes only
            return [None] * self.g
        K = np.asarray(K)
        L = self.layout
        if K.shape != (self.g * L.c_o, L.c_i, L.k, L.k):
            raise ValueError(f"kernels must have shape (g c_o, c_i, k, k) = ({self.g * L.c_o}, "
                             f"{L.c_i}, {L.k}, {L.k}), got {K.shape}")
        return np.split(K, self.g)

    def rotation_steps(self) -> list[int]:
        return self.kernel.rotation_steps()

    def pack_input(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x)
        if x.shape[0] != self.g * self.layout.c_i:
            raise ValueError(f"input must have {self.g * self.layout.c_i} channels, got "
                             f"{x.shape}")
        return np.concatenate([self.kernel.pack_input(xg) for xg in np.split(x, self.g)])

    def evaluate(self, he: PackedBackend, ct_x: Ct, K) -> Ct:
        m = self.layout.ct_in
        outs = [self.kernel.evaluate(he, ct_x[j * m:(j + 1) * m], Kg)
                for j, Kg in enumerate(self._split(K))]
        return he.stack(outs).reshape(-1)

    def read_out(self, slots: np.ndarray, p: int, ledger: Ledger | None, party: str):
        m = self.layout.ct_out
        return np.concatenate([self.kernel.read_out(slots[j * m:(j + 1) * m], p, ledger, party)
                               for j in range(self.g)])

    def output_bound(self, K, x_bound: int) -> int:
        return max(self.kernel.output_bound(Kg, x_bound) for Kg in self._split(K))

    def plaintext(self, K, x) -> np.ndarray:
        xs = np.split(np.asarray(x), self.g)
        return np.concatenate([self.kernel.plaintext(Kg, xg)
                               for Kg, xg in zip(self._split(K), xs)])

    def __repr__(self) -> str:
        return f"GroupedConv({self.g} x {self.kernel!r})"

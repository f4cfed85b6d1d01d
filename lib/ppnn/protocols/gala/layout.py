"""Where every value sits in the slots: packing of inputs, encoding of weights, read-out.

GAZELLE and GALA use the *same* client packing and differ only in where the server rotates
(inputs vs products) and where the final rotate-and-sum (RaS) happens (HE vs plaintext). This
module holds the slot arithmetic shared by both, so each kernel stays a short list of steps:

* :class:`MatVecLayout` -- matrix-vector (GALA §III-A, GAZELLE §5.3): the ``n_o x n_i``
  matrix padded to powers of two ``b_o x b_i`` per block of at most ``n`` rows / columns,
  ``G = max(1, b_i b_o / n)`` ScMults per block; the client's packing (``n / b_i`` copies of
  ``x``, copy ``s`` pre-rotated by ``s G``), the weight plaintexts and the read-out by RaS
  over ``log2(n / b_o)`` rotations;
* :class:`ConvLayout` -- convolution (GALA §III-B, GAZELLE §5.4): each channel in a block of
  ``u' = next_pow2(H W)`` slots, ``c_n = n / u'`` channels per ciphertext, a kernel tap a
  rotation of the raster-scanned input with a plaintext mask for "same" zero padding, the
  diagonal kernel encoding, and the stride applied to the shares afterwards. A channel that
  needs more than ``n`` slots is cut into tiles (GAZELLE's tiling), each packed like a small
  channel with its halo; :attr:`ConvLayout.input_ranges` lets the kernels skip ciphertext
  pairs that share no tile. A kernel whose window alone needs more than ``n`` slots raises;
* :func:`plain_ras` -- the rotate-and-sum on plaintext shares (GALA's share-RaS);
* :func:`next_pow2`.

See also
--------
docs/protocols.md : packed HE, with the packing formulas and the tiling.
ppnn.protocols.gala.matvec, ppnn.protocols.gala.conv, ppnn.protocols.gazelle : the kernels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

__all__ = ["next_pow2", "MatVecLayout", "ConvLayout", "plain_ras"]


def next_pow2(x: int) -> int:
    if x < 1:
        raise ValueError(f"dimension must be >= 1, got {x}")
    return 1 << (int(x) - 1).bit_length()


def _check_dim(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an int >= 1, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


def plain_ras(slots: np.ndarray, width: int, p: int) -> np.ndarray:
    """Plaintext rotate-and-sum: ``log2(n/width)`` halvings of the last axis, mod p.

    Equivalent to summing the ``n/width`` blocks of ``width`` slots; done as in the paper
    (rotate by half, add) so the step count can be read off the loop."""
    v = np.asarray(slots, dtype=np.int64)
    n = v.shape[-1]
    if n % width or width & (width - 1):
        raise ValueError(f"RaS width {width} must be a power of two dividing n={n}")
    half = n // 2
    while half >= width:
        v = (v[..., :half] + v[..., half:2 * half]) % p
        half //= 2
    return v[..., :width]


@dataclass(frozen=True)
class MatVecLayout:
    """Slot layout of an ``n_o x n_i`` matrix times a vector with ``n`` slots per ciphertext."""

    n_o: int
    n_i: int
    n: int

    def __post_init__(self) -> None:
        _check_dim(self.n_o, "n_o")
        _check_dim(self.n_i, "n_i")
        _check_dim(self.n, "n")
        if self.n & (self.n - 1):
            raise ValueError(f"slot count n must be a power of two, got {self.n}")

    # padded sizes and blocks
    @property
    def no_pad(self) -> int:
        return next_pow2(self.n_o)

    @property
    def ni_pad(self) -> int:
        return next_pow2(self.n_i)

    @property
    def b_o(self) -> int:
        """Rows per block (at most n)."""
        return min(self.no_pad, self.n)

    @property
    def b_i(self) -> int:
        """Columns per block (at most n)."""
        return min(self.ni_pad, self.n)

    @property
    def R(self) -> int:
        """Row blocks (output ciphertexts)."""
        return self.no_pad // self.b_o

    @property
    def C(self) -> int:
        """Column blocks (input ciphertexts)."""
        return self.ni_pad // self.b_i

    @property
    def G(self) -> int:
        """ScMults per block: ``n_i n_o / n`` (at least one)."""
        return max(1, self.b_i * self.b_o // self.n)

    @property
    def M(self) -> int:
        """Blocks of ``b_o`` slots accumulated by the final RaS: ``n / n_o``."""
        return self.n // self.b_o

    @property
    def ras_steps(self) -> list[int]:
        """Rotation amounts of the final RaS: n/2, n/4, ..., b_o."""
        return [self.n >> (k + 1) for k in range(int(math.log2(self.M)))]

    @property
    def pi(self) -> np.ndarray:
        """Column index held by each packed slot (``>= b_i`` means the slot is empty)."""
        t = np.arange(self.n)
        return ((t // self.b_o) % self.M) * self.G + (t % self.G)

    def pad_matrix(self, W: np.ndarray) -> np.ndarray:
        W = np.asarray(W)
        if W.ndim != 2 or W.shape != (self.n_o, self.n_i):
            raise ValueError(f"weight matrix must have shape (n_o, n_i) = ({self.n_o}, "
                             f"{self.n_i}), got {W.shape}")
        out = np.zeros((self.no_pad, self.ni_pad), dtype=np.int64)
        out[: self.n_o, : self.n_i] = W
        return out

    def blocks(self, W: np.ndarray) -> np.ndarray:
        """Padded matrix cut into blocks: shape ``(R, C, b_o, b_i)``."""
        Wp = self.pad_matrix(W)
        return Wp.reshape(self.R, self.b_o, self.C, self.b_i).transpose(0, 2, 1, 3)

    def pack_input(self, x: np.ndarray) -> np.ndarray:
        """Client: the ``C`` packed slot vectors ``[x_pack]`` (one per column block)."""
        x = np.asarray(x)
        if x.shape != (self.n_i,):
            raise ValueError(f"input vector must have shape (n_i,) = ({self.n_i},), got {x.shape}")
        xp = np.zeros(self.ni_pad, dtype=np.int64)
        xp[: self.n_i] = x
        xb = xp.reshape(self.C, self.b_i)
        pi = self.pi
        valid = pi < self.b_i
        out = np.zeros((self.C, self.n), dtype=np.int64)
        out[:, valid] = xb[:, pi[valid]]
        return out

    def _gather(self, Wb: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        valid = cols < self.b_i
        vals = Wb[..., rows % self.b_o, np.where(valid, cols, 0)]
        return np.where(valid, vals, 0)

    def hybrid_plaintexts(self, W: np.ndarray) -> np.ndarray:
        """GAZELLE's diagonal encoding: plaintext ``g`` multiplies ``[x_pack]`` rotated by ``g``:
        slot ``j`` holds ``W[j mod b_o, pi(j+g)]``. Shape ``(R, C, G, n)``."""
        g = np.arange(self.G)[:, None]
        j = np.arange(self.n)[None, :]
        return self._gather(self.blocks(W), j, self.pi[(j + g) % self.n])

    def row_plaintexts(self, W: np.ndarray) -> np.ndarray:
        """GALA's row encoding: plaintext ``g`` multiplies ``[x_pack]`` itself and the product is
        rotated by ``g`` afterwards: slot ``t`` holds ``W[(t-g) mod b_o, pi(t)]``."""
        g = np.arange(self.G)[:, None]
        t = np.arange(self.n)[None, :]
        return self._gather(self.blocks(W), (t - g) % self.n,
                            np.broadcast_to(self.pi[None, :], (self.G, self.n)))

    def read_out(self, slots: np.ndarray) -> np.ndarray:
        """Slots ``0..b_o-1`` of each row-block ciphertext -> the ``n_o`` outputs."""
        v = np.asarray(slots)[..., : self.b_o]
        return v.reshape(v.shape[:-2] + (self.R * self.b_o,))[..., : self.n_o]


@dataclass(frozen=True)
class ConvLayout:
    """Slot layout of a convolution: ``c_i`` channels of ``H x W`` -> ``c_o`` channels,
    ``k x k`` kernels with zero padding ``pad`` and stride ``stride``; ``n`` slots."""

    c_i: int
    c_o: int
    H: int
    W: int
    k: int
    n: int
    pad: int | None = None
    stride: int = 1

    def __post_init__(self) -> None:
        for name in ("c_i", "c_o", "H", "W", "k", "n", "stride"):
            _check_dim(getattr(self, name), name)
        if self.n & (self.n - 1):
            raise ValueError(f"slot count n must be a power of two, got {self.n}")
        P = self.padding
        if P < 0 or 2 * P > self.k - 1:
            raise ValueError(f"padding must be in [0, (k-1)/2] for the slot layout, got {P} "
                             f"with k={self.k}")
        if self.k > min(self.H, self.W) + 2 * P:
            raise ValueError(f"kernel {self.k} larger than the padded {self.H}x{self.W} input")
        if next_pow2(self.k * self.k) > self.n:
            raise ValueError(
                f"a {self.k}x{self.k} kernel window needs {next_pow2(self.k * self.k)} slots "
                f"> n = {self.n}: no tile of a {self.H}x{self.W} channel fits one ciphertext "
                "(n must be >= next_pow2(k^2)); use a larger n")

    @property
    def padding(self) -> int:
        return (self.k - 1) // 2 if self.pad is None else int(self.pad)

    @property
    def split(self) -> bool:
        """Whether a channel is tiled over several packed units (``next_pow2(H W) > n``)."""
        return next_pow2(self.H * self.W) > self.n

    @cached_property
    def tiling(self) -> tuple[int, int, int, int]:
        """``(t_h, t_w, T_y, T_x)``: output pixels per tile and the tile grid (``(H, W, 1, 1)``
        when a channel fits). Chosen to minimise ``T u'`` then ``T`` (docs/protocols.md)."""
        if not self.split:
            return self.H, self.W, 1, 1
        k, H, W = self.k, self.H, self.W
        best = None
        u = next_pow2(k * k)
        while u <= self.n:
            TW = np.arange(k, min(W + k - 1, u // k) + 1)           # window widths
            TH = np.minimum(u // TW, H + k - 1)                      # tallest window in u
            Ty, Tx = -(-H // (TH - k + 1)), -(-W // (TW - k + 1))
            th, tw = -(-H // Ty), -(-W // Tx)                        # balanced tiles
            ub = 1 << np.ceil(np.log2((th + k - 1) * (tw + k - 1))).astype(np.int64)
            i = np.lexsort((-tw, Ty * Tx, Ty * Tx * ub))[0]
            cand = (int(Ty[i] * Tx[i] * ub[i]), int(Ty[i] * Tx[i]), -int(tw[i]),
                    (int(th[i]), int(tw[i]), int(Ty[i]), int(Tx[i])))
            best = cand if best is None or cand[:3] < best[:3] else best
            u *= 2
        return best[3]

    @property
    def tiles(self) -> int:
        """Packed units per channel: ``T = T_y T_x`` (1 when a channel fits)."""
        return self.tiling[2] * self.tiling[3]

    @property
    def unit_hw(self) -> tuple[int, int]:
        """Rows and columns of one packed unit: the channel, or a tile with its halo."""
        th, tw = self.tiling[:2]
        return (th + self.k - 1, tw + self.k - 1) if self.split else (self.H, self.W)

    @property
    def origin(self) -> int:
        """Row/column of a unit's first output pixel (the halo before it when split)."""
        return self.padding if self.split else 0

    @property
    def u(self) -> int:
        """Slots per packed unit: next power of two >= the unit's pixels (``H W`` unsplit)."""
        uh, uw = self.unit_hw
        return next_pow2(uh * uw)

    @property
    def c_n(self) -> int:
        """Channels per ciphertext."""
        return self.n // self.u

    @property
    def units_in(self) -> int:
        """Input units ``c_i T`` (tile-major: unit ``t c_i + i``)."""
        return self.c_i * self.tiles

    @property
    def units_out(self) -> int:
        return self.c_o * self.tiles

    @property
    def ci_pad(self) -> int:
        """Input units padded to a multiple of ``c_n`` (``c_i`` padded when unsplit)."""
        return -(-self.units_in // self.c_n) * self.c_n

    @property
    def co_pad(self) -> int:
        return -(-self.units_out // self.c_n) * self.c_n

    @property
    def ct_in(self) -> int:
        """Input ciphertexts ``c_i / c_n``."""
        return self.ci_pad // self.c_n

    @property
    def ct_out(self) -> int:
        """Output ciphertexts ``c_o / c_n``."""
        return self.co_pad // self.c_n

    @property
    def taps(self) -> list[tuple[int, int]]:
        return [(ky, kx) for ky in range(self.k) for kx in range(self.k)]

    @property
    def offsets(self) -> list[int]:
        """Input rotation of each kernel tap (raster scan of a unit), in tap order."""
        P, uw = self.padding, self.unit_hw[1]
        return [(ky - P) * uw + (kx - P) for ky, kx in self.taps]

    @cached_property
    def input_ranges(self) -> np.ndarray:
        """``(ct_out, 2)``: for each output ciphertext, the range ``[lo, hi)`` of input
        ciphertexts holding a unit of one of its tiles (all of them when unsplit); the
        kernels multiply only these pairs."""
        cn = self.c_n
        o = np.arange(self.ct_out)
        first = np.minimum(o * cn, self.units_out - 1) // self.c_o
        last = (np.minimum((o + 1) * cn, self.units_out) - 1) // self.c_o
        lo = first * self.c_i // cn
        hi = -(-(last + 1) * self.c_i // cn)
        return np.stack([lo, hi], axis=1)

    @property
    def pairs(self) -> int:
        """(output, input) ciphertext pairs the kernels multiply."""
        r = self.input_ranges
        return int((r[:, 1] - r[:, 0]).sum())

    @property
    def out_hw(self) -> tuple[int, int]:
        P, s = self.padding, self.stride
        return ((self.H + 2 * P - self.k) // s + 1, (self.W + 2 * P - self.k) // s + 1)

    def _units(self, x: np.ndarray) -> np.ndarray:
        """``(c, H, W)`` image -> ``(T c, uh uw)`` packed units (tile-major)."""
        c = x.shape[0]
        if not self.split:
            return x.reshape(c, -1)
        th, tw, Ty, Tx = self.tiling
        uh, uw = self.unit_hw
        P = self.padding
        xp = np.zeros((c, Ty * th + self.k - 1, Tx * tw + self.k - 1), dtype=np.int64)
        xp[:, P: P + self.H, P: P + self.W] = x
        win = np.lib.stride_tricks.sliding_window_view(xp, (uh, uw), axis=(1, 2))
        win = win[:, ::th, ::tw][:, :Ty, :Tx]                       # (c, Ty, Tx, uh, uw)
        return win.transpose(1, 2, 0, 3, 4).reshape(Ty * Tx * c, uh * uw)

    def pack_input(self, x: np.ndarray) -> np.ndarray:
        """Client: ``(ct_in, n)`` slot vectors; unit ``a c_n + b`` is block ``b`` of ct ``a``
        (unit = channel when unsplit, ``tile * c_i + channel`` when tiled)."""
        x = np.asarray(x)
        if x.shape != (self.c_i, self.H, self.W):
            raise ValueError(f"input must have shape (c_i, H, W) = ({self.c_i}, {self.H}, "
                             f"{self.W}), got {x.shape}")
        units = self._units(x.astype(np.int64))
        blocks = np.zeros((self.ci_pad, self.u), dtype=np.int64)
        blocks[: units.shape[0], : units.shape[1]] = units
        return blocks.reshape(self.ct_in, self.n)

    def tap_masks(self) -> np.ndarray:
        """``(k*k, u)``: 1 where a tap reads inside the unit for that output pixel."""
        P = self.padding
        uh, uw = self.unit_hw
        y, x = np.divmod(np.arange(self.u), uw)
        inside = np.arange(self.u) < uh * uw
        ky, kx = np.array(self.taps).T
        yy = y[None, :] + ky[:, None] - P
        xx = x[None, :] + kx[:, None] - P
        return ((yy >= 0) & (yy < uh) & (xx >= 0) & (xx < uw) & inside).astype(np.int64)

    def diagonal_plaintexts(self, K: np.ndarray, o: int, a: slice = slice(None)) -> np.ndarray:
        """Diagonally encoded kernels of output group ``o`` for the input ciphertexts ``a``:
        shape ``(len(a), c_n, k*k, n)``.

        Entry ``[a, d, tap]`` holds, in channel block ``b``, the tap of the filter from input
        channel ``a c_n + b`` to output channel ``o c_n + (b - d) mod c_n``, masked."""
        K = np.asarray(K)
        if K.shape != (self.c_o, self.c_i, self.k, self.k):
            raise ValueError(f"kernels must have shape (c_o, c_i, k, k) = ({self.c_o}, "
                             f"{self.c_i}, {self.k}, {self.k}), got {K.shape}")
        Kf = np.zeros((self.c_o + 1, self.c_i + 1, self.k * self.k), dtype=np.int64)
        Kf[: self.c_o, : self.c_i] = K.reshape(self.c_o, self.c_i, -1)   # index -1: zero
        cn = self.c_n
        b = np.arange(cn)
        d = np.arange(cn)[:, None]
        out_u = o * cn + (b[None, :] - d) % cn                   # (d, b) output units
        ins = np.arange(self.ct_in)[a]
        in_u = ins[:, None, None] * cn + b                       # (a, 1, b) input units
        t_o, ch_o = np.divmod(out_u, self.c_o)
        t_i, ch_i = np.divmod(in_u, self.c_i)
        ch_o = np.where(out_u < self.units_out, ch_o, -1)
        ch_i = np.where((in_u < self.units_in) & (t_i == t_o[None]), ch_i, -1)
        w = Kf[ch_o[None, :, :], ch_i, :]                        # (a, d, b, taps)
        vals = w.transpose(0, 1, 3, 2)[..., None] * self.tap_masks()[None, None, :, None, :]
        return vals.reshape(len(ins), cn, self.k * self.k, self.n)

    def read_out(self, slots: np.ndarray) -> np.ndarray:
        """``(ct_out, n)`` output slots -> ``(c_o, H_out, W_out)`` (stitch tiles, crop, stride,
        padding)."""
        uh, uw = self.unit_hw
        th, tw, Ty, Tx = self.tiling
        r = self.origin
        v = np.asarray(slots).reshape(self.co_pad, self.u)[: self.units_out, : uh * uw]
        v = v.reshape(Ty, Tx, self.c_o, uh, uw)[..., r: r + th, r: r + tw]
        v = v.transpose(2, 0, 3, 1, 4).reshape(self.c_o, Ty * th, Tx * tw)[:, : self.H, : self.W]
        ho, wo = self.out_hw
        s = self.stride
        return v[:, : s * (ho - 1) + 1: s, : s * (wo - 1) + 1: s]

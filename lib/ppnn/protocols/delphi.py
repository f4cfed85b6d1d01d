"""Delphi-style linear layers (Mishra et al. 2020; as summarised in Tabula §3.1).

Client and server hold additive shares ``[x]_c + [x]_s = x`` of a layer input in Z_2^64
(the first layer: the client holds the image, the server 0).

**Preprocessing** (per layer, per input, independent of x): the client draws a mask
``R_c`` (the layer input's shape), the server a mask ``R_s`` (the output's shape). With a
linearly homomorphic scheme the client sends ``Enc(R_c)``, the server returns
``Enc(W R_c + R_s)`` and the client decrypts it. Here the HE step is **counted**, not run:
ciphertexts of ``HE_SLOTS`` packed elements, ``HE_CT_BITS`` bits each, one ``Enc`` per client
ciphertext, one ``ScMult`` per weight-ciphertext product (``macs / HE_SLOTS``, rounded up),
one ``Dec`` per returned ciphertext (booked with ``ledger.count``; labelled *counted* in every
table). The value ``W R_c + R_s`` is computed in the clear by the simulator, so a recorded
transcript lists the two ciphertext messages ``SIZE_ONLY`` (no ciphertext is ever built).

**Online**: the client sends ``[x]_c + R_c`` (one ring element per input element); the server
adds ``[x]_s`` and computes ``W (x + R_c) + R_s + bias``: its share of ``W x + bias``; the
client's share is ``-(W R_c + R_s)``. One message, ``k`` bits per input element.

``exact_linear`` evaluates the same integer map for the *ideal* mode (identical output
distribution, used for accuracy sweeps): exact float64 BLAS when the bound allows it, ring
(uint64) arithmetic otherwise.
"""

from __future__ import annotations

import math

import numpy as np

from ppnn.core import AdditiveShares, Ledger, Ring, share_additive
from ppnn.core.transcript import SIZE_ONLY
from ppnn.nn import Conv2d, Dense, ops
from ppnn.nn.integer import int_linear

__all__ = ["HE_SLOTS", "HE_CT_BITS", "conv2d", "linear_ring", "exact_linear", "he_ciphertexts",
           "delphi_preprocess", "delphi_online", "delphi_ideal", "LinearMasks",
           "online_bits", "layer_bits", "mask_bits"]

HE_SLOTS = 8192
HE_CT_BITS = 2 * 8192 * 218  # BFV, N = 8192, log q = 218 (SEAL's 128-bit default)


def conv2d(x: np.ndarray, W: np.ndarray, stride: int, padding: int, groups: int = 1,
           matmul=np.matmul) -> np.ndarray:
    """im2col convolution of ``x (N, C, H, W)`` with ``W (Cout, C/groups, k, k)``; ``matmul``
    chooses the arithmetic (``ring.matmul`` for exact Z_2^k, ``np.matmul`` for floats).
    :func:`ppnn.nn.ops.conv2d` (the toolkit's one im2col) without its backward cache."""
    return ops.conv2d(x, W, stride, padding, groups, matmul)[0]


def linear_ring(layer, W: np.ndarray, x: np.ndarray, ring: Ring) -> np.ndarray:
    """``W x`` (no bias) on ring elements, batch axis first, exact mod 2^k."""
    W = np.asarray(W, dtype=np.uint64)
    if isinstance(layer, Conv2d):
        return conv2d(x, W, layer.stride, layer.padding, layer.groups, ring.matmul)
    if isinstance(layer, Dense):
        return ring.matmul(x, W.T)
    raise TypeError(f"Delphi linear layers are Conv2d or Dense, got {type(layer).__name__}")


def exact_linear(layer, W_int: np.ndarray, x_int: np.ndarray, ring: Ring) -> np.ndarray:
    """``W x`` for signed integer W and x, returned as ring elements
    (:func:`ppnn.nn.integer.int_linear`, reduced mod ``2^k``)."""
    if not isinstance(layer, Conv2d | Dense):
        raise TypeError(f"expected Conv2d or Dense, got {type(layer).__name__}")
    return int_linear(layer, W_int, x_int, wrap=True).view(np.uint64) & ring.mask


def he_ciphertexts(n_elements: int) -> int:
    return math.ceil(int(n_elements) / HE_SLOTS)


def online_bits(in_elements: int, ring_bits: int = 64) -> int:
    """Closed form: online bits of one Delphi linear layer (client -> server, one message)."""
    return int(in_elements) * int(ring_bits)


def layer_bits(n_in: int, n_out: int, ring_bits: int = 64) -> dict[str, int]:
    """Closed form: bits one Delphi linear layer sends for ``n_in`` input and ``n_out`` output
    elements -- ``offline``, the HE mask exchange (:func:`he_ciphertexts` of each, one way
    each, ``HE_CT_BITS`` a ciphertext), and ``online``, :func:`online_bits`. Equal to what
    :func:`delphi_preprocess` and :func:`delphi_online` book (tests)."""
    return {"offline": (he_ciphertexts(n_in) + he_ciphertexts(n_out)) * HE_CT_BITS,
            "online": online_bits(n_in, ring_bits)}


def _book_preprocessing(ledger: Ledger, n_in: int, n_out: int, macs: int, parties) -> None:
    """The counted HE preprocessing of one layer (see the module docstring)."""
    client, server = parties
    ct_in, ct_out = he_ciphertexts(n_in), he_ciphertexts(n_out)
    with ledger.offline():
        with ledger.round():
            ledger.send(client, server, ct_in * HE_CT_BITS, "Enc(R_c) (counted HE)",
                        value=SIZE_ONLY)
        with ledger.round():
            ledger.send(server, client, ct_out * HE_CT_BITS, "Enc(W R_c + R_s) (counted HE)",
                        value=SIZE_ONLY)
        ledger.count("Enc", ct_in, client)
        ledger.count("ScMult", math.ceil(macs / HE_SLOTS), server)
        ledger.count("Add", ct_out, server)
        ledger.count("Dec", ct_out, client)


class LinearMasks:
    """Per-layer preprocessing output: the client's ``R_c`` and ``-(W R_c + R_s)``, the
    server's ``R_s``. Single use, like Tabula's tables."""

    def __init__(self, r_client, client_share, r_server):
        self.r_client, self.client_share, self.r_server = r_client, client_share, r_server
        self.used = False

    def consume(self) -> None:
        if self.used:
            raise RuntimeError("Delphi masks are single-use: reusing R_c reveals x - x'")
        self.used = True


def delphi_preprocess(layer, W: np.ndarray, in_shape, out_shape, ring: Ring,
                      rng: np.random.Generator, ledger: Ledger,
                      parties=("client", "server")) -> LinearMasks:
    """Offline phase of one linear layer for a batch (``in_shape`` includes the batch axis)."""
    client, server = parties
    r_c = ring.random(rng, tuple(in_shape))
    r_s = ring.random(rng, tuple(out_shape))
    _book_preprocessing(ledger, int(np.prod(in_shape)), int(np.prod(out_shape)),
                        int(np.prod(out_shape)) * int(np.prod(np.shape(W)[1:])), parties)
    # the HE result, computed in the clear by the simulator
    client_share = ring.neg(ring.add(linear_ring(layer, W, r_c, ring), r_s))
    return LinearMasks(r_c, client_share, r_s)


def delphi_online(x: AdditiveShares, layer, W: np.ndarray, bias: np.ndarray | None,
                  masks: LinearMasks, ledger: Ledger, parties=("client", "server")
                  ) -> AdditiveShares:
    """Online phase: one message of ``[x]_c + R_c``; returns shares of ``W x + bias``."""
    if not isinstance(x, AdditiveShares) or x.n_parties != 2:
        raise TypeError("delphi_online takes 2-party AdditiveShares")
    if masks.r_client.shape != x.shape:
        raise ValueError(f"mask shape {masks.r_client.shape} does not match input {x.shape}")
    masks.consume()
    ring = x.ring
    client, server = parties
    n = int(np.prod(x.shape))
    masked = ring.add(x.shares[0], masks.r_client)  # client -> server
    ledger.hold(client, "R_c (its mask)", masks.r_client)
    masked = ledger.transmit(client, server, n * ring.bits, "[x]_c + R_c", masked)
    y_s = ring.add(linear_ring(layer, W, ring.add(masked, x.shares[1]), ring), masks.r_server)
    if bias is not None:
        y_s = ring.add(y_s, np.asarray(bias, dtype=np.uint64))
    ledger.count("MAC", int(np.prod(y_s.shape)) * int(np.prod(np.shape(W)[1:])), server)
    ledger.hold(client, "[Wx]_c = -(W R_c + R_s)", masks.client_share)
    ledger.hold(server, "[Wx]_s", y_s)
    return AdditiveShares(np.stack([masks.client_share, y_s]), ring)


def delphi_ideal(x: AdditiveShares, layer, W_int: np.ndarray, bias: np.ndarray | None,
                 ledger: Ledger, rng: np.random.Generator, parties=("client", "server")
                 ) -> AdditiveShares:
    """Ideal functionality with the same output distribution and the same online and offline
    bookings as :func:`delphi_preprocess` + :func:`delphi_online` (fresh uniform sharing of
    ``W x + bias``). ``W_int`` holds signed integers. For accuracy sweeps only."""
    ring = x.ring
    client, server = parties
    n_in = int(np.prod(x.shape))
    y = exact_linear(layer, W_int, ring.to_signed(x.reveal()), ring)
    if bias is not None:
        y = ring.add(y, np.asarray(bias, dtype=np.uint64))
    n_out = int(np.prod(y.shape))
    _book_preprocessing(ledger, n_in, n_out, n_out * int(np.prod(np.shape(W_int)[1:])), parties)
    # the ideal functionality has no mask: the message is booked by its size only
    ledger.send(client, server, n_in * ring.bits, "[x]_c + R_c", value=SIZE_ONLY)
    ledger.count("MAC", n_out * int(np.prod(np.shape(W_int)[1:])), server)
    return share_additive(y, ring, rng)


def mask_bits(net, k: int) -> int:
    """Delphi's client-side masks per inference: ``R_c`` and its output share, per linear
    layer, ``k`` bits each (what the client stores after preprocessing)."""
    tot = 0
    for node in net.leaves():
        if isinstance(node.layer, Conv2d | Dense):
            tot += (int(np.prod(node.in_shape)) + int(np.prod(node.out_shape))) * k
    return tot

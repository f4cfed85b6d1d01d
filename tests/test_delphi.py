"""Delphi-style linear layers on 2-party shares in Z_2^64 against the plaintext map."""

import numpy as np
import pytest

from ppnn.core import Z2_64, Ledger, share_additive
from ppnn.nn import Conv2d, Dense
from ppnn.protocols import delphi

PARTIES = ("client", "server")


def _layer_case(kind, rng):
    if kind == "conv":
        layer = Conv2d(int(rng.integers(1, 5)), 3, int(rng.integers(1, 3)), 1)
        x = rng.integers(-2000, 2000, size=(2, 3, 7, 6))
        W = rng.integers(-300, 300, size=(layer.out_channels, 3, 3, 3))
    else:
        layer = Dense(int(rng.integers(1, 9)))
        x = rng.integers(-2000, 2000, size=(3, 11))
        W = rng.integers(-300, 300, size=(layer.out_features, 11))
    return layer, x, W


def _plain(layer, W, x):
    if isinstance(layer, Conv2d):
        return delphi.conv2d(x.astype(float), W.astype(float), layer.stride, layer.padding)
    return x.astype(float) @ W.T.astype(float)


@pytest.mark.parametrize("kind", ["conv", "dense"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_delphi_layer_matches_plaintext(kind, seed):
    rng = np.random.default_rng(seed)
    layer, x, W = _layer_case(kind, rng)
    bias = rng.integers(-10**6, 10**6, size=W.shape[0])
    want = _plain(layer, W, x) + bias.reshape((1, -1) + (1,) * (x.ndim - 2))
    X = share_additive(Z2_64.from_signed(x), Z2_64, rng)
    ledger = Ledger(PARTIES)
    out_shape = want.shape
    masks = delphi.delphi_preprocess(layer, Z2_64.from_signed(W), x.shape, out_shape, Z2_64,
                                     rng, ledger)
    b_shape = (-1,) + (1,) * (x.ndim - 2)
    Y = delphi.delphi_online(X, layer, Z2_64.from_signed(W),
                             Z2_64.from_signed(bias).reshape(b_shape), masks, ledger)
    np.testing.assert_array_equal(Z2_64.to_signed(Y.reveal()), want.astype(np.int64))
    # online: one message of k bits per input element
    assert ledger.total_bits("online") == delphi.online_bits(x.size) == 64 * x.size
    assert ledger.rounds("online") == 1
    # HE preprocessing counted: one ciphertext each way for these small layers
    assert ledger.total_bits("offline") == 2 * delphi.HE_CT_BITS
    assert ledger.op_count("Enc") == 1 and ledger.op_count("Dec") == 1
    with pytest.raises(RuntimeError, match="single-use"):
        delphi.delphi_online(X, layer, Z2_64.from_signed(W), None, masks, ledger)


@pytest.mark.parametrize("kind", ["conv", "dense"])
def test_ideal_mode_gives_the_same_values_and_bookings(kind):
    rng = np.random.default_rng(7)
    layer, x, W = _layer_case(kind, rng)
    X = share_additive(Z2_64.from_signed(x), Z2_64, rng)
    real, ideal = Ledger(PARTIES), Ledger(PARTIES)
    want = _plain(layer, W, x)
    masks = delphi.delphi_preprocess(layer, Z2_64.from_signed(W), x.shape, want.shape, Z2_64,
                                     rng, real)
    Y1 = delphi.delphi_online(X, layer, Z2_64.from_signed(W), None, masks, real)
    Y2 = delphi.delphi_ideal(X, layer, W, None, ideal, rng)
    np.testing.assert_array_equal(Y1.reveal(), Y2.reveal())
    assert real.summary().equals(ideal.summary())


def test_exact_linear_falls_back_to_the_ring_for_large_values():
    rng = np.random.default_rng(1)
    layer = Dense(3)
    x = rng.integers(-(2**40), 2**40, size=(2, 5))
    W = rng.integers(-(2**20), 2**20, size=(3, 5))
    got = Z2_64.to_signed(delphi.exact_linear(layer, W, x, Z2_64))
    want = (x.astype(object) @ W.T.astype(object)).astype(np.int64)  # < 2^63 here
    np.testing.assert_array_equal(got, want)


def test_bad_inputs_raise():
    rng = np.random.default_rng(0)
    X = share_additive(np.zeros((1, 4), np.uint64), Z2_64, rng)
    ledger = Ledger(PARTIES)
    layer = Dense(2)
    masks = delphi.delphi_preprocess(layer, np.zeros((2, 5), np.uint64), (1, 5), (1, 2), Z2_64,
                                     rng, ledger)
    with pytest.raises(ValueError, match="mask shape"):
        delphi.delphi_online(X, layer, np.zeros((2, 5), np.uint64), None, masks, ledger)
    with pytest.raises(TypeError):
        delphi.linear_ring(object(), np.zeros((2, 2)), np.zeros((1, 2)), Z2_64)


@pytest.mark.parametrize("n_in,n_out", [(11, 3), (9000, 20000), (8192, 8193)])
def test_layer_bits_closed_form_equals_the_bookings(n_in, n_out):
    """The closed form GALA's Tables VI/VIII/X/XI use for DELPHI's communication is what the
    protocol books: the HE mask exchange offline, one k-bit element per input online."""
    rng = np.random.default_rng(3)
    layer = Dense(n_out)
    ledger = Ledger(PARTIES)
    W = np.zeros((n_out, n_in), dtype=np.int64)
    masks = delphi.delphi_preprocess(layer, Z2_64.from_signed(W), (1, n_in), (1, n_out), Z2_64,
                                     rng, ledger)
    X = share_additive(np.zeros((1, n_in), dtype=np.uint64), Z2_64, rng)
    delphi.delphi_online(X, layer, Z2_64.from_signed(W), None, masks, ledger)
    want = delphi.layer_bits(n_in, n_out)
    assert ledger.total_bits("offline") == want["offline"]
    assert ledger.total_bits("online") == want["online"]
    assert want["offline"] == (delphi.he_ciphertexts(n_in) + delphi.he_ciphertexts(n_out)) \
        * delphi.HE_CT_BITS

"""SHE's quantized network: log/uniform quantizers, the compiled integer model (bit-plane form ==
term-by-term circuit spec), and encrypted inference on the bit simulator giving the integer
model's logits exactly, with HOP counts equal to the network's term counts."""

import numpy as np
import pytest

from ppnn import nn
from ppnn.core import Ledger
from ppnn.experiments.she.models import quantize_weights
from ppnn.he.bitsim import SIM_CIPHERTEXT_BYTES, BitSimulator
from ppnn.nn import ops
from ppnn.protocols.she import network as N
from ppnn.protocols.she import quant as Q


# -- quantizers -----------------------------------------------------------------------------
def test_log_quantize_levels_and_rounding():
    w = np.array([1.0, -0.5, 0.3, 0.7, 2.0**-20, 0.0, -1.2])
    lw = Q.log_quantize(w, bits=5)
    assert lw.q_max == 0
    v = lw.values()
    assert list(v[[0, 1, 5]]) == [1.0, -0.5, 0.0]
    assert v[2] == 0.25 and v[3] == 0.5  # round(log2 0.3) = -2, round(log2 0.7) = -1
    assert v[6] == -1.0  # clipped to q_max
    assert lw.zero[4]  # below the 15 levels
    assert lw.exponent.max() <= 14 and lw.exponent.min() >= 0
    nz = v != 0
    assert np.all(np.log2(np.abs(v[nz])) == np.round(np.log2(np.abs(v[nz]))))


@pytest.mark.parametrize("bits", [3, 5, 7])
def test_log_quantize_is_idempotent_and_bounded(bits):
    rng = np.random.default_rng(bits)
    w = rng.standard_normal(500) * 0.1
    v = Q.log_quantize(w, bits).values()
    again = Q.log_quantize(v, bits, q_max=Q.log_quantize(w, bits).q_max).values()
    assert (again == v).all()
    nz = Q.log_quantize(w, bits).exponent[~Q.log_quantize(w, bits).zero]
    assert nz.max() <= (1 << (bits - 1)) - 2


def test_pow2_parts_requires_powers_of_two():
    parts = Q.pow2_parts([0.25, -1.0, 0.0, 4.0])
    assert parts.q_max == 2 and list(parts.exponent[[0, 1, 3]]) == [4, 2, 0]
    assert (parts.values() == [0.25, -1.0, 0.0, 4.0]).all()
    with pytest.raises(ValueError, match="power-of-two"):
        Q.pow2_parts([0.25, 0.3])
    with pytest.raises(ValueError, match="bits"):
        Q.log_quantize([1.0], bits=1)


def test_uniform_quantize():
    w_int, sigma = Q.uniform_quantize(np.array([0.5, -0.26, 0.01]), bits=5)
    assert sigma == -4 and list(w_int) == [8, -4, 0]
    assert w_int.min() >= -16 and w_int.max() <= 15


def test_conv_and_pool_index_match_float_ops():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 7, 7))
    W = rng.standard_normal((3, 2, 3, 3))
    src, widx, out_shape = Q.conv_index((2, 7, 7), 3, 2, 1, 1, 3)
    ref, _ = ops.conv2d(x, W, 2, 1)
    xf = x.reshape(-1)
    ours = np.where(src >= 0, xf[np.maximum(src, 0)] * W.reshape(-1)[widx], 0).sum(1)
    assert np.allclose(ours, ref.reshape(-1)) and out_shape == ref.shape[1:]
    psrc, pshape = Q.pool_index((2, 7, 7), 3, 2, 1)
    pref, _ = ops.maxpool(x, 3, 2, 1)
    pours = np.where(psrc >= 0, xf[np.maximum(psrc, 0)], -np.inf).max(1)
    assert np.allclose(pours, pref.reshape(-1)) and pshape == pref.shape[1:]


# -- compiled networks ----------------------------------------------------------------------
def _tiny_net():
    return nn.Network("tiny", (1, 8, 8), (
        nn.Conv2d(3, 3, 1, 1), nn.BatchNorm(), nn.ReLU(), nn.MaxPool(3, 1, 1),
        nn.Conv2d(4, 3, 2, 0), nn.MaxPool(2), nn.Flatten(), nn.Dense(6), nn.BatchNorm(),
        nn.ReLU(), nn.Dense(5)), "test network with every SHE layer kind")


@pytest.fixture(scope="module")
def tiny():
    net = _tiny_net()
    rng = np.random.default_rng(0)
    params = nn.init_params(net, rng)
    for p in params:  # non-trivial batch-norm statistics
        if "gamma" in p:
            p["gamma"] = rng.uniform(0.5, 2, p["gamma"].shape).astype(np.float32)
            p["mean"] = rng.normal(0, 0.3, p["mean"].shape).astype(np.float32)
            p["beta"] = rng.normal(0, 0.3, p["beta"].shape).astype(np.float32)
    x = rng.random((40, 1, 8, 8)).astype(np.float32)
    return net, params, x


@pytest.mark.parametrize("scheme,guard", [("she", 0), ("she", 2), ("tcn", 0)])
def test_integer_model_bitplane_equals_term_spec(tiny, scheme, guard):
    net, params, x = tiny
    qn = Q.compile_network(net, params, x, scheme=scheme, guard_bits=guard)
    h = qn.encode_input(x)
    assert h.min() >= 0 and h.max() <= 31
    for op in qn.ops:
        if isinstance(op, Q.QLinear):
            a = op.accumulate_int(h)
            assert (a == op.accumulate_terms_int(h)).all()
            h = op.activate_int(a)
        else:
            h = op.forward_int(h)
    assert [op.act for op in qn.linear_layers()] == ["relu", "signed", "relu", None]


def test_integer_model_tracks_float_model(tiny):
    net, params, x = tiny
    qn = Q.compile_network(net, params, x, scheme="she", guard_bits=3, weight_bits=9,
                           act_bits=10, in_bits=10)
    fnet, fp = nn.fold_batchnorm(net, params)
    ref = nn.forward(fnet, quantize_weights(fp, "she", 9), x.astype(np.float64))
    out = qn.forward_int(qn.encode_input(x)) * 2.0 ** qn.linear_layers()[-1].sigma_acc
    assert np.corrcoef(out.reshape(-1), ref.reshape(-1))[0, 1] > 0.99


def test_compile_rejects_unsupported_layers():
    net = nn.Network("sq", (1, 4, 4), (nn.Conv2d(2, 3, 1, 1), nn.Square(), nn.Flatten(),
                                        nn.Dense(3)), "x^2 is not a SHE layer")
    params = nn.init_params(net, np.random.default_rng(0))
    with pytest.raises(ValueError, match="not supported"):
        Q.compile_network(net, params, np.zeros((2, 1, 4, 4)))
    with pytest.raises(ValueError, match="scheme"):
        Q.compile_network(net, params, np.zeros((2, 1, 4, 4)), scheme="fhe")


# -- encrypted inference ---------------------------------------------------------------------
@pytest.mark.parametrize("scheme", ["she", "tcn"])
@pytest.mark.parametrize("public", [True, False])
def test_encrypted_inference_equals_integer_model(tiny, scheme, public):
    net, params, x = tiny
    qn = Q.compile_network(net, params, x, scheme=scheme, guard_bits=2)
    xi = qn.encode_input(x[:3])
    led = Ledger(["client", "server"])
    be = BitSimulator(public_constants=public)
    res = N.encrypted_inference(qn, be, xi, ledger=led)
    assert (res.logits == qn.forward_int(xi)).all()
    assert (res.predictions == qn.forward_int(xi).argmax(1)).all()
    lin = qn.linear_layers()
    terms = sum(op.n_terms for op in lin)
    tot = res.totals()
    assert tot["pc_shift" if scheme == "she" else "pc_mult"] == terms
    assert tot["cc_add"] == sum(int(np.maximum(op.term_counts() - 1, 0).sum()) for op in lin)
    assert tot["hgops"] == be.hgops / 3
    assert led.op_count("bootstrap") == be.bootstraps
    assert res.input_bytes == 64 * 5 * SIM_CIPHERTEXT_BYTES + (0 if public else
                                                              SIM_CIPHERTEXT_BYTES)
    assert led.total_bytes(label="") == led.total_bytes()
    assert tot["md"] == max(res.layers["md_out"]) > 0


def test_mixed_accumulator_cheaper_than_fixed(tiny):
    net, params, x = tiny
    qn = Q.compile_network(net, params, x, guard_bits=2)
    xi = qn.encode_input(x[:2])
    costs = {}
    for acc in ("mixed", "fixed"):
        be = BitSimulator(public_constants=False)
        res = N.encrypted_inference(qn, be, xi, accumulator=acc)
        assert (res.logits == qn.forward_int(xi)).all()
        costs[acc] = res.totals()["hgops"]
    assert costs["mixed"] < costs["fixed"]


def test_pool_slice_matches_integer_model(tiny):
    net, params, x = tiny
    qn = Q.compile_network(net, params, x, guard_bits=2)
    xi = qn.encode_input(x[:1])
    be = BitSimulator()
    out = N.encrypted_pool_slice(qn, be, xi[0], pooled=[0, 9, 30])
    layers = qn.forward_int(xi, return_layers=True)
    assert (out["pooled"] == layers[1][0, [0, 9, 30]]).all()
    assert (out["act"] == layers[0][0, out["rows"]]).all()
    only = N.encrypted_pool_slice(qn, be, xi[0], rows=[3, 4])
    assert (only["act"] == layers[0][0, [3, 4]]).all() and only["hgops"] > 0
    with pytest.raises(ValueError, match="exactly one"):
        N.encrypted_pool_slice(qn, be, xi[0])


def test_encrypted_inference_input_checks(tiny):
    net, params, x = tiny
    qn = Q.compile_network(net, params, x)
    with pytest.raises(ValueError, match="x_int"):
        N.encrypted_inference(qn, BitSimulator(), np.zeros((2, 10), np.int64))
    with pytest.raises(ValueError, match="shape"):
        qn.encode_input(np.zeros((2, 1, 4, 4)))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        qn.encode_input(np.full((1, 1, 8, 8), 2.0))

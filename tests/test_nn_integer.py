"""The integer compiler's shared steps against plain oracles (Python integers, float model)."""

from __future__ import annotations

import numpy as np
import pytest

from ppnn import nn
from ppnn.nn.integer import (
    activation_ranges,
    fixed_bias,
    fixed_weights,
    int_linear,
    pow2_rescale,
    shift_for,
    to_fixed,
)


def _exact(layer, W, x):
    """W x with Python integers (object arrays): the oracle of int_linear."""
    W, x = np.asarray(W, object), np.asarray(x, object)
    if isinstance(layer, nn.Dense):
        return x @ W.T
    k, s, p = layer.kernel, layer.stride, layer.padding
    x = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    n, c, h, w = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    out = np.zeros((n, W.shape[0], oh, ow), object)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * s:i * s + k, j * s:j * s + k].reshape(n, -1)
            out[:, :, i, j] = patch @ W.reshape(W.shape[0], -1).T
    return out


@pytest.mark.parametrize("scale", [2**4, 2**28])  # float path, then the Z_2^64 path
def test_int_linear_is_exact_on_both_paths(scale):
    rng = np.random.default_rng(scale)
    conv = nn.Conv2d(3, 3, stride=2, padding=1)
    W = rng.integers(-scale, scale, size=(3, 2, 3, 3))
    x = rng.integers(-scale, scale, size=(2, 2, 7, 7))
    assert np.array_equal(int_linear(conv, W, x).astype(object), _exact(conv, W, x))
    dense = nn.Dense(4)
    W, x = rng.integers(-scale, scale, size=(4, 9)), rng.integers(-scale, scale, size=(3, 9))
    assert np.array_equal(int_linear(dense, W, x).astype(object), _exact(dense, W, x))


def test_int_linear_refuses_overflow_unless_wrapping():
    dense = nn.Dense(1)
    W, x = np.full((1, 4), 2**31), np.full((1, 4), 2**31)  # 4 * 2^62 = 2^64
    with pytest.raises(ValueError, match="overflows int64"):
        int_linear(dense, W, x)
    assert int_linear(dense, W, x, wrap=True).view(np.uint64)[0, 0] == 0  # 2^64 mod 2^64
    with pytest.raises(TypeError, match="Conv2d or Dense"):
        int_linear(nn.ReLU(), W, x)


def test_fixed_point_parameters():
    conv = nn.Conv2d(2, 1)
    assert fixed_weights(np.array([0.5, -0.26]), 2).tolist() == [2, -1]
    b = fixed_bias(conv, np.array([0.25, -1.0]), 3)
    assert b.shape == (2, 1, 1) and b.ravel().tolist() == [2, -8]
    assert fixed_bias(nn.Dense(3), None, 5).tolist() == [0, 0, 0]
    with pytest.raises(ValueError, match="frac_bits"):
        fixed_weights(np.ones(2), -1)
    # inputs: round half to even, float32 and float64 alike (scaling by 2^f is exact)
    x = np.array([0.375, -0.625, 1 / 3], np.float32)
    assert to_fixed(x, 2).tolist() == [2, -2, 1] == to_fixed(x.astype(np.float64), 2).tolist()


def test_shift_keeps_calibrated_values_in_b_bits():
    l_bits, d = shift_for(max_abs=100.0, step=0.5, bits=8)  # 200 steps: 8 bits, +1 sign
    assert (l_bits, d) == (8, 1)
    assert shift_for(1.0, 1.0, 8) == (1, 0)
    assert (200 >> d) < 2**7  # fits a signed 8-bit table input
    with pytest.raises(ValueError, match="step"):
        shift_for(1.0, 0.0, 8)


def test_pow2_rescale_bounds_pre_activations_and_keeps_predictions():
    net = nn.zoo.get("falcon_network_b")
    params = nn.init_params(net, np.random.default_rng(0))
    params = [{k: v * 8 for k, v in p.items()} for p in params]  # large activations
    x = np.random.default_rng(1).random((32, *net.input_shape))
    scaled, scale = pow2_rescale(net, params, x, limit=8.0)
    assert scale >= 1 and np.log2(scale) == int(np.log2(scale))
    ranges = activation_ranges(net, scaled, x)
    lin = [r for r, layer in zip(ranges, net.layers) if isinstance(layer, nn.Dense | nn.Conv2d)]
    assert max(lin) <= 8.0
    assert np.allclose(nn.forward(net, scaled, x) * scale, nn.forward(net, params, x))
    with pytest.raises(ValueError, match="calibration images"):
        activation_ranges(net, params, x[0])


def _random_resnet(widths=(2, 4, 8), image=8, seed=0, gain=3.0):
    """A reduced ResNet-20 graph with non-trivial batch-norm statistics (large activations)."""
    net = nn.zoo.resnet_cifar(3, widths, image)
    rng = np.random.default_rng(seed)
    params = nn.init_params(net, rng, dtype=np.float64)
    for k, v in nn.flatten_params(params).items():
        if k.endswith(("mean", "beta")):
            v[...] = rng.normal(0, 0.3, v.shape)
        if k.endswith(("var", "gamma")):
            v[...] = rng.uniform(0.5, 2, v.shape) * (gain if k.endswith("gamma") else 1)
    return net, params


def test_pow2_rescale_of_a_resnet_aligns_both_branches_and_keeps_predictions():
    net, params = _random_resnet()
    net, params = nn.fold_batchnorm(net, params)
    x = np.random.default_rng(1).random((16, *net.input_shape))
    scaled, scale = pow2_rescale(net, params, x, limit=2.0)
    assert scale > 1 and np.log2(scale) == int(np.log2(scale))
    # the same function up to the output scale: both branches of every block end at one scale
    assert np.allclose(nn.forward(net, scaled, x) * scale, nn.forward(net, params, x))
    outs = nn.forward_nodes(net, scaled, x)
    kinds = {n.name: n.kind for n in net.nodes()}
    peaks = [np.abs(v).max() for k, v in outs.items() if kinds[k] in ("Conv2d", "Dense", "Add")]
    assert max(peaks) <= 2.0
    # an identity shortcut straight from the image cannot be rescaled
    bad = nn.Network("id_first", (1, 4, 4), (nn.Residual((nn.Conv2d(1, 3, 1, 1),)), nn.ReLU(),
                                                nn.Flatten(), nn.Dense(2)))
    bp = nn.init_params(bad, np.random.default_rng(2))
    with pytest.raises(ValueError, match="identity shortcut reads the input image"):
        pow2_rescale(bad, bp, np.ones((2, 1, 4, 4)) * 50, limit=1.0)


def test_canonicalize_folds_the_batch_norms_inside_residual_blocks():
    from ppnn.nn.canonical import canonicalize

    net, params = _random_resnet(gain=1.0)
    folded, fparams, notes = canonicalize(net, params)
    assert not any(n.kind == "BatchNorm" for n in folded.nodes())
    assert any(isinstance(layer, nn.Residual) for layer in folded.layers)
    n_bn = sum(n.kind == "BatchNorm" for n in net.nodes())
    assert notes == [f"folded {n_bn} batch-norm layer(s) into the preceding linear layer"]
    x = np.random.default_rng(3).random((4, *net.input_shape))
    assert np.allclose(nn.forward(folded, fparams, x), nn.forward(net, params, x))

"""Forward passes (float, fixed-point), kernels vs naive loops, gradients vs finite differences."""

import copy

import numpy as np
import pytest

from ppnn import nn
from ppnn.core import FixedPoint, Ring
from ppnn.nn import (
    BatchNorm,
    ChannelShuffle,
    Conv2d,
    Dense,
    Flatten,
    MaxPool,
    MeanPool,
    Network,
    ReLU,
    Residual,
    Square,
    ops,
)
from ppnn.nn.backprop import backward, forward_train, softmax_cross_entropy


# -- naive references (loops over every output element: tiny shapes only) ------------------------
def naive_conv(x, W, b, s, p, groups):
    n, c, h, w = x.shape
    co, cg, k, _ = W.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    og = co // groups
    y = np.zeros((n, co, oh, ow))
    for a in range(n):
        for o in range(co):
            g = o // og
            for i in range(oh):
                for j in range(ow):
                    patch = xp[a, g * cg:(g + 1) * cg, i * s:i * s + k, j * s:j * s + k]
                    y[a, o, i, j] = (patch * W[o]).sum() + b[o]
    return y


def naive_pool(x, k, s, p, how):
    n, c, h, w = x.shape
    fill = -np.inf if how == "max" else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=fill)
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    y = np.zeros((n, c, oh, ow))
    for a in range(n):
        for ch in range(c):
            for i in range(oh):
                for j in range(ow):
                    win = xp[a, ch, i * s:i * s + k, j * s:j * s + k]
                    y[a, ch, i, j] = {"max": win.max(), "sum": win.sum(),
                                      "mean": win.sum() / (k * k)}[how]
    return y


@pytest.mark.parametrize("seed", range(6))
def test_conv_matches_naive_loop(seed):
    rng = np.random.default_rng(seed)
    groups = int(rng.choice([1, 2]))
    c_in, c_out = 2 * int(rng.integers(1, 3)), 2 * int(rng.integers(1, 3))
    k, s, p = int(rng.integers(1, 4)), int(rng.integers(1, 3)), int(rng.integers(0, 2))
    h, w = int(rng.integers(k, 8)), int(rng.integers(k, 8))
    x = rng.standard_normal((2, c_in, h, w))
    W = rng.standard_normal((c_out, c_in // groups, k, k))
    b = rng.standard_normal(c_out)
    net = Network("t", (c_in, h, w), (Conv2d(c_out, k, s, p, groups=groups),))
    y = nn.forward(net, [{"W": W, "b": b}], x)
    assert np.allclose(y, naive_conv(x, W, b, s, p, groups))


@pytest.mark.parametrize("seed", range(6))
def test_pools_match_naive_loop(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 4))
    s, p = int(rng.integers(1, 3)), int(rng.integers(0, k // 2 + 1))
    x = rng.standard_normal((2, 3, int(rng.integers(k, 9)), int(rng.integers(k, 9))))
    assert np.allclose(ops.maxpool(x, k, s, p)[0], naive_pool(x, k, s, p, "max"))
    assert np.allclose(ops.meanpool(x, k, s, p, False), naive_pool(x, k, s, p, "mean"))
    assert np.allclose(ops.meanpool(x, k, s, p, True), naive_pool(x, k, s, p, "sum"))


def test_whole_network_forward_equals_layer_by_layer_reference():
    rng = np.random.default_rng(3)
    net = nn.zoo.get("minionn_mnist")
    params = nn.init_params(net, rng, dtype=np.float64)
    x = rng.random((2, 1, 28, 28))
    a = naive_conv(x, params[0]["W"], params[0]["b"], 1, 0, 1)
    a = naive_pool(np.maximum(a, 0), 2, 2, 0, "max")
    a = naive_conv(a, params[3]["W"], params[3]["b"], 1, 0, 1)
    a = naive_pool(np.maximum(a, 0), 2, 2, 0, "max").reshape(2, -1)
    a = np.maximum(a @ params[7]["W"].T + params[7]["b"], 0) @ params[9]["W"].T + params[9]["b"]
    assert np.allclose(nn.forward(net, params, x), a)
    outs = nn.forward(net, params, x, return_layers=True)
    assert [o.shape[1:] for o in outs] == net.shapes()[1:]


# -- gradients by finite differences, one network per layer kind ------------------------------
def _grad_nets():
    img = (2, 6, 6)
    head = (Flatten(), Dense(3))
    return {
        "conv": Network("g", img, (Conv2d(3, 3, 2, 1), *head)),
        "conv_groups": Network("g", img, (Conv2d(4, 3, 1, 1, groups=2), *head)),
        "dense": Network("g", (5,), (Dense(4), Dense(3))),
        "relu": Network("g", img, (Conv2d(2, 3, 1, 1), ReLU(), *head)),
        "maxpool": Network("g", img, (Conv2d(2, 3, 1, 1), MaxPool(3, 2, 1), *head)),
        "meanpool": Network("g", img, (Conv2d(2, 3, 1, 1), MeanPool(2), *head)),
        "meanpool_scaled": Network("g", img, (Conv2d(2, 1), MeanPool(3, 1, 1, scaled=True),
                                              *head)),
        "batchnorm": Network("g", img, (Conv2d(2, 3, 1, 1), BatchNorm(), *head)),
        "batchnorm_flat": Network("g", (5,), (Dense(4), BatchNorm(), Dense(3))),
        "square": Network("g", img, (Conv2d(2, 3, 1, 1), Square(), *head)),
        "residual": Network("g", img, (Residual((Conv2d(2, 3, 1, 1), ReLU(), Conv2d(2, 3, 1, 1)),
                                                (Conv2d(2, 1),)), ReLU(), *head)),
        "shuffle_concat": Network("g", img, (Conv2d(4, 1), Residual(
            (Conv2d(4, 1, groups=2), ChannelShuffle(2), Conv2d(2, 3, 2, 1, groups=2)),
            (MeanPool(3, 2, 1),), merge="concat"), ReLU(), *head)),
    }


def _loss(net, params, x, y):
    logits, _ = forward_train(net.layers, copy.deepcopy(params), x)
    return softmax_cross_entropy(logits, y)[0]


@pytest.mark.parametrize("kind", sorted(_grad_nets()))
def test_gradients_match_finite_differences(kind):
    net = _grad_nets()[kind]
    rng = np.random.default_rng(sorted(_grad_nets()).index(kind))
    params = nn.init_params(net, rng, dtype=np.float64)
    x = rng.standard_normal((4, *net.input_shape))
    y = rng.integers(0, 3, 4)
    logits, caches = forward_train(net.layers, copy.deepcopy(params), x)
    _, g = softmax_cross_entropy(logits, y)
    dx, grads = backward(net.layers, params, caches, g, need_dx=True)
    flat_p, flat_g = nn.flatten_params(params), nn.flatten_params(grads)
    eps = 1e-6
    for key, grad in flat_g.items():
        arr = flat_p[key]
        for idx in rng.choice(arr.size, size=min(arr.size, 6), replace=False):
            i = np.unravel_index(idx, arr.shape)
            old = arr[i]
            arr[i] = old + eps
            up = _loss(net, params, x, y)
            arr[i] = old - eps
            down = _loss(net, params, x, y)
            arr[i] = old
            assert np.isclose(grad[i], (up - down) / (2 * eps), rtol=1e-4, atol=1e-7), key
    for idx in rng.choice(x.size, size=6, replace=False):
        i = np.unravel_index(idx, x.shape)
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        num = (_loss(net, params, xp, y) - _loss(net, params, xm, y)) / (2 * eps)
        assert np.isclose(dx[i], num, rtol=1e-4, atol=1e-7)


def test_channel_shuffle_reads_the_groups_column_by_column_and_concat_stacks_the_shortcut():
    """ShuffleNet (Zhang et al. 2018, §3.1): with g = 2 groups of 3 channels [0 1 2 | 3 4 5]
    the shuffle gives [0 3 1 4 2 5]; a concat block puts the shortcut's channels first."""
    x = np.arange(6, dtype=np.float64).reshape(1, 6, 1, 1) * np.ones((1, 1, 2, 2))
    net = Network("s", (6, 2, 2), (ChannelShuffle(2),))
    assert nn.forward(net, [{}], x)[0, :, 0, 0].tolist() == [0, 3, 1, 4, 2, 5]
    assert np.array_equal(ops.channel_shuffle(ops.channel_shuffle(x, 2), 2, inverse=True), x)
    cat = Network("c", (6, 2, 2), (Residual((Conv2d(2, 2),), (MeanPool(2),), merge="concat"),))
    p = nn.init_params(cat, np.random.default_rng(0), dtype=np.float64)
    y = nn.forward(cat, p, x)
    assert y.shape == (1, 8, 1, 1) and cat.output_shape == (8, 1, 1)
    assert np.allclose(y[0, :6, 0, 0], np.arange(6))           # the shortcut's mean-pool
    assert list(cat.summary()["kind"])[-1] == "Concat"
    fx = FixedPoint(Ring(64), 12)
    yf = fx.decode(nn.forward_fixed(cat, p, x, fx))
    assert np.allclose(yf, y, atol=1e-2)
    with pytest.raises(ValueError, match="spatial size"):
        Network("bad", (6, 4, 4), (Residual((Conv2d(2, 1),), (MeanPool(2),), merge="concat"),))
    with pytest.raises(ValueError, match="merge must be one of"):
        Residual((ReLU(),), merge="stack")
    with pytest.raises(ValueError, match="must divide"):
        Network("bad", (5, 2, 2), (ChannelShuffle(2),))


# -- fixed-point oracle --------------------------------------------------------------------------
def test_forward_fixed_exact_against_integer_arithmetic():
    """Dense -> ReLU -> Dense in Z_2^32 with f = 8, written out with Python integers."""
    rng = np.random.default_rng(0)
    net = Network("t", (4,), (Dense(3), ReLU(), Dense(2)))
    params = nn.init_params(net, rng, dtype=np.float64)
    for p in (params[0], params[2]):
        p["b"] = rng.standard_normal(p["b"].shape)
    x = rng.standard_normal((5, 4))
    f, k = 8, 32
    enc = lambda v, s: [int(round(t * 2 ** s)) for t in np.ravel(v)]  # noqa: E731

    def dense(xs, p, n_in, n_out):
        W, b = enc(p["W"], f), enc(p["b"], 2 * f)
        return [(sum(xs[i] * W[o * n_in + i] for i in range(n_in)) + b[o]) >> f
                for o in range(n_out)]

    want = []
    for row in x:
        h = [max(v, 0) for v in dense(enc(row, f), params[0], 4, 3)]
        want.append(dense(h, params[2], 3, 2))
    fxp = FixedPoint(Ring(k), f)
    got = Ring(k).to_signed(nn.forward_fixed(net, params, x, fxp))
    assert got.tolist() == want


def _tiny_resnet():
    block = Residual((Conv2d(4, 3, 1, 1, bias=False), BatchNorm(), ReLU(),
                      Conv2d(4, 3, 2, 1, bias=False), BatchNorm()),
                     (Conv2d(4, 1, 2, 0, bias=False), BatchNorm()))
    return Network("tiny_resnet", (3, 8, 8), (Conv2d(3, 3, 1, 1), block, ReLU(), MeanPool(2),
                                             MaxPool(2), Flatten(), Dense(5), BatchNorm(),
                                             Square(), Dense(3)))


@pytest.mark.parametrize("name", ["minionn_mnist", "she_mnist", "cryptonets_mnist",
                                  "falcon_network_b", "minionn_cifar10", "tiny_resnet"])
def test_forward_fixed_close_to_float(name):
    net = _tiny_resnet() if name == "tiny_resnet" else nn.zoo.get(name)
    rng = np.random.default_rng(1)
    params = nn.init_params(net, rng, dtype=np.float64)
    params = [{k: v * 0.5 for k, v in p.items()} if "W" in p else p for p in params]
    x = rng.random((2, *net.input_shape))
    fxp = FixedPoint(Ring(64), 16)
    y = nn.forward(net, params, x)
    yf = fxp.decode(nn.forward_fixed(net, params, x, fxp))
    assert np.abs(yf - y).max() <= 1e-3 * max(1.0, np.abs(y).max())
    # already-encoded input gives the same ring output
    assert np.array_equal(nn.forward_fixed(net, params, fxp.encode(x), fxp),
                          nn.forward_fixed(net, params, x, fxp))


def test_forward_fixed_overflow_raises_naming_the_layer():
    net = Network("t", (4,), (Dense(2, name="big"),))
    params = [{"W": np.full((2, 4), 100.0), "b": np.zeros(2)}]
    with pytest.raises(ValueError, match="big.*overflows"):
        nn.forward_fixed(net, params, np.full((1, 4), 100.0), FixedPoint(Ring(32), 8))
    with pytest.raises(ValueError, match="2\\*frac_bits"):
        nn.forward_fixed(net, params, np.ones((1, 4)), FixedPoint(Ring(16), 8))
    with pytest.raises(TypeError, match="FixedPoint"):
        nn.forward_fixed(net, params, np.ones((1, 4)), 16)


def test_fold_batchnorm_preserves_outputs():
    rng = np.random.default_rng(2)
    for name in ["she_mnist", "resnet32_cifar10"]:
        net = nn.zoo.get(name)
        params = nn.init_params(net, rng, dtype=np.float64)
        flat = nn.flatten_params(params)
        for k, v in flat.items():  # non-trivial statistics
            if k.endswith(("mean", "beta")):
                v[...] = rng.standard_normal(v.shape)
            if k.endswith(("var", "gamma")):
                v[...] = rng.uniform(0.5, 2, v.shape)
        x = rng.random((2, *net.input_shape))
        net2, params2 = nn.fold_batchnorm(net, params)
        assert not any(isinstance(n.layer, BatchNorm) for n in net2.leaves())
        assert np.allclose(nn.forward(net2, params2, x), nn.forward(net, params, x))
    # a batch-norm after an activation cannot be folded and stays
    net = Network("t", (2, 4, 4), (Conv2d(2, 3, 1, 1), ReLU(), BatchNorm(), Flatten(), Dense(2)))
    params = nn.init_params(net, rng, dtype=np.float64)
    params[2]["mean"][:] = 0.3
    net2, params2 = nn.fold_batchnorm(net, params)
    assert [layer.kind for layer in net2.layers] == [layer.kind for layer in net.layers]
    x = rng.random((2, 2, 4, 4))
    assert np.allclose(nn.forward(net2, params2, x), nn.forward(net, params, x))


# -- parameters and bad input -------------------------------------------------------------------
def test_params_roundtrip_and_errors():
    net = nn.zoo.get("resnet32_cifar10")
    params = nn.init_params(net, np.random.default_rng(0))
    back = nn.unflatten_params(net, nn.flatten_params(params))
    assert all(np.array_equal(a, b) for a, b in zip(nn.flatten_params(params).values(),
                                                    nn.flatten_params(back).values()))
    small = nn.zoo.get("minionn_mnist")
    bad = nn.init_params(small, np.random.default_rng(0))
    bad[0]["W"] = bad[0]["W"][:, :, :3]
    with pytest.raises(ValueError, match="conv1"):
        nn.check_params(small, bad)
    with pytest.raises(ValueError, match="list of 10"):
        nn.check_params(small, bad[:3])
    with pytest.raises(TypeError, match="Generator"):
        nn.init_params(small, 0)
    with pytest.raises(ValueError, match="batch axis"):
        nn.forward(small, nn.init_params(small, np.random.default_rng(0)), np.zeros((1, 28, 28)))


def test_layer_times_time_every_leaf_and_residual_addition_in_order():
    from ppnn.nn import zoo
    from ppnn.nn.forward import init_params, layer_times

    net = zoo.get("resnet18_cifar10")
    params = init_params(net, np.random.default_rng(0))
    x = np.random.default_rng(1).random((1, *net.input_shape), dtype=np.float32)
    times = layer_times(net, params, x, repeats=2)
    kinds = [k for k, _ in times]
    assert kinds.count("Add") == sum(1 for n in net.nodes() if n.layer is None)
    assert [k for k in kinds if k != "Add"] == [n.layer.kind for n in net.leaves()]
    assert all(s >= 0 for _, s in times)
    with pytest.raises(ValueError, match="repeats"):
        layer_times(net, params, x, repeats=0)


def test_forward_nodes_keeps_every_node_of_a_residual_network():
    net = nn.zoo.resnet_cifar(3, (2, 4, 8), 8)
    params = nn.init_params(net, np.random.default_rng(0), dtype=np.float64)
    x = np.random.default_rng(1).random((3, *net.input_shape))
    outs = nn.forward_nodes(net, params, x)
    assert list(outs) == [n.name for n in net.nodes()]  # evaluation order, Add rows included
    for n in net.nodes():
        assert outs[n.name].shape == (3, *n.out_shape), n.name
    top = nn.forward(net, params, x, return_layers=True)
    names = net.layer_names
    assert np.array_equal(outs["block1.add"], top[names.index("block1")])
    assert np.array_equal(outs["relu2"], np.maximum(outs["block1.add"], 0))
    assert np.array_equal(outs[net.nodes()[-1].name], top[-1])

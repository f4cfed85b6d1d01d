"""Private inference and training of the paper's networks vs the float model."""

import numpy as np
import pytest

from ppnn.experiments.falcon.runs import private_inference, private_training
from ppnn.nn import BatchNorm, Conv2d, Dense, Flatten, MaxPool, MeanPool, Network, ReLU, Square, zoo
from ppnn.nn.backprop import backward, forward_train
from ppnn.nn.forward import forward, init_params
from ppnn.protocols.falcon import Falcon
from ppnn.protocols.falcon.family import calibrate
from ppnn.protocols.falcon.network import (
    conv_grad_shift,
    output_delta,
    reveal_model,
    secure_backward,
    secure_forward,
    share_model,
    train_step,
)

NETS = ["falcon_network_a", "falcon_network_b", "falcon_network_c", "falcon_lenet"]


def _params(net, seed=0):
    return init_params(net, np.random.default_rng(seed), dtype=np.float64)


@pytest.mark.parametrize("name", NETS)
def test_private_inference_matches_float_model(name):
    net = zoo.get(name)
    params = _params(net)
    x = np.random.default_rng(1).uniform(0, 1, (3, *net.input_shape))
    res = private_inference(net, params, x, seed=0, batch_size=3)
    assert np.array_equal(res["pred_private"], res["pred_float"])
    assert res["relative_error"].max() < 0.01


def test_semi_honest_and_malicious_inference_identical():
    net = zoo.get("falcon_network_b")
    params = _params(net)
    x = np.random.default_rng(2).uniform(0, 1, (2, *net.input_shape))
    outs = []
    for mal in (False, True):
        fal = Falcon(np.random.default_rng(0), malicious=mal)
        out, _ = secure_forward(fal, share_model(fal, net, params), fal.share_fixed(x))
        outs.append(fal.reveal(out))
    assert np.array_equal(*outs)


def test_calibration_keeps_predictions_and_bounds_activations():
    net = zoo.get("falcon_network_a")
    params = _params(net)
    for p in params:  # blow the weights up so activations exceed the ring's range
        if "W" in p:
            p["W"] = p["W"] * 6
    x = np.random.default_rng(3).uniform(0, 1, (20, *net.input_shape))
    scaled, scale = calibrate(net, params, x, limit=8.0)
    assert scale > 1
    outs = forward(net, scaled, x, return_layers=True)
    assert max(np.abs(o).max() for o in outs) <= 8.0 + 1e-9
    assert np.allclose(forward(net, scaled, x) * scale, forward(net, params, x))


def _tiny_bn():
    return Network("tiny_bn", (1, 4, 4), [Conv2d(2, 3, 1, 1), BatchNorm(), ReLU(), MaxPool(2),
                                          MeanPool(2), Flatten(), Dense(5), ReLU(), Dense(3)])


@pytest.mark.parametrize("name", ["falcon_network_a", "falcon_network_c", "tiny_bn"])
def test_private_gradients_match_float_backprop(name):
    net = _tiny_bn() if name == "tiny_bn" else zoo.get(name)
    params = _params(net)
    b = 8 if name == "tiny_bn" else 4
    x = np.random.default_rng(4).uniform(0, 1, (b, *net.input_shape))
    labels = np.arange(b) % net.output_shape[0]
    fal = Falcon(np.random.default_rng(0))
    model = share_model(fal, net, params)
    out, caches = secure_forward(fal, model, fal.share_fixed(x), train=True)
    # the error is pre-scaled by 2^-4 as train_step does (batch sums must stay below 16)
    delta = fal.truncate(output_delta(fal, out, labels, net.output_shape[0]), 4)
    grads = secure_backward(fal, model, caches, delta)
    y, c = forward_train(net.layers, [dict(p) for p in params], x)
    _, ref = backward(net.layers, params, c, y - np.eye(net.output_shape[0])[labels])
    for i, (g, r) in enumerate(zip(grads, ref)):
        for k, v in g.items():
            ours = 16 * fal.reveal_fixed(v)
            if k == "W":
                ours = ours.T.reshape(r[k].shape)
            if isinstance(net.layers[i], Conv2d) and k == "W" and conv_grad_shift(
                    *net.shapes()[i + 1][1:]) > 2:
                # the error is pre-scaled by 2^-ceil(log2(oh ow)/2) before a convolution's
                # weight gradient (range of Z_2^32): unbiased but coarse -- check the direction
                cos = (ours * r[k]).sum() / np.linalg.norm(ours) / np.linalg.norm(r[k])
                assert cos > 0.95, (name, k, cos)
                continue
            scale = max([1.0] + [float(np.abs(v2).max()) for v2 in r.values()])
            assert np.abs(ours - r[k]).max() <= 0.05 * scale, (name, k)


def test_training_does_not_compute_or_send_the_error_of_the_input_image():
    """Network-A starts with Flatten: back-propagation stops at its first Dense layer, whose
    input error (delta W^T, the gradient with respect to the image) no parameter needs. Before
    this was fixed the iteration computed, truncated and sent it (15% of its online bits)."""
    from ppnn.protocols.falcon.costs import network_cost

    net = zoo.get("falcon_network_a")
    x = np.random.default_rng(4).uniform(0, 1, (8, *net.input_shape))
    fal = Falcon(np.random.default_rng(0))
    model = share_model(fal, net, _params(net))
    out, caches = secure_forward(fal, model, fal.share_fixed(x), train=True)
    grads = secure_backward(fal, model, caches, output_delta(fal, out, np.arange(8) % 10, 10))
    first = net.layer_names[1]
    assert not [m for m in fal.ledger.messages if m.what.startswith(f"{first}: dx")
                or m.what.startswith(f"truncate: {first}: dx")]
    assert [m for m in fal.ledger.messages if m.what.startswith(f"{first}: dW")]
    assert set(grads[1]) == {"W", "b"} and grads[0] == {}
    rows = dict(network_cost(net, 8, train=True, per_layer=True))
    assert f"{net.layer_names[0]}_backward" not in rows  # the Flatten below it is not visited
    # the closed form agrees with the run (forward, then backward down to the first Dense; a
    # batch of 8 needs no pre-scaling of the output error)
    total = network_cost(net, 8, train=True)
    assert total.bits == fal.ledger.total_bits("online")
    assert total.rounds == fal.ledger.rounds("online")


def test_plaintext_backprop_stops_at_the_first_layer_with_parameters():
    net = zoo.get("falcon_network_a")
    params = _params(net)
    x = np.random.default_rng(1).uniform(0, 1, (4, *net.input_shape))
    y, c = forward_train(net.layers, [dict(p) for p in params], x)
    dx, grads = backward(net.layers, params, c, y)
    assert grads[0] == {} and set(grads[1]) == {"W", "b"}
    dx_full, grads_full = backward(net.layers, params, c, y, need_dx=True)
    assert dx_full.shape == x.shape
    for g, h in zip(grads[1:], grads_full[1:]):
        for k in g:
            np.testing.assert_array_equal(g[k], h[k])


def test_training_step_lowers_the_loss_like_float_sgd():
    from ppnn import data

    x, y, xt, yt = data.load_mnist()
    net = zoo.get("falcon_network_a")
    hist, info = private_training(net, _params(net), x, y, xt, yt, iters=4, batch=64,
                                  lr_shift=3, seed=0, eval_every=4, n_eval=200)
    assert hist["loss"].iloc[-1] < hist["loss"].iloc[0]
    assert info["ledger"].rounds("online") > 0


def test_reveal_model_roundtrip():
    net = zoo.get("falcon_network_c")
    params = _params(net)
    fal = Falcon(np.random.default_rng(0))
    back = reveal_model(fal, share_model(fal, net, params))
    for p, q in zip(params, back):
        for k in p:
            assert np.abs(p[k] - q[k]).max() <= 2.0**-13


def test_network_errors():
    fal = Falcon(np.random.default_rng(0))
    sq = Network("sq", (4,), [Dense(3), Square()])
    with pytest.raises(ValueError, match="not supported"):
        share_model(fal, sq, init_params(sq, np.random.default_rng(0)))
    net = zoo.get("falcon_network_a")
    model = share_model(fal, net, _params(net))
    with pytest.raises(ValueError, match="input shares must have shape"):
        secure_forward(fal, model, fal.share_fixed(np.zeros((2, 784))))
    x = fal.share_fixed(np.zeros((3, 1, 28, 28)))
    with pytest.raises(ValueError, match="power of two"):
        train_step(fal, model, x, np.zeros(3, int), 3)
    x = fal.share_fixed(np.zeros((2, 1, 28, 28)))
    with pytest.raises(ValueError, match="lr_shift"):
        train_step(fal, model, x, np.zeros(2, int), 20)

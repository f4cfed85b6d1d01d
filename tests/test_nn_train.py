"""The numpy trainer and the pretrained-model cache (ppnn.nn.train)."""

import importlib

import numpy as np
import pytest

from ppnn import data, nn
from ppnn.nn import Conv2d, Dense, Flatten, MaxPool, Network, ReLU

train_mod = importlib.import_module("ppnn.nn.train")  # the module (nn.train is the function)


def _blobs(rng, n=400):
    """Two Gaussian blobs in 6-D: linearly separable, so any sane trainer fits them."""
    y = rng.integers(0, 2, n)
    x = rng.standard_normal((n, 6)) + 2.0 * (2 * y[:, None] - 1)
    return x.astype(np.float32), y


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_training_reduces_loss_and_fits_separable_data(optimizer):
    rng = np.random.default_rng(0)
    x, y = _blobs(rng)
    net = Network("blobs", (6,), (Dense(8), ReLU(), Dense(2)))
    params = nn.init_params(net, rng)
    before = nn.flatten_params(params)["0.W"].copy()
    trained, hist = nn.train(net, params, x, y, epochs=3, batch_size=32, lr=0.01,
                             optimizer=optimizer, rng=rng, x_test=x, y_test=y)
    assert list(hist.columns) == ["epoch", "loss", "train_acc", "test_acc", "lr", "seconds"]
    assert hist["loss"].iloc[-1] < hist["loss"].iloc[0]
    assert nn.accuracy(net, trained, x, y) > 0.97 and hist["test_acc"].iloc[-1] > 0.97
    assert np.array_equal(nn.flatten_params(params)["0.W"], before)  # input not modified


def test_training_is_deterministic_per_seed():
    x, y, _, _ = data.load_mnist()
    net = Network("small", (1, 28, 28), (Conv2d(4, 5, 2), ReLU(), MaxPool(2), Flatten(),
                                         Dense(10)))

    def run(seed):
        rng = np.random.default_rng(seed)
        p, h = nn.train(net, nn.init_params(net, rng), x[:600], y[:600], 2, 50, 1e-3,
                        rng=rng)
        return nn.flatten_params(p), h

    (a, ha), (b, hb), (c, _) = run(1), run(1), run(2)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert ha["loss"].tolist() == hb["loss"].tolist()
    assert not np.array_equal(a["0.W"], c["0.W"])


def test_lr_decay_and_callback():
    rng = np.random.default_rng(0)
    x, y = _blobs(rng, 64)
    net = Network("blobs", (6,), (Dense(2),))
    seen = []
    _, hist = nn.train(net, nn.init_params(net, rng), x, y, 3, 16, 0.1, "sgd", rng,
                       callback=seen.append, lr_decay=0.5)
    assert hist["lr"].tolist() == [0.1, 0.05, 0.025] and [r["epoch"] for r in seen] == [1, 2, 3]


def test_train_bad_arguments():
    rng = np.random.default_rng(0)
    x, y = _blobs(rng, 10)
    net = Network("blobs", (6,), (Dense(2),))
    p = nn.init_params(net, rng)
    with pytest.raises(TypeError, match="Generator"):
        nn.train(net, p, x, y, 1, 4, 0.1, rng=None)
    with pytest.raises(ValueError, match="epochs"):
        nn.train(net, p, x, y, 0, 4, 0.1, rng=rng)
    with pytest.raises(ValueError, match="batch_size"):
        nn.train(net, p, x, y, 1, 2.5, 0.1, rng=rng)
    with pytest.raises(ValueError, match="lr"):
        nn.train(net, p, x, y, 1, 4, 0.0, rng=rng)
    with pytest.raises(ValueError, match="optimizer"):
        nn.train(net, p, x, y, 1, 4, 0.1, "rmsprop", rng)
    with pytest.raises(ValueError, match="x must be"):
        nn.train(net, p, x[:, :5], y, 1, 4, 0.1, rng=rng)


# -- pretrained --------------------------------------------------------------------------------
@pytest.fixture
def models_tmp(tmp_path, monkeypatch):
    monkeypatch.setattr(train_mod, "models_dir", lambda: tmp_path)
    return tmp_path


def test_pretrained_quick_minionn_beats_90_percent_and_is_cached(models_tmp, monkeypatch):
    params, info = nn.pretrained("minionn_mnist", quick=True, seed=0, with_info=True)
    assert info["test_accuracy"] > 0.90 and info["train_samples"] == 10_000
    path = models_tmp / "minionn_mnist-mnist-quick-0.npz"
    assert path.exists()
    _, _, xt, yt = data.load_mnist()
    assert nn.accuracy(nn.zoo.get("minionn_mnist"), params, xt, yt) == info["test_accuracy"]

    def no_training(*a, **k):
        raise AssertionError("cached model must not be retrained")

    monkeypatch.setattr(train_mod, "train", no_training)
    again, info2 = nn.pretrained("minionn_mnist", quick=True, seed=0, with_info=True)
    assert info2 == info
    flat_a, flat_b = nn.flatten_params(params), nn.flatten_params(again)
    assert all(np.array_equal(flat_a[k], flat_b[k]) for k in flat_a)
    # a changed recipe invalidates the cache
    monkeypatch.setitem(train_mod.RECIPES, "minionn_mnist", train_mod.Recipe(lr=5e-4))
    with pytest.raises(AssertionError, match="retrained"):
        nn.pretrained("minionn_mnist", quick=True, seed=0)


def test_pretrained_relu_on_logits_is_skipped_in_training_only(models_tmp):
    """Falcon's Network-A keeps its ReLU on the logits for inference; training without it
    reaches SecureML-level accuracy quickly (with it, dead logits stall training)."""
    net = nn.zoo.get("falcon_network_a")
    params, info = nn.pretrained("falcon_network_a", quick=True, seed=0, with_info=True)
    assert net.layers[-1].kind == "ReLU" and params[-1] == {}
    nn.check_params(net, params)
    assert info["test_accuracy"] > 0.90


@pytest.mark.parametrize("name", sorted(train_mod.TRAINED_AS))
def test_training_twins_train_to_identical_weights(name, models_tmp):
    """A network trained under its twin's name (``TRAINED_AS``) must train to the very same
    weights on its own: same recipe, one epoch on 2000 images, bit-identical."""
    from dataclasses import replace

    twin = train_mod.TRAINED_AS[name]
    assert train_mod.recipe_for(name) == train_mod.recipe_for(twin)
    x, y, _, _ = data.load_mnist()
    flats = []
    for n in (name, twin):
        net = nn.zoo.get(n)
        if net.layers[-1].kind == "ReLU":  # left out while training (drop_final_relu)
            net = replace(net, layers=net.layers[:-1], stated=())
        rng = np.random.default_rng([0, 0x5EED])
        params = nn.init_params(net, rng)
        params, _ = nn.train(net, params, x[:2000], y[:2000], 1, 64, 1e-3, "adam", rng)
        flats.append(nn.flatten_params(params))
    assert flats[0].keys() == flats[1].keys()
    assert all(np.array_equal(flats[0][k], flats[1][k]) for k in flats[0])
    # and pretrained() serves the twin's cached weights, with this network's own accuracy
    params, info = nn.pretrained(name, quick=True, seed=0, with_info=True)
    assert info["trained_as"] == twin and info["name"] == name
    assert not (models_tmp / f"{name}-mnist-quick-0.npz").exists()
    assert (models_tmp / f"{twin}-mnist-quick-0.npz").exists()
    nn.check_params(nn.zoo.get(name), params)


def test_pretrained_bad_arguments(models_tmp):
    with pytest.raises(ValueError, match="dataset"):
        nn.pretrained("minionn_mnist", dataset="svhn")
    with pytest.raises(ValueError, match="seed"):
        nn.pretrained("minionn_mnist", seed=-1)
    with pytest.raises(KeyError, match="unknown network"):
        nn.pretrained("nope")
    with pytest.raises(ValueError, match="takes inputs"):
        nn.pretrained("resnet32_cifar10", dataset="mnist")


@pytest.mark.slow
def test_full_recipe_network_c_reaches_98_5_percent():
    """MiniONN's MNIST network (Falcon's Network-C) with the full recipe: >= 98.5 % test
    accuracy (uses and fills the real model cache)."""
    info = nn.pretrained_info("minionn_mnist", quick=False, seed=0)
    assert info["test_accuracy"] >= 0.985


def test_quantization_aware_training_uses_the_forward_weights():
    """forward_weights: forward/backward (and test accuracy) see the transformed weights, the
    updates go to the float shadow weights (straight-through estimator)."""
    x, y = _blobs(np.random.default_rng(1))
    net = Network("blobs", (6,), (Dense(8), ReLU(), Dense(2)))
    params = nn.init_params(net, np.random.default_rng(2))
    seen = []

    def halves(p):  # round every weight to a multiple of 1/2
        seen.append(True)
        return [{k: np.round(v * 2) / 2 for k, v in layer.items()} for layer in p]

    shadow, hist = nn.train(net, params, x, y, epochs=2, batch_size=50, lr=0.01,
                            rng=np.random.default_rng(3), x_test=x, y_test=y,
                            forward_weights=halves)
    assert len(seen) == 2 * (len(x) // 50) + 2  # every batch, and each epoch's test accuracy
    w = nn.flatten_params(shadow)["0.W"]
    assert not np.array_equal(w, np.round(w * 2) / 2)  # the shadow weights stay float
    assert hist["test_acc"].iloc[-1] == nn.accuracy(net, halves(shadow), x, y)
    plain, _ = nn.train(net, params, x, y, epochs=2, batch_size=50, lr=0.01,
                        rng=np.random.default_rng(3), forward_weights=lambda p: p)
    again, _ = nn.train(net, params, x, y, epochs=2, batch_size=50, lr=0.01,
                        rng=np.random.default_rng(3))
    np.testing.assert_array_equal(nn.flatten_params(plain)["0.W"],
                                  nn.flatten_params(again)["0.W"])


def test_random_shift_moves_each_image_by_its_own_offset():
    rng = np.random.default_rng(0)
    x = rng.random((50, 2, 6, 6)).astype(np.float32)
    out = train_mod.random_shift(x, 2, np.random.default_rng(1))
    d = np.random.default_rng(1).integers(0, 5, size=(50, 2)) - 2  # the offsets drawn
    xp = np.pad(x, ((0, 0), (0, 0), (2, 2), (2, 2)))
    for i in (0, 17, 49):
        dy, dx = d[i]
        np.testing.assert_array_equal(out[i], xp[i, :, 2 + dy:8 + dy, 2 + dx:8 + dx])
    assert out.shape == x.shape and out.dtype == x.dtype
    assert not np.array_equal(out, x)


def test_augmented_training_is_deterministic_and_checks_its_argument():
    net = Network("t", (1, 6, 6), (Flatten(), Dense(3)))
    x = np.random.default_rng(0).random((40, 1, 6, 6)).astype(np.float32)
    y = np.arange(40) % 3
    p0 = nn.init_params(net, np.random.default_rng(0))
    a, _ = nn.train(net, p0, x, y, 2, 8, 1e-2, "adam", np.random.default_rng(5), augment=1)
    b, _ = nn.train(net, p0, x, y, 2, 8, 1e-2, "adam", np.random.default_rng(5), augment=1)
    c, _ = nn.train(net, p0, x, y, 2, 8, 1e-2, "adam", np.random.default_rng(5))
    assert np.array_equal(a[1]["W"], b[1]["W"]) and not np.array_equal(a[1]["W"], c[1]["W"])
    with pytest.raises(ValueError, match="augment"):
        nn.train(net, p0, x, y, 1, 8, 1e-2, "adam", np.random.default_rng(5), augment=9)

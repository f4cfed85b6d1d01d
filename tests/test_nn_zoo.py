"""Layer specs, shape inference, counts and the network zoo (ppnn.nn.layers/network/zoo)."""

import numpy as np
import pytest

from ppnn.nn import (
    BatchNorm,
    Conv2d,
    Dense,
    Flatten,
    MaxPool,
    MeanPool,
    Network,
    ReLU,
    Residual,
    Square,
    Stated,
    zoo,
)

# -- the zoo ---------------------------------------------------------------------------------
REQUIRED = {
    "tabula": {"tabula_lenet", "resnet32_cifar10", "vgg16_cifar100", "resnet34_cifar100",
               "minionn_cifar10"},
    "gala": {"mlp_784_128_128_10", "alexnet_cifar10", "vgg16_cifar10", "resnet18_cifar10",
             "resnet50_cifar10", "resnet101_cifar10", "resnet152_cifar10"},
    "swann": {"cryptonets_mnist", "minionn_mnist", "minionn_cifar10"},
    "she": {"she_mnist", "dshe_mnist", "she_cifar10", "resnet18_cifar10", "alexnet_imagenet",
            "resnet18_imagenet", "shufflenet_imagenet"},
    "falcon": {"falcon_network_a", "falcon_network_b", "falcon_network_c", "falcon_lenet",
               "falcon_alexnet_cifar10", "falcon_vgg16_cifar10", "falcon_alexnet_tinyimagenet",
               "falcon_vgg16_tinyimagenet"},
}


@pytest.mark.parametrize("paper", zoo.PAPERS)
def test_every_paper_architecture_is_in_the_zoo(paper):
    assert REQUIRED[paper] <= set(zoo.by_paper(paper))


@pytest.mark.parametrize("name", zoo.names())
def test_zoo_entry_builds_with_source_and_sane_counts(name):
    net = zoo.get(name)
    assert net.name == name and len(net.source) > 40 and net.dataset
    # a network none of the papers evaluates says so in its source
    assert net.papers or "none of the five papers" in net.source
    classes = {"mnist": 10, "cifar10": 10, "cifar100": 100, "imagenet": 1000,
               "tinyimagenet": 200}[net.dataset]
    # the public Falcon VGG16/CIFAR-10 config really has 1000 outputs (documented in source)
    expected_out = 1000 if name == "falcon_vgg16_cifar10" else classes
    assert net.output_shape == (expected_out,)
    tot = net.totals()
    assert tot["macs"] > 0 and tot["params"] > 0 and tot["relus"] + tot["squares"] > 0
    df = net.summary()
    assert list(df.columns) == ["index", "name", "kind", "in_shape", "out_shape", "relus",
                                "macs", "params", "comparisons", "squares"]
    assert df["name"].is_unique
    assert df["relus"].sum() == net.n_relus and df["macs"].sum() == net.n_macs
    assert df["params"].sum() == net.n_params


def _stated_cases():
    return [(n, i) for n in zoo.names() for i in range(len(zoo.get(n).stated))]


@pytest.mark.parametrize("name,i", _stated_cases())
def test_stated_counts_match_or_the_difference_is_documented(name, i):
    """A stated count without a reason must match; one with a reason must *not* match (if a
    later fix makes it match, the documented reason is stale and this fails)."""
    net = zoo.get(name)
    s = net.stated[i]
    ours = net.count(s.quantity)
    if s.reason is None:
        assert s.matches(ours), f"{name}: {s.quantity} {ours} vs stated {s.value} ({s.where})"
    else:
        assert not s.matches(ours), f"{name}: documented difference is stale: {s.reason}"
    table = net.stated_check()
    assert table.loc[i, "status"] in ("match", "documented difference")


def test_paper_relu_counts_exact_values():
    # closed forms, written out from the architectures (not read back from the code)
    assert zoo.get("resnet32_cifar10").n_relus == 16 * 32 * 32 * 11 + 32 * 16 * 16 * 10 \
        + 64 * 8 * 8 * 10  # 303,104: Tabula's "303K"
    assert zoo.get("vgg16_cifar100").n_relus == 2 * 64 * 1024 + 2 * 128 * 256 + 3 * 256 * 64 \
        + 3 * 512 * 16 + 3 * 512 * 4 + 2 * 4096  # 284,672: Tabula's "284.7K"
    assert zoo.get("minionn_mnist").n_relus == 16 * 24 * 24 + 16 * 8 * 8 + 100
    assert zoo.get("minionn_cifar10").n_relus == 2 * 64 * 1024 + 2 * 64 * 256 + 2 * 64 * 64 \
        + 16 * 64
    assert zoo.get("resnet18_cifar10").n_relus == 557_056  # DeepReDuce/Circa's 557K
    assert zoo.get("mlp_784_128_128_10").n_relus == 256
    assert zoo.get("cryptonets_mnist").count("squares") == 5 * 13 * 13 + 100


def test_minionn_and_falcon_c_are_the_same_function_with_different_orders():
    a, b = zoo.get("minionn_mnist"), zoo.get("falcon_network_c")
    assert a.n_params == b.n_params == 33_542 and a.n_macs == b.n_macs
    # max-pool before ReLU: ReLUs on pooled maps, plus the ReLU on the logits
    assert b.n_relus == 16 * 12 * 12 + 16 * 4 * 4 + 100 + 10


def test_shapes_of_minionn_mnist():
    shapes = zoo.get("minionn_mnist").shapes()
    assert shapes == [(1, 28, 28), (16, 24, 24), (16, 24, 24), (16, 12, 12), (16, 8, 8),
                      (16, 8, 8), (16, 4, 4), (256,), (100,), (100,), (10,)]


def test_get_is_cached_and_unknown_names_raise():
    assert zoo.get("minionn_mnist") is zoo.get("minionn_mnist")
    with pytest.raises(KeyError, match="minionn_mnist"):
        zoo.get("no_such_net")
    with pytest.raises(ValueError, match="paper must be one of"):
        zoo.by_paper("cryptonets")


# -- counts of single layers against hand formulas ---------------------------------------------
@pytest.mark.parametrize("seed", range(5))
def test_conv_counts_random_shapes(seed):
    rng = np.random.default_rng(seed)
    c_in, h, w = (int(v) for v in rng.integers(1, 9, 3) + [0, 6, 6])
    cout, k = int(rng.integers(1, 9)), int(rng.integers(1, 5))
    s, p = int(rng.integers(1, 3)), int(rng.integers(0, 2))
    layer = Conv2d(cout, k, s, p)
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    assert layer.out_shape((c_in, h, w)) == (cout, oh, ow)
    cnt = layer.counts((c_in, h, w))
    assert cnt["macs"] == cout * oh * ow * c_in * k * k
    assert cnt["params"] == cout * c_in * k * k + cout
    assert Conv2d(cout, k, s, p, bias=False).counts((c_in, h, w))["params"] == cout * c_in * k * k


def test_grouped_conv_and_other_layer_counts():
    assert Conv2d(8, 3, groups=2).counts((4, 5, 5))["macs"] == 8 * 3 * 3 * 2 * 9
    assert Dense(7).counts((5,)) == {"relus": 0, "macs": 35, "params": 42, "comparisons": 0,
                                     "squares": 0}
    assert MaxPool(2).counts((3, 4, 4))["comparisons"] == 3 * 2 * 2 * 3
    assert MaxPool(3, 2).out_shape((1, 7, 7)) == (1, 3, 3)
    assert MeanPool(3, 1, 1, scaled=True).out_shape((5, 13, 13)) == (5, 13, 13)
    assert ReLU().counts((2, 3, 4))["relus"] == 24
    assert Square().counts((6,))["squares"] == 6
    assert BatchNorm().counts((4, 2, 2))["params"] == 8
    assert Flatten().out_shape((2, 3, 4)) == (24,)


def test_residual_adds_a_row_and_counts_inner_layers():
    block = Residual((Conv2d(4, 3, 1, 1), ReLU(), Conv2d(4, 3, 1, 1)),
                     (Conv2d(4, 1),))
    net = Network("toy", (2, 5, 5), (block, ReLU(), Flatten(), Dense(3)))
    df = net.summary()
    assert list(df["name"]) == ["block1.body.conv1", "block1.body.relu1", "block1.body.conv2",
                                "block1.shortcut.conv1", "block1.add", "relu1", "flatten1",
                                "fc1"]
    assert net.n_relus == 2 * 100
    assert net.n_macs == 100 * 18 + 100 * 36 + 100 * 2 + 100 * 3


def test_shufflenet_units_follow_zhang_et_al():
    """ShuffleNet 1x, g = 3 (Zhang et al. 2018, Table 1): output sizes 112 / 56 / 28 / 14 / 7
    with 24 / 240 / 480 / 960 channels; a stride-2 unit concatenates a 3x3 average pool of its
    input (24 channels) with a 216-channel branch; the first pointwise conv of stage 2 is not
    grouped, every later one is (g = 3); 137M multiply-adds."""
    net = zoo.get("shufflenet_imagenet")
    df = net.summary()
    merges = df[df["kind"].isin(["Add", "Concat"])]
    assert list(merges["kind"]).count("Concat") == 3 and len(merges) == 16
    assert [s for s in merges[merges.kind == "Concat"]["out_shape"]] == [
        (240, 28, 28), (480, 14, 14), (960, 7, 7)]
    first = df[df["name"] == "block1.body.conv3"].iloc[0]
    assert first["out_shape"] == (216, 28, 28)
    convs = [n.layer for n in net.leaves() if isinstance(n.layer, Conv2d)]
    assert convs[1].groups == 1 and convs[2].groups == 60          # stage 2, unit 1
    assert all(c.groups == 3 for c in convs[3::3][:3])
    assert abs(net.n_macs / 137e6 - 1) < 0.01


# -- bad input -----------------------------------------------------------------------------------
def test_bad_layer_parameters_raise():
    with pytest.raises(ValueError, match="out_channels"):
        Conv2d(0, 3)
    with pytest.raises(TypeError, match="kernel"):
        Conv2d(4, 2.5)
    with pytest.raises(ValueError, match="groups"):
        Conv2d(5, 3, groups=2)
    with pytest.raises(ValueError, match="padding"):
        MaxPool(2, padding=2)
    with pytest.raises(ValueError, match="eps"):
        BatchNorm(eps=0)
    with pytest.raises(ValueError, match="at least one"):
        Residual(())
    with pytest.raises(ValueError, match="quantity"):
        Stated("flops", 1, "nowhere")


def test_bad_architectures_raise_naming_the_layer():
    with pytest.raises(ValueError, match="Flatten"):
        Network("x", (1, 28, 28), (Dense(10),))
    with pytest.raises(ValueError, match="conv2"):
        Network("x", (1, 8, 8), (Conv2d(2, 5), Conv2d(2, 5)))
    with pytest.raises(ValueError, match="input_shape"):
        Network("x", (28, 28), (Flatten(),))
    with pytest.raises(ValueError, match="differ"):
        Network("x", (2, 5, 5), (Residual((Conv2d(3, 3),)),))
    with pytest.raises(TypeError, match="layer spec"):
        Network("x", (4,), ("relu",))
    with pytest.raises(ValueError, match="quantity"):
        zoo.get("minionn_mnist").count("flops")

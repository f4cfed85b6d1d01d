"""The counted cost model (closed forms) equals the bit simulator's exact gate, bootstrap and
per-layer depth counts on compiled networks; zoo-network plans agree with index-based term
counts; Eq. (1) of the paper is implemented as printed."""

import numpy as np
import pytest

from ppnn import nn
from ppnn.he.bitsim import BitSimulator
from ppnn.protocols.she import costs as K
from ppnn.protocols.she import network as N
from ppnn.protocols.she import quant as Q


def _net():
    return nn.Network("tiny", (1, 9, 9), (
        nn.Conv2d(3, 3, 1, 1), nn.BatchNorm(), nn.ReLU(), nn.MaxPool(3, 1, 1),
        nn.Conv2d(4, 3, 2, 1), nn.MaxPool(2), nn.Flatten(), nn.Dense(7), nn.ReLU(),
        nn.Dense(4)), "cost-model test network")


@pytest.fixture(scope="module")
def compiled():
    net = _net()
    rng = np.random.default_rng(1)
    params = nn.init_params(net, rng)
    x = rng.random((30, 1, 9, 9)).astype(np.float32)
    return {s: Q.compile_network(net, params, x, scheme=s, guard_bits=1) for s in ("she", "tcn")}


@pytest.mark.parametrize("scheme,acc", [("she", "mixed"), ("she", "fixed"), ("tcn", "mixed")])
def test_plan_costs_equal_simulator(compiled, scheme, acc):
    qn = compiled[scheme]
    be = BitSimulator(public_constants=False)
    res = N.encrypted_inference(qn, be, qn.encode_input(np.full((1, 1, 9, 9), 0.5)),
                                accumulator=acc)
    cm = K.plan_costs(K.plan_from_quantnet(qn, acc))
    assert list(cm["hgops"]) == list(res.layers["hgops"].astype(int))
    assert list(cm["bootstraps"]) == list(res.layers["bootstraps"].astype(int))
    assert list(cm["md_layer"]) == list(res.layers["md_layer"])
    for k in ("pc_shift", "pc_mult", "cc_add", "cc_com"):
        assert list(cm[k]) == list(res.layers[k])
    # the network's depth is within a few levels of the sum of the layers' depths
    assert abs(int(cm["md_layer"].sum()) - int(res.layers["md_out"].max())) <= 2 * len(cm)


@pytest.mark.parametrize("name", ["she_mnist", "she_cifar10"])
def test_zoo_plans_count_in_image_terms(name):
    net = nn.zoo.get(name)
    plans = K.plan_from_network(net)
    shape = net.input_shape
    lin = [p for p in plans if p.kind == "linear"]
    convs = []
    for lay in net.layers:
        if isinstance(lay, nn.Conv2d):
            src, _, _ = Q.conv_index(shape, lay.kernel, lay.stride, lay.padding, lay.groups,
                                     lay.out_channels)
            convs.append((src >= 0).sum(axis=1))
        shape = lay.out_shape(shape)
    for p, ref in zip(lin, convs):
        assert (p.counts == ref).all()
    c = K.plan_costs(plans)
    # terms: the zoo's MACs minus those that only touch zero padding
    assert c["pc_shift"].sum() <= net.n_macs
    assert c["hgops"].sum() > 0 and c["md_layer"].sum() > 0
    tcn = K.plan_costs(K.plan_from_network(net, "tcn"))
    assert tcn["hgops"].sum() > 3 * c["hgops"].sum()  # multipliers cost more than shifts


def test_accumulator_closed_form():
    assert K.acc_gates(1, 6) == 0
    assert K.acc_gates(2, 6) == 27
    assert K.acc_gates(3, 6) == 27 + 32
    assert K.acc_gates(4, 5) == 2 * 22 + 27


def test_eq1():
    # IN * log2(KC^2) * (DA + DM) + DR + log2(KP^2) * DM[d]
    assert K.eq1_layer_depth(1, 2, da=4, dm=0) == pytest.approx(8.0)
    assert K.eq1_layer_depth(5, 5, 6, 0, 1, 3, 6) == pytest.approx(
        5 * np.log2(25) * 6 + 1 + np.log2(9) * 6)


def test_unsupported_layer():
    net = nn.Network("sq", (1, 4, 4), (nn.Conv2d(2, 3, 1, 1), nn.Square(), nn.Flatten(),
                                        nn.Dense(3)), "x^2")
    with pytest.raises(ValueError, match="no cost model"):
        K.plan_from_network(net)


def test_pruning_keeps_a_fraction_of_every_outputs_terms_and_fits_a_printed_cc_add():
    plans = K.plan_from_network(nn.zoo.get("she_cifar10"))
    dense = K.plan_costs(plans)
    assert K.plan_costs(K.prune(plans, 1.0)).equals(dense)
    target = 0.25 * int(dense["cc_add"].sum())
    d = K.fit_density(plans, target)
    pruned = K.plan_costs(K.prune(plans, d))
    assert abs(pruned["cc_add"].sum() / target - 1) < 0.01
    assert pruned["cc_com"].sum() == dense["cc_com"].sum()    # weights go, activations stay
    assert pruned["pc_shift"].sum() < 0.3 * dense["pc_shift"].sum()
    assert all((q.counts >= 1).all() for q in K.prune(plans, 1e-6) if q.kind == "linear")
    for bad in (0, 1.5, float("nan")):
        with pytest.raises(ValueError, match="density"):
            K.prune(plans, bad)


def test_a_concat_block_and_a_channel_shuffle_cost_nothing_themselves():
    """ShuffleNet's stride-2 unit: its branches are counted, the concatenation and the
    shuffle are routing; the ReLU after the concatenation covers both branches' channels."""
    unit = nn.Residual((nn.Conv2d(4, 1, groups=2), nn.ChannelShuffle(2),
                        nn.Conv2d(4, 3, 2, 1, groups=4)), (nn.MeanPool(3, 2, 1),),
                       merge="concat")
    net = nn.Network("u", (4, 6, 6), (unit, nn.ReLU(), nn.Flatten(), nn.Dense(3)), "unit")
    plans = K.plan_from_network(net)
    assert [p.kind for p in plans] == ["linear", "linear", "meanpool", "relu", "linear"]
    relu = next(p for p in plans if p.kind == "relu")
    assert relu.outputs == 8 * 3 * 3
    c = K.plan_costs(plans)
    assert c.loc[c.kind == "relu", "cc_com"].item() == 72

"""GAZELLE's tiling of a channel larger than the slot count (ConvLayout, GAZELLE §5.4), for
the GAZELLE and GALA convolutions, and GALA Table IX on the 224x224 ImageNet geometry."""

import time

import numpy as np
import pytest

from ppnn import report
from ppnn.he.bfv.sim import BFVSim
from ppnn.protocols.gala import costs
from ppnn.protocols.gala.conv import GalaConv
from ppnn.protocols.gala.protocol import run_linear
from ppnn.protocols.gazelle import GazelleConv, SisoConv

KERNELS = (GalaConv, GazelleConv)
SPLIT_CASES = [  # (c_i, c_o, H, W, k, n, pad, stride)
    (1, 2, 40, 40, 3, 256, None, 1),
    (3, 4, 40, 40, 3, 256, None, 2),
    (2, 3, 20, 20, 5, 128, 0, 1),
    (3, 8, 30, 30, 7, 256, 3, 2),
    (5, 3, 16, 16, 1, 64, None, 2),
]


@pytest.mark.parametrize("case", SPLIT_CASES)
@pytest.mark.parametrize("cls", KERNELS)
def test_tiled_conv_equals_plaintext_convolution(cls, case):
    rng = np.random.default_rng(sum(case[:6]))
    c_i, c_o, H, W, k, n, pad, s = case
    ker = cls(c_i, c_o, H, W, k, n, pad, s)
    assert ker.layout.split and ker.layout.tiles > 1
    K = rng.integers(-4, 5, (c_o, c_i, k, k))
    x = rng.integers(-4, 5, (c_i, H, W))
    res = run_linear(ker, BFVSim(n=n), K, x, rng)
    np.testing.assert_array_equal(res.reveal(), ker.plaintext(K, x))


@pytest.mark.parametrize("cls", KERNELS)
def test_tiled_conv_on_seal_equals_the_simulator(cls):
    from ppnn.he.bfv.seal import SealBFV

    he = SealBFV()
    rng = np.random.default_rng(1)
    side = 48 if he.n <= 2048 else 72   # one channel needs more than n slots
    ker = cls(1, 2, side, side, 3, he.n)
    assert ker.layout.split
    K = rng.integers(-4, 5, (2, 1, 3, 3))
    x = rng.integers(-4, 5, (1, side, side))
    real = run_linear(ker, he, K, x, np.random.default_rng(2)).reveal()
    sim = run_linear(ker, BFVSim(n=he.n), K, x, np.random.default_rng(2)).reveal()
    np.testing.assert_array_equal(real, sim)
    np.testing.assert_array_equal(real, ker.plaintext(K, x))


@pytest.mark.parametrize("cls", KERNELS)
def test_counts_of_a_tiled_layer_are_the_sum_over_its_tiles(cls):
    ker = cls(4, 6, 40, 40, 3, 256)
    L = ker.layout
    assert L.c_n == 1 and L.tiles > 1
    one_tile = cls(4, 6, *L.unit_hw, 3, 256)  # a unit is packed like this small channel
    assert not one_tile.layout.split and one_tile.layout.u == L.u
    per_tile = costs.count_kernel(one_tile)
    assert costs.count_kernel(ker) == {op: L.tiles * v for op, v in per_tile.items()}
    assert costs.conv_counts(cls.name, L) == costs.count_kernel(ker)


@pytest.mark.parametrize("case", SPLIT_CASES)
def test_closed_form_of_a_tiled_layer_equals_running_it(case):
    for cls in KERNELS:
        ker = cls(*case)
        assert costs.conv_counts(cls.name, ker.layout) == costs.count_kernel(ker)


def test_a_channel_that_fits_is_not_tiled():
    L = GalaConv(3, 4, 16, 16, 3, 256).layout
    assert not L.split and L.tiling == (16, 16, 1, 1) and L.u == 256 and L.origin == 0


def test_untileable_inputs_raise_clearly():
    with pytest.raises(ValueError, match="kernel window needs 64 slots > n = 32"):
        GalaConv(1, 1, 40, 40, 7, 32)
    with pytest.raises(ValueError, match="SISO convolution needs the 40x40 channel"):
        SisoConv(40, 40, 3, 256)


def test_imagenet_resnet152_counts_in_seconds():
    from ppnn.experiments.gala import runs

    t = time.perf_counter()
    tot = runs.network_op_totals("resnet152_imagenet")
    assert time.perf_counter() - t < 20
    assert tot["GAZELLE_ScMult"] == tot["GALA_ScMult"] > 0
    assert tot["GALA_Perm"] < tot["GAZELLE_Perm"]


def test_table9_resnets_on_imagenet_are_network_unspecified():
    """Neither geometry gives the paper's ScMult (ImageNet 1.20-1.36x, CIFAR-10 zoo
    0.26-0.32x): the ResNet rows show the ImageNet count, unjudged, with the reason."""
    from ppnn.experiments.gala import paper, runs

    nets = {k: runs.NETWORKS[k] for k in runs.IMAGENET_NETWORKS}
    cifar = {k: runs.network_op_totals(v) for k, v in nets.items()}
    imagenet = {k: runs.network_op_totals(v) for k, v in runs.IMAGENET_NETWORKS.items()}
    frame = paper.table9(cifar, imagenet)
    cmp = report.compare("gala", "table9", frame, rtol=0.05)
    for net in runs.IMAGENET_NETWORKS:
        ok, _ = paper.geometry_check(net, imagenet[net], 0.05)
        assert not ok
        main = cmp[cmp.row == net]
        assert len(main) == 10
        assert (main.status == report.NETWORK_UNSPECIFIED).all()
        assert main.reason.str.startswith("network unspecified: ").all()
        assert (main.set_index("metric")["ours"]["gala_scmult"]
                == imagenet[net]["GALA_ScMult"])
        ours = cmp[cmp.row == f"{net} (ours: CIFAR-10 zoo)"]
        assert len(ours) == 10 and (ours.status == "ours only").all()

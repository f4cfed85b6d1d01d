"""Every network architecture the five papers evaluate, with the source of each definition.

``get(name)`` builds a :class:`~ppnn.nn.network.Network`; ``names()`` lists them;
``by_paper(paper)`` lists those a paper evaluates. Each entry's ``source`` names where the
definition comes from and every assumption we made where the paper is silent; its ``stated``
tuple holds the counts the papers print (ReLUs, parameters, activations) -- those we reproduce
and, as explicit expected differences with the reason, those we do not (``tests/test_nn_zoo.py``
checks both ways).

Naming: ``<arch>_<dataset>`` for standard architectures, ``<paper>_<arch>`` for a paper's own
variant. Not in the zoo: SHE's ShuffleNet (ImageNet) and ReLU-LSTM (Penn Treebank) -- she.txt
gives no more than their names, and grouped channel shuffles / recurrent cells are outside the
layer set (documented in the SHE notebook).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from .layers import (
    BatchNorm,
    ChannelShuffle,
    Conv2d,
    Dense,
    Flatten,
    Layer,
    MaxPool,
    MeanPool,
    ReLU,
    Residual,
    Square,
)
from .network import Network, Stated

__all__ = ["get", "names", "by_paper", "PAPERS", "register", "resnet_cifar"]

PAPERS = ("tabula", "gala", "swann", "she", "falcon")
_REGISTRY: dict[str, tuple[Callable[[], Network], tuple[str, ...]]] = {}

MNIST = (1, 28, 28)
CIFAR = (3, 32, 32)
TINY_IMAGENET = (3, 64, 64)
IMAGENET = (3, 224, 224)


def register(name: str, papers: tuple[str, ...]):
    """Decorator adding a network builder to the zoo under ``name``."""
    for p in papers:
        if p not in PAPERS:
            raise ValueError(f"paper must be one of {PAPERS}, got {p!r}")

    def deco(fn: Callable[[], Network]):
        if name in _REGISTRY:
            raise ValueError(f"zoo name {name!r} registered twice")
        _REGISTRY[name] = (fn, papers)
        return fn

    return deco


def names() -> list[str]:
    """All zoo names, sorted."""
    return sorted(_REGISTRY)


def by_paper(paper: str) -> list[str]:
    """Zoo names evaluated by ``paper`` (one of ``PAPERS``)."""
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {PAPERS}, got {paper!r}")
    return [n for n in names() if paper in _REGISTRY[n][1]]


@cache
def get(name: str) -> Network:
    """The network registered as ``name`` (unknown names raise ``KeyError`` listing all)."""
    if name not in _REGISTRY:
        raise KeyError(f"unknown network {name!r}; the zoo holds: {', '.join(names())}")
    fn, papers = _REGISTRY[name]
    net = fn()
    if net.name != name or set(net.papers) != set(papers):
        raise RuntimeError(f"zoo entry {name!r} is inconsistent with its registration")
    return net


# -- building blocks -------------------------------------------------------------------------
def _conv_bn_relu(c: int, k: int = 3, s: int = 1, p: int = 1) -> list[Layer]:
    return [Conv2d(c, k, s, p, bias=False), BatchNorm(), ReLU()]


def _basic_block(c_in: int, c: int, stride: int) -> list[Layer]:
    """He et al. 2016 basic block (two 3x3 convs); projection shortcut (1x1 conv + BN) when the
    shape changes (option B)."""
    body = (Conv2d(c, 3, stride, 1, bias=False), BatchNorm(), ReLU(),
            Conv2d(c, 3, 1, 1, bias=False), BatchNorm())
    short = (Conv2d(c, 1, stride, 0, bias=False), BatchNorm()) if (stride != 1 or c_in != c) \
        else ()
    return [Residual(body, short), ReLU()]


def _bottleneck(c_in: int, c: int, stride: int) -> list[Layer]:
    """He et al. 2016 bottleneck (1x1, 3x3, 1x1 with expansion 4), stride on the 3x3."""
    body = (Conv2d(c, 1, 1, 0, bias=False), BatchNorm(), ReLU(),
            Conv2d(c, 3, stride, 1, bias=False), BatchNorm(), ReLU(),
            Conv2d(4 * c, 1, 1, 0, bias=False), BatchNorm())
    short = (Conv2d(4 * c, 1, stride, 0, bias=False), BatchNorm()) \
        if (stride != 1 or c_in != 4 * c) else ()
    return [Residual(body, short), ReLU()]


def _resnet_stages(c_in: int, widths, blocks, strides, bottleneck: bool) -> tuple[list, int]:
    layers: list[Layer] = []
    for w, n, s in zip(widths, blocks, strides):
        for i in range(n):
            if bottleneck:
                layers += _bottleneck(c_in, w, s if i == 0 else 1)
                c_in = 4 * w
            else:
                layers += _basic_block(c_in, w, s if i == 0 else 1)
                c_in = w
    return layers, c_in


def _resnet_cifar_he(n: int, classes: int, widths=(16, 32, 64), pool: int = 8) -> list[Layer]:
    """CIFAR ResNet-(6n+2) of He et al. 2016 §4.2: 16/32/64 channels, n blocks per stage."""
    layers = _conv_bn_relu(widths[0])
    body, _ = _resnet_stages(widths[0], widths, (n, n, n), (1, 2, 2), False)
    return layers + body + [MeanPool(pool), Flatten(), Dense(classes)]


def resnet_cifar(n: int = 3, widths=(16, 32, 64), image: int = 32, classes: int = 10
                 ) -> Network:
    """He et al.'s CIFAR ResNet-(6n+2) graph at other widths and image sizes: the same
    layers as ``resnet20_cifar10`` (``n=3``) or ``resnet32_cifar10`` (``n=5``) -- 3 stages of
    ``n`` basic blocks, projection shortcuts where the shape changes, a global average pool --
    with ``widths`` channels per stage and ``image x image`` inputs (a multiple of 4). The
    reduced copies the tests and notebooks run where the full network does not fit."""
    for what, v, lo in (("n", n, 1), ("image", image, 4), ("classes", classes, 2)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise ValueError(f"{what} must be an int >= {lo}, got {v!r}")
    if image % 4:
        raise ValueError(f"image must be a multiple of 4 (two stride-2 stages), got {image}")
    widths = tuple(widths)
    if len(widths) != 3 or any(isinstance(w, bool) or not isinstance(w, int) or w < 1
                               for w in widths):
        raise ValueError(f"widths must be 3 positive ints (one per stage), got {widths}")
    name = f"resnet{6 * n + 2}_w{'-'.join(map(str, widths))}_{image}px"
    return _net(name, (3, image, image), _resnet_cifar_he(n, classes, widths, image // 4),
                f"He et al. 2016 §4.2 CIFAR ResNet-{6 * n + 2} graph ({n} basic blocks per "
                f"stage, projection shortcuts) with stage widths {widths} and {image}x{image} "
                "inputs: a reduced copy built by ppnn.nn.zoo.resnet_cifar; evaluated by none of "
                "the five papers.", "cifar10", ())


def _resnet_cifar_wide(blocks, bottleneck: bool, classes: int) -> list[Layer]:
    """ImageNet ResNet widths (64..512) on 32x32 inputs: 3x3 stem, no max-pool, global 4x4
    average pool (the common CIFAR adaptation, e.g. kuangliu/pytorch-cifar)."""
    layers = _conv_bn_relu(64)
    body, c = _resnet_stages(64, (64, 128, 256, 512), blocks, (1, 2, 2, 2), bottleneck)
    return layers + body + [MeanPool(4), Flatten(), Dense(classes)]


_VGG16_CFG = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
              512, 512, 512, "M")


def _vgg16_features(batchnorm: bool = True) -> list[Layer]:
    layers: list[Layer] = []
    for v in _VGG16_CFG:
        if v == "M":
            layers.append(MaxPool(2))
        else:
            layers += [Conv2d(v, 3, 1, 1), *([BatchNorm()] if batchnorm else []), ReLU()]
    return layers


def _net(name, input_shape, layers, source, dataset, papers, stated=()) -> Network:
    return Network(name, input_shape, tuple(layers), source=source, dataset=dataset,
                   papers=papers, stated=tuple(stated))


# ============================================================================================
# Tabula (tabula.txt §5, Tables 4, 5, 8, 10)
# ============================================================================================
@register("tabula_lenet", ("tabula",))
def _tabula_lenet() -> Network:
    return _net(
        "tabula_lenet", MNIST,
        [Conv2d(32, 5, 1, 2), ReLU(), MaxPool(2), Conv2d(64, 5, 1, 2), ReLU(), MaxPool(2),
         Flatten(), Dense(1024), ReLU(), Dense(10)],
        "Tabula §5 evaluates 'a large variant of LeNet for MNIST' without giving layers. "
        "Assumption: the common large LeNet-5 (conv 5x5 32 pad 2, max-pool 2, conv 5x5 64 "
        "pad 2, max-pool 2, FC 1024, FC 10; TensorFlow MNIST tutorial).",
        "mnist", ("tabula",),
        [Stated("relus", 58_000, "Tabula Table 5/8/10 ReLU column ('58K')", 0.01,
                reason="the paper does not define its 'large LeNet'; the standard large "
                       "LeNet-5 has 38,656 ReLUs. No common LeNet variant we know gives 58K.")])


@register("resnet32_cifar10", ("tabula",))
def _resnet32() -> Network:
    return _net(
        "resnet32_cifar10", CIFAR, _resnet_cifar_he(5, 10),
        "He et al. 2016 §4.2 CIFAR ResNet-32 (n=5; 16/32/64 channels), as in Tabula §5 and "
        "Delphi. Assumption: projection shortcuts (option B, 1x1 conv + BN) where the shape "
        "changes (He et al. used parameter-free option A: ReLU count identical, +2.6K params).",
        "cifar10", ("tabula",),
        [Stated("relus", 303_000, "Tabula Table 5/8/10 ReLU column ('303K')")])


@register("resnet20_cifar10", ())
def _resnet20() -> Network:
    return _net(
        "resnet20_cifar10", CIFAR, _resnet_cifar_he(3, 10),
        "He et al. 2016 §4.2 CIFAR ResNet-20 (n=3: 3 stages x 3 basic blocks, 16/32/64 "
        "channels, global 8x8 average pool, FC 10), the smallest of the family of Tabula's "
        "and Delphi's ResNet-32; evaluated by none of the five papers (the ResNet every "
        "family runs end to end here). Assumption: projection shortcuts (option B, 1x1 conv + "
        "BN) where the shape changes, as in resnet32_cifar10.",
        "cifar10", (),
        [Stated("params", 270_000, "He et al. 2016 Table 6 ResNet-20 ('0.27M')", 0.02)])


@register("vgg16_cifar100", ("tabula",))
def _vgg16_cifar100() -> Network:
    return _net(
        "vgg16_cifar100", CIFAR,
        _vgg16_features() + [Flatten(), Dense(4096), ReLU(), Dense(4096), ReLU(), Dense(100)],
        "Simonyan & Zisserman VGG-16 (13 conv 3x3 + BN, 5 max-pools) on 32x32 CIFAR-100 as in "
        "Tabula §5. Assumption: classifier 512-4096-4096-100 with ReLUs, chosen because it "
        "reproduces the 284.7K ReLUs of Tabula Tables 8 and 10 (13 conv layers alone: 276,480).",
        "cifar100", ("tabula",),
        [Stated("relus", 284_700, "Tabula Tables 8 and 10 ReLU column ('284.7K')", 0.001),
         Stated("relus", 276_000, "Tabula Table 5 ReLU column ('276K')", 0.005,
                reason="Table 5 counts only the 13 convolutional ReLUs (276,480); Tables 8/10 "
                       "include the two 4096-wide FC ReLUs (284,672). The paper is "
                       "inconsistent with itself.")])


@register("resnet34_cifar100", ("tabula",))
def _resnet34_cifar100() -> Network:
    return _net(
        "resnet34_cifar100", CIFAR, _resnet_cifar_wide((3, 4, 6, 3), False, 100),
        "He et al. 2016 ResNet-34 ([3,4,6,3] basic blocks, 64-512 channels) on 32x32 CIFAR-100 "
        "(Tabula §5, Table 4). Assumption: CIFAR adaptation with 3x3 stem, no max-pool.",
        "cifar100", ("tabula",),
        [Stated("relus", 1_470_000, "Tabula Tables 4/5/8/10 ReLU column ('1.47M')", 0.005,
                reason="the CIFAR ResNet-34 has 966,656 ReLUs; 1.47M matches no standard "
                       "ResNet-34 input size we tried (32x32 CIFAR, 64x64 Tiny ImageNet with "
                       "or without stem down-sampling); the paper gives no layer table.")])


@register("minionn_cifar10", ("tabula", "swann"))
def _minionn_cifar10() -> Network:
    c = lambda ch, k=3, p=1: [Conv2d(ch, k, 1, p), ReLU()]  # noqa: E731
    return _net(
        "minionn_cifar10", CIFAR,
        c(64) + c(64) + [MeanPool(2)] + c(64) + c(64) + [MeanPool(2)] + c(64) + c(64, 1, 0)
        + c(16, 1, 0) + [Flatten(), Dense(10)],
        "MiniONN (Liu et al. 2017) CIFAR-10 network, Fig. 13 / §7 (identical to Delphi's "
        "experiments/src/minionn.rs): 7 conv + ReLU, 2 mean-pools, FC 1024-10. Used by Tabula "
        "Table 4 and SwaNN Experiment 3 (its Table X in the full version).",
        "cifar10", ("tabula", "swann"),
        [Stated("relus", 176_000, "Tabula Table 4 ReLU column ('176K')", 0.005,
                reason="MiniONN's CIFAR-10 network has 173,056 ReLUs (2x64x32x32 + 2x64x16x16 "
                       "+ 2x64x8x8 + 16x8x8); Tabula prints 176K (1.7% more).")])


# ============================================================================================
# GALA (gala.txt §IV-B, Tables IX-XIII)
# ============================================================================================
@register("mlp_784_128_128_10", ("gala",))
def _gala_mlp() -> Network:
    return _net(
        "mlp_784_128_128_10", (1, 28, 28),
        [Flatten(), Dense(128), ReLU(), Dense(128), ReLU(), Dense(10)],
        "GALA §IV-B footnote 11: 'The network structure is 784-128-128-10' (the MLP of "
        "SecureML / MiniONN / GAZELLE), ReLU between layers, no activation on the logits.",
        "mnist", ("gala",))


@register("alexnet_cifar10", ("gala",))
def _alexnet_cifar10() -> Network:
    return _net(
        "alexnet_cifar10", CIFAR,
        [Conv2d(64, 11, 4, 5), ReLU(), MaxPool(2), Conv2d(192, 5, 1, 2), ReLU(), MaxPool(2),
         Conv2d(384, 3, 1, 1), ReLU(), Conv2d(256, 3, 1, 1), ReLU(), Conv2d(256, 3, 1, 1),
         ReLU(), MaxPool(2), Flatten(), Dense(10)],
        "GALA §IV-B runs 'AlexNet [40]' on CIFAR-10 without a layer table. Assumption: the "
        "common CIFAR AlexNet (bearpaw/pytorch-classification: 5 conv 64/192/384/256/256, "
        "11x11 stride 4 stem, three 2x2 max-pools, FC 256-10).",
        "cifar10", ("gala",))


@register("vgg16_cifar10", ("gala",))
def _vgg16_cifar10() -> Network:
    return _net(
        "vgg16_cifar10", CIFAR, _vgg16_features() + [Flatten(), Dense(10)],
        "GALA §IV-B runs 'VGG [62]' on CIFAR-10. Assumption: VGG-16 (13 conv 3x3 + BN, 5 "
        "max-pools) with the CIFAR classifier 512-10 (kuangliu/pytorch-cifar).",
        "cifar10", ("gala",))


def _gala_resnet(depth: int, blocks, bottleneck: bool, papers=("gala",), extra="") -> Network:
    name = f"resnet{depth}_cifar10"
    return _net(
        name, CIFAR, _resnet_cifar_wide(blocks, bottleneck, 10),
        f"He et al. 2016 ResNet-{depth} ({list(blocks)} "
        f"{'bottleneck' if bottleneck else 'basic'} blocks) on CIFAR-10 as in GALA §IV-B. "
        "Assumption: CIFAR adaptation (3x3 stem, no max-pool, 4x4 global mean-pool, "
        f"kuangliu/pytorch-cifar), projection shortcuts where the shape changes.{extra}",
        "cifar10", papers)


_GALA_IMAGENET = (" GALA Tables IX/XI: the ImageNet geometry its counts fit (GALA l. 452 says "
                  "CIFAR-10; see the GALA notebook and errata). Definition only: not trained.")


@register("resnet18_cifar10", ("gala", "she"))
def _resnet18_cifar10() -> Network:
    return _gala_resnet(18, (2, 2, 2, 2), False, ("gala", "she"),
                        " Also SHE's DSHE network for CIFAR-10 (she.txt Table 3).")


@register("resnet50_cifar10", ("gala",))
def _resnet50_cifar10() -> Network:
    return _gala_resnet(50, (3, 4, 6, 3), True)


@register("resnet101_cifar10", ("gala",))
def _resnet101_cifar10() -> Network:
    return _gala_resnet(101, (3, 4, 23, 3), True)


@register("resnet152_cifar10", ("gala",))
def _resnet152_cifar10() -> Network:
    return _gala_resnet(152, (3, 8, 36, 3), True)


def _resnet_imagenet(depth: int, blocks, bottleneck: bool, papers=("gala",), extra="") -> Network:
    """torchvision's ImageNet ResNet (He et al. 2016 Table 1): 7x7/2 stem, 3x3/2 max-pool,
    four stages of 64..512 (x4 for bottlenecks), 7x7 global mean-pool, FC to 1000 classes."""
    name = f"resnet{depth}_imagenet"
    body, _ = _resnet_stages(64, (64, 128, 256, 512), blocks, (1, 2, 2, 2), bottleneck)
    return _net(
        name, IMAGENET,
        [*_conv_bn_relu(64, 7, 2, 3), MaxPool(3, 2, 1), *body, MeanPool(7), Flatten(),
         Dense(1000)],
        f"He et al. 2016 ResNet-{depth} on 224x224 ImageNet as torchvision defines it (7x7 "
        f"stride-2 stem, 3x3 stride-2 max-pool, {list(blocks)} "
        f"{'bottleneck (stride on the 3x3)' if bottleneck else 'basic'} blocks, projection "
        f"shortcuts where the shape changes, 1000 classes).{extra}",
        "imagenet", papers)


@register("resnet50_imagenet", ("gala",))
def _resnet50_imagenet() -> Network:
    return _resnet_imagenet(50, (3, 4, 6, 3), True, extra=_GALA_IMAGENET)


@register("resnet101_imagenet", ("gala",))
def _resnet101_imagenet() -> Network:
    return _resnet_imagenet(101, (3, 4, 23, 3), True, extra=_GALA_IMAGENET)


@register("resnet152_imagenet", ("gala",))
def _resnet152_imagenet() -> Network:
    return _resnet_imagenet(152, (3, 8, 36, 3), True, extra=_GALA_IMAGENET)


# ============================================================================================
# SwaNN (swann.txt §5.2 Experiments 1-3)
# ============================================================================================
@register("cryptonets_mnist", ("swann", "she"))
def _cryptonets() -> Network:
    return _net(
        "cryptonets_mnist", MNIST,
        [Conv2d(5, 5, 2, 1), Square(), MeanPool(3, 1, 1, scaled=True), Conv2d(50, 5, 2, 0),
         MeanPool(3, 1, 1, scaled=True), Flatten(), Dense(100), Square(), Dense(10)],
        "CryptoNets (Gilad-Bachrach et al. 2016) MNIST network, used by SwaNN Experiment 1 "
        "(Table 1 layer order Conv-Act-Pool-Conv-Pool-FC-Act-FC) and as CNT in SHE Table 4: "
        "conv 5x5 stride 2 with 5 maps -> 5x13x13, x^2, scaled mean-pool 3x3, conv 5x5 stride 2 "
        "with 50 maps -> 50x5x5, scaled mean-pool 3x3, FC 100, x^2, FC 10. Assumption: "
        "symmetric zero padding 1 for the first conv (CryptoNets pads the image to 29x29 on one "
        "side; same output size) and padding 1 for the 3x3 pools (CryptoNets: 'same' windows).",
        "mnist", ("swann", "she"),
        [Stated("squares", 945, "SHE Table 4: CNT CC_Mult = 945 (one per x^2 activation)",
                0.0)])


@register("minionn_mnist", ("swann",))
def _minionn_mnist() -> Network:
    return _net(
        "minionn_mnist", MNIST,
        [Conv2d(16, 5), ReLU(), MaxPool(2), Conv2d(16, 5), ReLU(), MaxPool(2), Flatten(),
         Dense(100), ReLU(), Dense(10)],
        "MiniONN (Liu et al. 2017) MNIST network, Fig. 11: conv 5x5 16 -> ReLU -> max-pool 2 -> "
        "conv 5x5 16 -> ReLU -> max-pool 2 -> FC 256-100 -> ReLU -> FC 100-10. SwaNN "
        "Experiment 2 (Table 5 layer order Conv, Act+Pool, Conv, Act+Pool, FC, Act, FC). "
        "Falcon's Network-C is the same network in Falcon's layer order (falcon_network_c).",
        "mnist", ("swann",))


# ============================================================================================
# SHE (she.txt §5, Tables 2-6)
# ============================================================================================
def _vgg_like(widths, hidden: int) -> list[Layer]:
    """[C-B-A-C-B-A-P] per entry of ``widths`` (3x3 'same' convs, 2x2 max-pool) - F - F."""
    layers: list[Layer] = []
    for w in widths:
        layers += [Conv2d(w, 3, 1, 1), BatchNorm(), ReLU(),
                   Conv2d(w, 3, 1, 1), BatchNorm(), ReLU(), MaxPool(2)]
    return layers + [Flatten(), Dense(hidden), Dense(10)]


@register("she_mnist", ("she",))
def _she_mnist() -> Network:
    return _net(
        "she_mnist", MNIST,
        [Conv2d(5, 5, 2, 1), BatchNorm(), ReLU(), MaxPool(3, 1, 1), Conv2d(50, 5, 2, 0),
         MaxPool(3, 1, 1), Flatten(), Dense(100), BatchNorm(), ReLU(), Dense(10)],
        "SHE MNIST network, she.txt Table 3: topology C-B-A-P-C-P-F-B-A-F 'the same as CNT' "
        "(CryptoNets). Assumption: CryptoNets' geometry (5 maps 5x5 stride 2, 50 maps 5x5 "
        "stride 2, FC 100) with ReLU for x^2 and 3x3 max-pool (stride 1, pad 1) for the scaled "
        "mean-pool, as SHE §4 replaces them; channel counts are not printed in she.txt.",
        "mnist", ("she",),
        [Stated("relus", 945, "SHE Table 4 / §5.1: FCN (same topology) keeps CNT's 945 "
                "activations (CC_Mult = 945)", 0.0)])


@register("she_mnist_reduced", ("she",))
def _she_mnist_reduced() -> Network:
    return _net(
        "she_mnist_reduced", MNIST,
        [Conv2d(1, 5, 6, 0), ReLU(), Flatten(), Dense(10)],
        "Not a paper network: a reduced SHE-style MNIST network small enough to run end to "
        "end on real tfhe-rs on two cores within the pipeline (one 5x5 stride-6 convolution "
        "with 1 map -- 16 windows that skip every sixth row and column --, ReLU, FC 10: about "
        "2.4 x 10^4 bootstraps, two to three minutes on two workers), "
        "so that a real encrypted inference is measured, not projected, and the paper's "
        "networks can be projected from its measured seconds per bootstrap.",
        "mnist", ("she",))


@register("dshe_mnist", ("she",))
def _dshe_mnist() -> Network:
    return _net(
        "dshe_mnist", MNIST, _vgg_like((3, 6, 12, 24), 100),
        "SHE's deeper MNIST network DSHE, she.txt Table 3: [C-B-A-C-B-A-P]x4-F-F after "
        "Chabanne et al. 2017. she.txt prints no channel counts. Assumption: 3x3 'same' convs "
        "with widths 3/6/12/24 doubling per block (chosen so the multiply count, 349K, is near "
        "DSHE's PC_Shift = 304K in Table 4 while keeping 24 features for the classifier), 2x2 "
        "max-pools (28-14-7-3-1), FC 100, FC 10.",
        "mnist", ("she",))


@register("she_cifar10", ("she",))
def _she_cifar10() -> Network:
    return _net(
        "she_cifar10", CIFAR, _vgg_like((16, 16, 16), 100),
        "SHE's CIFAR-10 network, she.txt Table 3: [C-B-A-C-B-A-P]x3-F-F after Chabanne et al. "
        "2017. she.txt prints no channel counts. Assumption: 3x3 'same' convs with a constant "
        "width of 16 channels (chosen so the multiply count, 4.3M, is close to SHE's "
        "PC_Shift = 4.4M in Table 5), 2x2 max-pools (32-16-8-4), FC 100, FC 10.",
        "cifar10", ("she",))


@register("alexnet_imagenet", ("she",))
def _alexnet_imagenet() -> Network:
    return _net(
        "alexnet_imagenet", (3, 227, 227),
        [Conv2d(96, 11, 4, 0), ReLU(), MaxPool(3, 2), Conv2d(256, 5, 1, 2, groups=2), ReLU(),
         MaxPool(3, 2), Conv2d(384, 3, 1, 1), ReLU(), Conv2d(384, 3, 1, 1, groups=2), ReLU(),
         Conv2d(256, 3, 1, 1, groups=2), ReLU(), MaxPool(3, 2), Flatten(), Dense(4096), ReLU(),
         Dense(4096), ReLU(), Dense(1000)],
        "AlexNet (Krizhevsky et al. 2012) on ImageNet as in SHE Table 6: 227x227 input, conv "
        "96/256/384/384/256 with the original two-group convolutions, overlapping 3x3 "
        "max-pools, FC 4096-4096-1000 (61M parameters). Local response normalisation is "
        "omitted (not part of SHE's layer set).",
        "imagenet", ("she",))


@register("resnet18_imagenet", ("she", "gala"))
def _resnet18_imagenet() -> Network:
    return _resnet_imagenet(18, (2, 2, 2, 2), False, ("she", "gala"),
                            " SHE Table 6's ResNet." + _GALA_IMAGENET)


def _shuffle_unit(c_in: int, c_out: int, groups: int, stride: int, group_first: bool
                  ) -> list[Layer]:
    """ShuffleNet unit (Zhang et al. 2018, Fig. 2b/c): 1x1 group conv + BN + ReLU, channel
    shuffle, 3x3 depthwise conv (stride ``stride``) + BN, 1x1 group conv + BN; bottleneck
    width a quarter of the unit's output. Stride 1: added to the input; stride 2: concatenated
    with a 3x3 stride-2 average pool of the input (the output has ``c_out`` channels). ReLU
    after the merge."""
    mid = c_out // 4
    branch_out = c_out - c_in if stride == 2 else c_out
    g1 = groups if group_first else 1
    body = (Conv2d(mid, 1, 1, 0, bias=False, groups=g1), BatchNorm(), ReLU(),
            ChannelShuffle(groups), Conv2d(mid, 3, stride, 1, bias=False, groups=mid),
            BatchNorm(), Conv2d(branch_out, 1, 1, 0, bias=False, groups=groups), BatchNorm())
    if stride == 2:
        return [Residual(body, (MeanPool(3, 2, 1),), merge="concat"), ReLU()]
    return [Residual(body), ReLU()]


@register("shufflenet_imagenet", ("she",))
def _shufflenet_imagenet() -> Network:
    groups, widths, repeats = 3, (240, 480, 960), (4, 8, 4)
    layers: list[Layer] = [*_conv_bn_relu(24, 3, 2, 1), MaxPool(3, 2, 1)]
    c = 24
    for stage, (w, n) in enumerate(zip(widths, repeats)):
        for i in range(n):
            layers += _shuffle_unit(c, w, groups, 2 if i == 0 else 1,
                                    group_first=not (stage == 0 and i == 0))
            c = w
    return _net(
        "shufflenet_imagenet", IMAGENET, [*layers, MeanPool(7), Flatten(), Dense(1000)],
        "ShuffleNet 1x, g = 3 (Zhang, Zhou, Lin, Sun, 'ShuffleNet: An Extremely Efficient "
        "Convolutional Neural Network for Mobile Devices', CVPR 2018, Table 1 and Fig. 2) on "
        "224x224 ImageNet: 3x3 stride-2 conv (24) and 3x3 stride-2 max-pool, stages of 4 / 8 / "
        "4 ShuffleNet units with 240 / 480 / 960 output channels (the first of each stride 2, "
        "concatenated with a 3x3 average pool of its input), bottlenecks of a quarter of the "
        "output, no group convolution on the first pointwise layer of stage 2 (§3.3), 7x7 "
        "global average pool, FC 1000. SHE Table 6 names 'ShuffleNet' without a "
        "configuration; 1x (about 140M multiply-adds for every g, Zhang et al. Table 2) is the "
        "size its TCN PC_Mult (0.14G) counts, and g = 3 is the paper's default.",
        "imagenet", ("she",),
        stated=[Stated("macs", 137e6, "Zhang et al. 2018, Table 1: ShuffleNet 1x, g = 3, "
                       "'Complexity 137 MFLOPs' (multiply-adds)", rtol=0.02)])


@register("vgg16_imagenet", ("falcon",))
def _vgg16_imagenet() -> Network:
    layers: list[Layer] = []
    for v in _VGG16_CFG:
        layers += [MaxPool(2)] if v == "M" else [Conv2d(v, 3, 1, 1), ReLU()]
    return _net(
        "vgg16_imagenet", IMAGENET,
        layers + [Flatten(), Dense(4096), ReLU(), Dense(4096), ReLU(), Dense(1000)],
        "Simonyan & Zisserman 2015 VGG-16 (configuration D) on 224x224 ImageNet: 13 conv 3x3 "
        "with ReLU, 5 max-pools, FC 25088-4096-4096-1000 (138,357,544 parameters). The network "
        "Falcon's '138 million parameters' (Appendix D) counts; Falcon runs VGG16 on CIFAR-10 "
        "and Tiny ImageNet (falcon_vgg16_*). Definition only: not trained here.",
        "imagenet", ("falcon",))


# ============================================================================================
# Falcon (falcon.txt §5 and Appendix C/D; numbers lost in this copy of the text)
# ============================================================================================
_FALCON_CODE = ("Layer order follows Falcon's public code (snwagh/falcon-public, "
                "src/secondary.cpp selectNetwork), which the paper's text (numbers lost) does "
                "not contradict: max-pool before ReLU (equal outputs, fewer ReLUs) and a ReLU "
                "on the logits.")


@register("falcon_network_a", ("falcon",))
def _falcon_a() -> Network:
    return _net(
        "falcon_network_a", MNIST,
        [Flatten(), Dense(128), ReLU(), Dense(128), ReLU(), Dense(10), ReLU()],
        "Falcon Appendix D Network-A: SecureML's 3-layer FC network 784-128-128-10 'with ReLU "
        "activation after each layer'. " + _FALCON_CODE,
        "mnist", ("falcon",),
        [Stated("params", 118_000, "Falcon App. D: 'around 118K parameters'", 0.01)])


@register("falcon_network_b", ("falcon",))
def _falcon_b() -> Network:
    return _net(
        "falcon_network_b", MNIST,
        [Conv2d(5, 2, 2, 0), ReLU(), Flatten(), Dense(100), ReLU(), Dense(10)],
        "Falcon Appendix D Network-B: Chameleon's network, 1 conv + 2 FC with ReLUs: conv 2x2 "
        "stride 2 with 5 maps -> 980, FC 100, FC 10 (falcon-public 'Sarda' config).",
        "mnist", ("falcon",),
        [Stated("params", 100_000, "Falcon App. D: 'approximately 100K parameters'", 0.01)])


@register("falcon_network_c", ("falcon",))
def _falcon_c() -> Network:
    return _net(
        "falcon_network_c", MNIST,
        [Conv2d(16, 5), MaxPool(2), ReLU(), Conv2d(16, 5), MaxPool(2), ReLU(), Flatten(),
         Dense(100), ReLU(), Dense(10), ReLU()],
        "Falcon Appendix D Network-C: MiniONN's MNIST network, 2 conv (5x5, 16 maps) + 2 FC "
        "(256-100-10) with max-pool (same weights/outputs as minionn_mnist). " + _FALCON_CODE,
        "mnist", ("falcon",),
        [Stated("params", 10_500, "Falcon App. D: 'around 10,500 parameters'", 0.01,
                reason="MiniONN's network has 33,542 parameters (conv 416 + 6,416, FC 25,700 + "
                       "1,010); 10,500 is close to its ReLU count in MiniONN's order (10,340), "
                       "not to any parameter count.")])


@register("falcon_lenet", ("falcon",))
def _falcon_lenet() -> Network:
    return _net(
        "falcon_lenet", MNIST,
        [Conv2d(20, 5), MaxPool(2), ReLU(), Conv2d(50, 5), MaxPool(2), ReLU(), Flatten(),
         Dense(500), ReLU(), Dense(10), ReLU()],
        "Falcon Appendix D LeNet (LeCun et al.; Caffe's LeNet): conv 5x5 20, max-pool, conv 5x5 "
        "50, max-pool, FC 800-500-10 (falcon-public 'LeNet' config). " + _FALCON_CODE,
        "mnist", ("falcon",))


@register("falcon_alexnet_cifar10", ("falcon",))
def _falcon_alexnet_cifar10() -> Network:
    return _net(
        "falcon_alexnet_cifar10", (3, 33, 33),
        [Conv2d(96, 11, 4, 9), MaxPool(3, 2), ReLU(), BatchNorm(), Conv2d(256, 5, 1, 1),
         MaxPool(3, 2), ReLU(), BatchNorm(), Conv2d(384, 3, 1, 1), ReLU(), Conv2d(384, 3, 1, 1),
         ReLU(), Conv2d(256, 3, 1, 1), ReLU(), Flatten(), Dense(256), ReLU(), Dense(256), ReLU(),
         Dense(10), ReLU()],
        "Falcon Appendix D AlexNet on CIFAR-10 with batch-norm, exactly falcon-public's "
        "'AlexNet/CIFAR10' config: the code declares a 33x33x3 input (CIFAR's 32x32 plus one "
        "row/column of zeros) with pad 9, conv 11x11/4 96 -> 11x11, 3x3/2 max-pool, "
        "conv 5x5 256 pad 1, 3x3/2 max-pool -> 1x1, three 3x3 convs, FC 256-256-10. "
        + _FALCON_CODE,
        "cifar10", ("falcon",),
        [Stated("params", 60_000_000, "Falcon App. D: AlexNet 'has about 60 million "
                "parameters'", 0.05,
                reason="60M is ImageNet AlexNet; the CIFAR-10 network Falcon runs has ~2.3M.")])


@register("falcon_vgg16_cifar10", ("falcon",))
def _falcon_vgg16_cifar10() -> Network:
    layers: list[Layer] = []
    for v in _VGG16_CFG:
        if v == "M":
            layers[-1:] = [MaxPool(2), ReLU()]  # falcon-public: conv -> max-pool -> ReLU
        else:
            layers += [Conv2d(v, 3, 1, 1), ReLU()]
    return _net(
        "falcon_vgg16_cifar10", CIFAR,
        layers + [Flatten(), Dense(4096), ReLU(), Dense(4096), ReLU(), Dense(1000), ReLU()],
        "Falcon Appendix D VGG16 on CIFAR-10, exactly falcon-public's 'VGG16/CIFAR10' config: "
        "13 conv 3x3 (no batch-norm), 5 max-pools, FC 512-4096-4096-1000 (sic: 1000 outputs "
        "for 10 classes in the public code). " + _FALCON_CODE,
        "cifar10", ("falcon",),
        [Stated("params", 138_000_000, "Falcon App. D: VGG16 'has about 138 million "
                "parameters'", 0.05,
                reason="138M is ImageNet VGG-16 (224x224, 25088-4096 first FC); on 32x32 the "
                       "first FC is 512-4096 and the network has ~35M.")])


@register("falcon_alexnet_tinyimagenet", ("falcon",))
def _falcon_alexnet_tiny() -> Network:
    return _net(
        "falcon_alexnet_tinyimagenet", (3, 56, 56),
        [Conv2d(64, 7, 1, 3), Conv2d(64, 5, 1, 2), MaxPool(2), ReLU(), BatchNorm(),
         Conv2d(128, 5, 1, 2), MaxPool(2), ReLU(), BatchNorm(), Conv2d(256, 3, 1, 1),
         Conv2d(256, 3, 1, 1), MaxPool(2), ReLU(), Flatten(), Dense(1024), ReLU(), Dense(1024),
         ReLU(), Dense(200), ReLU()],
        "Falcon Appendix D AlexNet on Tiny ImageNet, exactly falcon-public's 'AlexNet/ImageNet' "
        "config (56x56x3 crops, 200 classes; consecutive convs without ReLU as in the code). "
        + _FALCON_CODE,
        "tinyimagenet", ("falcon",))


@register("falcon_vgg16_tinyimagenet", ("falcon",))
def _falcon_vgg16_tiny() -> Network:
    layers: list[Layer] = []
    for v in _VGG16_CFG:
        if v == "M":
            layers[-1:] = [MaxPool(2), ReLU()]
        else:
            layers += [Conv2d(v, 3, 1, 1), ReLU()]
    return _net(
        "falcon_vgg16_tinyimagenet", TINY_IMAGENET,
        layers + [Flatten(), Dense(2048), ReLU(), Dense(2048), ReLU(), Dense(200), ReLU()],
        "Falcon Appendix D VGG16 on Tiny ImageNet, exactly falcon-public's 'VGG16/ImageNet' "
        "config: 64x64x3 input, 13 conv 3x3, 5 max-pools, FC 2048-2048-2048-200. "
        + _FALCON_CODE,
        "tinyimagenet", ("falcon",))

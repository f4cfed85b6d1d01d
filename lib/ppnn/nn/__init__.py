"""Neural-network side of PPNN Lab: layer specs, the network zoo, plaintext forward passes.

``from ppnn import nn`` then ``nn.zoo.get("minionn_mnist").summary()``.
"""

from . import quant, zoo
from .forward import (
    check_params,
    flatten_params,
    fold_batchnorm,
    forward,
    forward_fixed,
    forward_nodes,
    init_params,
    node_params,
    predict,
    unflatten_params,
)
from .layers import (
    COUNT_COLUMNS,
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
from .network import Network, Node, Stated
from .onnx_io import from_onnx, to_onnx
from .quant import (
    apply_pow2,
    dequantize_pow2,
    dequantize_uniform,
    fake_quantize_uniform,
    quantize_pow2,
    quantize_uniform,
    uniform_scale,
)
from .train import Recipe, accuracy, pretrained, pretrained_info, recipe_for, train

__all__ = [
    "BatchNorm", "COUNT_COLUMNS", "ChannelShuffle", "Conv2d", "Dense", "Flatten", "Layer",
    "MaxPool", "MeanPool",
    "Network", "Node", "ReLU", "Recipe", "Residual", "Square", "Stated", "accuracy",
    "check_params", "flatten_params", "fold_batchnorm", "forward", "forward_fixed",
    "forward_nodes", "init_params", "node_params", "predict", "pretrained", "pretrained_info",
    "recipe_for", "train", "unflatten_params", "zoo", "quant", "apply_pow2", "dequantize_pow2",
    "dequantize_uniform", "fake_quantize_uniform", "quantize_pow2", "quantize_uniform",
    "uniform_scale", "from_onnx", "to_onnx",
]

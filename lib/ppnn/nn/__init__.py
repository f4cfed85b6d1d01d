"""Neural-network side of PPNN Lab: layer specs, the network zoo, plaintext forward passes.

``from ppnn import nn`` then ``nn.zoo.get("minionn_mnist").summary()``.
"""

from . import zoo
from .layers import (
    COUNT_COLUMNS,
    BatchNorm,
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

__all__ = [
    "BatchNorm", "COUNT_COLUMNS", "Conv2d", "Dense", "Flatten", "Layer", "MaxPool", "MeanPool",
    "Network", "Node", "ReLU", "Residual", "Square", "Stated", "zoo",
]

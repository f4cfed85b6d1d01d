"""Rewrite a network into the equivalent form a protocol family compiles.

Families differ in the layer orders they accept: Delphi + GC, GAZELLE / GALA + GC and SwaNN
evaluate "linear -> activation [-> max-pool]" as one nonlinear step and have no batch-norm
of their own. :func:`canonicalize` rewrites what can be rewritten *without changing the
function the network computes*:

* a BatchNorm right after a Conv2d / Dense is folded into it (:func:`~.forward.fold_batchnorm`,
  inference);
* ``MaxPool -> ReLU`` becomes ``ReLU -> MaxPool``: ReLU is monotone, so the maximum of the
  rectified window equals the rectified maximum (Falcon's networks and LeNet-style exports
  pool first).

Residual networks are rewritten the same way: batch-norms inside a block's body and
shortcut fold into the convolution before them (the block itself stays: each family adds its
two branches its own way).

Every rewrite is returned as a sentence, so a plan can say what it changed. Anything else
(a batch-norm after an activation, ...) is left for the family to accept or refuse by name.
"""

from __future__ import annotations

from dataclasses import replace

from .forward import check_params, fold_batchnorm
from .layers import BatchNorm, MaxPool, ReLU
from .network import Network

__all__ = ["canonicalize"]


def canonicalize(net: Network, params, fold_bn: bool = True,
                 relu_before_maxpool: bool = True) -> tuple[Network, list, list[str]]:
    """``(network, params, rewrites)``: an equivalent network (see the module docstring);
    the forward pass of the result equals the input's (up to float rounding of
    the folded batch-norm)."""
    check_params(net, params)
    notes: list[str] = []

    def n_bn(n: Network) -> int:
        return sum(isinstance(node.layer, BatchNorm) for node in n.leaves())

    if fold_bn and n_bn(net):
        before = n_bn(net)
        net, params = fold_batchnorm(net, params)
        after = n_bn(net)
        if before > after:
            notes.append(f"folded {before - after} batch-norm layer(s) into the preceding "
                         "linear layer")
    layers, ps = list(net.layers), [_copy(p) for p in params]
    names = net.layer_names
    if relu_before_maxpool:
        i = 0
        while i + 1 < len(layers):
            if isinstance(layers[i], MaxPool) and isinstance(layers[i + 1], ReLU):
                layers[i], layers[i + 1] = layers[i + 1], layers[i]
                ps[i], ps[i + 1] = ps[i + 1], ps[i]
                notes.append(f"{names[i]} -> {names[i + 1]} evaluated as ReLU then max-pool "
                             "(equal: ReLU is monotone)")
                i += 2
                continue
            i += 1
    if notes:
        net = replace(net, layers=tuple(layers), stated=(),
                      source=net.source + " [rewritten: " + "; ".join(notes) + "]")
    return net, ps, notes


def _copy(p: dict) -> dict:
    """A layer's parameters, copied down to the residual branches' lists."""
    return {k: ([_copy(q) for q in v] if isinstance(v, list) else v) for k, v in p.items()}

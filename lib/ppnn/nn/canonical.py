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

Every rewrite is returned as a sentence, so a plan can say what it changed. Anything else
(a batch-norm after an activation, ...) is left for the family to accept or refuse by name.
"""

from __future__ import annotations

from dataclasses import replace

from .forward import check_params, fold_batchnorm
from .layers import BatchNorm, MaxPool, ReLU, Residual
from .network import Network

__all__ = ["canonicalize"]


def canonicalize(net: Network, params, fold_bn: bool = True,
                 relu_before_maxpool: bool = True) -> tuple[Network, list, list[str]]:
    """``(network, params, rewrites)``: an equivalent sequential network (see the module
    docstring); the forward pass of the result equals the input's (up to float rounding of
    the folded batch-norm)."""
    check_params(net, params)
    notes: list[str] = []
    if any(isinstance(layer, Residual) for layer in net.layers):
        return net, [dict(p) for p in params], notes
    if fold_bn and any(isinstance(layer, BatchNorm) for layer in net.layers):
        before = sum(isinstance(layer, BatchNorm) for layer in net.layers)
        net, params = fold_batchnorm(net, params)
        after = sum(isinstance(layer, BatchNorm) for layer in net.layers)
        if before > after:
            notes.append(f"folded {before - after} batch-norm layer(s) into the preceding "
                         "linear layer")
    layers, ps = list(net.layers), [dict(p) for p in params]
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

"""A network: an input shape, a sequence of layer specs, and where the definition comes from.

:class:`Network` is immutable. It infers every shape when built (a bad architecture raises
``ValueError`` naming the layer), names its layers (``conv1``, ``relu1``, ``block2.body.conv1``
... unless a layer carries its own ``name``), and counts ReLUs, MACs and parameters per layer
(:meth:`Network.summary`). Weights live elsewhere (:mod:`ppnn.nn.forward`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pandas as pd

from .layers import COUNT_COLUMNS, Layer, Residual, Shape

__all__ = ["Network", "Node", "Stated"]


@dataclass(frozen=True)
class Stated:
    """A count a paper states for a network, e.g. Tabula Table 5's ReLU column.

    ``quantity`` is a column of :meth:`Network.summary` (``relus``, ``macs``, ``params``,
    ``comparisons``, ``squares``). The computed count matches when ``|ours/value - 1| <= rtol``
    (``rtol`` reflects the printed rounding, e.g. "303K"). ``reason`` is set when we know our
    definition does *not* reproduce the stated value and why (an explicit expected difference).
    """

    quantity: str
    value: float
    where: str
    rtol: float = 0.005
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.quantity not in COUNT_COLUMNS:
            raise ValueError(f"Stated.quantity must be one of {COUNT_COLUMNS}, got {self.quantity}")

    def matches(self, ours: float) -> bool:
        return abs(ours / self.value - 1.0) <= self.rtol


@dataclass(frozen=True)
class Node:
    """One row of a flattened network: a leaf layer or a residual addition (``layer=None``)."""

    index: int
    name: str
    kind: str
    layer: Layer | None
    in_shape: Shape
    out_shape: Shape
    counts: dict[str, int]
    depth: int = 0


def _auto_names(layers: tuple[Layer, ...]) -> list[str]:
    seen: dict[str, int] = {}
    names = []
    for layer in layers:
        if layer.name:
            names.append(layer.name)
            continue
        seen[layer.prefix] = seen.get(layer.prefix, 0) + 1
        names.append(f"{layer.prefix}{seen[layer.prefix]}")
    if len(set(names)) != len(names):
        raise ValueError(f"layer names must be unique within a sequence, got {names}")
    return names


@dataclass(frozen=True)
class Network:
    """A feed-forward network specification.

    Parameters
    ----------
    name : str
        Identifier (the zoo key).
    input_shape : tuple (C, H, W) or (n,)
        Shape of one input sample (no batch axis).
    layers : sequence of layer specs
    source : str
        Where the definition comes from (paper section / table / public code) and every
        assumption made where the paper is silent.
    dataset : str
        Dataset the shapes correspond to ("mnist", "cifar10", ...).
    papers : tuple of str
        Papers of this project that evaluate the network.
    stated : tuple of :class:`Stated`
        Counts the papers state for it (checked by the tests).
    """

    name: str
    input_shape: Shape
    layers: tuple[Layer, ...]
    source: str = ""
    dataset: str = ""
    papers: tuple[str, ...] = ()
    stated: tuple[Stated, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        shape = tuple(self.input_shape)
        if len(shape) not in (1, 3) or any(
            isinstance(s, bool) or not isinstance(s, int) or s < 1 for s in shape
        ):
            raise ValueError(
                f"Network.input_shape must be (C, H, W) or (n,) of positive ints, got {shape}"
            )
        object.__setattr__(self, "input_shape", shape)
        object.__setattr__(self, "layers", tuple(self.layers))
        object.__setattr__(self, "papers", tuple(self.papers))
        object.__setattr__(self, "stated", tuple(self.stated))
        for i, layer in enumerate(self.layers):
            if not isinstance(layer, Layer):
                raise TypeError(f"Network.layers[{i}] must be a layer spec, got {layer!r}")
        self.nodes()  # shape inference: raises on the first inconsistent layer

    # -- structure ---------------------------------------------------------------------------
    @property
    def layer_names(self) -> list[str]:
        """Names of the top-level layers (same order as ``layers``)."""
        return _auto_names(self.layers)

    def shapes(self) -> list[Shape]:
        """``[input_shape, shape after layer 1, ..., output shape]`` (top-level layers)."""
        out = [self.input_shape]
        for i, layer in enumerate(self.layers):
            try:
                out.append(layer.out_shape(out[-1]))
            except ValueError as e:
                raise ValueError(f"{self.name}: layer {i} ({layer.kind}): {e}") from None
        return out

    @property
    def output_shape(self) -> Shape:
        return self.shapes()[-1]

    def nodes(self) -> list[Node]:
        """Flattened rows: every leaf layer (residual bodies and shortcuts expanded) and one
        ``Add`` row per residual block, in evaluation order."""
        rows: list[Node] = []
        self._walk(self.layers, self.input_shape, "", 0, rows)
        return rows

    def _walk(self, layers, shape, prefix, depth, rows) -> Shape:
        for name, layer in zip(_auto_names(layers), layers):
            full = f"{prefix}{name}"
            if isinstance(layer, Residual):
                out_b = self._walk(layer.body, shape, f"{full}.body.", depth + 1, rows)
                self._walk(layer.shortcut, shape, f"{full}.shortcut.", depth + 1, rows)
                try:
                    out = layer.out_shape(shape)
                except ValueError as e:
                    raise ValueError(f"{self.name}: {full}: {e}") from None
                kind = "Add" if layer.merge == "add" else "Concat"
                rows.append(Node(len(rows), f"{full}.{kind.lower()}", kind, None, out_b, out,
                                 dict.fromkeys(COUNT_COLUMNS, 0), depth))
                shape = out
                continue
            try:
                out = layer.out_shape(shape)
                counts = layer.counts(shape)
            except ValueError as e:
                raise ValueError(f"{self.name}: layer {full} ({layer.kind}): {e}") from None
            rows.append(Node(len(rows), full, layer.kind, layer, shape, out, counts, depth))
            shape = out
        return shape

    def leaves(self) -> Iterator[Node]:
        """Leaf layers only (no ``Add`` rows)."""
        return (n for n in self.nodes() if n.layer is not None)

    # -- counts ------------------------------------------------------------------------------
    def summary(self) -> pd.DataFrame:
        """One row per flattened layer: index, name, kind, in_shape, out_shape, relus, macs,
        params, comparisons, squares (plus the totals in ``DataFrame.attrs['totals']``)."""
        recs = [{"index": n.index, "name": n.name, "kind": n.kind, "in_shape": n.in_shape,
                 "out_shape": n.out_shape, **n.counts} for n in self.nodes()]
        df = pd.DataFrame(recs, columns=["index", "name", "kind", "in_shape", "out_shape",
                                         *COUNT_COLUMNS])
        for c in COUNT_COLUMNS:
            df[c] = df[c].astype("int64")
        df.attrs["totals"] = self.totals()
        df.attrs["network"] = self.name
        return df

    def totals(self) -> dict[str, int]:
        tot = dict.fromkeys(COUNT_COLUMNS, 0)
        for n in self.nodes():
            for c in COUNT_COLUMNS:
                tot[c] += int(n.counts[c])
        return tot

    def count(self, quantity: str) -> int:
        if quantity not in COUNT_COLUMNS:
            raise ValueError(f"quantity must be one of {COUNT_COLUMNS}, got {quantity!r}")
        return self.totals()[quantity]

    @property
    def n_relus(self) -> int:
        return self.count("relus")

    @property
    def n_macs(self) -> int:
        return self.count("macs")

    @property
    def n_params(self) -> int:
        return self.count("params")

    def stated_check(self) -> pd.DataFrame:
        """Stated counts vs ours: ``quantity, stated, ours, ratio, where, status, reason``."""
        recs = []
        for s in self.stated:
            ours = self.count(s.quantity)
            ok = s.matches(ours)
            status = "match" if ok else ("documented difference" if s.reason else "MISMATCH")
            recs.append({"network": self.name, "quantity": s.quantity, "stated": s.value,
                         "ours": ours, "ratio": ours / s.value, "where": s.where,
                         "status": status, "reason": s.reason or ""})
        return pd.DataFrame(recs, columns=["network", "quantity", "stated", "ours", "ratio",
                                           "where", "status", "reason"])

    def __repr__(self) -> str:
        return (f"Network({self.name!r}, input={self.input_shape}, layers={len(self.layers)}, "
                f"relus={self.n_relus}, params={self.n_params})")

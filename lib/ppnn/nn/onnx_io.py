"""ONNX import and export of network specs ("bring your own network").

``from_onnx(path, fold_bn=False)``: an ONNX chain of layers and residual blocks (e.g. an
exported ``nn.Sequential`` or ResNet) as a :class:`~ppnn.nn.network.Network` and parameters;
``to_onnx(net, params, path)`` writes any zoo network. Ops (both ways unless marked):

====================================  ========================================================
ONNX                                  ppnn
====================================  ========================================================
Conv (2-D, square kernel, equal       Conv2d(out, k, stride, padding, bias, groups);
pads, dilations 1, any group)         ``W`` (Cout, Cin/group, k, k) and ``B`` as ``W``, ``b``
Gemm (alpha = beta = 1, transA = 0)   Dense; ``W = B`` if transB = 1 else ``B.T``, ``b = C``
MatMul (+ Add of a constant)          Dense; ``W = B.T``, ``b`` = the Add's constant (import)
Relu / Mul(x, x)                      ReLU / Square
MaxPool (ceil_mode 0)                 MaxPool(k, stride, padding) (padding is -inf in both)
AveragePool, count_include_pad = 1    MeanPool(k, stride, padding): the divisor is always
(or any when pads are 0)              ``k*k``, ONNX's average with count_include_pad = 1
AveragePool + Mul by ``k*k``          MeanPool(..., scaled=True) (the window sum)
GlobalAveragePool (square input)      MeanPool(H) (import)
BatchNormalization (inference)        BatchNorm(eps=epsilon); ``scale, B, input_mean,
                                      input_var`` are ``gamma, beta, mean, var``
Flatten (axis 1), Reshape to          Flatten
(N, -1) / (0, -1) / (1, -1)
Add of two branches (identity or       Residual(body, shortcut): a tensor read by two nodes
projection shortcut)                  opens the block, the Add of the two branches closes it
====================================  ========================================================

Anything else (Concat, run-time shapes, branches not meeting in one Add) raises ``ValueError``
naming the node. Identity and Dropout are skipped; ``auto_pad`` and ``ceil_mode=1`` are taken
where they equal explicit padding; ``epsilon`` reads back as its float32's shortest decimal.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import InvalidType, ModelFileError
from ..paths import atomic_write
from . import onnx_checks
from .forward import check_params, fold_batchnorm
from .layers import (
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
from .network import Network, _auto_names

__all__ = ["from_onnx", "to_onnx"]

SUPPORTED_OPS = ("AveragePool", "BatchNormalization", "Constant", "Conv", "Dropout", "Flatten",
                 "Gemm", "GlobalAveragePool", "Identity", "MatMul (+ Add bias)", "MaxPool",
                 "Mul (x*x)", "Relu", "Reshape (to (N, -1))")
_OPS = {op.split()[0] for op in SUPPORTED_OPS} | {"Add"}
_GUESS_DATASET = {(1, 28, 28): "mnist"}
_HINTS = {
    "Shape": " (a flatten computed from the input's Shape, as x.view(x.size(0), -1) exports: "
             "use torch.flatten(x, 1) or nn.Flatten, which export as an ONNX Flatten)",
    "Softmax": " (drop the final softmax before export: ppnn networks output logits and the "
               "arg-max is unchanged)",
    "Concat": " (concatenating branches, as DenseNet / Inception blocks do, is out of scope: "
              "ppnn imports chains and residual blocks whose branches are added)",
    "Transpose": " (attention-style reshuffles are out of scope)",
}


def _onnx():
    try:
        import onnx
    except ImportError as e:  # pragma: no cover - onnx is a dependency
        raise ImportError("ppnn.nn.from_onnx / to_onnx need the 'onnx' package "
                          "(pip install onnx==1.23.2)") from e
    return onnx


# -- import ----------------------------------------------------------------------------------
class _Node:
    """An ONNX node with its attributes decoded and errors that name it."""

    def __init__(self, proto, index: int, consts: dict):
        from onnx import helper

        self.proto, self.op = proto, proto.op_type
        self.label = proto.name or f"#{index}"
        self.attrs = {a.name: helper.get_attribute_value(a) for a in proto.attribute}
        for k, v in self.attrs.items():
            if isinstance(v, bytes):
                self.attrs[k] = v.decode()
        self.consts = consts

    def error(self, msg: str) -> ValueError:
        return _out_of_scope(self, msg)

    def dynamic(self) -> list[str]:
        """The computed tensors it reads (not initializers / constants), each once."""
        return list(dict.fromkeys(t for t in self.proto.input if t and t not in self.consts))

    def has_input(self, i: int) -> bool:
        return len(self.proto.input) > i and self.proto.input[i] != ""

    def const(self, i: int, what: str) -> np.ndarray:
        name = self.proto.input[i] if self.has_input(i) else ""
        if name not in self.consts:
            raise self.error(f"input {i} ({what}) must be an initializer or a Constant, "
                             f"got tensor {name!r}")
        return self.consts[name]

    def attr(self, key: str, default=None):
        return self.attrs.get(key, default)


def _weights(a: np.ndarray) -> np.ndarray:
    """A fresh contiguous float array (float32 / float64 kept, other types to float64)."""
    a = np.asarray(a)
    if a.dtype not in (np.float32, np.float64):
        a = a.astype(np.float64)
    return np.ascontiguousarray(a).copy()


def _float32_decimal(v: float) -> float:
    """The shortest decimal that has ONNX's float32 value ``v``."""
    return float(str(np.float32(v)))


def _constant_value(node: _Node) -> np.ndarray:
    from onnx import numpy_helper

    for key, v in node.attrs.items():
        if key == "value":
            return numpy_helper.to_array(v)
        if key in ("value_float", "value_int"):
            return np.asarray(v)
        if key in ("value_floats", "value_ints"):
            return np.asarray(list(v))
    raise node.error(f"unsupported Constant attribute(s) {sorted(node.attrs)}")


def _input_shape(vi) -> tuple[int, ...]:
    from onnx import TensorProto

    if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
        raise ValueError(f"ONNX graph input {vi.name!r} has no tensor shape; ppnn needs "
                         "(N, C, H, W) or (N, n) with static C, H, W / n")
    tt = vi.type.tensor_type
    floats = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16)
    if tt.elem_type not in floats:
        raise ValueError(f"ONNX graph input {vi.name!r} must be a float tensor, got "
                         f"{TensorProto.DataType.Name(tt.elem_type)}")
    dims = list(tt.shape.dim)
    shown = tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
                  for d in dims)
    if len(dims) not in (2, 4):
        raise ValueError(f"ONNX graph input {vi.name!r} has shape {shown}; ppnn needs "
                         "(N, C, H, W) or (N, n)")
    for i, d in enumerate(dims[1:], 1):
        if not d.HasField("dim_value") or d.dim_value < 1:
            raise ValueError(f"ONNX graph input {vi.name!r} has shape {shown}: dimension {i} "
                             "must be static (only the batch dimension may be symbolic)")
    return tuple(int(d.dim_value) for d in dims[1:])


class _Block:
    """A residual block of the graph: two chains from one tensor to one ``Add`` (the body is
    the chain into the Add's first input, unless that one is the identity)."""

    def __init__(self, body: list, shortcut: list, add: _Node):
        self.body, self.shortcut, self.add = body, shortcut, add


def _out_of_scope(node: _Node, reason: str | None = None) -> ValueError:
    """The one error for a graph (or a node of it) ppnn does not import: it names the node,
    its op and the reason (``None``: the op itself is not supported, with the list of those
    that are and a hint where one helps)."""
    if reason is None:
        proto = node.proto
        op = f"{proto.domain}.{node.op}" if proto.domain not in ("", "ai.onnx") else node.op
        return ValueError(f"unsupported ONNX op {op!r} at node {node.label!r}: supported ops "
                          f"are {', '.join(SUPPORTED_OPS)}{_HINTS.get(op, '')}")
    return ValueError(f"ONNX node {node.label!r} ({node.op}): {reason}")


def _graph(graph, consts: dict) -> list:
    """The graph's nodes as ppnn's structure: a chain from the input to the output in which a
    tensor read by two nodes opens a residual block that an ``Add`` of the two branches closes
    (:class:`_Block`, nested blocks allowed). ``Constant`` nodes go to ``consts``; anything
    else (an unsupported op, a merge other than a two-branch ``Add``, nodes off the path from
    the input to the output) raises ``ValueError`` naming the node and its op."""
    inputs = [vi for vi in graph.input if vi.name not in consts]
    if len(inputs) != 1:
        raise ValueError(f"ONNX graph must have exactly one input, got {len(inputs)}: "
                         f"{[vi.name for vi in inputs]}")
    if len(graph.output) != 1:
        raise ValueError(f"ONNX graph must have exactly one output, got {len(graph.output)}: "
                         f"{[vi.name for vi in graph.output]}")
    nodes: list[_Node] = []
    for i, proto in enumerate(graph.node):
        node = _Node(proto, i, consts)
        if proto.domain not in ("", "ai.onnx") or node.op not in _OPS:
            raise _out_of_scope(node)
        if node.op == "Constant":
            consts[proto.output[0]] = _constant_value(node)
            continue
        nodes.append(node)
    readers: dict[str, list[_Node]] = {}
    for node in nodes:
        dyn = node.dynamic()
        if not dyn:
            raise _out_of_scope(node, "reads only constants, not the previous layer's output")
        for t in dyn:
            readers.setdefault(t, []).append(node)
    walk = _Walk(readers, graph.output[0].name)
    items, _, merge = walk.chain(inputs[0].name)
    if merge is not None:
        raise _out_of_scope(merge, f"adds {merge.dynamic()} but no branch point opens the "
                            "block (a tensor added to itself?)")
    missed = [n for n in nodes if id(n) not in walk.seen]
    if missed:
        raise _out_of_scope(missed[0], "is not on the path from the graph input to its "
                            "output (ppnn imports one chain of layers and residual blocks)")
    return items


class _Walk:
    """Walks the graph from a tensor along its readers (see :func:`_graph`)."""

    def __init__(self, readers: dict, output: str):
        self.readers, self.output, self.seen = readers, output, set()

    @staticmethod
    def merges(node: _Node) -> bool:
        return node.op == "Add" and len(node.dynamic()) == 2

    def chain(self, t: str, first: _Node | None = None) -> tuple[list, str, _Node | None]:
        """Items from tensor ``t`` (through ``first``, one of its readers, if given) up to the
        graph output or to the Add that merges this branch: ``(items, last tensor, Add or
        None)``."""
        items: list = []
        prev: _Node | None = None
        while True:
            rs = [first] if first is not None else self.readers.get(t, [])
            first = None
            if t == self.output and rs:
                raise _out_of_scope(rs[0], f"reads the graph output {t!r}: the output must be "
                                    "the last layer's")
            if not rs:
                if t == self.output:
                    return items, t, None
                if prev is None:
                    raise ValueError(f"ONNX tensor {t!r} is read by no node and is not the "
                                     f"graph output {self.output!r}")
                raise _out_of_scope(prev, f"its output {t!r} is read by no node and is not "
                                    f"the graph output {self.output!r}")
            if len(rs) == 1:
                node = rs[0]
                if self.merges(node):
                    return items, t, node
                if node.dynamic() != [t]:
                    raise _out_of_scope(node, f"reads {node.dynamic()}: ppnn imports a chain of "
                                        "layers in which a node reads one computed tensor "
                                        "(attention-style products are out of scope)")
                self.seen.add(id(node))
                items.append(node)
                t, prev = node.proto.output[0], node
                continue
            if len(rs) > 2:
                raise ValueError(f"ONNX tensor {t!r} feeds {len(rs)} nodes "
                                 f"({', '.join(n.label for n in rs)}): ppnn imports residual "
                                 "blocks of two branches, not a wider branching graph")
            block = self.block(t, rs)
            items.append(block)
            t, prev = block.add.proto.output[0], block.add

    def block(self, t: str, rs: list) -> _Block:
        """The residual block opened by tensor ``t`` with readers ``rs`` (two nodes)."""
        ends = []  # (items, tensor that reaches the Add, the Add)
        for r in rs:
            if self.merges(r):  # the identity shortcut: the Add reads t itself
                ends.append(([], t, r))
            else:
                ends.append(self.chain(t, r))
        adds = {id(e[2]) for e in ends}
        add = ends[0][2] or ends[1][2]
        if None in (ends[0][2], ends[1][2]) or len(adds) != 1:
            got = ", ".join(e[2].label if e[2] is not None else "the graph output" for e in ends)
            raise _out_of_scope(rs[1], f"tensor {t!r} opens two branches ({rs[0].label}, "
                                f"{rs[1].label}) that do not meet in one Add (they end at "
                                f"{got}): ppnn imports residual blocks, not a branching graph")
        if sorted(add.dynamic()) != sorted(e[1] for e in ends):
            raise _out_of_scope(add, f"adds {add.dynamic()}, not the ends of the two branches "
                                f"opened by {t!r}")
        self.seen.add(id(add))
        first = add.dynamic()[0]
        body, short = (ends if ends[0][1] == first else ends[::-1])
        if not body[0]:
            body, short = short, body
        if not body[0]:
            raise _out_of_scope(add, f"adds {t!r} to itself (2x is not a residual block)")
        return _Block(body[0], short[0], add)


def _window(node: _Node, in_hw: tuple[int, int], kernel) -> tuple[int, int, int]:
    """``(kernel, stride, padding)`` of a Conv / pooling node, or a clear error."""
    kernel = tuple(int(k) for k in kernel)
    if len(kernel) != 2:
        raise node.error(f"only 2-D windows are supported, got kernel {kernel}")
    if kernel[0] != kernel[1]:
        raise node.error(f"non-square kernel {kernel[0]}x{kernel[1]}: ppnn layers use square "
                         "kernels")
    k = kernel[0]
    strides = [int(s) for s in node.attr("strides", [1, 1])]
    if len(set(strides)) != 1:
        raise node.error(f"unequal strides {strides}: ppnn layers use one stride")
    dil = [int(d) for d in node.attr("dilations", [1, 1])]
    if any(d != 1 for d in dil):
        raise node.error(f"dilations {dil} are not supported (only 1)")
    s = strides[0]
    auto = node.attr("auto_pad", "NOTSET")
    if auto == "NOTSET":
        pads = [int(p) for p in node.attr("pads", [0, 0, 0, 0])]
    elif auto == "VALID":
        pads = [0, 0, 0, 0]
    elif auto in ("SAME_UPPER", "SAME_LOWER"):
        tot = [max((-(-n // s) - 1) * s + k - n, 0) for n in in_hw]
        pads = [t // 2 for t in tot] + [t - t // 2 for t in tot]
    else:
        raise node.error(f"unknown auto_pad {auto!r}")
    if len(set(pads)) != 1:
        raise node.error(f"asymmetric pads {pads} (begin H, W, end H, W): ppnn pads every side "
                         "equally")
    return k, s, pads[0]


def _flat_bias(node: _Node, c: np.ndarray, out: int) -> np.ndarray:
    c = np.asarray(c)
    if c.size == 1:
        return np.full(out, c.reshape(()), dtype=_weights(c).dtype)
    if c.size == out and (c.ndim == 1 or (c.ndim == 2 and c.shape[0] == 1)):
        return _weights(c.reshape(out))
    raise node.error(f"bias of shape {c.shape} does not broadcast to ({out},) per output")


def _convert(chain: list, shape: tuple[int, ...]
             ) -> tuple[list[Layer], list[dict], tuple[int, ...]]:
    """Layers, parameters and output shape of a chain of nodes and blocks from ``shape``."""
    layers: list[Layer] = []
    params: list[dict] = []
    i = 0
    while i < len(chain):
        node, nxt = chain[i], chain[i + 1] if i + 1 < len(chain) else None
        nxt = nxt if isinstance(nxt, _Node) else None
        i += 1
        if isinstance(node, _Block):
            body, pb, _ = _convert(node.body, shape)
            short, ps, _ = _convert(node.shortcut, shape)
            if not body:
                body, pb, short, ps = short, ps, body, pb
            if not body:
                raise _out_of_scope(node.add, "adds two branches that hold no layer (x + x)")
            layer: Layer = Residual(tuple(body), tuple(short))
            try:
                shape = layer.out_shape(shape)
            except ValueError as e:
                raise node.add.error(str(e)) from None
            layers.append(layer)
            params.append({"body": pb, "shortcut": ps})
            continue
        op, p = node.op, {}
        if op in ("Identity", "Dropout"):
            continue
        if op in ("Conv", "MaxPool", "AveragePool", "GlobalAveragePool") and len(shape) != 3:
            raise node.error(f"needs an image input (N, C, H, W), got (N, {shape})")
        if op == "Conv":
            W = _weights(node.const(1, "weights"))
            if W.ndim != 4:
                raise node.error(f"only 2-D convolutions are supported, got weights {W.shape}")
            if tuple(node.attr("kernel_shape", W.shape[2:])) != W.shape[2:]:
                raise node.error(f"kernel_shape {node.attr('kernel_shape')} differs from the "
                                 f"weights {W.shape}")
            k, s, pad = _window(node, shape[1:], W.shape[2:])
            group = int(node.attr("group", 1))
            if W.shape[1] * group != shape[0]:
                raise node.error(f"weights {W.shape} with group={group} do not fit "
                                 f"{shape[0]} input channels")
            bias = node.has_input(2)
            layer = Conv2d(W.shape[0], k, s, pad, bias=bias, groups=group)
            p = {"W": W} | ({"b": _flat_bias(node, node.const(2, "bias"), W.shape[0])}
                            if bias else {})
        elif op == "Gemm":
            if node.attr("transA", 0):
                raise node.error("transA=1 is not supported")
            alpha, beta = node.attr("alpha", 1.0), node.attr("beta", 1.0)
            if alpha != 1.0 or (node.has_input(2) and beta != 1.0):
                raise node.error(f"alpha={alpha}, beta={beta} are not supported (only 1)")
            B = _weights(node.const(1, "weights"))
            if B.ndim != 2:
                raise node.error(f"weights must be a matrix, got shape {B.shape}")
            W = B if node.attr("transB", 0) else np.ascontiguousarray(B.T)
            _check_in_features(node, W, shape)
            layer = Dense(W.shape[0], bias=node.has_input(2))
            p = {"W": W} | ({"b": _flat_bias(node, node.const(2, "bias"), W.shape[0])}
                            if node.has_input(2) else {})
        elif op == "MatMul":
            if node.proto.input[0] in node.consts:
                raise node.error("only x @ B with a constant matrix B is supported")
            B = _weights(node.const(1, "weights"))
            if B.ndim != 2:
                raise node.error(f"weights must be a matrix, got shape {B.shape}")
            W = np.ascontiguousarray(B.T)
            _check_in_features(node, W, shape)
            p = {"W": W}
            if nxt is not None and nxt.op == "Add":
                j = 1 if nxt.proto.input[0] == node.proto.output[0] else 0
                p["b"] = _flat_bias(nxt, nxt.const(j, "bias"), W.shape[0])
                i += 1
            layer = Dense(W.shape[0], bias="b" in p)
        elif op == "Add":
            raise _out_of_scope(node, "Add is supported only as the bias after a MatMul or as "
                                "the Add of a residual block's two branches")
        elif op == "Relu":
            layer = ReLU()
        elif op == "Mul":
            if node.proto.input[0] != node.proto.input[1]:
                raise node.error("Mul is supported only as x * x (Square) or as the k*k "
                                 "scaling right after an AveragePool")
            layer = Square()
        elif op == "MaxPool":
            k, s, pad = _window(node, shape[1:], node.attr("kernel_shape", ()))
            _check_ceil(node, shape, k, s, pad)
            layer = MaxPool(k, None if s == k else s, pad)
        elif op == "AveragePool":
            k, s, pad = _window(node, shape[1:], node.attr("kernel_shape", ()))
            _check_ceil(node, shape, k, s, pad)
            if pad and not node.attr("count_include_pad", 0):
                raise node.error(
                    "pads with count_include_pad=0 divide a border window by the number of "
                    "non-padding elements; ppnn's MeanPool always divides by k*k (zero padding "
                    "counted): export with count_include_pad=1")
            scaled = False
            if nxt is not None and nxt.op == "Mul" and nxt.proto.input[0] != nxt.proto.input[1]:
                j = 1 if nxt.proto.input[0] == node.proto.output[0] else 0
                c = nxt.const(j, "scale")
                if c.size != 1 or float(c.reshape(())) != k * k:
                    raise nxt.error(f"after an AveragePool only a multiplication by k*k = {k * k} "
                                    f"(a scaled mean-pool) is supported, got {c.ravel()[:4]}")
                scaled, i = True, i + 1
            layer = MeanPool(k, None if s == k else s, pad, scaled=scaled)
        elif op == "GlobalAveragePool":
            if shape[1] != shape[2]:
                raise node.error(f"needs a square input, got {shape[1]}x{shape[2]}")
            layer = MeanPool(shape[1])
        elif op == "BatchNormalization":
            if node.attr("training_mode", 0):
                raise node.error("training_mode=1 is not supported (export in eval mode)")
            if not node.attr("spatial", 1):
                raise node.error("spatial=0 is not supported")
            c = shape[0]
            p = {key: _weights(node.const(j, key)) for j, key in
                 enumerate(("gamma", "beta", "mean", "var"), 1)}
            for key, v in p.items():
                if v.shape != (c,):
                    raise node.error(f"{key} has shape {v.shape}, expected ({c},)")
            layer = BatchNorm(_float32_decimal(node.attr("epsilon", 1e-5)))
        elif op == "Flatten":
            axis = int(node.attr("axis", 1))
            if (axis + len(shape) + 1 if axis < 0 else axis) != 1:
                raise node.error(f"axis={axis} is not supported (only 1: (N, -1))")
            layer = Flatten()
        elif op == "Reshape":
            target = [int(t) for t in np.asarray(node.const(1, "shape")).ravel()]
            n = int(np.prod(shape))
            zero = 0 if not node.attr("allowzero", 0) else None
            ok = len(target) == 2 and (
                (target[0] in (zero, 1) and target[1] in (-1, n))
                or (target[0] == -1 and target[1] == n))
            if not ok:
                raise node.error(f"Reshape to {target} is not supported: only a flatten to "
                                 "(N, -1), (0, -1) or (1, -1)")
            layer = Flatten()
        else:  # pragma: no cover - _graph lets only _OPS through
            raise node.error("unsupported")
        try:
            shape = layer.out_shape(shape)
        except ValueError as e:
            raise node.error(str(e)) from None
        layers.append(layer)
        params.append(p)
    return layers, params, shape


def _check_in_features(node: _Node, W: np.ndarray, shape) -> None:
    """A matrix layer's weights must take what the previous layer outputs (an image input
    is refused by the layer's own shape check)."""
    if len(shape) == 1 and W.shape[1] != shape[0]:
        raise node.error(f"weights of shape {W.shape} take {W.shape[1]} inputs, but the "
                         f"previous layer outputs {shape[0]}")


def _check_ceil(node: _Node, shape, k: int, s: int, pad: int) -> None:
    if node.attr("ceil_mode", 0) and any((n + 2 * pad - k) % s for n in shape[1:]):
        raise node.error("ceil_mode=1 gives a different output size than ppnn's floor; "
                         "export with ceil_mode=0")


def from_onnx(model, name: str | None = None, fold_bn: bool = False) -> tuple[Network, list]:
    """Import an ONNX model (a chain of layers and residual blocks) as ``(net, params)``.

    Parameters
    ----------
    model : str, os.PathLike or onnx.ModelProto
        A ``.onnx`` file or a loaded model: one input ``(N, C, H, W)`` or ``(N, n)`` (static
        except the batch dimension), one chain of supported ops in which a tensor read by two
        nodes opens a residual block and the ``Add`` of its two branches closes it (see the
        module docstring).
    name : str, optional
        Network name (default: the file's stem, else the graph's name).
    fold_bn : bool
        Fold every batch-norm that follows a convolution or dense layer into its weights and
        bias (:func:`ppnn.nn.fold_batchnorm`, inference); default False: batch-norms import
        as :class:`~ppnn.nn.layers.BatchNorm` layers (an exported network imports equal).

    Returns
    -------
    net : Network
        ``source`` says where it was imported from (file, producer, opset); ``dataset`` is
        guessed from the input shape only when unambiguous (1x28x28 is MNIST), else "".
    params : list of dict
        Parameters in the format of :func:`ppnn.nn.forward` (checked by ``check_params``).

    Raises
    ------
    ppnn.errors.ModelFileError
        (a ``ValueError``) naming the file: not an ONNX model (random bytes, text, empty or
        truncated), a tensor whose data does not match its declared shape or is too large,
        external data outside the model's folder or through a symbolic link (see
        :mod:`.onnx_checks`), NaN weights; unsupported op (naming the op and node),
        branches that are not a residual block, non-square kernels, asymmetric pads,
        dilations other than 1, several inputs, a dynamic or bad input shape, mismatched
        weight shapes.
    """
    if not isinstance(fold_bn, bool):
        raise TypeError(f"fold_bn must be a bool, got {type(fold_bn).__name__}")
    onnx = _onnx()
    from onnx import numpy_helper

    path = None
    if isinstance(model, str | os.PathLike):
        path = Path(model)
        model = onnx_checks.read_model(path)
    elif isinstance(model, onnx.ModelProto):
        model = _copy(model)  # external data is loaded into the copy, not the caller's model
    else:
        raise InvalidType(f"model must be a path or an onnx.ModelProto, got "
                          f"{type(model).__name__}")
    where = f"ONNX file {path}" if path else "ONNX ModelProto"
    try:
        net, params = _import(model, path, name, numpy_helper, fold_bn)
    except ModelFileError as e:
        raise ModelFileError(str(e) if str(e).startswith(where) else f"{where}: {e}") from None
    except ValueError as e:
        raise ModelFileError(f"{where}: {e}") from None
    return net, params


def _copy(model):
    out = type(model)()
    out.CopyFrom(model)
    return out


def _import(model, path: Path | None, name: str | None, numpy_helper,
            fold_bn: bool = False) -> tuple[Network, list]:
    """:func:`from_onnx` of a read ``ModelProto`` (every check but the file's own)."""
    onnx_checks.check_tensors(model, path.parent if path else None)
    graph = model.graph
    consts = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    items = _graph(graph, consts)
    onnx_checks.check_finite(consts)
    inputs = [vi for vi in graph.input if vi.name not in consts]
    in_shape = _input_shape(inputs[0])
    onnx_checks.check_input_size(in_shape)
    layers, params, _ = _convert(items, in_shape)

    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), "?")
    where = f"file {path.name}" if path else "ModelProto"
    producer = " ".join(filter(None, (model.producer_name, model.producer_version))) or "unknown"
    source = (f"imported from ONNX {where} (producer {producer}, opset {opset}, graph "
              f"{graph.name!r}) by ppnn.nn.from_onnx")
    net_name = name or (path.stem if path else graph.name) or "onnx_model"
    net = Network(net_name, in_shape, tuple(layers), source=source,
                  dataset=_GUESS_DATASET.get(in_shape, ""))
    onnx_checks.check_sizes(net)
    check_params(net, params)
    if fold_bn:
        net, params = fold_batchnorm(net, params)
    return net, params


# -- export ----------------------------------------------------------------------------------
class _Emitter:
    """Collects nodes and initializers; every tensor is named after its ppnn layer."""

    def __init__(self, dtype):
        self.dtype, self.nodes, self.inits = dtype, [], []

    def init(self, name: str, a) -> str:
        from onnx import numpy_helper

        self.inits.append(numpy_helper.from_array(np.asarray(a, self.dtype), name))
        return name

    def node(self, op: str, inputs, name: str, **attrs) -> str:
        from onnx import helper

        self.nodes.append(helper.make_node(op, list(inputs), [name], name=name, **attrs))
        return name

    def seq(self, layers, params, x: str, prefix: str) -> str:
        for lname, layer, p in zip(_auto_names(layers), layers, params):
            x = self.layer(layer, p, x, prefix + lname)
        return x

    def layer(self, layer: Layer, p: dict, x: str, name: str) -> str:
        if isinstance(layer, Residual):
            body = self.seq(layer.body, p["body"], x, f"{name}.body.")
            short = self.seq(layer.shortcut, p["shortcut"], x, f"{name}.shortcut.")
            if layer.merge == "concat":
                return self.node("Concat", [short, body], f"{name}.concat", axis=1)
            return self.node("Add", [body, short], f"{name}.add")
        wb = [self.init(f"{name}.{k}", p[k]) for k in ("W", "b") if k in p]
        if isinstance(layer, Conv2d):
            k, s, pad = layer.kernel, layer.stride, layer.padding
            return self.node("Conv", [x, *wb], name, kernel_shape=[k, k], strides=[s, s],
                             pads=[pad] * 4, dilations=[1, 1], group=layer.groups)
        if isinstance(layer, Dense):
            return self.node("Gemm", [x, *wb], name, transB=1)
        if isinstance(layer, ReLU):
            return self.node("Relu", [x], name)
        if isinstance(layer, Square):
            return self.node("Mul", [x, x], name)
        if isinstance(layer, MaxPool | MeanPool):
            k, s, pad = layer.kernel, layer.step, layer.padding
            win = {"kernel_shape": [k, k], "strides": [s, s], "pads": [pad] * 4}
            if isinstance(layer, MaxPool):
                return self.node("MaxPool", [x], name, **win)
            if not layer.scaled:
                return self.node("AveragePool", [x], name, count_include_pad=1, **win)
            avg = self.node("AveragePool", [x], f"{name}.mean", count_include_pad=1, **win)
            return self.node("Mul", [avg, self.init(f"{name}.kk", k * k)], name)
        if isinstance(layer, BatchNorm):
            ins = [self.init(f"{name}.{k}", p[k]) for k in ("gamma", "beta", "mean", "var")]
            return self.node("BatchNormalization", [x, *ins], name, epsilon=float(layer.eps))
        if isinstance(layer, Flatten):
            return self.node("Flatten", [x], name, axis=1)
        raise ValueError(f"to_onnx: no ONNX mapping for layer kind {layer.kind} ({name})")


def _dtype_of(params) -> type:
    def arrays(ps):
        for p in ps:
            for v in p.values():
                yield from (arrays(v) if isinstance(v, list) else [np.asarray(v)])

    return np.float64 if any(a.dtype == np.float64 for a in arrays(params)) else np.float32


def to_onnx(net: Network, params, path: str | os.PathLike, opset: int = 17) -> Path:
    """Write ``net`` with ``params`` as an ONNX model at ``path`` (atomically).

    The input is ``(N, *net.input_shape)`` with a symbolic batch dimension ``N``; the element
    type is float64 if any parameter is float64, else float32. Residual blocks become an
    ``Add`` of the two branches. The model passes ``onnx.checker.check_model`` (with shape
    inference) before it is written. Returns the path."""
    onnx = _onnx()
    from onnx import TensorProto, helper

    check_params(net, params)
    latest = onnx.defs.onnx_opset_version()
    if isinstance(opset, bool) or not isinstance(opset, int) or not 13 <= opset <= latest:
        raise ValueError(f"opset must be an int in [13, {latest}], got {opset!r}")
    dtype = _dtype_of(params)
    elem = TensorProto.DOUBLE if dtype == np.float64 else TensorProto.FLOAT
    em = _Emitter(dtype)
    x = "input"
    y = em.seq(net.layers, params, x, "")
    if y == x:
        y = em.node("Identity", [x], "output")
    em.nodes[-1].output[0] = "output"
    graph = helper.make_graph(
        em.nodes, net.name,
        [helper.make_tensor_value_info("input", elem, ["N", *net.input_shape])],
        [helper.make_tensor_value_info("output", elem, ["N", *net.output_shape])],
        initializer=em.inits)
    ops = [helper.make_opsetid("", opset)]
    model = helper.make_model(graph, opset_imports=ops, producer_name="ppnn",
                              producer_version=_version(),
                              ir_version=helper.find_min_ir_version_for(ops),
                              doc_string=f"ppnn network {net.name}: {net.source}")
    onnx.checker.check_model(model, full_check=True)
    return atomic_write(path, model.SerializeToString())


def _version() -> str:
    from .._version import __version__

    return __version__

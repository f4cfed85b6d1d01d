"""What :func:`ppnn.nn.from_onnx` checks before it reads a model: the file, its tensors and
their external data, and the size of the network it describes.

* :func:`read_model` -- a regular, non-empty file of at most 2 GiB that parses as an ONNX
  ``ModelProto`` with a graph (random bytes, text, a truncated or empty file are refused);
* :func:`check_tensors` -- every initializer and ``Constant`` tensor: a numeric type, at most
  :data:`MAX_TENSOR_ELEMENTS` elements, and exactly the bytes its shape declares, checked
  before anything is allocated (a declared ``2^40`` elements is refused, not reshaped);
  external data only in a regular file inside the model's folder, reached without a symbolic
  link or ``..``, within the file's size; then it is loaded;
* :func:`check_finite` -- no NaN or infinity in the weights;
* :func:`check_input_size`, :func:`check_sizes` -- at most :data:`MAX_IMAGE_ELEMENTS` input
  and :data:`MAX_ACTIVATION_ELEMENTS` activation elements per image.

Each raises :class:`ppnn.errors.ModelFileError` naming the file and the tensor.
"""

from __future__ import annotations

import math
import os
from pathlib import Path, PurePath

import numpy as np

from ..errors import ModelFileError

__all__ = ["MAX_FILE_BYTES", "MAX_TENSOR_ELEMENTS", "MAX_IMAGE_ELEMENTS",
           "MAX_ACTIVATION_ELEMENTS", "read_model", "check_tensors", "check_finite",
           "check_input_size", "check_sizes"]

#: protobuf's limit on one message (larger models keep their weights as external data)
MAX_FILE_BYTES = (1 << 31) - 1
#: elements of one weight tensor (2^28: 2 GiB of float64)
MAX_TENSOR_ELEMENTS = 1 << 28
#: elements of one input image (2^24, e.g. 3 x 2048 x 2048)
MAX_IMAGE_ELEMENTS = 1 << 24
#: elements of one layer's output for one image
MAX_ACTIVATION_ELEMENTS = 1 << 26


def read_model(path: Path):
    """The ``ModelProto`` in ``path``, without its external data (see :func:`check_tensors`)."""
    import onnx
    from google.protobuf.message import DecodeError

    try:
        st = path.stat()
    except OSError as e:
        raise ModelFileError(f"ONNX file {path}: cannot be read ({e.strerror or e})") from None
    if not path.is_file():
        raise ModelFileError(f"ONNX file {path}: not a regular file")
    if st.st_size == 0:
        raise ModelFileError(f"ONNX file {path}: is empty (0 bytes), not an ONNX model")
    if st.st_size > MAX_FILE_BYTES:
        raise ModelFileError(f"ONNX file {path}: {st.st_size:,} bytes, more than the "
                             f"{MAX_FILE_BYTES:,} an ONNX protobuf can hold")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ModelFileError(f"ONNX file {path}: cannot be read ({e.strerror or e})") from None
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as e:
        raise ModelFileError(f"ONNX file {path}: not an ONNX model (the protobuf does not "
                             f"decode: {e}; a truncated file, text or other bytes)") from None
    # bytes that happen to decode are still no model without a graph and a version
    if not model.HasField("graph") or model.ir_version < 1 or not len(model.graph.node):
        raise ModelFileError(f"ONNX file {path}: not an ONNX model (no ir_version, no graph "
                             f"or no nodes: {len(data):,} bytes of something else?)")
    return model


def _tensors(graph):
    """``(what, TensorProto)`` of every initializer and Constant value of ``graph``."""
    for t in graph.initializer:
        yield f"initializer {t.name!r}", t
    for i, node in enumerate(graph.node):
        for a in node.attribute:
            if a.HasField("t"):
                yield f"node {node.name or '#' + str(i)!r} attribute {a.name!r}", a.t
    if len(graph.sparse_initializer):
        raise ModelFileError(f"sparse initializer {graph.sparse_initializer[0].values.name!r} "
                             "is not supported (store the weights dense)")


def _itemsize(t, what: str) -> int:
    from onnx import TensorProto, helper

    numeric = {TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16,
               TensorProto.BFLOAT16, TensorProto.INT8, TensorProto.INT16, TensorProto.INT32,
               TensorProto.INT64, TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32,
               TensorProto.UINT64, TensorProto.BOOL}
    if t.data_type not in numeric:
        name = TensorProto.DataType.Name(t.data_type) if t.data_type in \
            TensorProto.DataType.values() else str(t.data_type)
        raise ModelFileError(f"{what} has element type {name}; ppnn reads numeric tensors only")
    if t.data_type == TensorProto.BFLOAT16:
        return 2
    return int(np.dtype(helper.tensor_dtype_to_np_dtype(t.data_type)).itemsize)


def _typed_count(t) -> int:
    """Elements held in the typed field that ONNX uses for ``t``'s element type."""
    from onnx import TensorProto

    field = {TensorProto.FLOAT: "float_data", TensorProto.DOUBLE: "double_data",
             TensorProto.INT64: "int64_data", TensorProto.UINT32: "uint64_data",
             TensorProto.UINT64: "uint64_data"}.get(t.data_type, "int32_data")
    return len(getattr(t, field))


def _external(t, what: str, base: Path | None) -> tuple[Path, int, int]:
    """The checked ``(file, offset, length)`` of an external tensor."""
    if base is None:
        raise ModelFileError(f"{what} keeps its data in an external file; import the model "
                             "from its file (its folder holds the data), not a ModelProto")
    info = {e.key: e.value for e in t.external_data}
    loc = info.get("location", "")
    parts = PurePath(loc).parts
    if not loc or PurePath(loc).is_absolute() or os.path.isabs(loc) or ".." in parts \
            or any(os.sep in p or (os.altsep and os.altsep in p) for p in parts[1:]):
        raise ModelFileError(f"{what}: external data location {loc!r} is refused: it must be a "
                             "relative path inside the model's folder, without '..'")
    cur = base
    for part in parts:
        cur = cur / part
        if cur.is_symlink():
            raise ModelFileError(f"{what}: external data path {loc!r} goes through the symbolic "
                                 f"link {cur.name!r}; ppnn reads external data only from "
                                 "regular files in the model's folder")
    try:
        inside = cur.resolve(strict=True).is_relative_to(base.resolve(strict=True))
    except OSError:
        raise ModelFileError(f"{what}: external data file {loc!r} does not exist next to the "
                             "model") from None
    if not inside or not cur.is_file():
        raise ModelFileError(f"{what}: external data {loc!r} is not a regular file inside the "
                             "model's folder")
    size = cur.stat().st_size
    try:
        offset = int(info.get("offset", 0))
        length = int(info["length"]) if "length" in info else size - offset
    except ValueError:
        raise ModelFileError(f"{what}: external data offset / length must be integers, got "
                             f"{info.get('offset')!r} / {info.get('length')!r}") from None
    if not 0 <= offset <= size:
        raise ModelFileError(f"{what}: external data offset {offset} lies outside {loc!r} "
                             f"({size:,} bytes)")
    if length < 0 or offset + length > size:
        raise ModelFileError(f"{what}: external data [{offset}, {offset + length}) lies outside "
                             f"{loc!r} ({size:,} bytes)")
    return cur, offset, length


def check_tensors(model, base: Path | None) -> None:
    """Check every tensor of ``model`` (see the module docstring) and load its external data
    from ``base`` (the model's folder; None for a ``ModelProto`` given in memory)."""
    from onnx import TensorProto

    for what, t in _tensors(model.graph):
        dims = [int(d) for d in t.dims]
        if any(d < 0 for d in dims):
            raise ModelFileError(f"{what} has negative dimensions {dims}")
        n = math.prod(dims)
        if n > MAX_TENSOR_ELEMENTS:
            raise ModelFileError(f"{what} declares {n:,} elements (shape {tuple(dims)}), more "
                                 f"than the {MAX_TENSOR_ELEMENTS:,} ppnn reads")
        want = n * _itemsize(t, what)
        if t.data_location == TensorProto.EXTERNAL:
            path, offset, length = _external(t, what, base)
            if length != want:
                raise ModelFileError(f"{what} declares shape {tuple(dims)} ({want:,} bytes) but "
                                     f"its external data holds {length:,} bytes")
            with open(path, "rb") as f:
                f.seek(offset)
                t.raw_data = f.read(length)
            t.data_location = TensorProto.DEFAULT
            del t.external_data[:]
        elif t.HasField("raw_data"):
            if len(t.raw_data) != want:
                raise ModelFileError(f"{what} declares shape {tuple(dims)} ({want:,} bytes) but "
                                     f"holds {len(t.raw_data):,} bytes")
        elif _typed_count(t) != n:
            raise ModelFileError(f"{what} declares shape {tuple(dims)} ({n:,} elements) but "
                                 f"holds {_typed_count(t):,}")


def check_finite(consts: dict) -> None:
    """No NaN or infinity in the model's constant tensors (``name -> array``)."""
    for name, a in consts.items():
        a = np.asarray(a)
        if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
            raise ModelFileError(f"tensor {name!r} contains {int((~np.isfinite(a)).sum())} NaN "
                                 "or infinite values")


def check_input_size(shape: tuple[int, ...]) -> None:
    """At most :data:`MAX_IMAGE_ELEMENTS` elements in one input image."""
    n = math.prod(shape)
    if n > MAX_IMAGE_ELEMENTS:
        raise ModelFileError(f"graph input {tuple(shape)} has {n:,} elements per image, more "
                             f"than the {MAX_IMAGE_ELEMENTS:,} ppnn runs")


def check_sizes(net) -> None:
    """At most :data:`MAX_ACTIVATION_ELEMENTS` elements in any layer's output for one image
    (before anything allocates a batch of them)."""
    check_input_size(net.input_shape)
    for name, shape in zip(net.layer_names, net.shapes()[1:]):
        m = math.prod(shape)
        if m > MAX_ACTIVATION_ELEMENTS:
            raise ModelFileError(f"layer {name} outputs {shape} = {m:,} elements per image, "
                                 f"more than the {MAX_ACTIVATION_ELEMENTS:,} ppnn runs")

"""The comparison's shared workload and per-family results.

:class:`Workload` -- one network, its trained float parameters, calibration images, the
accuracy subset and the run subset (the same images for every family); :class:`Units` -- the
unit costs measured here on the real backends, once per comparison; :class:`FamilyResult` --
what one family's runs produced (the ledger of one protocol run, compute, storage, accuracy,
provenance), built by :func:`ppnn.experiments.compare.run.run_family` from the protocol
interface (:mod:`ppnn.protocols.api`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ppnn import data, nn
from ppnn.core import Ledger
from ppnn.errors import InvalidArgument
from ppnn.protocols import api

__all__ = ["Workload", "FamilyResult", "make_workload", "Units", "CLASSES", "NETWORK",
           "DATASETS"]

NETWORK = "minionn_mnist"
CLASSES = ("linear", "nonlinear", "input/output")


@dataclass
class Workload:
    """One network, one trained model, the same images for every family."""

    quick: bool
    seed: int
    net: nn.Network
    params: list
    x_calib: np.ndarray
    x_acc: np.ndarray
    y_acc: np.ndarray
    n_run: int
    float_predictions: np.ndarray
    dataset: str = "mnist"

    @property
    def x_run(self) -> np.ndarray:
        return self.x_acc[: self.n_run]

    @property
    def float_accuracy(self) -> float:
        return float((self.float_predictions == self.y_acc).mean())

    def rng(self, family: str) -> np.random.Generator:
        """A generator per family, derived from the seed (deterministic, independent)."""
        return np.random.default_rng([self.seed, *family.encode()])


def _check_sizes(n_run: int, n_acc: int, n_calib: int) -> None:
    for name, v, lo in (("n_run", n_run, 1), ("n_acc", n_acc, 1), ("n_calib", n_calib, 16)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise InvalidArgument(f"{name} must be an int >= {lo}, got {v!r}")
    if n_run > n_acc:
        raise InvalidArgument(f"n_run ({n_run}) must not exceed n_acc ({n_acc}): the run subset "
                              "is the start of the accuracy subset")


DATASETS = ("mnist", "fashion", "cifar10", "random")


def make_workload(quick: bool = True, seed: int = 0, n_run: int = 1, n_acc: int = 200,
                  n_calib: int = 500, net: nn.Network | None = None, params=None,
                  dataset: str = "mnist") -> Workload:
    """The network (default ``minionn_mnist``, MiniONN's MNIST net = Falcon's Network-C with
    ReLU before max-pool, with its ``nn.pretrained`` weights; or ``net`` and ``params`` given,
    e.g. from :func:`ppnn.nn.from_onnx`), ``n_calib`` training images for calibration, the
    first ``n_acc`` test images of ``dataset`` ("mnist" | "fashion" | "cifar10", the last from
    a path the user gives, :func:`ppnn.data.load_cifar10`) for accuracy and the first
    ``n_run`` of those for protocol runs. ``dataset="random"``: uniform images in [0, 1] of
    the network's input shape, drawn from ``seed``, for a network without its data; their
    "labels" are the float model's predictions, so accuracy reads as agreement with it."""
    _check_sizes(n_run, n_acc, n_calib)
    if (net is None) != (params is None):
        raise InvalidArgument("give both net and params, or neither (the zoo's MiniONN "
                              "network)")
    if net is None:
        net = nn.zoo.get(NETWORK)
        params = nn.pretrained(NETWORK, quick=quick, seed=seed)
    nn.check_params(net, params)
    if dataset == "mnist":
        x, _, xt, yt = data.load_mnist()
    elif dataset == "fashion":
        x, _, xt, yt = data.load_fashion_mnist()
    elif dataset == "cifar10":
        x, _, xt, yt = data.load_cifar10()
    elif dataset == "random":
        rng = np.random.default_rng([seed, 7])
        x = rng.random((n_calib, *net.input_shape))
        xt = rng.random((n_acc, *net.input_shape))
        yt = nn.predict(net, params, xt)
    else:
        raise InvalidArgument(f"dataset must be one of {DATASETS}, got {dataset!r}")
    x, xt = np.asarray(x), np.asarray(xt)
    if x.shape[1:] != tuple(net.input_shape):
        raise InvalidArgument(f"{net.name} takes inputs of shape {net.input_shape}; {dataset} "
                              f"images have shape {x.shape[1:]}")
    if n_acc > len(xt):
        raise InvalidArgument(f"n_acc must be <= {len(xt)} ({dataset} test images), got "
                              f"{n_acc}")
    x_acc, y_acc = xt[:n_acc], np.asarray(yt[:n_acc])
    return Workload(bool(quick), int(seed), net, params, x[:n_calib], x_acc, y_acc,
                    n_run, nn.predict(net, params, x_acc), dataset)


class Units:
    """Unit costs measured here on the real backends, once per comparison (cached)."""

    def __init__(self, quick: bool = True, seed: int = 0):
        self.quick, self.seed = quick, seed
        self._cache: dict = {}
        self._shared: dict = {}

    def get(self, key: str, fn: Callable):
        """A measured unit cost (listed by :meth:`frame`)."""
        if key not in self._cache:
            self._cache[key] = fn()
        return self._cache[key]

    def shared(self, key: str, fn: Callable):
        """Something two families share (a plan, a model, keys), built once."""
        if key not in self._shared:
            self._shared[key] = fn()
        return self._shared[key]

    def frame(self) -> pd.DataFrame:
        """Every measured unit cost as ``(source, quantity, seconds)``."""
        rows = []
        for src, val in self._cache.items():
            if isinstance(val, pd.DataFrame) and "seconds" in val:
                rows += [(src, str(op), float(s)) for op, s in val["seconds"].items()]
            elif isinstance(val, dict):
                rows += [(src, str(k), float(v)) for k, v in val.items()
                         if "bytes" not in k and k != "batch"]
            elif hasattr(val, "frame"):
                rows += [(src, str(op), float(s)) for op, s in val.frame()["seconds"].items()]
        return pd.DataFrame(rows, columns=["source", "quantity", "seconds"])


@dataclass
class FamilyResult:
    """One family on the workload: ``ledger`` is the per-inference part of ONE protocol run
    (one image; two for SwaNN's two-server setting), ``compute_run_s`` the compute of that run
    (measured or projected, as ``compute_kind`` says), ``predictions`` on the accuracy subset,
    ``run_predictions`` the protocol's on the run subset beside its oracle's."""

    key: str
    plan: api.Plan
    ledger: Ledger
    images_per_run: int
    compute_run_s: float
    compute_kind: str
    compute_note: str
    compute_by_class: dict
    storage_bytes: float
    storage_note: str
    predictions: np.ndarray
    accuracy_note: str
    run_predictions: np.ndarray
    oracle_run_predictions: np.ndarray
    quantization: str
    comm_note: str
    classify: Callable[[str], str]
    extra: dict = field(default_factory=dict)

    @property
    def spec(self) -> api.FamilySpec:
        return api.family(self.key).spec

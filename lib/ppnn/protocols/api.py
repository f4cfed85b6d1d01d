"""One protocol interface: every family behind the same three calls.

    >>> import ppnn
    >>> ppnn.families()                                    # the registry (a table)
    >>> plan = ppnn.compile("falcon_sh", net, params, calib=x_calib)
    >>> res = ppnn.run(plan, x, seed=0)                    # logits, predictions, ledger, ...
    >>> ppnn.count(plan, batch=1)                          # the ledger, without running

A *family* is a complete private-inference protocol for a whole network (e.g. "Delphi linear
layers + Tabula lookup tables", "Falcon, malicious"). Each implements :class:`Family`:

* ``compile`` turns a float network into the family's integer / quantized network (a
  :class:`Plan`; ``plan.table()`` shows it step by step, ``plan.oracle(x)`` is its exact
  integer forward pass in the clear, the reference every protocol run is checked against);
* ``run`` executes the protocol in simulated multi-party mode: every party in this process,
  every message booked on a :class:`~ppnn.core.Ledger` (``ppnn.run``, :mod:`ppnn.runner`,
  picks this or another transport);
* ``count`` books the same ledger without the protocol's computation (a closed form, or a dry
  run on a zero input; ``Family.count_method`` says which), equal to ``run``'s ledger for the
  same plan and batch (tested for every family).

Each :class:`FamilySpec` lists what runs on real cryptography and what on a simulator; each
:class:`Result` says what was measured, counted or projected. A family that cannot run a
network raises :class:`UnsupportedNetwork`, naming the layer and the reason.

The front door refuses (:mod:`.checks`, :mod:`ppnn.errors`) images that are not finite or lie
outside the family's input range (:meth:`Family.input_range`: nothing is clipped or wrapped),
parameters that are not finite, unknown options, and parameters below the security a family
claims (:meth:`Family.security_shortfalls`) unless ``compile(..., insecure=True)``, which
``plan.insecure`` and every result's ``provenance["security"]`` then state.
"""

from __future__ import annotations

import importlib
import inspect
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ppnn.core import Ledger
from ppnn.errors import InsecureParameters, InvalidArgument, InvalidType, PPNNError
from ppnn.nn import Network

from . import checks

__all__ = ["FamilySpec", "Family", "Plan", "Result", "Costs", "UnsupportedNetwork", "families",
           "family", "variants", "compile", "count", "ledger_summary", "BACKENDS",
           "split_one_time", "offline_received", "layer_kinds", "ONE_TIME"]

BACKENDS = ("sim", "real")

#: the registry: key -> "module:Class" (imported on first use, in this order)
_REGISTRY = {
    "delphi_gc": "ppnn.protocols.delphi_gc:DelphiGC",
    "delphi_tabula": "ppnn.protocols.tabula.family:DelphiTabula",
    "gazelle_gc": "ppnn.protocols.hegc:GazelleGC",
    "gala_gc": "ppnn.protocols.hegc:GalaGC",
    "swann_cs": "ppnn.protocols.swann.family:SwannClientServer",
    "swann_2s": "ppnn.protocols.swann.family:SwannTwoServer",
    "she": "ppnn.protocols.she.family:SHE",
    "falcon_sh": "ppnn.protocols.falcon.family:FalconSemiHonest",
    "falcon_mal": "ppnn.protocols.falcon.family:FalconMalicious",
}
#: labelled variants: a family as its paper ran it where that setting is weaker than the
#: default (compiled, run and compared like the families, listed by :func:`variants`)
_VARIANTS = {
    "gazelle_gc_noflood": "ppnn.protocols.hegc:GazelleGCNoFlood",
    "gala_gc_noflood": "ppnn.protocols.hegc:GalaGCNoFlood",
}
_INSTANCES: dict[str, Family] = {}


class UnsupportedNetwork(InvalidArgument):
    """A family cannot run this network: the message names the layer and the reason."""


@dataclass(frozen=True)
class FamilySpec:
    """What a family is: its parties, threat model and what runs for real."""

    key: str
    name: str
    paper: str
    parties: tuple[str, ...]
    threat_model: str
    security: str  # semi-honest | malicious
    trust: str  # what must be trusted beyond the protocol
    real: str  # what runs on real cryptography here
    simulated: str  # what runs on a simulator (counted, not executed with real crypto)
    layers: tuple[str, ...]  # layer kinds the family compiles
    backends: tuple[str, ...] = ("sim",)
    images_per_run: int = 1  # SwaNN two-server classifies one image per server
    #: the pixel values the family accepts (``run`` and ``compile``'s calibration images):
    #: what its encoding represents without wrapping and its plan is calibrated for
    input_range: tuple[float, float] = (0.0, 1.0)
    #: how a pixel is encoded (the reason for ``input_range``, said when an input is refused)
    input_encoding: str = ""


@dataclass
class Plan:
    """A network compiled for one family: the integer network, its parameters and options."""

    family: str
    net: Network
    options: dict
    impl: Any  # the family's own compiled form
    info: dict = field(default_factory=dict)

    @property
    def spec(self) -> FamilySpec:
        return family(self.family).spec

    def table(self) -> pd.DataFrame:
        """The compiled network, one row per protocol step."""
        return family(self.family).describe(self)

    def oracle(self, x) -> np.ndarray:
        """The family's exact integer forward pass in the clear (logits, the family's scale)."""
        x = _check_images(self, x)
        return family(self.family).oracle(self, x)

    @property
    def insecure(self) -> list[str]:
        """The parameters below the security the family claims that ``compile(...,
        insecure=True)`` accepted (empty: none)."""
        return list(self.info.get("insecure", []))

    def predict(self, x, batch: int = 500) -> np.ndarray:
        """Class predictions of the integer oracle (batched)."""
        x = np.asarray(x)
        return np.concatenate([self.oracle(x[i:i + batch]).argmax(axis=1)
                               for i in range(0, len(x), batch)])

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"Plan({self.family!r}, net={self.net.name!r}, {opts})"

    def _repr_html_(self) -> str:
        return (f"<p><b>{self.spec.name}</b> plan of <code>{self.net.name}</code></p>"
                + self.table().to_html(index=False))


@dataclass
class Result:
    """One protocol run: outputs, the ledger, wall-clock seconds and provenance."""

    family: str
    backend: str
    logits: np.ndarray
    ledger: Ledger
    timings: pd.DataFrame  # phase, layer, seconds (measured here, all parties together)
    provenance: dict  # quantity -> "counted: ..." / "measured: ..." / "projected: ..."
    extra: dict = field(default_factory=dict)

    @property
    def predictions(self) -> np.ndarray:
        return np.asarray(self.logits).argmax(axis=1)

    @property
    def seconds(self) -> float:
        return float(self.timings["seconds"].sum()) if len(self.timings) else 0.0

    def summary(self) -> dict:
        return {"family": self.family, "backend": self.backend, **ledger_summary(self.ledger),
                "seconds": self.seconds}


def ledger_summary(ledger: Ledger) -> dict:
    """Bytes and rounds per phase (what ``count`` must reproduce) and operation counts."""
    return {"online_bytes": ledger.total_bytes("online"),
            "offline_bytes": ledger.total_bytes("offline"),
            "online_rounds": ledger.rounds("online"),
            "offline_rounds": ledger.rounds("offline"),
            "messages": ledger.n_messages()}


class Family:
    """The interface every protocol family implements (see the module docstring).

    Subclasses set :attr:`spec` and :attr:`count_method` and implement ``_compile``,
    ``_run``, ``oracle`` and ``describe``; ``_count`` defaults to a dry run of ``_run`` on a
    zero input with the simulated backend."""

    spec: FamilySpec
    count_method: str = "dry run"
    #: the protocol's logits equal the oracle's bit for bit (False: probabilistic truncation,
    #: logits within a few ulps, predictions compared)
    exact: bool = True
    #: on the real backend with a Dask client, the family splits the gates of each circuit
    #: level across the workers (``_run`` takes ``client=``) instead of splitting the images
    distributes_gates: bool = False
    #: a labelled variant (:func:`variants`): how it runs and what that gives up, for the text
    #: under a comparison that shows it (the families leave it empty)
    variant_note: str = ""

    # -- to implement ---------------------------------------------------------------------
    def _compile(self, net: Network, params, calib, **options) -> tuple[Any, dict]:
        raise NotImplementedError

    def _run(self, plan: Plan, x: np.ndarray, rng: np.random.Generator, backend: str
             ) -> tuple[np.ndarray, Ledger, list[tuple[str, str, float]], dict]:
        """Returns ``(logits, ledger, [(phase, layer, seconds)], provenance)``."""
        raise NotImplementedError

    def oracle(self, plan: Plan, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def describe(self, plan: Plan) -> pd.DataFrame:
        raise NotImplementedError

    def costs(self, plan: Plan, results: list[Result], units) -> Costs:
        """Compute (measured or projected from ``units``, a cache of unit costs measured
        here), storage and provenance notes of ``results`` (runs of ``plan``)."""
        raise NotImplementedError

    def accuracy_predictions(self, plan: Plan, x: np.ndarray, rng: np.random.Generator
                             ) -> tuple[np.ndarray, str]:
        """Predictions on an accuracy set, and how they were obtained: the integer oracle
        (checked equal to the protocol on the run images) unless a family overrides it."""
        return plan.predict(x), "integer oracle (= protocol output, checked on the run images)"

    def _count(self, plan: Plan, batch: int) -> Ledger:
        x = np.zeros((batch, *plan.net.input_shape))
        return self._run(plan, x, np.random.default_rng(0), "sim")[1]

    # -- what a family declares (override where it differs) -------------------------------
    def input_range(self, plan: Plan) -> tuple[float, float]:
        """The pixel values ``plan`` accepts, ``(lo, hi)`` inclusive (default: the spec's)."""
        return self.spec.input_range

    def option_names(self) -> tuple[str, ...]:
        """The ``compile`` options (default: the keyword arguments of ``_compile``)."""
        sig = inspect.signature(self._compile).parameters.values()
        return tuple(p.name for p in sig if p.kind == p.KEYWORD_ONLY
                     or (p.kind == p.POSITIONAL_OR_KEYWORD
                         and p.name not in ("net", "params", "calib")))

    def security_shortfalls(self, options: dict) -> list[str]:
        """The ``compile`` options below the security the family claims, each said with the
        bound (empty: none). ``compile`` refuses them unless ``insecure=True``; it checks the
        types and ranges of the options first."""
        return []

    # -- shared checks ----------------------------------------------------------------------
    def check_network(self, net: Network) -> None:
        """Raise :class:`UnsupportedNetwork` naming the first layer this family cannot run."""
        if not isinstance(net, Network):
            raise InvalidType(f"net must be a ppnn.nn.Network, got {type(net).__name__}")
        for node in net.leaves():
            if node.kind not in self.spec.layers:
                raise UnsupportedNetwork(
                    f"{self.spec.name} cannot run layer {node.name} ({node.kind}) of "
                    f"{net.name}: it compiles {', '.join(self.spec.layers)}")

    def compile(self, net: Network, params, calib=None, insecure: bool = False,
                **options) -> Plan:
        if not isinstance(insecure, bool):
            raise InvalidType(f"insecure must be True or False, got {insecure!r}")
        self.check_network(net)
        checks.check_params(net, params)
        if calib is not None:  # checked, and passed on as given (its dtype is the caller's)
            lo, hi = self.spec.input_range
            checks.check_images(calib, net.input_shape, lo, hi, "calib", self.spec.name,
                                self.spec.input_encoding)
        names = self.option_names()
        unknown = sorted(set(options) - set(names))
        if unknown:
            raise InvalidArgument(f"unknown option(s) {', '.join(map(repr, unknown))} for "
                                  f"{self.spec.name}: its compile options are "
                                  f"{', '.join(names) or 'none'} (and insecure)")
        weak = self.security_shortfalls(options)
        if weak and not insecure:
            raise InsecureParameters(
                f"{self.spec.name}: {'; '.join(weak)} -- below the security the family "
                "claims; pass insecure=True to compile it anyway (the plan and its results "
                "then say so)")
        try:
            impl, info = self._compile(net, params, calib, **options)
        except UnsupportedNetwork:
            raise
        except (ValueError, TypeError) as e:
            cls = type(e) if isinstance(e, PPNNError) else (
                InvalidArgument if isinstance(e, ValueError) else InvalidType)
            raise cls(f"{self.spec.name} cannot compile {net.name}: {e}") from e
        if insecure:
            info = {**info, "insecure": list(weak)}
            options = {**options, "insecure": True}
        return Plan(self.spec.key, net, dict(options), impl, info)

    def run(self, plan: Plan, x, seed=0, backend: str = "sim", client=None) -> Result:
        if backend not in self.spec.backends:
            raise InvalidArgument(f"backend must be one of {self.spec.backends} for "
                                  f"{self.spec.name}, got {backend!r}: {self.spec.simulated}")
        x = _check_images(plan, x)
        if len(x) % self.spec.images_per_run:
            raise InvalidArgument(f"{self.spec.name} classifies {self.spec.images_per_run} "
                                  f"images per run; got a batch of {len(x)}")
        seed = checks.check_seed(seed)
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        t0 = time.perf_counter()
        if client is not None:
            if not self.distributes_gates:
                raise ValueError(f"{self.spec.name} splits images, not gates: use "
                                 "ppnn.run(plan, x, client=...)")
            logits, ledger, times, prov = self._run(plan, x, rng, backend, client=client)
        else:
            logits, ledger, times, prov = self._run(plan, x, rng, backend)
        wall = time.perf_counter() - t0
        timings = pd.DataFrame(times, columns=["phase", "layer", "seconds"])
        extra = {"wall_s": wall}
        return Result(self.spec.key, backend, np.asarray(logits), ledger, timings,
                      with_security(plan, prov), extra)

    def count(self, plan: Plan, batch: int = 1) -> Ledger:
        batch = checks.check_int(batch, "batch", 1, MAX_BATCH)
        if batch % self.spec.images_per_run:
            raise InvalidArgument(f"{self.spec.name} classifies {self.spec.images_per_run} "
                                  f"images per run; batch must be a multiple of it, got {batch}")
        return self._count(plan, batch)

    def __repr__(self) -> str:
        return f"<family {self.spec.key}: {self.spec.name}>"


#: the largest batch ``count`` books (a dry run allocates the batch's images)
MAX_BATCH = 1 << 16


def _check_images(plan: Plan, x) -> np.ndarray:
    """``x`` as ``plan`` takes it: float64 ``(N, *input_shape)`` (one image gets a batch
    axis), finite, inside the family's input range -- the one check of every run's images
    (in process, on Dask and on the wire)."""
    fam = family(plan.family)
    lo, hi = fam.input_range(plan)
    return checks.check_images(x, plan.net.input_shape, lo, hi, "x",
                               f"{fam.spec.name} for {plan.net.name}", fam.spec.input_encoding)


def with_security(plan: Plan, provenance: dict) -> dict:
    """``provenance`` with a ``"security"`` entry when ``plan`` was compiled with
    ``insecure=True`` below the family's claimed security (what a result must state)."""
    weak = plan.insecure if isinstance(plan, Plan) else []
    if not weak:
        return provenance
    return {**provenance, "security": "INSECURE (compiled with insecure=True): "
            + "; ".join(weak)}


# -- the registry and the three calls ------------------------------------------------------
def family(key) -> Family:
    """The :class:`Family` registered under ``key`` (or a spec / family given directly)."""
    if isinstance(key, Family):
        return key
    if isinstance(key, FamilySpec):
        key = key.key
    if not isinstance(key, str):
        raise InvalidType(f"family must be a family key (str), got {type(key).__name__}")
    where = _REGISTRY.get(key) or _VARIANTS.get(key)
    if where is None:
        raise InvalidArgument(f"unknown family {key!r}; choose from {list(_REGISTRY)} or the "
                              f"variants {list(_VARIANTS)}")
    if key not in _INSTANCES:
        mod, cls = where.split(":")
        _INSTANCES[key] = getattr(importlib.import_module(mod), cls)()
    return _INSTANCES[key]


class Families(dict):
    """``key -> FamilySpec`` in registry order, shown as a table in a notebook."""

    def frame(self) -> pd.DataFrame:
        rows = []
        for s in self.values():
            rows.append({"key": s.key, "name": s.name, "paper": s.paper,
                         "parties": ", ".join(s.parties), "threat model": s.threat_model,
                         "real cryptography": s.real, "simulated / counted": s.simulated,
                         "layers": ", ".join(s.layers), "backends": ", ".join(s.backends),
                         "count": family(s.key).count_method})
        return pd.DataFrame(rows)

    def _repr_html_(self) -> str:
        return self.frame().to_html(index=False)

    def __repr__(self) -> str:
        return self.frame()[["key", "name", "parties", "threat model", "backends"]].to_string(
            index=False)


def families() -> Families:
    """The registry: every family's :class:`FamilySpec`, in a fixed order."""
    return Families((k, family(k).spec) for k in _REGISTRY)


def variants() -> Families:
    """The labelled variants (e.g. GAZELLE/GALA + GC without circuit privacy, as the papers
    ran them): :class:`FamilySpec` per key, in a fixed order."""
    return Families((k, family(k).spec) for k in _VARIANTS)


def compile(family_key, net: Network, params, calib=None, **options) -> Plan:  # noqa: A001
    """Compile ``net`` with float ``params`` for a family (``calib``: calibration images, in
    the family's input range). ``insecure=True`` accepts options below the security the
    family claims (e.g. a short Paillier key for a quick test): the plan's options,
    ``plan.insecure`` and every result's ``provenance["security"]`` say so."""
    return family(family_key).compile(net, params, calib, **options)


def count(plan: Plan, batch: int = 1) -> Ledger:
    """The ledger of a run of ``batch`` images, without running the protocol."""
    if not isinstance(plan, Plan):
        raise InvalidType(f"plan must be a Plan from ppnn.compile, got {type(plan).__name__}")
    return family(plan.family).count(plan, batch)


# -- what a comparison needs besides the ledger ------------------------------------------------
@dataclass
class Costs:
    """A family's compute, storage and provenance notes for runs of one plan (what the
    cross-paper comparison reports beside the ledger). ``compute_s`` is per run, all parties
    together; ``compute_kind`` says whether it was measured or projected."""

    compute_s: float
    compute_kind: str
    compute_note: str
    compute_by_class: dict  # linear / nonlinear / input/output -> seconds
    storage_bytes: float
    storage_note: str
    accuracy_note: str
    quantization: str
    comm_note: str
    extra: dict = field(default_factory=dict)


ONE_TIME = ("setup", "keys")  # label components of one-time key material


def split_one_time(ledger: Ledger) -> tuple[Ledger, dict[str, float]]:
    """The per-inference part of a run's ledger and the one-time key material it booked.

    Messages under a ``setup`` or ``keys`` label (SwaNN's secret-key shares, GALA's Galois
    keys, Falcon's PRF keys) are sent once per key, not per inference: they are dropped from
    the returned ledger (rounds keep their numbers) and returned as bytes received per party,
    which the families report under storage."""
    out = ledger.subset(lambda m: not set(m.label.split("/")) & set(ONE_TIME))
    once: dict[str, float] = {}
    for m in ledger.messages:
        if set(m.label.split("/")) & set(ONE_TIME):
            once[m.receiver] = once.get(m.receiver, 0.0) + m.bits / 8
    return out, once


def offline_received(ledger: Ledger, sender: str | None = None) -> dict[str, float]:
    """Offline bytes received per party (optionally only from ``sender``)."""
    df = ledger.messages_frame()
    df = df[df["phase"] == "offline"]
    if sender is not None:
        df = df[df["sender"] == sender]
    return (df.groupby("receiver")["bits"].sum() / 8).to_dict()


def layer_kinds(net: Network):
    """Map a ledger label to ``linear`` / ``nonlinear`` / ``input/output`` by its first
    component: the network's node names (``conv1``, ``block2.body.conv1``, ``block2.add``),
    or SwaNN's step names (``Conv 1``, ``Act+Pool 1``, ``Add 1``)."""
    kinds = {name: layer.kind for name, layer in zip(net.layer_names, net.layers)}
    kinds |= {node.name: node.kind for node in net.nodes()}

    def classify(label: str) -> str:
        head = label.split("/")[0]
        kind = kinds.get(head)
        if kind in ("Conv2d", "Dense", "Flatten", "MeanPool", "Add"):
            return "linear"
        if kind in ("ReLU", "MaxPool"):
            return "nonlinear"
        if head.startswith(("Conv", "FC", "Pool", "Flatten", "Add")):
            return "linear"
        if head.startswith("Act"):
            return "nonlinear"
        return "input/output"

    return classify

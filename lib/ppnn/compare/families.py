"""One trained MNIST network through every protocol family implemented in PPNN Lab.

Each ``run_<family>(w, units)`` takes the shared :class:`Workload` (the network, its trained
float parameters, calibration images, the accuracy subset and the run subset -- the same
images for every family) and returns a :class:`FamilyResult`:

* ``ledger`` -- the cost ledger of ONE protocol run (one image; two for SwaNN's two-server
  setting, which classifies one image per server): online/offline bytes and rounds are
  *counted* there, and the LAN/WAN latency is *projected* from it with the shared time model;
  one-time key material (Galois keys, key shares, PRF keys) is taken out and reported under
  storage (:func:`split_one_time`);
* ``compute_run_s`` -- seconds of computation of that run, all parties together (this process
  runs them one after the other): *measured* where the family runs real cryptography here,
  *projected* (counted operations x unit costs measured here on the real backend) where it
  runs on a simulator, as each result's ``compute_kind`` / ``compute_note`` say;
* ``predictions`` on the accuracy subset -- from the family's exact integer oracle (checked
  equal to the protocol's output on the run subset: ``run_predictions`` vs
  ``oracle_run_predictions``), or from the protocol itself where that is cheap (Tabula);
* ``storage_bytes`` -- what a party keeps for one inference (preprocessed material, keys).

Families and what runs for real: see :data:`FAMILIES` and each runner's docstring.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ppnn import data, nn
from ppnn.core import FixedPoint, Ledger, Ring
from ppnn.he import gc as gcmod
from ppnn.nn import Conv2d, Dense, Flatten, MaxPool, MeanPool, ReLU

from . import delphi_gc, gc_act, hegc

__all__ = ["Workload", "FamilyResult", "FamilySpec", "FAMILIES", "make_workload", "Units",
           "RUNNERS", "layer_classes", "split_one_time", "CLASSES", "NETWORK", "ONE_TIME"]

NETWORK = "minionn_mnist"
CLASSES = ("linear", "nonlinear", "input/output")


@dataclass(frozen=True)
class FamilySpec:
    key: str
    name: str
    paper: str
    parties: str
    threat_model: str
    security: str  # semi-honest | malicious
    trust: str  # what must be trusted beyond the protocol


FAMILIES = {s.key: s for s in [
    FamilySpec("delphi_gc", "Delphi + GC ReLU", "baseline (Tabula §4, GALA §II)",
               "client, server", "2PC, semi-honest", "semi-honest", "two parties"),
    FamilySpec("delphi_tabula", "Delphi + Tabula tables", "Tabula",
               "client, server", "2PC, semi-honest", "semi-honest", "two parties"),
    FamilySpec("gazelle_gc", "GAZELLE linear + GC ReLU", "GALA (baseline)",
               "client, server", "2PC, semi-honest", "semi-honest", "two parties"),
    FamilySpec("gala_gc", "GALA linear + GC ReLU", "GALA",
               "client, server", "2PC, semi-honest", "semi-honest", "two parties"),
    FamilySpec("swann_cs", "SwaNN client-server", "SwaNN",
               "client, server", "2PC, semi-honest", "semi-honest", "two parties"),
    FamilySpec("swann_2s", "SwaNN two-server", "SwaNN",
               "client, server1, server2", "2 non-colluding servers, semi-honest",
               "semi-honest", "non-colluding servers"),
    FamilySpec("she", "SHE (TFHE gates, log-quantized)", "SHE",
               "client, server", "client-server FHE, semi-honest server, non-interactive",
               "semi-honest", "two parties"),
    FamilySpec("falcon_sh", "Falcon semi-honest", "Falcon",
               "P0, P1, P2", "3PC honest majority, semi-honest", "semi-honest",
               "honest majority of 3 servers"),
    FamilySpec("falcon_mal", "Falcon malicious", "Falcon",
               "P0, P1, P2", "3PC honest majority, malicious (abort)", "malicious",
               "honest majority of 3 servers"),
]}


# -- the shared workload -----------------------------------------------------------------------
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

    @property
    def x_run(self) -> np.ndarray:
        return self.x_acc[: self.n_run]

    @property
    def float_accuracy(self) -> float:
        return float((self.float_predictions == self.y_acc).mean())

    def rng(self, family: str) -> np.random.Generator:
        """A generator per family, derived from the seed (deterministic, independent)."""
        return np.random.default_rng([self.seed, *family.encode()])


def make_workload(quick: bool = True, seed: int = 0, n_run: int = 1, n_acc: int = 200,
                  n_calib: int = 500) -> Workload:
    """The network (``minionn_mnist``, MiniONN's MNIST net = Falcon's Network-C with ReLU
    before max-pool), its ``nn.pretrained`` weights, ``n_calib`` training images for
    calibration, the first ``n_acc`` MNIST test images (accuracy) and the first ``n_run`` of
    those (protocol runs)."""
    for name, v, lo in (("n_run", n_run, 1), ("n_acc", n_acc, 1), ("n_calib", n_calib, 16)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise ValueError(f"{name} must be an int >= {lo}, got {v!r}")
    if n_run > n_acc:
        raise ValueError(f"n_run ({n_run}) must not exceed n_acc ({n_acc}): the run subset is "
                         "the start of the accuracy subset")
    net = nn.zoo.get(NETWORK)
    params = nn.pretrained(NETWORK, quick=quick, seed=seed)
    x, _, xt, yt = data.load_mnist()
    if n_acc > len(xt):
        raise ValueError(f"n_acc must be <= {len(xt)} (MNIST test images), got {n_acc}")
    x_acc, y_acc = np.asarray(xt[:n_acc]), np.asarray(yt[:n_acc])
    return Workload(bool(quick), int(seed), net, params, np.asarray(x[:n_calib]), x_acc, y_acc,
                    n_run, nn.predict(net, params, x_acc))


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
    key: str
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
    def spec(self) -> FamilySpec:
        return FAMILIES[self.key]


# -- label -> layer type -----------------------------------------------------------------------
def layer_classes(net: nn.Network) -> Callable[[str], str]:
    """Map a ledger label to ``linear`` / ``nonlinear`` / ``input/output`` by the first label
    component: the network's layer names, or SwaNN's step names (``Conv 1``, ``Act+Pool 1``)."""
    kinds = {name: layer for name, layer in zip(net.layer_names, net.layers)}

    def classify(label: str) -> str:
        head = label.split("/")[0]
        layer = kinds.get(head)
        if isinstance(layer, Conv2d | Dense | Flatten | MeanPool):
            return "linear"
        if isinstance(layer, ReLU | MaxPool):
            return "nonlinear"
        if head.startswith(("Conv", "FC", "Pool", "Flatten")):
            return "linear"
        if head.startswith("Act"):
            return "nonlinear"
        return "input/output"

    return classify


ONE_TIME = ("setup", "keys")  # label components of one-time key material


def split_one_time(ledger: Ledger) -> tuple[Ledger, dict[str, float]]:
    """The per-inference part of a run's ledger and the one-time key material it booked.

    Messages under a ``setup`` or ``keys`` label (SwaNN's secret-key shares, GALA's Galois
    keys, Falcon's PRF keys) are sent once per key, not per inference: they are dropped from
    the returned ledger (rounds keep their numbers) and returned as bytes received per party,
    which the families report under storage."""
    out = Ledger(ledger.parties)
    keep = [m for m in ledger.messages if not set(m.label.split("/")) & set(ONE_TIME)]
    out.messages = keep
    out.ops = list(ledger.ops)
    out.depths = dict(ledger.depths)
    once: dict[str, float] = {}
    for m in ledger.messages:
        if set(m.label.split("/")) & set(ONE_TIME):
            once[m.receiver] = once.get(m.receiver, 0.0) + m.bits / 8
    return out, once


def _offline_received(ledger: Ledger, sender: str | None = None) -> dict[str, float]:
    """Offline bytes received per party (optionally only from ``sender``)."""
    df = ledger.messages_frame()
    df = df[df["phase"] == "offline"]
    if sender is not None:
        df = df[df["sender"] == sender]
    return (df.groupby("receiver")["bits"].sum() / 8).to_dict()


def _mask_bits(net: nn.Network, k: int) -> int:
    """Delphi's client-side masks per inference: ``R_c`` and its output share, per layer."""
    tot = 0
    for node in net.leaves():
        if isinstance(node.layer, Conv2d | Dense):
            tot += (int(np.prod(node.in_shape)) + int(np.prod(node.out_shape))) * k
    return tot


# -- Delphi + GC -------------------------------------------------------------------------------
def run_delphi_gc(w: Workload, units: Units, cfg: delphi_gc.DelphiGCConfig | None = None
                  ) -> FamilyResult:
    """Delphi linear layers (Z_2^32, masks from counted HE preprocessing) + real garbled
    circuits (ReLU, exact truncation and max-pool in one circuit, Delphi's offline/online
    split). Online compute measured: the server's linear layers and the client's evaluation
    of the garbled circuits; garbling is Delphi's offline work (``extra['garble_s']``)."""
    cfg = cfg or delphi_gc.DelphiGCConfig()
    plan = delphi_gc.DelphiGCPlan.build(w.net, w.params, cfg, w.x_calib)
    rng = w.rng("delphi_gc")
    ledgers, preds, lin, gcs, garble = [], [], [], [], []
    for i in range(w.n_run):
        led = Ledger(delphi_gc.PARTIES)
        logits, t = delphi_gc.secure_inference(plan, w.x_run[i:i + 1], rng, led)
        if not np.array_equal(logits, plan.forward_int(w.x_run[i:i + 1])):
            raise AssertionError("Delphi + GC logits differ from the integer oracle")
        ledgers.append(led)
        preds.append(int(logits.argmax()))
        lin.append(t["online_linear_s"])
        gcs.append(t["online_gc_s"])
        garble.append(t["offline_s"])
    led = ledgers[0]
    gc_bits = 0
    for st in plan.steps:
        if st.kind == "act":
            c = gc_act.act_circuit(st.spec)
            n = led.op_count("garble", label=st.name) // c.n_and
            gc_bits += n * gcmod.gc_cost(c).evaluator_storage
    storage = (gc_bits + _mask_bits(w.net, cfg.k)) / 8
    return FamilyResult(
        "delphi_gc", led, 1, float(np.mean(lin) + np.mean(gcs)), "measured",
        f"online only: server's linear layers + client's GC evaluation, mean of {w.n_run} "
        "image(s); garbling (offline) and Delphi's HE preprocessing (counted, not run) excluded",
        {"linear": float(np.mean(lin)), "nonlinear": float(np.mean(gcs))},
        storage, "client: garbled tables, its input labels and decoding bits, Delphi masks",
        plan.predict(w.x_acc), "integer oracle (= protocol output bit for bit, checked)",
        np.array(preds), plan.predict(w.x_run),
        f"fixed point Z_2^{cfg.k}, f = {cfg.frac_bits}, f_w = {cfg.weight_frac_bits}; exact "
        "truncation inside the GC",
        "ledger of a real run, GC sizes exact; Delphi's HE preprocessing from its closed form "
        "(BFV N = 8192 ciphertexts)",
        layer_classes(w.net), {"garble_s": float(np.mean(garble)), "peak_bits": plan.peak_bits})


# -- Delphi + Tabula ---------------------------------------------------------------------------
def run_delphi_tabula(w: Workload, units: Units, bits: int = 8) -> FamilyResult:
    """Tabula's end-to-end runner: Delphi linear layers in Z_2^64 and one b-bit secure lookup
    table per activation (max-pool as a tree of ``b + ReLU(a - b)`` tables), tables from the
    ideal dealer (booked offline). Accuracy: the protocol itself on every accuracy image (ideal
    Delphi functionality: same output distribution and bookings)."""
    from ppnn.protocols.tabula import network as tn

    plan = tn.build_plan(w.net, w.params, w.x_calib, tn.TabulaConfig(bits=bits))
    rng = w.rng("delphi_tabula")
    ledgers, preds, times = [], [], []
    for i in range(w.n_run):
        led = Ledger(tn.PARTIES)
        tm: dict = {}
        out = tn.secure_inference(plan, w.x_run[i:i + 1], rng, led, linear="delphi",
                                  tables="lazy", timings=tm)
        ledgers.append(led)
        preds.append(int(out.argmax()))
        times.append(tm)
    acc = np.concatenate([
        tn.secure_inference(plan, w.x_acc[j:j + 250], rng, Ledger(tn.PARTIES), linear="ideal",
                            tables="lazy").argmax(axis=1) for j in range(0, len(w.x_acc), 250)])
    oracle = tn.plain_inference(plan, w.x_run).argmax(axis=1)
    led = ledgers[0]
    tables = _offline_received(led, Ledger.DEALER).get("client", 0.0)
    mean = {k: float(np.mean([t.get(k, 0.0) for t in times]))
            for k in ("linear", "nonlinear", "local")}
    return FamilyResult(
        "delphi_tabula", led, 1, sum(mean.values()), "measured",
        f"the simulator's whole run, mean of {w.n_run} image(s): Delphi masks (in the clear) "
        "and online linear layers, table lookups; tables drawn lazily (ideal dealer)",
        {"linear": mean["linear"] + mean["local"], "nonlinear": mean["nonlinear"]},
        tables + _mask_bits(w.net, 64) / 8,
        f"client: one {bits}-bit table of 2^{bits} ring elements per activation, Delphi masks",
        acc, "the protocol on every accuracy image (ideal linear layers, lazy tables)",
        np.array(preds), oracle,
        f"{bits}-bit tables, per-layer static shifts (calibrated), Z_2^64, f = 12; local "
        "truncation (+-1 ulp, rare wrap errors)",
        "ledger of a real run; tables from the ideal dealer (booked offline); Delphi's HE "
        "preprocessing from its closed form",
        layer_classes(w.net), {"bits": bits})


# -- GAZELLE / GALA + GC -----------------------------------------------------------------------
def _hegc_plan(w: Workload, units: Units):
    from ppnn.he.bfv.sim import BFVSim

    p = BFVSim(n=2048).p
    return units.shared(f"hegc_plan_{id(w)}",
                        lambda: hegc.HEGCPlan.build(w.net, w.params, w.x_calib, p))


def _seal_units(units: Units) -> pd.DataFrame:
    def measure():
        from ppnn.he.bfv.seal import SealBFV
        from ppnn.protocols.gala.runtime import unit_costs

        return unit_costs(SealBFV(poly_degree=4096, plain_bits=20), reps=10 if units.quick
                          else 40, seed=units.seed)

    return units.get("SEAL BFV (N=4096) per operation", measure)


def _run_hegc(w: Workload, units: Units, method: str) -> FamilyResult:
    from ppnn.he.bfv.sim import BFVSim
    from ppnn.protocols.gala.runtime import project_seconds

    key = "gazelle_gc" if method == "GAZELLE" else "gala_gc"
    plan = _hegc_plan(w, units)
    unit = _seal_units(units)
    rng = w.rng(key)
    he = BFVSim(n=2048)
    ledgers, preds, gcs = [], [], []
    for i in range(w.n_run):
        led = Ledger(hegc.PARTIES)
        logits, t = hegc.secure_inference(plan, w.x_run[i], he, method, rng, led)
        if not np.array_equal(logits, plan.forward_int(w.x_run[i:i + 1])):
            raise AssertionError(f"{method} + GC logits differ from GALA's integer oracle")
        ledgers.append(led)
        preds.append(int(logits.argmax()))
        gcs.append(t["garble_s"] + t["evaluate_s"])
    led, keys = split_one_time(ledgers[0])
    he_ops = ("Perm", "HstPerm", "DecPerm", "ScMult", "Add")
    lin = sum(project_seconds({op: led.op_count(op, label=st.name) for op in he_ops}, unit)
              for st in plan.steps if st.kind == "linear")
    # GAZELLE and GALA garble identical circuits on identical shares: one measurement (the
    # first of the two to run) serves both, so load noise cannot reorder them
    first = units.shared("hegc_gc_seconds", lambda: (method, gcs))
    gc_s = float(np.mean(first[1]))
    return FamilyResult(
        key, led, 1, lin + gc_s, "projected + measured",
        f"HE: counted operations x SEAL unit costs measured here (N = 4096, no hoisting); GC: "
        f"measured garbling + evaluation in the {first[0]} run (identical circuits for GAZELLE "
        f"and GALA), mean of {w.n_run} image(s); client encryption and decryption not included",
        {"linear": lin, "nonlinear": gc_s},
        max(keys.values(), default=0.0), "server: Galois (rotation) keys sent once by the "
        "client (one-time, not in the communication columns)",
        plan.predict(w.x_acc), "GALA's integer oracle (= protocol output bit for bit, checked)",
        np.array(preds), plan.predict(w.x_run),
        f"GALA's fixed-point plan: plaintext prime p = {plan.p} (20 bits), inputs 2^-6, "
        "per-layer weight bits, clipped activations",
        "ledger of a run on the BFV slot simulator (identical counts to SEAL) with real garbled "
        "circuits mod p (all online)",
        layer_classes(w.net), {"he_s": lin, "gc_s": gc_s})


def run_gazelle_gc(w: Workload, units: Units) -> FamilyResult:
    """GAZELLE's matrix-vector / convolution kernels + garbled ReLU (see :mod:`.hegc`)."""
    return _run_hegc(w, units, "GAZELLE")


def run_gala_gc(w: Workload, units: Units) -> FamilyResult:
    """GALA's rotation-frugal kernels + garbled ReLU (see :mod:`.hegc`)."""
    return _run_hegc(w, units, "GALA")


# -- SwaNN -------------------------------------------------------------------------------------
def _swann_setup(w: Workload, units: Units):
    from ppnn.protocols.swann.inference import SwannKeys
    from ppnn.protocols.swann.model import FixedPointPlan, SwannModel

    model = units.shared(f"swann_model_{id(w)}", lambda: SwannModel(
        w.net, w.params, "hybrid", FixedPointPlan(), w.x_calib))
    keys = units.shared("swann_keys", lambda: SwannKeys.generate(2048, two_server=True))
    return model, keys


def _run_swann(w: Workload, units: Units, scenario: str, real: bool) -> FamilyResult:
    from ppnn.protocols.swann.costs import count_model, measure_unit_costs, project_ms
    from ppnn.protocols.swann.inference import run_inference

    key = "swann_cs" if scenario == "client-server" else "swann_2s"
    per = 1 if scenario == "client-server" else 2
    model, keys = _swann_setup(w, units)
    rng = w.rng(key)
    classify = layer_classes(w.net)
    preds, ledger, res0 = [], None, None
    n_runs = -(-w.n_run // per)
    for j in range(n_runs):
        imgs = w.x_acc[j * per:(j + 1) * per]
        if len(imgs) < per:  # two-server, odd run subset at the end of the images: repeat one
            imgs = np.concatenate([imgs, imgs[-1:]])
        res = run_inference(model, imgs, scenario, True, keys, rng,
                            simulated=not (real and j == 0))
        for z, im in zip(res.logits, imgs):
            if not np.array_equal(np.asarray(z, dtype=object),
                                  model.forward_int(model.encode(im))):
                raise AssertionError("SwaNN logits differ from the integer model")
        preds += list(res.predictions)
        if j == 0:
            ledger, res0 = res.ledger, res
    preds = np.array(preds[: w.n_run])
    if real:
        df = res0.timings.frame()
        total = float(df["seconds"].sum())
        by = df.assign(cls=df["label"].map(classify)).groupby("cls")["seconds"].sum()
        kind = "measured"
        note = ("real 2048-bit Paillier and the ABY-style 2PC simulator, one run, all "
                "parties' compute")
    else:
        uc = units.get("Paillier-2048 + 2PC per operation", lambda: measure_unit_costs(
            2048, reps=10 if units.quick else 20, keys=(keys.public_key, keys.private_key),
            rng=np.random.default_rng(units.seed)))
        ms = project_ms(count_model(model, scenario, True, 2048), uc)
        per_step = ms.sum(axis=1) / 1e3
        total = float(per_step.sum())
        by = pd.Series(per_step.values, index=[classify(s) for s in per_step.index]) \
            .groupby(level=0).sum()
        kind = "projected"
        note = ("counted Paillier / 2PC operations x unit costs measured here with real "
                "2048-bit Paillier; all parties' compute (input encryption excluded)")
    pub = int(keys.public_key.n).bit_length()
    ledger, _ = split_one_time(ledger)  # two-server: the secret-key shares
    received = _offline_received(ledger)
    return FamilyResult(
        key, ledger, per, total, kind, note,
        {c: float(by.get(c, 0.0)) for c in CLASSES},
        max(received.values(), default=0.0) + 2 * pub / 8,
        "busiest party: offline 2PC material (OT / AND triples) + a 2048-bit Paillier key "
        "pair (two-server: each server's secret-key share, a few hundred bytes whose exact "
        "length depends on the key, is left out)",
        model.predict(w.x_acc, exact="int64"),
        "SwaNN's integer model (= decrypted logits exactly, checked)",
        preds, model.predict(w.x_run, exact="int64"),
        "integer model: f_in = f_w = f_act = 8, ell >= 32 calibrated per activation",
        "ledger of a run (Paillier simulator: identical counts)" + (
            "; compute from a real run" if real else ""),
        classify, {"scenario": scenario})


def run_swann_cs(w: Workload, units: Units, real: bool = False) -> FamilyResult:
    """SwaNN hybrid (Paillier + 2PC) in the client-server setting, optimised (§5.1)."""
    return _run_swann(w, units, "client-server", real)


def run_swann_2s(w: Workload, units: Units, real: bool = False) -> FamilyResult:
    """SwaNN hybrid in the two-server setting: two images per run, one per server."""
    return _run_swann(w, units, "two-server", real)


# -- SHE ---------------------------------------------------------------------------------------
def tfhe_key_bytes(params: dict) -> float:
    """Server key of tfhe-rs Boolean parameters (formula, 32-bit torus): the bootstrapping key
    ``n (k + 1)^2 l_pbs N`` and the key-switching key ``k N l_ks (n + 1)`` words of 4 bytes."""
    n, k, N = params["lwe_dimension"], params["glwe_dimension"], params["polynomial_size"]
    bsk = n * (k + 1) ** 2 * params["pbs_level"] * N
    ksk = k * N * params["ks_level"] * (n + 1)
    return 4.0 * (bsk + ksk)


def run_she(w: Workload, units: Units, weight_bits: int = 5, guard_bits: int = 2
            ) -> FamilyResult:
    """SHE: the network with log-quantized (power-of-two) weights, fine-tuned, every layer as
    TFHE gate circuits (shift-accumulate, ReLU unit, max unit). Gates and bootstraps counted
    on the bit simulator for every run image (the logits equal the integer model's); compute
    projected from the seconds per bootstrapped gate measured on the real tfhe-rs binding."""
    from ppnn.he.tfhe import TfheBackend, binding_available
    from ppnn.protocols.she import experiments as she_exp
    from ppnn.protocols.she import models as she_models
    from ppnn.protocols.she.quant import compile_network

    fnet, shadow, _ = she_models.trained(NETWORK, "she", weight_bits=weight_bits,
                                         quick=w.quick, seed=w.seed)
    qnet = compile_network(fnet, shadow, w.x_calib, "she", weight_bits=weight_bits,
                           guard_bits=guard_bits)
    ledgers, preds, layers = [], [], None
    for i in range(w.n_run):
        led = Ledger(("client", "server"))
        res = she_exp.simulate(qnet, w.x_run[i:i + 1], ledger=led)  # checks == integer model
        ledgers.append(led)
        preds.append(int(res.predictions[0]))
        layers = res.layers if layers is None else layers
    led = ledgers[0]
    boots = led.op_count("bootstrap")
    if binding_available():
        def measure():
            be = TfheBackend()
            g = she_exp.gate_latency(be, single=3 if units.quick else 7, batch=32)
            return {**g, "per_gate_s": min(g["and_single_s"], g["and_batched_s_per_gate"]),
                    "key_bytes": tfhe_key_bytes(be.parameters)}

        g = units.get("tfhe-rs Boolean gate", measure)
        per_gate, key_bytes = g["per_gate_s"], g["key_bytes"]
        kind = "projected"
        note = (f"{boots:,} bootstrapped gates (counted) x {per_gate * 1e3:.1f} ms per gate "
                "measured on tfhe-rs here (best of one gate and a 32-gate batch on all cores)")
    else:  # pragma: no cover - depends on the environment
        per_gate, key_bytes, kind = float("nan"), float("nan"), "not available"
        note = "the tfhe-rs binding is not installed: no gate latency measured"
    lin_boots = float(layers.loc[layers["kind"] != "maxpool", "bootstraps"].sum())
    pool_boots = float(layers.loc[layers["kind"] == "maxpool", "bootstraps"].sum())
    return FamilyResult(
        "she", led, 1, boots * per_gate, kind, note,
        {"linear": lin_boots * per_gate, "nonlinear": pool_boots * per_gate},
        key_bytes, "server: tfhe-rs bootstrapping + key-switching key (formula)",
        qnet.predict(w.x_acc), "SHE's integer model (= encrypted logits exactly, checked)",
        np.array(preds), qnet.predict(w.x_run),
        f"{weight_bits}-bit log-quantized weights (fine-tuned), 5-bit activations, "
        f"{guard_bits} guard bits; ReLU units fused into the linear layers' gates",
        "encrypted input bits and logits only (tfhe-rs ciphertext size)",
        layer_classes(w.net), {"bootstraps": boots, "per_gate_s": per_gate,
                               "depth": led.max_depth("md")})


# -- Falcon ------------------------------------------------------------------------------------
def _falcon_oracle(w: Workload, units: Units):
    from ppnn.protocols.falcon.experiments import calibrate

    scaled, _ = units.shared(f"falcon_cal_{id(w)}",
                             lambda: calibrate(w.net, w.params, w.x_calib[:256]))
    fxp = FixedPoint(Ring(32), 13)

    def predict(x):
        x = np.asarray(x)
        return np.concatenate([fxp.decode(nn.forward_fixed(w.net, scaled, x[i:i + 500], fxp))
                               .argmax(axis=1) for i in range(0, len(x), 500)])

    return predict


def _run_falcon(w: Workload, units: Units, malicious: bool) -> FamilyResult:
    from ppnn.protocols.falcon.experiments import private_inference, unit_compute_costs

    key = "falcon_mal" if malicious else "falcon_sh"
    ledgers, preds, secs = [], [], []
    for i in range(w.n_run):
        r = private_inference(w.net, w.params, w.x_run[i:i + 1], malicious=malicious,
                              seed=w.seed + i, batch_size=1, x_cal=w.x_calib[:256])
        ledgers.append(r["ledger"])
        preds.append(int(r["pred_private"][0]))
        secs.append(r["seconds"])
    led, _ = split_one_time(ledgers[0])  # PRF keys: one-time setup
    total = float(np.mean(secs))
    unit = units.get("Falcon simulator per ReLU / MAC", lambda: {
        f"{op} ({'malicious' if mal else 'semi-honest'})": v for (op, mal), v in
        unit_compute_costs(w.seed, n_relu=2000, mm=(64, 128, 64), repeats=1).items()})
    tag = "malicious" if malicious else "semi-honest"
    tot = w.net.totals()
    lin = tot["macs"] * unit[f"mac ({tag})"]
    non = (tot["relus"] + tot["comparisons"]) * unit[f"relu ({tag})"]
    split = {"linear": total * lin / (lin + non), "nonlinear": total * non / (lin + non)}
    predict = _falcon_oracle(w, units)
    received = _offline_received(led, Ledger.DEALER)
    return FamilyResult(
        key, led, 1, total, "measured",
        f"the 3-party simulator's run (all parties, dealer material generated inline), mean "
        f"of {w.n_run} image(s); split by layer type with measured per-ReLU / per-MAC costs",
        split, max(received.values(), default=0.0),
        "busiest party: dealer material (triples, truncation pairs, compare randomness)",
        predict(w.x_acc),
        "fixed-point oracle (Z_2^32, 13 fractional bits, floor truncation); the protocol "
        "truncates to floor or floor + 1 ulp, predictions checked on the run subset",
        np.array(preds), predict(w.x_run),
        "Z_2^32, 13 fractional bits, power-of-two rescaling per layer (calibrated)",
        "ledger of a real run (3 parties; dealer material offline)",
        layer_classes(w.net), {"malicious": malicious})


def run_falcon_sh(w: Workload, units: Units) -> FamilyResult:
    """Falcon semi-honest: replicated sharing over Z_2^32 among P0, P1, P2."""
    return _run_falcon(w, units, False)


def run_falcon_mal(w: Workload, units: Units) -> FamilyResult:
    """Falcon malicious (abort): redundant openings and verified multiplications."""
    return _run_falcon(w, units, True)


RUNNERS: dict[str, Callable[..., FamilyResult]] = {
    "delphi_gc": run_delphi_gc, "delphi_tabula": run_delphi_tabula,
    "gazelle_gc": run_gazelle_gc, "gala_gc": run_gala_gc, "swann_cs": run_swann_cs,
    "swann_2s": run_swann_2s, "she": run_she, "falcon_sh": run_falcon_sh,
    "falcon_mal": run_falcon_mal,
}

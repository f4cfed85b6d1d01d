"""The SHE notebook's heavy steps: real-TFHE timings, the MNIST model suite, simulated runs.

Everything here is deterministic per seed except wall-clock timings, which callers keep in
separate ``*_timings.csv`` files.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ppnn import data, nn, paths
from ppnn.he.bitsim import BitSimulator, GateBackend
from ppnn.protocols.she import circuits as C
from ppnn.protocols.she import network
from ppnn.protocols.she.latency import encryption_latency, gate_latency
from ppnn.protocols.she.quant import QuantNet, compile_network

from . import models

__all__ = ["gate_latency", "encryption_latency", "MnistModel", "mnist_suite", "calibrate_scales",
           "PERCENTILES",
           "weight_bits_sweep", "square_activation_accuracy", "simulate", "relu_unit_demo",
           "save_timings"]


@dataclass
class MnistModel:
    """A compiled model with its accuracy and training info."""

    name: str
    scheme: str
    qnet: QuantNet
    accuracy: float
    float_accuracy: float
    n_test: int
    info: dict = field(default_factory=dict)
    #: the fine-tuned network with its quantized weights but float activations and inputs:
    #: separates what the weights cost from what the 5-bit activations cost
    weights_only_accuracy: float = float("nan")
    #: the activation-scale percentile chosen on validation images, and every candidate's
    #: validation accuracy
    percentile: float = 99.99
    validation: dict = field(default_factory=dict)


#: candidate percentiles for the power-of-two activation scales (clipping vs resolution)
PERCENTILES = (99.99, 99.9, 99.5, 99.0)


def calibrate_scales(fnet, params, x_calib, x_val, y_val, scheme: str = "she",
                     guard_bits: int = 2, percentiles=PERCENTILES, **kw):
    """Compile with the activation-scale percentile that classifies ``x_val`` best.

    A 5-bit activation has 32 levels on a power-of-two scale: calibrated on the largest
    values (99.99th percentile) it keeps outliers and loses resolution, on the 99th it clips
    them. Which costs less is a property of the model, so it is chosen per model on
    validation images -- training images (``x_val``), never the test set. Returns
    ``(qnet, percentile, {percentile: validation accuracy})``; ties go to the first."""
    val, nets = {}, {}
    for pct in percentiles:
        nets[pct] = compile_network(fnet, params, x_calib, scheme=scheme, guard_bits=guard_bits,
                                    percentile=pct, **kw)
        val[pct] = nets[pct].accuracy(x_val, y_val)
    best = max(percentiles, key=lambda p: val[p])  # max keeps the first of equal ones
    return nets[best], best, val


def mnist_suite(quick: bool = True, seed: int = 0, n_test: int | None = None,
                guard_bits: int = 2, n_calib: int = 1000, n_val: int = 5000
                ) -> dict[str, MnistModel]:
    """SHE (log weights, ``guard_bits``), SHE paper-literal (5-bit truncated terms, g=0),
    TCN (uniform weights) on the SHE MNIST network, and DSHE; accuracies on ``n_test`` MNIST
    test images (all 10k when None); activation scales calibrated on ``n_calib`` training
    images at the percentile (:func:`calibrate_scales`) that does best on the last
    ``n_val`` training images."""
    x, y, xt, yt = data.load_mnist()
    x_val, y_val = x[-n_val:], y[-n_val:]
    if n_test is not None:
        xt, yt = xt[:n_test], yt[:n_test]
    out = {}
    specs = [("SHE", "she_mnist", "she", guard_bits), ("SHE-g0", "she_mnist", "she", 0),
             ("TCN", "she_mnist", "tcn", 0), ("DSHE", "dshe_mnist", "she", guard_bits)]
    for key, name, scheme, g in specs:
        fnet, shadow, info = models.trained(name, scheme, quick=quick, seed=seed)
        qn, pct, val = calibrate_scales(fnet, shadow, x[:n_calib], x_val, y_val, scheme, g)
        wq = nn.accuracy(fnet, models.quantize_weights(shadow, scheme, qn.weight_bits), xt, yt)
        out[key] = MnistModel(name, scheme, qn, qn.accuracy(xt, yt),
                              info["float_test_accuracy"], len(xt), info, wq, pct, val)
    return out


def square_activation_accuracy(quick: bool = True, seed: int = 0,
                               n_test: int | None = None) -> dict:
    """Float test accuracy of CryptoNets' MNIST network (x^2 activations, scaled mean-pool:
    CNT) and of the same geometry with ReLU, max-pool and batch-norm (``she_mnist``,
    unencrypted), both trained by :func:`ppnn.nn.pretrained` with one recipe (SHE §2 / Fig. 1:
    'the square activation reduces inference accuracy by 0.82% compared to unencrypted
    models')."""
    from ppnn.nn.forward import predict

    _, _, xt, yt = data.load_mnist()
    if n_test is not None:
        xt, yt = xt[:n_test], yt[:n_test]
    out = {"n_test": len(xt)}
    for key, name in (("square", "cryptonets_mnist"), ("relu", "she_mnist")):
        params = nn.pretrained(name, quick=quick, seed=seed)
        out[key] = float((predict(nn.zoo.get(name), params, xt) == yt).mean())
    return out


def weight_bits_sweep(bits_list, quick: bool = True, seed: int = 0, n_test: int = 1000,
                      guard_bits: int = 2) -> list[dict]:
    """Accuracy of SHE's MNIST network vs log-quantized weight bits: post-training rounding
    of the float model, and after quantization-aware fine-tuning (cached per bit width)."""
    x, _, xt, yt = data.load_mnist()
    xt, yt = xt[:n_test], yt[:n_test]
    net = nn.zoo.get("she_mnist")
    params = nn.pretrained("she_mnist", quick=quick, seed=seed)
    rows = []
    for b in bits_list:
        post = compile_network(net, params, x[:1000], weight_bits=b, guard_bits=guard_bits)
        fnet, shadow, _ = models.trained("she_mnist", "she", weight_bits=b, quick=quick,
                                         seed=seed)
        qat = compile_network(fnet, shadow, x[:1000], weight_bits=b, guard_bits=guard_bits)
        rows.append({"weight_bits": b, "post_training": post.accuracy(xt, yt),
                     "fine_tuned": qat.accuracy(xt, yt)})
    return rows


def simulate(qnet: QuantNet, x_images, public_constants: bool = False, ledger=None,
             accumulator: str = "mixed", chunk: int = 2) -> network.InferenceResult:
    """Encrypted inference of float images on the bit simulator, ``chunk`` images at a time
    (memory); checks the logits against the integer model (AssertionError if a circuit
    disagrees). Costs per image do not depend on the image (every gate decision is public), so
    the first chunk's cost frame stands for all."""
    x_images = np.asarray(x_images)
    first, logits = None, []
    for i in range(0, len(x_images), chunk):
        xi = qnet.encode_input(x_images[i:i + chunk])
        res = network.encrypted_inference(
            qnet, BitSimulator(public_constants=public_constants), xi,
            ledger=ledger if i == 0 else None, accumulator=accumulator)
        if not (res.logits == qnet.forward_int(xi)).all():
            raise AssertionError("encrypted logits differ from the integer model")
        logits.append(res.logits)
        first = first or res
    first.logits = np.concatenate(logits)
    return first


def relu_unit_demo(backend: GateBackend, values, bits: int = 5) -> dict:
    """Encrypt ``values``, run the ReLU unit of Fig. 2, decrypt; with gate counts and time."""
    backend.reset_counts()
    x = C.encrypt_word(backend, np.asarray(values), bits, signed=True)
    t0 = time.perf_counter()
    r = C.relu_unit(x)
    sec = time.perf_counter() - t0
    return {"input": np.asarray(values), "bits_in": C.decrypt_word(backend, x),
            "relu": C.decrypt_word(backend, r), "gates": backend.hgops,
            "bootstraps": backend.bootstraps, "md": r.md(), "seconds": sec}


def save_timings(timings: dict[str, float], t0: float) -> None:
    """Write the notebook's wall-clock values (``timings``: name -> seconds) to
    ``results_dir("she")/she_timings.csv`` and say how long the notebook body took since
    ``t0`` (a ``time.perf_counter()`` reading)."""
    paths.atomic_write(paths.results_dir("she") / "she_timings.csv",
                       pd.Series(timings).to_csv(header=["seconds"]))
    print(f"notebook body: {time.perf_counter() - t0:.0f} s")

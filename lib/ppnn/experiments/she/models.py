"""Trained SHE / TCN models: quantization-aware fine-tuning of a trained float network.

SHE's weights are powers of two; rounding a float-trained network's weights to the nearest
power of two afterwards changes each weight by up to 41% and costs several points of accuracy
(measured in the notebook). LogNet (Lee et al. 2017, which SHE follows) trains *with* the
logarithmic quantizer, so we fine-tune: batch-norm is folded into the linear layers (the form
the encrypted network computes), and a few epochs of Adam update float *shadow* weights whose
power-of-two (SHE) or uniform (TCN) quantization is used in every forward pass
(straight-through estimator: the gradient of the quantized weight is applied to the shadow).
Results are cached under ``data/cache/models`` (trained once per setting and seed).
"""

from __future__ import annotations

import copy
import json
import time

import numpy as np

from ppnn import nn, paths
from ppnn.nn._blas import blas_threads
from ppnn.nn.backprop import backward, forward_train, softmax_cross_entropy
from ppnn.protocols.she.quant import log_quantize, uniform_quantize

__all__ = ["quantize_weights", "finetune_quantized", "trained"]


def quantize_weights(params: list, scheme: str, weight_bits: int) -> list:
    """Parameters with every ``W`` replaced by its quantized float value."""
    out = []
    for p in params:
        q = dict(p)
        if "W" in q:
            W = np.asarray(q["W"])
            if scheme == "she":
                v = log_quantize(W, weight_bits).values()
            elif scheme == "tcn":
                w_int, sigma = uniform_quantize(W, weight_bits)
                v = w_int * 2.0**sigma
            else:
                raise ValueError(f"scheme must be 'she' or 'tcn', got {scheme!r}")
            q["W"] = v.astype(W.dtype)
        out.append(q)
    return out


def finetune_quantized(net: nn.Network, params: list, x, y, scheme: str = "she",
                       weight_bits: int = 5, epochs: int = 1, batch_size: int = 64,
                       lr: float = 2e-4, rng: np.random.Generator | None = None,
                       x_test=None, y_test=None):
    """Fold batch-norm, then fine-tune with quantized weights in the forward pass (STE).

    Returns ``(folded_net, shadow_params, history)``; ``quantize_weights(shadow_params)`` are
    the deployed weights (``compile_network`` quantizes the shadow weights the same way).
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator (seed it explicitly)")
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 0:
        raise ValueError(f"epochs must be an int >= 0, got {epochs!r}")
    fnet, shadow = nn.fold_batchnorm(net, params)
    shadow = copy.deepcopy(shadow)
    x, y = np.asarray(x), np.asarray(y)
    b1, b2, eps = 0.9, 0.999, 1e-8
    state: dict = {}
    t = 0
    rows = []
    with blas_threads(1):
        for epoch in range(1, epochs + 1):
            t0 = time.perf_counter()
            order = rng.permutation(len(x))
            tot, correct = 0.0, 0
            for i in range(0, len(x), batch_size):
                idx = order[i:i + batch_size]
                xb = x[idx].astype(np.float32, copy=False)
                q = quantize_weights(shadow, scheme, weight_bits)
                logits, caches = forward_train(fnet.layers, q, xb)
                loss, g = softmax_cross_entropy(logits, y[idx])
                _, grads = backward(fnet.layers, q, caches, g)
                t += 1
                c1, c2 = 1 - b1**t, 1 - b2**t
                for j, (p, gr) in enumerate(zip(shadow, grads)):
                    for k, gk in gr.items():
                        m, v = state.get((j, k), (np.zeros_like(gk), np.zeros_like(gk)))
                        m = b1 * m + (1 - b1) * gk
                        v = b2 * v + (1 - b2) * gk * gk
                        state[(j, k)] = (m, v)
                        p[k] = (p[k] - lr * (m / c1) / (np.sqrt(v / c2) + eps)).astype(
                            p[k].dtype)
                tot += loss * len(idx)
                correct += int((logits.argmax(1) == y[idx]).sum())
            row = {"epoch": epoch, "loss": tot / len(x), "train_acc": correct / len(x),
                   "seconds": time.perf_counter() - t0}
            if x_test is not None:
                row["test_acc"] = nn.accuracy(fnet, quantize_weights(shadow, scheme,
                                                                     weight_bits),
                                              x_test, y_test)
            rows.append(row)
    return fnet, shadow, rows


def _path(name, scheme, weight_bits, quick, seed):
    mode = "quick" if quick else "full"
    return paths.cache_dir() / "models" / f"she-{name}-{scheme}-w{weight_bits}-{mode}-{seed}.npz"


def trained(name: str, scheme: str = "she", weight_bits: int = 5, quick: bool = True,
            seed: int = 0, epochs: int | None = None, lr: float | None = None):
    """A zoo network trained on MNIST (``ppnn.nn.pretrained``), batch-norm folded and
    fine-tuned with quantized weights; cached. Returns ``(folded_net, shadow_params, info)``.

    One fine-tuning epoch on the float model's training images, Adam with step 5e-5 (full) or
    2e-4 (quick: the briefly trained quick models profit from a larger step); measured: a
    larger full-mode step leaves the 30-layer DSHE 3 points below its float accuracy, this one
    within 0.1 point. A cached model is reused only if the zoo's network definition and this
    recipe are unchanged.
    """
    from ppnn import data

    net = nn.zoo.get(name)
    path = _path(name, scheme, weight_bits, bool(quick), int(seed))
    fnet, _ = nn.fold_batchnorm(net, nn.init_params(net, np.random.default_rng(0)))
    ep = 1 if epochs is None else epochs
    lr = (2e-4 if quick else 5e-5) if lr is None else float(lr)
    recipe = {"arch": repr(net.layers), "epochs": ep, "lr": lr}
    if path.exists():
        with np.load(path, allow_pickle=False) as z:
            flat = {k: z[k] for k in z.files if not k.startswith("__")}
            info = json.loads(str(z["__info__"]))
        if info.get("recipe") == recipe:  # retrain when the network or the recipe changed
            try:
                return fnet, nn.unflatten_params(fnet, flat), info
            except ValueError:
                pass
    params, pinfo = nn.pretrained(name, quick=quick, seed=seed, with_info=True)
    x, y, xt, yt = data.load_mnist()
    n = pinfo["train_samples"]
    rng = np.random.default_rng([int(seed), 0x5E, weight_bits])
    fnet, shadow, hist = finetune_quantized(net, params, x[:n], y[:n], scheme, weight_bits,
                                            ep, lr=lr, rng=rng)
    info = {"name": name, "scheme": scheme, "weight_bits": weight_bits, "quick": bool(quick),
            "seed": int(seed), "recipe": recipe, "float_test_accuracy": pinfo["test_accuracy"],
            "finetune_epochs": ep, "finetune_history": hist,
            "train_seconds": pinfo.get("train_seconds", 0.0)
            + float(sum(r["seconds"] for r in hist))}
    path.parent.mkdir(parents=True, exist_ok=True)
    with paths.atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            np.savez(f, **nn.flatten_params(shadow), __info__=np.array(json.dumps(info)))
    return fnet, shadow, info

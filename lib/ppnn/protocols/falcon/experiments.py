"""The heavy runs behind notebook 05_falcon and the benchmarks (kept out of the notebook).

* :func:`calibrate` -- power-of-two rescaling of a float model so every pre-activation stays
  in the range a 32-bit ring with 13 fractional bits can multiply and truncate (|v| < 16);
  ReLU and max-pool are positively homogeneous, so predictions are unchanged.
* :func:`private_inference` -- shares real images and a model, runs every layer on shares,
  and compares with the float model (the paper's Table 6 question).
* :func:`private_training` -- forward, backward and SGD on shares for a few or many batches.
* :func:`network_cost_rows` -- per-network online rounds/bytes from the closed forms, with
  LAN/WAN time projections (Tables 2-5 shape; Fig. 1 compute vs communication).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ppnn.core import LAN, WAN, project_counts
from ppnn.nn import BatchNorm, Network
from ppnn.nn.backprop import forward_train
from ppnn.nn.forward import forward, predict

from . import costs as C
from .family import RANGE_LIMIT, calibrate
from .network import reveal_model, secure_forward, share_model, train_step
from .runtime import Falcon

__all__ = ["calibrate", "private_inference", "private_training", "network_cost_rows",
           "unit_compute_costs", "RANGE_LIMIT"]

def private_inference(net: Network, params, x: np.ndarray, malicious: bool = False,
                      seed: int = 0, batch_size: int = 100, x_cal: np.ndarray | None = None,
                      frac_bits: int = 13) -> dict:
    """Private inference of ``x`` (N, C, H, W) in batches; returns outputs, predictions,
    the float reference and the ledger of the whole run."""
    cal = x_cal if x_cal is not None else x[:256]
    scaled, scale = calibrate(net, params, cal)
    fal = Falcon(np.random.default_rng(seed), malicious=malicious, frac_bits=frac_bits)
    model = share_model(fal, net, scaled)
    outs = []
    t0 = time.perf_counter()
    for i in range(0, len(x), batch_size):
        xs = fal.share_fixed(np.asarray(x[i:i + batch_size], np.float64))
        out, _ = secure_forward(fal, model, xs)
        outs.append(fal.reveal_fixed(out) * scale)
    seconds = time.perf_counter() - t0
    private = np.concatenate(outs)
    ref = forward(net, params, np.asarray(x, np.float64))
    rel = np.linalg.norm(private - ref, axis=1) / np.maximum(np.linalg.norm(ref, axis=1), 1e-12)
    return {"private": private, "float": ref, "pred_private": private.argmax(1),
            "pred_float": ref.argmax(1), "relative_error": rel, "output_scale": scale,
            "seconds": seconds, "ledger": fal.ledger}


def private_training(net: Network, params, x, y, x_test, y_test, iters: int, batch: int = 128,
                     lr_shift: int = 2, seed: int = 0, eval_every: int = 10,
                     n_eval: int = 1000, malicious: bool = False) -> tuple[pd.DataFrame, dict]:
    """``iters`` private SGD iterations on random batches; evaluates the revealed model
    (in the clear) every ``eval_every`` iterations. Returns (history, info)."""
    rng = np.random.default_rng(seed)
    fal = Falcon(np.random.default_rng(seed), malicious=malicious)
    model = share_model(fal, net, params)
    rows, t_total = [], 0.0
    for it in range(1, iters + 1):
        idx = rng.choice(len(x), batch, replace=False)
        t0 = time.perf_counter()
        out = train_step(fal, model, fal.share_fixed(np.asarray(x[idx], np.float64)), y[idx],
                         lr_shift)
        t_total += time.perf_counter() - t0
        o = fal.reveal_fixed(out)
        onehot = np.eye(o.shape[1])[y[idx]]
        row = {"iteration": it, "loss": float(0.5 * ((o - onehot) ** 2).sum(1).mean()),
               "batch_acc": float((o.argmax(1) == y[idx]).mean()), "test_acc": np.nan}
        if it % eval_every == 0 or it == iters:
            p = reveal_model(fal, model)
            if any(isinstance(layer, BatchNorm) for layer in net.layers):
                # private training keeps no running statistics: estimate them in the clear
                # from 1024 training images with the revealed weights (evaluation only)
                forward_train(net.layers, p, np.asarray(x[:1024], np.float64), momentum=1.0)
            row["test_acc"] = float((predict(net, p, x_test[:n_eval]) == y_test[:n_eval]).mean())
        rows.append(row)
    info = {"seconds_per_iteration": t_total / iters, "ledger": fal.ledger}
    return pd.DataFrame(rows), info


def unit_compute_costs(seed: int = 0, n_relu: int = 20000, mm=(256, 512, 256),
                       repeats: int = 2) -> dict:
    """Measured simulation seconds per ReLU and per ring MAC (semi-honest and malicious), used
    to project the compute time of networks too large to simulate here."""
    out = {}
    for mal in (False, True):
        fal = Falcon(np.random.default_rng(seed), malicious=mal)
        from .compare import relu

        x = fal.share_fixed(np.random.default_rng(1).normal(size=n_relu))
        best = np.inf
        for _ in range(repeats):
            t0 = time.perf_counter()
            relu(fal, x)
            best = min(best, time.perf_counter() - t0)
        out[("relu", mal)] = best / n_relu
        a = fal.share_fixed(np.random.default_rng(2).normal(size=mm[:2]) * 0.1)
        w = fal.share_fixed(np.random.default_rng(3).normal(size=mm[1:]) * 0.1)
        best = np.inf
        for _ in range(repeats):
            t0 = time.perf_counter()
            with fal.protocol("mm"):
                fal.matmul_fixed(a, w)
            best = min(best, time.perf_counter() - t0)
        out[("mac", mal)] = best / (mm[0] * mm[1] * mm[2])
    return out


def _work(net: Network) -> tuple[int, int]:
    tot = net.totals()
    return int(tot["macs"]), int(tot["relus"] + tot["comparisons"])


def network_cost_rows(names, unit: dict, batch: int = 1, train: bool = False,
                      measured_compute: dict | None = None) -> pd.DataFrame:
    """Closed-form online cost per network and LAN/WAN projections (all labelled)."""
    from ppnn.nn import zoo

    rows = []
    for name in names:
        net = zoo.get(name)
        macs, relus = _work(net)
        for mal in (False, True):
            c = C.network_cost(net, batch, mal=mal, train=train)
            mb = float(c.bits) / 8 / 1e6
            key = (name, mal)
            if measured_compute and key in measured_compute:
                comp, comp_kind = measured_compute[key], "measured"
            else:
                mult = 3 if train else 1  # backward ~ two more products per MAC
                comp = batch * (mult * macs * unit[("mac", mal)] + relus * unit[("relu", mal)])
                comp_kind = "projected"
            for netw in (LAN, WAN):
                pr = project_counts(int(c.rounds), float(c.bits) / 8 / 3, netw, comp)
                rows.append({"network": name, "threat_model": "malicious" if mal else
                             "semi-honest", "setting": netw.name, "rounds": int(c.rounds),
                             "comm_MB": mb, "compute_s": comp, "compute_kind": comp_kind,
                             "latency_s": pr.latency_s, "transfer_s": pr.transfer_s,
                             "time_s": pr.total_s, "macs": macs * batch,
                             "relus": relus * batch})
    return pd.DataFrame(rows)

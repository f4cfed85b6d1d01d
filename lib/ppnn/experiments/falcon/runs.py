"""The heavy runs behind notebook 05_falcon and the benchmarks (kept out of the notebook).

The float model is rescaled for the ring by :func:`ppnn.protocols.falcon.family.calibrate`
(powers of two so every pre-activation stays below 16 with 13 fractional bits; ReLU and
max-pool are positively homogeneous, so predictions are unchanged).

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
from ppnn.nn._blas import blas_threads
from ppnn.nn.backprop import forward_train
from ppnn.nn.forward import forward, predict
from ppnn.protocols.falcon import costs as C
from ppnn.protocols.falcon.family import calibrate
from ppnn.protocols.falcon.network import reveal_model, secure_forward, share_model, train_step
from ppnn.protocols.falcon.runtime import Falcon

__all__ = ["private_inference", "inference_accuracy", "private_training", "network_cost_rows",
           "protocol_cost_check", "ring_size_comparison"]

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
                # (one BLAS thread, as training and inference: the same bits on any cores)
                with blas_threads(1):
                    forward_train(net.layers, p, np.asarray(x[:1024], np.float64),
                                  momentum=1.0)
            row["test_acc"] = float((predict(net, p, x_test[:n_eval]) == y_test[:n_eval]).mean())
        rows.append(row)
    info = {"seconds_per_iteration": t_total / iters, "ledger": fal.ledger}
    return pd.DataFrame(rows), info


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


#: training images the quick mode measures training accuracy on (the full mode: all of them)
QUICK_TRAIN_IMAGES = 5000


def inference_accuracy(names, labels: dict, n_test: dict, x_train, x_test, y_test,
                       quick: bool = True, seed: int = 0, batch_size: int = 50,
                       y_train=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The paper's Table 6 question for each zoo network: trained in the clear
    (:func:`ppnn.nn.train.pretrained`), inferred privately on ``n_test[name]`` test images.
    ``training_accuracy`` is the trained model's float accuracy on the unshifted training
    images ``x_train, y_train`` (the training loop's running accuracy over its randomly
    shifted batches is ``last_epoch_accuracy``); without ``y_train`` it is that running
    accuracy. The quick mode measures it on the first :data:`QUICK_TRAIN_IMAGES` images.

    Returns (accuracy table, timing table); the second is wall-clock and changes run to run.
    ``relative_error`` is the mean over images of ||out_private - out_float|| / ||out_float||
    on the final-layer outputs (the paper does not define it)."""
    from ppnn.nn import zoo
    from ppnn.nn.train import pretrained

    rows, times = [], []
    for name in names:
        net = zoo.get(name)
        params, info = pretrained(name, quick=quick, seed=seed, with_info=True)
        n = n_test[name]
        res = private_inference(net, params, x_test[:n], seed=seed, batch_size=batch_size,
                                x_cal=x_train[:512])
        y = y_test[:n]
        running = 100 * float(info["history"]["train_acc"][-1])
        n_train = 0
        if y_train is not None:
            n_train = min(QUICK_TRAIN_IMAGES, len(y_train)) if quick else len(y_train)
        train_acc = running if not n_train else 100 * float(
            (predict(net, params, x_train[:n_train]) == np.asarray(y_train[:n_train])).mean())
        rows.append({
            "network": labels[name],
            "training_accuracy": train_acc, "last_epoch_accuracy": running,
            "train_images": n_train,
            "inference_accuracy": 100 * float((res["pred_float"] == y).mean()),
            "falcon_inference_accuracy": 100 * float((res["pred_private"] == y).mean()),
            "relative_error": 100 * float(res["relative_error"].mean()),
            "agreement_private_vs_float": 100 * float((res["pred_private"] ==
                                                        res["pred_float"]).mean()),
            "test_images": n, "output_scale": res["output_scale"],
            "full_test_accuracy_float": 100 * info["test_accuracy"]})
        times.append({"network": labels[name], "images": n, "seconds": res["seconds"],
                      "seconds_per_image": res["seconds"] / n})
    return pd.DataFrame(rows), pd.DataFrame(times)


def _table9_instances() -> dict:
    """One small input per row of :func:`ppnn.protocols.falcon.costs.table9` (n = 1, windows
    of 4, batch norm over 128 rows; the matrix product is (2 x 3)(3 x 2))."""
    from ppnn.protocols import falcon as F
    from ppnn.protocols.falcon.catalog import protocol_instances
    from ppnn.protocols.falcon.comparison import wrap3_protocol
    from ppnn.protocols.falcon.numeric import batchnorm_forward, divide, pow2_bound
    from ppnn.protocols.falcon.pooling import maxpool

    def matmul(f):
        with f.protocol("mm"):
            f.matmul_fixed(f.share_fixed(np.ones((2, 3))), f.share_fixed(np.ones((3, 2))))

    return {
        "MatMul (a x b)(b x c)": matmul,
        "Private Compare": protocol_instances(1)["private compare"],
        "Wrap3": lambda f: wrap3_protocol(f, f.share_fixed([0.5])),
        "Derivative of ReLU": lambda f: F.drelu(f, f.share_fixed([0.5])),
        "ReLU": lambda f: F.relu(f, f.share_fixed([0.5])),
        "Maxpool + derivative (k-element windows)":
            lambda f: maxpool(f, f.share_fixed([[1, 2, 3, 4.]])),
        "Pow": lambda f: pow2_bound(f, f.share_fixed([3.0])),
        "Division": lambda f: divide(f, f.share_fixed([1.0]), f.share_fixed([3.0])),
        "Batch Norm (forward, m rows)": lambda f: batchnorm_forward(
            f, f.share_fixed(np.random.default_rng(0).normal(size=(128, 1))),
            f.share_fixed([1.0]), f.share_fixed([0.0])),
    }


def formulas_markdown(df: pd.DataFrame, columns: list[str]) -> str:
    """``df[columns]`` as a Markdown table whose closed forms (sympy strings such as
    ``6*ell*n*ceiling(log(p)/log(2))``) are typeset as LaTeX: ``$6 \\ell n \\lceil
    \\log_2 p \\rceil$``; other cells as they are."""
    import re

    import sympy as sp

    log2 = sp.Function("log_2")
    names = {"log2": log2, "ell": sp.Symbol("ell")}

    def tex(v) -> str:
        if not isinstance(v, str) or not re.search(r"[a-z]", v):
            return str(v)  # a number
        try:
            expr = sp.sympify(re.sub(r"log\(([^()]+)\)/log\(2\)", r"log2(\1)", v), locals=names)
        except (sp.SympifyError, SyntaxError, TypeError):
            return v
        return "$" + sp.latex(expr).replace(r"\operatorname{log}_{2}", r"\log_2") + "$"

    out = df[columns].copy()
    for c in columns[1:]:
        out[c] = [tex(v) for v in out[c]]
    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n"
    return head + "".join("| " + " | ".join(str(v) for v in r) + " |\n"
                          for r in out.itertuples(index=False))


def protocol_cost_check(seed: int = 0) -> pd.DataFrame:
    """Falcon's Table 9 shape: for every protocol, the closed forms (symbolic, and at
    ell = 32, p = 37 for one element) beside the online rounds and bits of a run's ledger,
    semi-honest and malicious; ``ledger_equal`` says whether all four agree."""
    sym_rows, num_rows = C.table9(), C.table9(32, 37)
    instances = _table9_instances()

    def ledger_of(fn, mal):
        f = Falcon(np.random.default_rng(seed), malicious=mal)
        fn(f)
        return f.ledger.rounds("online"), f.ledger.total_bits("online")

    rows = []
    for (name, dep, shr, shb, mr, mb), (_, _, nshr, nshb, nmr, nmb) in zip(sym_rows, num_rows):
        fn = instances[name]
        (lr_sh, lb_sh), (lr_m, lb_m) = ledger_of(fn, False), ledger_of(fn, True)
        rows.append({"protocol": name, "dependence": dep, "sh_rounds": str(shr),
                     "sh_bits": str(shb), "mal_rounds": str(mr), "mal_bits": str(mb),
                     "sh_rounds_l32": nshr, "sh_bytes_l32": nshb / 8, "mal_rounds_l32": nmr,
                     "mal_bytes_l32": nmb / 8,
                     "ledger_equal": (lr_sh, lb_sh, lr_m, lb_m) == (nshr, nshb, nmr, nmb)})
    return pd.DataFrame(rows)


def ring_size_comparison() -> pd.DataFrame:
    """ReLU, DReLU and private compare per element in Z_2^32 (p = 37, Falcon) vs Z_2^64
    (p = 67, SecureNN's ring), from the closed forms, semi-honest and malicious."""
    rows = []
    for name, fn in [("ReLU", C.relu_cost), ("Derivative of ReLU", C.drelu_cost),
                     ("Private Compare", C.pc_cost)]:
        for mal in (False, True):
            c32, c64 = fn(1, 32, 37, mal), fn(1, 64, 67, mal)
            rows.append({"protocol": name,
                         "threat_model": "malicious" if mal else "semi-honest",
                         "bytes_l32": c32.bits / 8, "bytes_l64": c64.bits / 8,
                         "comm_ratio_64_over_32": c64.bits / c32.bits, "rounds_l32": c32.rounds,
                         "rounds_l64": c64.rounds})
    return pd.DataFrame(rows)

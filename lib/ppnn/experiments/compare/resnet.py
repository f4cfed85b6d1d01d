"""A ResNet through every family: He et al.'s CIFAR ResNet-20 -- or, in quick mode, the same
graph at widths 2/4/8 on 16x16 images -- counted beside the comparison's network, or compared
end to end.

``resnet_counts(quick, seed)`` -- per family the counted ledger of one inference (compiled
and counted, not run): online and offline MB, online rounds and the projected WAN network
time (rounds and bytes only: nothing ran, so no compute is in it), with the seconds the
compile and the count took; ``side_by_side(frame, counts)`` -- the comparison's network and
the ResNet, one row per family; ``compare_resnet(quick, seed, units)`` -- the whole
comparison (compile, run, check against the oracle, compute, the per-layer-kind breakdown)
of a ResNet on random images of its input shape, as ``python -m ppnn compare resnet20.onnx``
makes it.

The ResNet has random weights and batch-norm statistics and is calibrated on random images:
its counts depend on the weights only through what a family calibrates on its images
(SwaNN's activation widths, which set its packing; GALA's weight bits; Tabula's shifts).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ppnn import nn
from ppnn.core import WAN, project
from ppnn.protocols import api

__all__ = ["resnet_network", "random_params", "resnet_counts", "side_by_side",
           "compare_resnet", "REDUCED", "QUICK_OPTIONS"]

#: quick mode's copy of ResNet-20's graph: 3 stages x 3 basic blocks, these widths and image
REDUCED = {"widths": (2, 4, 8), "image": 16}
MB = 1e6
#: compile options of quick runs: the HE families pack a reduced copy's small feature maps
#: into 256-slot ciphertexts (the slot simulator's cost grows with the slots)
QUICK_OPTIONS = {"gazelle_gc": {"n": 256}, "gala_gc": {"n": 256}}


def resnet_network(quick: bool) -> nn.Network:
    """ResNet-20 (``resnet20_cifar10``), or in quick mode its graph at :data:`REDUCED`."""
    return nn.zoo.resnet_cifar(3, **REDUCED) if quick else nn.zoo.get("resnet20_cifar10")


def random_params(net: nn.Network, seed: int | np.random.Generator) -> list:
    """He-normal weights, non-trivial batch-norm statistics (every family folds them), drawn
    from ``seed`` (an int, or a Generator to draw from as it stands)."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng([seed, 20])
    params = nn.init_params(net, rng, np.float64)
    for k, v in nn.flatten_params(params).items():
        if k.endswith(("mean", "beta")):
            v[...] = rng.normal(0, 0.1, v.shape)
        elif k.endswith("gamma"):
            v[...] = rng.uniform(0.5, 1.0, v.shape)
        elif k.endswith("var"):
            v[...] = rng.uniform(0.5, 1.5, v.shape)
    return params


def resnet_counts(quick: bool = True, seed: int = 0, families=None, progress=None
                  ) -> pd.DataFrame:
    """Compile and count one inference of :func:`resnet_network` for every family (or
    ``families``); ``progress`` (callable) gets one line per family."""
    from ppnn.protocols.swann.inference import SwannKeys

    net = resnet_network(quick)
    params = random_params(net, seed)
    calib = np.random.default_rng([seed, 32]).random((32, *net.input_shape))
    keys = None
    rows = []
    for key in families or list(api.families()):
        fam = api.family(key)
        per = fam.spec.images_per_run
        options = {}
        if key.startswith("swann"):  # one key pair for both settings (the keygen is slow)
            keys = keys or SwannKeys.generate(two_server=True)
            options["keys"] = keys
        t0 = time.perf_counter()
        plan = api.compile(key, net, params, calib=calib, **options)
        t1 = time.perf_counter()
        led, _ = api.split_one_time(api.count(plan, batch=per))
        t2 = time.perf_counter()
        wan = project(led, WAN, "online")
        rows.append({"family": fam.spec.name, "key": key,
                     "online_MB": led.total_bytes("online") / MB / per,
                     "offline_MB": led.total_bytes("offline") / MB / per,
                     "online_rounds": led.rounds("online") / per,
                     "wan_network_s": (wan.latency_s + wan.transfer_s) / per,
                     "compile_s": t1 - t0, "count_s": t2 - t1})
        if progress is not None:
            progress(f"{fam.spec.name}: compiled in {t1 - t0:.1f} s, counted in {t2 - t1:.1f} s")
    out = pd.DataFrame(rows)
    out.attrs["network"] = net.name
    out.attrs["macs"], out.attrs["relus"] = net.n_macs, net.n_relus
    return out


def side_by_side(frame: pd.DataFrame, counts: pd.DataFrame) -> pd.DataFrame:
    """The comparison's rows (its network, run) beside the ResNet's (counted), per family:
    online MB, online rounds and WAN seconds (the comparison's: projected with compute; the
    ResNet's: the network time only)."""
    a = frame.set_index("key")
    b = counts.set_index("key")
    keys = [k for k in a.index if k in b.index]
    name = counts.attrs.get("network", "ResNet")
    return pd.DataFrame({
        "family": a.loc[keys, "family"].to_numpy(),
        "online MB": a.loc[keys, "online_MB"].to_numpy(),
        f"online MB, {name}": b.loc[keys, "online_MB"].to_numpy(),
        "offline MB": a.loc[keys, "offline_MB"].to_numpy(),
        f"offline MB, {name}": b.loc[keys, "offline_MB"].to_numpy(),
        "online rounds": a.loc[keys, "online_rounds"].to_numpy(),
        f"online rounds, {name}": b.loc[keys, "online_rounds"].to_numpy(),
        "WAN s (with compute)": a.loc[keys, "wan_s"].to_numpy(),
        f"WAN network s, {name}": b.loc[keys, "wan_network_s"].to_numpy(),
    })


def compare_resnet(quick: bool = True, seed: int = 0, units=None, net: nn.Network | None = None,
                   params=None, progress=None, count: bool | None = None):
    """Every family on a ResNet (default :func:`resnet_network`, random weights) and random
    images of its input shape: one run each, checked against the family's oracle, with
    :func:`ppnn.count` beside it (``count``, default: full mode only). Returns a
    :class:`~.run.Comparison` (``units``: reuse measured unit costs) and the
    per-layer-kind breakdown (:func:`~.table.layer_kind_frame`)."""
    from ppnn.core import WAN

    from . import table
    from .run import Comparison, run_family
    from .workload import Units, make_workload

    if (net is None) != (params is None):
        raise ValueError("give both net and params, or neither (ResNet-20 / its copy)")
    net = net or resnet_network(quick)
    params = params if params is not None else random_params(net, seed)
    w = make_workload(quick, seed, n_run=1, n_acc=1, n_calib=32, net=net, params=params,
                      dataset="random")
    units = units or Units(quick, seed)
    count = (not quick) if count is None else bool(count)
    results, secs = [], {}
    for key in api.families():
        t0 = time.perf_counter()
        results.append(run_family(key, w, units, count=count,
                                  **(QUICK_OPTIONS.get(key, {}) if quick else {})))
        secs[key] = time.perf_counter() - t0
        if progress is not None:
            progress(f"{results[-1].spec.name}: {secs[key]:.1f} s")
    df = table.comparison_frame(results, w)
    cmp = Comparison(w, units, results, df, table.breakdown_frame(results, WAN),
                     table.decision_guide(df), secs)
    return cmp, table.layer_kind_frame(results, w, WAN)

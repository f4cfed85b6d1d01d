"""SwaNN's end-to-end runs with real Paillier, and the per-layer times of Tables 1 and 5.

A configuration of Experiments 1 and 2 either *ran* (a :class:`RealRun`: wall-clock seconds
per layer and party, logits checked equal to the integer model) or is *projected* (counted
operations x measured unit costs). :func:`layer_times` picks the measured times when the
configuration ran and the projection otherwise, and says which; :func:`projection_check`
puts both side by side for every configuration that ran, so a reader sees how good the
projection is on this machine.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppnn.protocols.swann.costs import UnitCosts
from ppnn.protocols.swann.inference import RunResult, SwannKeys, run_inference
from ppnn.protocols.swann.model import SwannModel

from .paper import CONFIGS, accuracy_frame, cifar_model, projected_times, run_times

SCENARIOS = ("client-server", "two-server")
IMAGES_PER_RUN = {"client-server": 1, "two-server": 2}  # the paper's two-server run: 2 images


@dataclass
class RealRun:
    """One run of a configuration on real keys, timed as a whole."""

    exp: str
    config: str
    result: RunResult
    wall_seconds: float

    @property
    def scenario(self) -> str:
        return self.result.scenario


def model_key(exp: str, config: str) -> str:
    """The :func:`~.paper.build_models` key of an experiment's configuration."""
    if config not in CONFIGS:
        raise ValueError(f"unknown SwaNN configuration {config!r}; one of {sorted(CONFIGS)}")
    return f"{exp}_{CONFIGS[config][0]}"


def real_run(models: dict[str, SwannModel], exp: str, config: str, scenario: str,
             images: np.ndarray, keys: SwannKeys, seed: int = 0) -> RealRun:
    """Run ``config`` of experiment ``exp`` on ``images`` with real Paillier ``keys``.

    Raises ``AssertionError`` naming the image if the decrypted logits differ from the
    integer model's (the protocol is exact: any difference is a bug, never noise)."""
    if scenario not in SCENARIOS:
        raise ValueError(f"scenario must be one of {SCENARIOS}, got {scenario!r}")
    model = models[model_key(exp, config)]
    optimized = CONFIGS[config][1]
    images = np.asarray(images)
    t0 = time.perf_counter()
    res = run_inference(model, images, scenario, optimized, keys, np.random.default_rng(seed))
    wall = time.perf_counter() - t0
    for i, (got, im) in enumerate(zip(res.logits, images)):
        want = model.forward_int(model.encode(im))
        if not np.array_equal(np.asarray(got), np.asarray(want)):
            raise AssertionError(f"{exp} {config} {scenario}: image {i}'s decrypted logits "
                                 f"{got} differ from the integer model's {want}")
    return RealRun(exp, config, res, wall)


def real_runs(models: dict[str, SwannModel], plan, images: np.ndarray, keys: SwannKeys,
              seed: int = 0) -> dict[tuple[str, str, str], RealRun]:
    """Run each ``(exp, config, scenario)`` of ``plan`` on the first one or two ``images``
    (one for client-server, two for two-server, as in the paper)."""
    out = {}
    for exp, config, scenario in plan:
        out[(exp, config, scenario)] = real_run(models, exp, config, scenario,
                                                images[: IMAGES_PER_RUN[scenario]], keys, seed)
    return out


def layer_times(models: dict[str, SwannModel], runs: dict, units: UnitCosts, exp: str,
                config: str, scenario: str) -> tuple[pd.DataFrame, str]:
    """Per-layer milliseconds (rows) by Table party (columns) and their kind: ``measured``
    if the configuration is in ``runs``, else ``projected`` from ``units``."""
    run = runs.get((exp, config, scenario))
    if run is not None:
        return run_times(run.result), "measured"
    model = models[model_key(exp, config)]
    return projected_times(model, scenario, CONFIGS[config][1], units), "projected"


def projection_check(models: dict[str, SwannModel], runs: dict,
                     units: UnitCosts) -> pd.DataFrame:
    """Measured vs projected total milliseconds per party, for every configuration that
    ran (``ratio`` = measured / projected)."""
    rows = []
    for (exp, config, scenario), run in runs.items():
        proj = projected_times(models[model_key(exp, config)], scenario, CONFIGS[config][1],
                               units)
        meas = run_times(run.result)
        for p in meas.columns:
            rows.append({"run": f"{exp} {config} {scenario}", "party": p,
                         "measured_ms": meas[p].sum(), "projected_ms": proj[p].sum()})
    df = pd.DataFrame(rows, columns=["run", "party", "measured_ms", "projected_ms"])
    return df.assign(ratio=df["measured_ms"] / df["projected_ms"])


def timings_frame(times: dict[tuple[str, str, str], tuple[pd.DataFrame, str]]) -> pd.DataFrame:
    """One long frame of per-layer times, ``{(exp, config, scenario): (ms, kind)}`` ->
    rows indexed by ``step`` with the party columns, ``exp``, ``config``, ``scenario``,
    ``kind`` (what the notebook writes to ``layer_times_timings.csv``)."""
    parts = [df.assign(exp=exp, config=config, scenario=scenario, kind=kind)
             for (exp, config, scenario), (df, kind) in times.items()]
    return pd.concat(parts).rename_axis("step")


def cifar_accuracy(quick: bool = True, seed: int = 0, n_calib: int = 500,
                   n_test: int = 2000) -> pd.DataFrame | None:
    """Experiment 3's accuracy (float and integer MiniONN CIFAR-10), if CIFAR-10 is on this
    machine -- PPNN Lab never downloads it -- and in the full run only (training it takes
    long); otherwise says why not and returns None."""
    from ppnn.data import DatasetUnavailable, load_cifar10

    try:
        cx_tr, cy_tr, cx_te, cy_te = load_cifar10()
    except DatasetUnavailable as e:
        print("Experiment 3 accuracy skipped:", e)
        return None
    if quick:
        print("Experiment 3 accuracy: CIFAR-10 found; trained and evaluated in the full run only")
        return None
    from ppnn.nn.train import pretrained

    p_c = pretrained("minionn_cifar10", quick=False, seed=seed, dataset="cifar10")
    cifar_t = cifar_model(seed, params=p_c)
    cifar_t.calibrate(cx_tr[:n_calib])
    return accuracy_frame({"exp3_hybrid": cifar_t}, cx_te[:n_test], cy_te[:n_test])

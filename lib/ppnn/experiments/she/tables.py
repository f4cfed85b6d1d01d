"""SHE's Tables 2, 4-7 and Figs. 1, 4, paper vs ours: one call per table for the notebook.

Each function builds the table in the paper's units with :mod:`.paper`, compares it with
``data/paper/she_<table>.csv``, saves it to ``figures/tables/she_<table>.{csv,md}`` and shows
it once under a line of status counts; it returns nothing. Inputs are the notebook's runs:
the MNIST model ``suite`` (:func:`.runs.mnist_suite`), the simulator ``runs`` of each model
(:func:`.runs.simulate`), the measured gate latency ``lat`` and time per gate, the client's
encryption latency (:func:`encryption_latency`) and the big networks' counted costs
(:func:`zoo_costs`). The reasons are in :mod:`.paper` (rows of schemes we do not implement,
the depth definition, the paper's choices).
"""

from __future__ import annotations

import functools
import time

import numpy as np
import pandas as pd

from ppnn import report
from ppnn.protocols.she import costs

from .. import paper_vs_ours as pvo
from . import paper
from . import runs as ex

PAPER = "she"
RTOL = 0.05
#: the layer topology of the MNIST networks, as Table 2 lists it (Conv, BN, Act, Pool, FC)
TOPOLOGY = list("CBAPCPFBAF")
R_FCN = ("FCN is BFV (FV-RNS) with x^2 activations: not a TFHE gate circuit, not implemented "
         "here")
#: input pixels x bits per pixel the client encrypts (MNIST, 5-bit activations)
INPUT_BITS = 784 * 5


_show = functools.partial(pvo.compare_and_show, PAPER, rtol=RTOL)


def table2(runs: dict, suite: dict) -> None:
    """Table 2: multiplicative depth per layer (SHE, TCN, DSHE; FCN is not ours)."""
    vals = {}
    for row, key in (("SHE", "SHE"), ("TCN", "TCN")):
        vals.update(paper.table2_values(row, runs[key].layers, 100 * suite[key].accuracy,
                                        TOPOLOGY, "bit simulator, fully encrypted"))
    vals.update(paper.table2_dshe_values(runs["DSHE"].layers, 100 * suite["DSHE"].accuracy))
    ref = report.load_paper(PAPER, "table2")
    for m in ref[ref.row == "FCN"].metric:
        vals[("FCN", m)] = (None, "counted", R_FCN)
    _show("table2", paper.frame("table2", vals), "Table 2: multiplicative depth per layer")


def eq1_depths(runs: dict, suite: dict) -> pd.DataFrame:
    """The paper's Eq. (1) per convolution of the SHE network with our unit depths (DA: our
    widest adder), next to the measured critical path and the paper's Table 2 value."""
    she_layers = runs["SHE"].layers.set_index("layer")
    rows = []
    for name, cin, kc in (("conv1", 1, 5), ("conv2", 5, 5)):
        op = next(o for o in suite["SHE"].qnet.linear_layers() if o.name == name)
        da = she_layers.loc[name, "width_out"] if op.act is None else (
            op.in_bits + op.guard + 1 + int(np.ceil(np.log2(op.term_counts().max()))))
        rows.append({"layer": name, "IN": cin, "KC": kc, "DA (our widest adder)": int(da),
                     "Eq. (1) depth": round(costs.eq1_layer_depth(cin, kc, da, 0, 1)),
                     "measured depth (C + A)": int(she_layers.loc[name, "md_layer"]),
                     "paper (Table 2, C)": 200})
    return pd.DataFrame(rows)


def encryption_latency(backend, runs: dict, timings: dict[str, float]) -> dict:
    """The client's encryption + decryption latency (EDL) of one MNIST inference on
    ``backend``: encrypt the 784 x 5 input bits, decrypt the SHE network's output bits;
    books ``timings["edl_s"]`` and returns :func:`ppnn.protocols.she.latency.encryption_latency`'s
    dict."""
    edl = ex.encryption_latency(backend, INPUT_BITS,
                                runs["SHE"].layers["width_out"].iloc[-1] * 10)
    timings["edl_s"] = edl["edl_s"]
    return edl


def table4(runs: dict, suite: dict, edl: dict, lat: dict, per_gate_s: float, n_sim: int,
           extra_rows: pd.DataFrame) -> None:
    """Table 4: MNIST (accuracy, gates, latency, message size), plus ``extra_rows`` of ours
    (the reduced network run end to end on real tfhe-rs)."""
    df = pd.concat([paper.table4_values(runs, suite, edl, lat, per_gate_s, n_sim), extra_rows],
                   ignore_index=True)
    _show("table4", df, "Table 4: MNIST")


def zoo_costs(timings: dict[str, float]) -> pd.DataFrame:
    """The counted costs of the paper's CIFAR-10 and ImageNet networks (:func:`.paper.zoo_costs`);
    books ``timings["zoo_costs_s"]``."""
    t = time.perf_counter()
    big = paper.zoo_costs()
    timings["zoo_costs_s"] = time.perf_counter() - t
    return big


def table5(big: pd.DataFrame, edl: dict, lat: dict) -> None:
    """Table 5: CIFAR-10 (counted, projected times); shows the counted costs first."""
    pvo.show(big)
    _show("table5", paper.table5_values(big, edl["encrypt_s"] / INPUT_BITS, lat),
          "Table 5: CIFAR-10 (counted)")


def table6(big: pd.DataFrame, edl: dict, lat: dict) -> None:
    """Table 6: ImageNet (counted, projected times)."""
    _show("table6", paper.table6_values(big, edl["encrypt_s"] / INPUT_BITS, lat),
          "Table 6: ImageNet (counted)")


def table7() -> None:
    """Table 7: Penn Treebank."""
    _show("table7", paper.table7_values(), "Table 7: Penn Treebank")


def fig1(quick: bool = True, seed: int = 0, n_test: int | None = None) -> None:
    """Fig. 1 / §2: what square activations cost in accuracy on MNIST (trains the models)."""
    sq = ex.square_activation_accuracy(quick=quick, seed=seed, n_test=n_test)
    _show("fig1", paper.fig1_values(sq), "Fig. 1 / §2: cost of square activations (MNIST)")


def fig4() -> None:
    """Fig. 4 / §5.4: depth of the ReLU-LSTM's products."""
    _show("fig4", paper.fig4_values(), "Fig. 4 / §5.4: depth of the ReLU-LSTM's products")


def errata() -> None:
    """SHE's errata (``data/errata.csv``), saved for the report and shown."""
    pvo.show(pvo.errata(PAPER))

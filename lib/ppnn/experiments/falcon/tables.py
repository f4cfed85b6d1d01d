"""Falcon's reproduced tables, paper vs ours: one call per table for the notebook.

The transcribed text lacks most of the paper's numbers (``data/paper/README.md``): Table 6
(accuracy of private inference) is compared row by row; Tables 2-5, 7-9 are listed with a
pointer to what we computed in their place (status "paper value missing"), Tables 4-5 keep
their batch-size/epoch row; the numbers stated in the text are compared where we computed
the quantity. Each function compares with ``data/paper/falcon_<table>.csv``, saves to
``figures/tables/falcon_<table>.*`` and shows the result once; it returns nothing.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ppnn import report
from ppnn.core import LAN, WAN
from ppnn.nn import recipe_for, zoo
from ppnn.protocols import falcon as F
from ppnn.protocols.falcon import costs as C
from ppnn.protocols.falcon.numeric import inverse_sqrt

from .. import paper_vs_ours as pvo

PAPER = "falcon"
#: the columns shown of the tables whose paper values are mostly missing
COLUMNS = ["table", "row", "metric", "paper", "ours", "status"]
TABLE6_METRICS = ("training_accuracy", "inference_accuracy", "falcon_inference_accuracy",
                  "relative_error")
R_RELATIVE_ERROR = ("the paper does not define its relative error; ours is the mean relative L2 "
                    "error of the final-layer outputs vs float64")
#: what we computed in place of each paper table (the paper's numbers are lost in this copy)
TABLES_OURS = [
    ("Table 1", "qualitative; nothing to compute"),
    ("Table 2", "figures/falcon/tables2_3_inference_costs.csv (rounds, MB) + "
                "tables2_3_inference_projection_timings.csv (LAN/WAN, projected)"),
    ("Table 3", "figures/falcon/tables2_3_inference_costs.csv (LeNet measured; AlexNet/VGG16 "
                "cost only)"),
    ("Table 4", "figures/falcon/tables4_5_training_iteration_costs.csv (one iteration, batch "
                "128) + projections"),
    ("Table 5", "figures/falcon/tables4_5_training_iteration_costs.csv (AlexNet/VGG16 cost "
                "only)"),
    ("Table 6", "figures/tables/falcon_table6.csv"),
    ("Table 7", "benchmarks/bench_falcon.py: private vs plaintext forward pass (Network-C, "
                "LeNet) on this machine"),
    ("Table 8", "not reproduced: other frameworks' formulas are not in this copy"),
    ("Table 9", "figures/falcon/table9_protocol_costs.csv (closed forms == ledger)"),
]
R_BATCH = ("the batch we chose for our per-iteration costs, to match the paper (a setting, not "
           "a result)")
#: metrics of the text that are settings read off a network's description (inputs)
INPUT_METRICS = {"layers", "conv_layers", "fc_layers"}
#: a value the paper gives as "about" / "around" / "approximately" N is a rounded count: it is
#: compared within this tolerance (the report's default), not the 1 % of the text's settings
ABOUT_RTOL = 0.05
_ABOUT = re.compile(r"\b(about|around|approximately)\b", re.IGNORECASE)
R_ABOUT = "the paper gives it as 'about' N, a rounded count"


#: the reason of the AlexNet parameter rows (the paper's 'about 60 million' is ImageNet's)
IMAGENET_ALEXNET = ("zoo alexnet_imagenet (x1e6): Krizhevsky et al.'s ImageNet AlexNet, the "
                    "network the paper's count is of (Falcon runs a CIFAR-10 and a Tiny "
                    "ImageNet AlexNet: next rows)")


def _mode(quick: bool) -> str:
    return "quick" if quick else "full"


def table6(table6: pd.DataFrame, labels: dict[str, str], quick: bool = True) -> None:
    """Table 6: accuracy of private inference on MNIST (``table6``: the frame of
    :func:`.runs.inference_accuracy`; ``labels``: zoo name -> the paper's network name)."""
    ours6, reasons6 = [], {}
    for r in table6.to_dict("records"):
        row = r["network"]
        for metric in TABLE6_METRICS:
            ours6.append((row, metric, r[metric], f"{_mode(quick)}-mode model; "
                          f"{r['test_images']} test images"))
        rec = recipe_for(next(name for name, lab in labels.items() if lab == row))
        reasons6[(row, "training_accuracy")] = (
            "our float model trained by ppnn.nn.train with its zoo recipe "
            f"({rec.quick_epochs if quick else rec.epochs} epochs"
            f"{f', shifts of {rec.augment} px' if rec.augment and not quick else ''}; Falcon: 15)"
            + (f"; the trained model's accuracy on {r['train_images']:,} unshifted training "
               "images" if r.get("train_images") else "; the last epoch's running accuracy")
            + (f" (the last epoch's running accuracy on its randomly shifted batches: "
               f"{r['last_epoch_accuracy']:.2f}%)"
               if rec.augment and not quick and r.get("train_images") else ""))
    frame6 = report.reproduced_frame(ours6, kind="measured")
    # the paper prints a 'Relative Error' column without saying what it is: ours is one
    # definition, shown beside the paper's number and not judged against it
    frame6["definition"] = [R_RELATIVE_ERROR if m == "relative_error" else ""
                            for m in frame6["metric"]]
    cmp6 = pvo.compare_and_save(PAPER, "table6", frame6, "accuracy of private inference (MNIST)",
                                rtol=0.02, reasons=reasons6)
    pvo.show(cmp6)


def tables_overview() -> None:
    """Which paper tables are unavailable in this copy, and what we computed in their place."""
    ref_tables = report.load_paper(PAPER, "tables")
    rows_t = []
    for tab, what in TABLES_OURS:
        ref = ref_tables[ref_tables["table"] == tab].iloc[0]
        rows_t.append((ref["row"], ref["metric"], "ours: " + what, ""))
    cmp_t = pvo.compare_and_save(PAPER, "tables", report.reproduced_frame(rows_t, kind="counted"),
                                 "which paper tables are unavailable and what we computed")
    pvo.show(cmp_t, columns=["table", "status", "ours"])


def _batch_row(table: str, train_iters: int) -> None:
    ref = report.load_paper(PAPER, table)
    ours = []
    for _, r in ref.iterrows():
        if r["metric"] == "batch_size":
            ours.append((r["row"], "batch_size", 128, R_BATCH))
        else:
            ours.append((r["row"], "epochs", None, "we cost one iteration (and train "
                         f"{train_iters} iterations of Network-A), not full epochs"))
    frame = report.reproduced_frame(ours, kind="counted")
    frame.loc[frame["metric"] == "batch_size", "kind"] = "input"
    c = pvo.compare_and_save(PAPER, table, frame,
                             "batch size / epochs row (the rest is lost in this copy)")
    pvo.show(c, columns=COLUMNS)


def table4(train_iters: int) -> None:
    """Table 4's batch size / epochs row (the rest is lost in this copy)."""
    _batch_row("table4", train_iters)


def table5(train_iters: int) -> None:
    """Table 5's batch size / epochs row (the rest is lost in this copy)."""
    _batch_row("table5", train_iters)


def _n_linear(name: str, kinds=("Conv2d", "Dense")) -> int:
    return sum(1 for layer in zoo.get(name).layers if layer.kind in kinds)


def _n_params(name: str) -> int:
    return zoo.get(name).totals()["params"]


def rsqrt_counts(seed: int = 0) -> tuple[int, int]:
    """Newton iterations of the batch-norm inverse square root (the labels of a run's ledger:
    the loop we set to the paper's 4) and the online rounds of that run, from the ledger."""
    frs = F.Falcon(np.random.default_rng(seed))
    inverse_sqrt(frs, frs.share_fixed([2.0]))
    iters = len({re.search(r"rsqrt iter (\d+)", m.what).group(1)
                 for m in frs.ledger.messages if "rsqrt iter" in m.what})
    return iters, frs.ledger.rounds("online")


def text_claims(fal, relu_ratio: float, table6: pd.DataFrame, counted_inf: pd.DataFrame,
                names: list[str], labels: dict[str, str], x_tr, x_te, quick: bool = True,
                seed: int = 0) -> None:
    """The numbers stated in the text: settings we chose to match the paper (inputs, shown
    as context), counts and measurements of ours. ``fal``: the notebook's
    :class:`~ppnn.protocols.falcon.Falcon`; ``relu_ratio``: ReLU bytes at l=64 over l=32;
    ``table6`` and ``counted_inf``: the inference accuracy and counted-cost frames;
    ``x_tr, x_te``: the MNIST images."""
    newton = rsqrt_counts(seed)
    claims = [
        ("Fixed-point encoding", "fractional_bits", fal.f, "Falcon(frac_bits=13); 16 (Sec 5.1) "
         "raises for Z_2^32"),
        ("Datatype", "integer_bits", fal.k, "ring Z_2^32"),
        ("Datatype", "fractional_bits", fal.f, "13, not 16: with 16 a product has 32 fractional "
         "bits and cannot fit Z_2^32"),
        ("LAN", "bandwidth", LAN.bandwidth_Bps / 1e6, "network model input (ppnn.core.LAN)"),
        ("LAN", "ping", 2 * LAN.latency_s * 1e3, "network model input: a ping is a round "
         f"trip, so a round costs half of it ({LAN.latency_s * 1e3:g} ms one way)"),
        ("WAN", "bandwidth", WAN.bandwidth_Bps / 1e6, "network model input (ppnn.core.WAN)"),
        ("WAN", "ping", 2 * WAN.latency_s * 1e3, "network model input: a ping is a round "
         f"trip, so a round costs half of it ({WAN.latency_s * 1e3:g} ms one way)"),
        ("Division (numerical method)", "rounds_per_iteration", C.mult_cost(1).rounds,
         "one fixed-point product (reshare + truncation) per Goldschmidt iteration"),
        ("Batch norm inverse sqrt (Newton)", "rounds", newton[0],
         f"the paper's 'rounds' are Newton iterations: ours is the loop count we set to match "
         f"(an input, not a result); one inverse square root takes {newton[1]} online "
         "communication rounds in the ledger of a run"),
        ("Smaller ring", "comm_reduction", relu_ratio,
         "ReLU bytes at l=64,p=67 over l=32,p=37 (our protocols)"),
        ("DReLU vs SecureNN", "overhead_reduction", None,
         "not reproducible here: SecureNN's protocol costs are not in this copy"),
    ]
    acc_full = dict(zip(table6["network"], table6["full_test_accuracy_float"]))
    rel_max = float(table6["relative_error"].max())
    small_mb = float(counted_inf[counted_inf.network.isin(names[:3]) &
                                 (counted_inf.threat_model == "semi-honest")]["comm_MB"].max())
    claims += [
        ("Inference communication smaller networks", "comm", small_mb,
         "largest semi-honest online MB of one inference over Networks A-C (counted)"),
        ("Final-layer outputs vs 64-bit float", "relative_difference_max",
         rel_max, "the largest over the Table 6 networks; by this definition "
         f"ours ({rel_max:.3g} %) is {'below' if rel_max < 1 else 'not below'} the bound the "
         "paper states (< 1 %), the quantity of Table 6's 'Relative Error' column"),
        ("MNIST", "train_images", len(x_tr), "ppnn.data.load_mnist"),
        ("MNIST", "test_images", len(x_te), "ppnn.data.load_mnist"),
        *[(lab, "accuracy", acc_full[lab], "our float model on the full test set "
           f"({_mode(quick)}-mode training)") for lab in labels.values()],
        ("Network-A", "layers", _n_linear("falcon_network_a"), "conv + FC layers in the zoo"),
        ("Network-B", "layers", _n_linear("falcon_network_b"), "conv + FC layers in the zoo"),
        ("Network-C", "layers", _n_linear("falcon_network_c"), "conv + FC layers in the zoo"),
        ("Network-A", "parameters", _n_params("falcon_network_a") / 1e3, "zoo count (x1e3)"),
        ("Network-B", "parameters", _n_params("falcon_network_b") / 1e3, "zoo count (x1e3)"),
        ("Network-C", "parameters", _n_params("falcon_network_c"), "zoo count: MiniONN's "
         "network; 10,500 matches no parameter count (see ppnn.nn.zoo)"),
        ("AlexNet", "conv_layers", _n_linear("falcon_alexnet_cifar10", ("Conv2d",)), "zoo"),
        ("AlexNet", "fc_layers", _n_linear("falcon_alexnet_cifar10", ("Dense",)), "zoo"),
        # the paper's 60M / 138M are the ImageNet networks' counts: compared like with like,
        # and the CIFAR-10 networks Falcon runs are shown beside them
        ("AlexNet", "parameters", _n_params("alexnet_imagenet") / 1e6, IMAGENET_ALEXNET),
        ("AlexNet", "parameters_appD", _n_params("alexnet_imagenet") / 1e6, IMAGENET_ALEXNET),
        ("AlexNet (CIFAR-10, as Falcon runs it)", "parameters",
         _n_params("falcon_alexnet_cifar10") / 1e6, "zoo falcon_alexnet_cifar10, falcon-public's "
         "configuration (x1e6): the network of Falcon's CIFAR-10 rows, not the 60M one"),
        ("VGG16", "layers", _n_linear("falcon_vgg16_cifar10"), "zoo"),
        ("VGG16", "parameters", _n_params("vgg16_imagenet") / 1e6,
         "zoo vgg16_imagenet (x1e6): VGG-16 on 224x224 ImageNet, FC 25088-4096-4096-1000, the "
         "network the paper's count is of"),
        ("VGG16 (CIFAR-10, as Falcon runs it)", "parameters",
         _n_params("falcon_vgg16_cifar10") / 1e6, "zoo falcon_vgg16_cifar10, falcon-public's "
         "configuration (x1e6): first FC 512-4096 on 32x32 inputs, not the 138M network"),
    ]
    kinds_row = {"Inference communication smaller networks": "counted",
                 "Final-layer outputs vs 64-bit float": "measured", "MNIST": "counted",
                 **{lab: "measured" for lab in labels.values()}}
    ref_claims = report.load_paper(PAPER, "text_claims")
    keys = set(zip(ref_claims["row"], ref_claims["metric"]))
    ours_c = [c for c in claims if (c[0], c[1]) in keys]
    # settings we chose to match the paper (the ring, frac_bits, the network model, the
    # dataset and the layer counts of networks built from the paper's description) are
    # inputs: shown as context, never counted as reproduced
    kinds = {"Datatype": "input", "LAN": "input", "WAN": "input", **kinds_row,
             "Fixed-point encoding": "input", "MNIST": "input",
             "Batch norm inverse sqrt (Newton)": "input"}
    frame_c = report.reproduced_frame(ours_c)
    frame_c["kind"] = ["input" if m in INPUT_METRICS else kinds.get(r, "counted")
                       if not (r in labels.values() and m != "accuracy")
                       else "counted" for r, m in zip(frame_c["row"], frame_c["metric"])]
    # §5.6's bound ('differ by less than 1%') is on Table 6's undefined 'Relative Error': one
    # definition of ours for both, and one status ("definition differs")
    frame_c["definition"] = [R_RELATIVE_ERROR if m == "relative_difference_max" else ""
                             for m in frame_c["metric"]]
    # values of ours the paper gives as "about" N have a tolerance of their own (a setting
    # we chose to match, an input, is not judged at all)
    note = dict(zip(zip(ref_claims["row"], ref_claims["metric"]), ref_claims["note"]))
    about = [bool(_ABOUT.search(note[(r, m)])) and k != "input"
             for r, m, k in zip(frame_c["row"], frame_c["metric"], frame_c["kind"])]
    frame_c["rtol"] = [ABOUT_RTOL if a else np.nan for a in about]
    reasons = {(r, m): R_ABOUT for r, m, a in zip(frame_c["row"], frame_c["metric"], about)
               if a}
    cmp_c = pvo.compare_and_save(PAPER, "text_claims", frame_c, "numbers stated in the text",
                                 rtol=0.01, reasons=reasons)
    pvo.show(cmp_c, columns=COLUMNS)


def errata() -> None:
    """Falcon's errata (``data/errata.csv``), saved for the report and shown."""
    pvo.show(pvo.errata(PAPER))


# -- ReLU, message by message: ours vs the C++ reference's protocol (issue 27 item 9) -------
#: the steps of one ReLU (Algorithm 3 = DReLU via Wrap3 and private compare, then select
#: shares), in protocol order; the malicious checks of each product last
RELU_STEPS = (
    "wrap3: open x = a + r",
    "private compare step 5: u = (-1)^beta (S - T)",
    "private compare step 9: product tree",
    "private compare: open d",
    "select shares: open b xor c",
    "select shares: a * DReLU(a)",
    "check of step 5",
    "check of step 9 (product tree)",
    "check of a * DReLU(a)",
)
#: local or offline in both (0 online bits): shown so that every part of the protocol is
#: accounted for
RELU_LOCAL = (
    ("wrap3: beta_j = wrap2(a_j, r_j), delta, theta; DReLU from the MSBs",
     "local in both (Eq. 10-11 mod 2)"),
    ("private compare inputs: bits of r over Z_p, alpha, beta, m; bit c",
     "preprocessing in both (ours: the trusted dealer, booked offline; the C++ code: "
     "PrecomputeObject, no messages)"),
)

CPP_RELU_CSV = "data/falcon_cpp_relu.csv"


def _relu_step(what: str) -> str:
    """The step of :data:`RELU_STEPS` a ledger message of our ReLU belongs to."""
    check = what.startswith("mult-check")
    for key, step, chk in (("wrap3 step 2", RELU_STEPS[0], None),
                           ("pc step 5", RELU_STEPS[1], RELU_STEPS[6]),
                           ("pc step 9: m * prod c", RELU_STEPS[2], RELU_STEPS[7]),
                           ("pc step 9: open d", RELU_STEPS[3], None),
                           ("bit injection", RELU_STEPS[4], None),
                           ("relu: a * DReLU(a)", RELU_STEPS[5], RELU_STEPS[8])):
        if key in what:
            if check and chk is None:
                break
            return chk if check else step
    raise ValueError(f"ReLU message {what!r} belongs to no step of RELU_STEPS")


def relu_bits_ours(n: int = 256, seed: int = 0) -> pd.DataFrame:
    """Online bits per element of our ReLU (Algorithm 3), by step and mode, read off the
    ledger of a run on ``n`` random ring elements (all three parties' messages summed)."""
    from ppnn.protocols.falcon.comparison import relu

    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n (elements) must be an int >= 1, got {n!r}")
    rows = []
    for mal in (False, True):
        fal = F.Falcon(np.random.default_rng(seed), malicious=mal)
        a = fal.share(fal.ring.random(np.random.default_rng(seed + 1), (n,)))
        start = len(fal.ledger.messages)
        relu(fal, a)
        for m in fal.ledger.messages[start:]:
            if m.phase == "online":
                rows.append((_relu_step(m.what), fal.mode, m.bits))
    df = pd.DataFrame(rows, columns=["step", "mode", "bits"])
    out = df.groupby(["step", "mode"], sort=False)["bits"].sum() / n
    return out.rename("ours").reset_index()


def relu_bits_cpp(path=None) -> pd.DataFrame:
    """Online bits per element of falcon-public's ReLU, by step and mode: the closed-form
    model of its messages in ``data/falcon_cpp_relu.csv`` (each row: ``elements`` of
    ``element_bits`` bits that each of the three parties sends per ReLU element)."""
    from ppnn import paths

    cpp = pd.read_csv(path or paths.root() / CPP_RELU_CSV)
    unknown = set(cpp["step"]) - set(RELU_STEPS)
    if unknown:
        raise ValueError(f"{CPP_RELU_CSV}: steps {sorted(unknown)} are not in RELU_STEPS")
    cpp = cpp.assign(bits=3 * cpp["elements"] * cpp["element_bits"])
    out = cpp.groupby(["step", "mode"], sort=False)["bits"].sum()
    return out.rename("C++").reset_index()


def _relu_reasons(cpp: pd.DataFrame) -> dict[tuple[str, str], str]:
    """Why we send more than the C++ code at a step, where we do (``cpp``: the model's bits
    per step and mode, :func:`relu_bits_cpp`)."""
    sent5 = cpp[(cpp["step"] == RELU_STEPS[1]) & (cpp["mode"] == "semi-honest")]["C++"]
    k, bp = 32, F.Zp(37).bits
    full5 = k * int(sent5.sum())  # the k-fold send it should make
    step5 = (f"the C++ code's PARALLEL branch (src/globals.h: PARALLEL true) sends `size` of "
             f"the size*BIT_SIZE products it computed, so every comparison but the first "
             f"size/32 gets a zero share at all 32 positions (its private compare is wrong once "
             f"the preprocessing is not all zeros: benchmarks/README.md); its non-parallel "
             f"branch sends {full5} bits ({k} x 8 x 3). Ours: {k} positions x {bp} bits x "
             f"3 (position 0 of our {k + 1} is local; Z_37 needs {bp} bits, not a byte)")
    return {
        (RELU_STEPS[1], "semi-honest"): step5,
        (RELU_STEPS[1], "malicious"): step5,
        (RELU_STEPS[0], "malicious"): (
            f"the consistency copy of every component (3 x {k} bits): the C++ code opens x one "
            "way in both modes, so a corrupt party can hand the two honest parties different "
            "x, hence different delta and private-compare inputs, undetected"),
        (RELU_STEPS[3], "malicious"): (
            f"the consistency copy (3 x {bp} bits): the C++ code opens d one way in both "
            "modes; every party's output share depends on d, so a wrong component sent to "
            "one honest party would split the honest parties' DReLU undetected"),
        (RELU_STEPS[8], "malicious"): (
            f"rho and sigma of a Z_2^{k} product opened in full, {k} bits to both neighbours "
            f"(6 x 2 x {k}), and v one way (3 x {k}): the C++ code's malicious "
            "funcReconstruct(myType) sends them as vector<smallType> (8 of their 32 bits), "
            "which cannot verify a 32-bit product"),
    }


def relu_bits_table(n: int = 256, seed: int = 0, path=None) -> pd.DataFrame:
    """Falcon ReLU bits per element, ours vs the C++ reference's protocol, by step.

    ``ours`` is read off the ledger of a real run (:func:`relu_bits_ours`); ``C++`` is the
    closed-form model of falcon-public's messages (:func:`relu_bits_cpp`, constants and
    their source in ``data/falcon_cpp_relu.csv``: what its code sends, not what it should).
    ``excess`` = ours - C++; every step with an excess has its ``reason`` (``explained``);
    the local/offline parts of both close the account with 0 bits. Falcon §3.3-3.5,
    Algorithms 1-3; rows per mode, then a total per mode."""

    ours = relu_bits_ours(n, seed)
    cpp = relu_bits_cpp(path)
    reasons = _relu_reasons(cpp)
    rows = []
    for mode in ("semi-honest", "malicious"):
        for step in RELU_STEPS:
            o = ours[(ours["step"] == step) & (ours["mode"] == mode)]["ours"]
            c = cpp[(cpp["step"] == step) & (cpp["mode"] == mode)]["C++"]
            if o.empty and c.empty:
                continue
            o_v = float(o.iloc[0]) if not o.empty else 0.0
            c_v = float(c.iloc[0]) if not c.empty else 0.0
            rows.append((mode, step, o_v, c_v, o_v - c_v, reasons.get((step, mode), "")))
        for step, why in RELU_LOCAL:
            rows.append((mode, step, 0.0, 0.0, 0.0, why))
        tot_o = ours[ours["mode"] == mode]["ours"].sum()
        tot_c = cpp[cpp["mode"] == mode]["C++"].sum()
        rows.append((mode, "total", float(tot_o), float(tot_c), float(tot_o - tot_c), ""))
    out = pd.DataFrame(rows, columns=["mode", "step", "ours", "C++", "excess", "reason"])
    out["explained"] = [r != "" or e <= 0 or s == "total"
                        for r, e, s in zip(out["reason"], out["excess"], out["step"])]
    return out


def relu_bits_report(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`relu_bits_table` as a report frame (``report.COLUMNS``) for ``REPORT.md``: our
    bits per element, kind ``counted``, status ``ours only`` (the paper's Table 9 entries are
    lost in this copy and it gives no per-step bits); the reason gives the C++ model's bits
    and, where we send more, why. Saved by the caller with ``report.save``."""
    rows = []
    for r in table.itertuples(index=False):
        why = (f"falcon-public's protocol (model, {CPP_RELU_CSV}): {r[3]:g} bits; ours - "
               f"C++ = {r.excess:+g}")
        if r.reason:
            why += f": {r.reason}"
        rows.append(("ReLU vs falcon-public", f"{r.mode}: {r.step}", "bits_per_element", "bit",
                     "", float(r.ours), "", "counted", "ours only", why))
    return pd.DataFrame(rows, columns=report.COLUMNS)

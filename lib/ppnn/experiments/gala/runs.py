"""The runs behind notebook ``02_gala``: every reproduced number is computed here.

Each function returns a tidy DataFrame (one row per dimension x method) and says in its
columns where a number comes from: ``measured`` on real BFV (SEAL via tenseal.sealapi),
``counted`` by running the kernels, or ``projected`` (counted operations x measured unit costs,
plus the network model). Large layers are measured on a stated subset of their output
ciphertexts and scaled (every output ciphertext does identical work), labelled as projected.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ppnn import paths
from ppnn.core import Ledger, Network, Ring, share_additive
from ppnn.he.bfv.sim import BFVSim
from ppnn.protocols.gala import costs
from ppnn.protocols.gala.conv import GalaConv
from ppnn.protocols.gala.matvec import GalaMatVec
from ppnn.protocols.gala.runtime import (
    GALA_LAN,
    GALA_WAN,
    network_time,
    project_seconds,
    time_kernel,
)

__all__ = ["MATVEC_DIMS", "TABLE1_DIMS", "CONV_DIMS", "NETWORKS", "mv_label", "conv_label",
           "matvec_kernel", "conv_kernel", "count_matvec", "count_conv", "IMAGENET_NETWORKS",
           "network_op_totals", "imagenet_op_totals", "measure_matvec",
           "measure_conv", "noise_runs", "relu_unit_cost", "FAMILIES", "QUICK_FAMILY_PARAMS",
           "family_op_counts", "KERNELS_ONLY", "FLOODING_REFUSED", "NO_FLOOD_FAMILIES",
           "network_counter", "network_layers",
           "network_totals",
           "network_ops", "delphi_layer_comm_MB", "delphi_network_comm", "plaintext_shares",
           "tenseal_peer", "save_results"]

#: GALA Tables V/VI (n_o x n_i), Table I, Tables VII/VIII (H, W, c_i, k, c_o), Table IX nets.
MATVEC_DIMS = [(1, 2048), (2, 1024), (16, 128)]
TABLE1_DIMS = (2, 2048)
CONV_DIMS = [(16, 16, 128, 1, 128), (16, 16, 2048, 1, 512), (16, 16, 128, 3, 128),
             (16, 16, 2048, 5, 64)]
NETWORKS = {"MLP": "mlp_784_128_128_10", "AlexNet": "alexnet_cifar10", "VGG": "vgg16_cifar10",
            "ResNet-18": "resnet18_cifar10", "ResNet-50": "resnet50_cifar10",
            "ResNet-101": "resnet101_cifar10", "ResNet-152": "resnet152_cifar10"}
#: Table IX's networks on the ImageNet geometry (the zoo's AlexNet and VGG-16, torchvision's
#: ResNets), counted beside the CIFAR-10 zoo: the paper's totals look larger than CIFAR-10
#: networks, though l. 452 says CIFAR-10
IMAGENET_NETWORKS = {"AlexNet": "alexnet_imagenet", "VGG": "vgg16_imagenet",
                     "ResNet-18": "resnet18_imagenet", "ResNet-50": "resnet50_imagenet",
                     "ResNet-101": "resnet101_imagenet", "ResNet-152": "resnet152_imagenet"}


def mv_label(n_o: int, n_i: int) -> str:
    return f"{n_o}x{n_i}"


def conv_label(H: int, W: int, c_i: int, k: int, c_o: int) -> str:
    return f"{H}x{W}@{c_i}; {k}x{k}@{c_o}"


def matvec_kernel(method: str, n_o: int, n_i: int, n: int = 2048):
    from ppnn.protocols.gazelle import DiagonalMatVec, GazelleMatVec, NaiveMatVec

    kinds = {"Naive": NaiveMatVec, "Diagonal": DiagonalMatVec, "GAZELLE": GazelleMatVec,
             "GALA": GalaMatVec}
    return kinds[method](n_o, n_i, n)


def conv_kernel(method: str, H: int, W: int, c_i: int, k: int, c_o: int, n: int = 2048):
    from ppnn.protocols.gazelle import GazelleConv

    return {"GAZELLE": GazelleConv, "GALA": GalaConv}[method](c_i, c_o, H, W, k, n)


# -- counts (Tables V, VII) --------------------------------------------------------------------
def count_matvec(dims=MATVEC_DIMS, methods=("Naive", "Diagonal", "GAZELLE", "GALA"),
                 n: int = 2048) -> pd.DataFrame:
    rows = []
    for n_o, n_i in dims:
        for m in methods:
            k = matvec_kernel(m, n_o, n_i, n)
            rows.append({"dims": mv_label(n_o, n_i), "method": m, **costs.count_kernel(k)})
    return pd.DataFrame(rows)


def count_conv(dims=CONV_DIMS, methods=("GAZELLE", "GALA"), n: int = 2048) -> pd.DataFrame:
    rows = []
    for H, W, c_i, k, c_o in dims:
        for m in methods:
            ker = conv_kernel(m, H, W, c_i, k, c_o, n)
            rows.append({"dims": conv_label(H, W, c_i, k, c_o), "method": m,
                         "c_n": ker.layout.c_n, **costs.count_kernel(ker)})
    return pd.DataFrame(rows)


# -- measured runtimes (Tables I, VI, VIII) -------------------------------------------------------
def _comm(he, n_up: int, n_down: int, net: Network) -> float:
    return network_time(n_up, n_down, he.ciphertext_bits, net)


def measure_matvec(he, dims=MATVEC_DIMS, methods=("Diagonal", "GAZELLE", "GALA"),
                   repeats: int = 3, seed: int = 0, unit: pd.DataFrame | None = None,
                   project_only: tuple = ()) -> pd.DataFrame:
    """Median online server time of each kernel on real BFV (or, for methods listed in
    ``project_only``, counted ops x ``unit`` costs), plus LAN/WAN time of the two-party flow."""
    rng = np.random.default_rng(seed)
    cases = []
    for n_o, n_i in dims:
        W = rng.integers(-8, 9, (n_o, n_i))
        x = rng.integers(-8, 9, n_i)
        for m in methods:
            cases.append((n_o, n_i, m, W, x, matvec_kernel(m, n_o, n_i, he.n)))
    runs = {i: [] for i in range(len(cases))}
    for _ in range(repeats):  # interleaved: all methods see the same machine load
        for i, (_n_o, _n_i, m, W, x, k) in enumerate(cases):
            if m not in project_only:
                runs[i].append(time_kernel(k, he, W, x, rng))
    rows = []
    for i, (n_o, n_i, m, _W, _x, k) in enumerate(cases):
        if m in project_only:
            counts = costs.count_kernel(k)
            online, enc, ras, kind = project_seconds(counts, unit), np.nan, 0.0, "projected"
        else:
            online = float(np.median([r["online_s"] for r in runs[i]]))
            enc = float(np.median([r["encode_s"] for r in runs[i]]))
            ras = float(np.median([r["ras_s"] for r in runs[i]]))
            counts, kind = runs[i][0]["counts"], "measured"
        up = k.layout.C if m != "Diagonal" else 1
        down = k.layout.R if m in ("GAZELLE", "GALA") else (n_o if m == "Naive" else 1)
        rows.append({"dims": mv_label(n_o, n_i), "method": m, "kind": kind,
                     "online_s": online, "encode_s": enc, "ras_s": ras,
                     "ct_up": up, "ct_down": down,
                     "comm_MB": (up + down) * he.ciphertext_bits / 8 / 1e6,
                     "lan_s": online + ras + _comm(he, up, down, GALA_LAN),
                     "wan_s": online + ras + _comm(he, up, down, GALA_WAN),
                     **{op: counts.get(op, 0) for op in costs.HE_OPS}})
    df = pd.DataFrame(rows)
    for net in ("lan", "wan"):
        gala = df[df.method == "GALA"].set_index("dims")[f"{net}_s"]
        df[f"{net}_speedup"] = df[f"{net}_s"] / df["dims"].map(gala)
    return df


def measure_conv(he, dims=CONV_DIMS, groups: int = 1, seed: int = 0,
                 scale_channels: int | None = None, unit: pd.DataFrame | None = None
                 ) -> pd.DataFrame:
    """Conv kernels on real BFV, GAZELLE and GALA interleaved.

    ``groups`` output ciphertexts are measured (with the shared input rotations) and
    ``scale_channels`` caps ``c_i`` (quick mode). When the run is smaller than the layer, the
    layer's time is *projected*: counted operations of the full layer x ``unit`` costs,
    multiplied by (measured / projected) of the run actually made, so the projection inherits
    the run's overheads (NTT conversions, Python, machine load)."""
    rng = np.random.default_rng(seed)
    rows = []
    for H, W, c_i, k, c_o in dims:
        ci = min(c_i, scale_channels) if scale_channels else c_i
        K = rng.integers(-8, 9, (c_o, ci, k, k))
        x = rng.integers(-8, 9, (ci, H, W))
        for m in ("GAZELLE", "GALA"):
            run = conv_kernel(m, H, W, ci, k, c_o, he.n)
            full = conv_kernel(m, H, W, c_i, k, c_o, he.n)
            g = min(groups, run.layout.ct_out)
            with he.key_scope():  # one layer's Galois keys at a time (memory)
                r = time_kernel(run, he, K, x, rng, groups=range(g))
            counts = costs.count_kernel(full)
            whole = g == full.layout.ct_out and ci == c_i
            if whole:
                online, kind = r["online_s"], "measured"
            else:
                calib = r["online_s"] / project_seconds(r["counts"], unit)
                online, kind = project_seconds(counts, unit) * calib, "projected"
            L = full.layout
            rows.append({"dims": conv_label(H, W, c_i, k, c_o), "run_c_i": ci, "method": m,
                         "measured_groups": g, "groups": L.ct_out, "kind": kind,
                         "run_s": r["online_s"], "run_encode_s": r["encode_s"],
                         "online_s": online,
                         "ct_up": L.ct_in, "ct_down": L.ct_out,
                         "comm_MB": (L.ct_in + L.ct_out) * he.ciphertext_bits / 8 / 1e6,
                         "lan_s": online + _comm(he, L.ct_in, L.ct_out, GALA_LAN),
                         "wan_s": online + _comm(he, L.ct_in, L.ct_out, GALA_WAN),
                         "budget_left": int(np.min(he.noise_budget(r["out"]))),
                         **counts})
    df = pd.DataFrame(rows)
    for net in ("lan", "wan"):
        gala = df[df.method == "GALA"].set_index("dims")[f"{net}_s"]
        df[f"{net}_speedup"] = df[f"{net}_s"] / df["dims"].map(gala)
    return df


# -- noise (Table IV) -----------------------------------------------------------------------------
def noise_runs(he, seed: int = 0, conv: bool = True) -> pd.DataFrame:
    """SEAL's measured invariant noise budget after each kernel vs the §II-C model (calibrated
    on the same backend) and the Table IV formula evaluated with the same constants."""
    rng = np.random.default_rng(seed)
    nm = he.noise_model
    rows = []
    cases = [("Matrix-vector", m, d) for d in MATVEC_DIMS for m in ("Naive", "GAZELLE", "GALA")]
    if conv:
        cases += [("Convolution", m, d) for d in [(16, 16, 128, 1, 128), (16, 16, 32, 3, 32)]
                  for m in ("GAZELLE", "GALA")]
    for kind, m, d in cases:
        if kind == "Matrix-vector":
            n_o, n_i = d
            k = matvec_kernel(m, n_o, n_i, he.n)
            W, x = rng.integers(-8, 9, (n_o, n_i)), rng.integers(-8, 9, n_i)
            label = mv_label(*d)
            formula = costs.noise_formula(f"{kind}; {m}", n=he.n, n_o=n_o, n_i=n_i,
                                          eta_0=nm.eta0, eta_mult=nm.eta_mult,
                                          eta_rot=nm.eta_rot)
        else:
            H, Wd, c_i, kk, c_o = d
            k = conv_kernel(m, H, Wd, c_i, kk, c_o, he.n)
            W, x = rng.integers(-8, 9, (c_o, c_i, kk, kk)), rng.integers(-8, 9, (c_i, H, Wd))
            label = conv_label(*d)
            formula = costs.noise_formula(f"{kind}; {m}", c_i=c_i, c_o=c_o, c_n=k.layout.c_n,
                                          k_w=kk, k_h=kk, eta_0=nm.eta0,
                                          eta_mult=nm.eta_mult, eta_rot=nm.eta_rot)
        he.keygen(k.rotation_steps())
        ct = he.encrypt(k.pack_input(x))
        out = k.evaluate(he, ct, W)
        measured = he.noise_budget(out)
        rows.append({"computation": kind, "method": m, "dims": label,
                     "n_out_ct": out.size, "fresh_bits": nm.fresh_bits,
                     "measured_budget": int(np.min(measured)),
                     "measured_consumed": nm.fresh_bits - int(np.min(measured)),
                     "model_budget": float(np.min(he.model_budget(out))),
                     "formula_budget": float(nm.budget(formula)),
                     "model_log2_noise": float(np.log2(np.max(out.noise)))})
    return pd.DataFrame(rows)


# -- nonlinear layers (GC) -------------------------------------------------------------------------
def relu_unit_cost(bits: int = 20, n: int = 2048, seed: int = 0) -> dict:
    """Measured seconds per ReLU of the project's half-gates GC (garble + evaluate) on b-bit
    additive shares, and its exact communication (bits) -- the stand-in for GAZELLE's GC ReLU."""
    from ppnn.he import gc

    rng = np.random.default_rng(seed)
    ring = Ring(bits)
    x = share_additive(ring.from_signed(rng.integers(-1000, 1000, n)), ring, rng)
    led = Ledger(["client", "server"])
    t0 = time.process_time()
    _, info = gc.gc_relu(x, led, rng, label_rng=np.random.default_rng(seed + 1))
    wall = time.process_time() - t0
    cost = gc.gc_cost(gc.relu_circuit(bits))
    return {"bits": bits, "seconds": wall / n, "comm_bits": cost.total,
            "and_gates": gc.relu_and_gates(bits), "rounds": 2,
            "garble_s": info["garble_s"] / n, "eval_s": info["evaluate_s"] / n}


# -- whole networks (Tables IX-XII, Fig. 9) ------------------------------------------------------
#: the families whose ``ppnn.count`` gives each method's HE operations of a whole network
FAMILIES = {"GAZELLE": "gazelle_gc", "GALA": "gala_gc"}
#: quick mode counts a network with more weights than this on the kernels alone
#: (:func:`network_counter`): compiling ResNet-152 (CIFAR-10) on a family peaks near 2 GB
QUICK_FAMILY_PARAMS = 15_000_000


def family_op_counts(name: str, n: int = 2048, seed: int = 0) -> pd.DataFrame:
    """HE operations of every linear layer of zoo network ``name`` per method, from
    ``ppnn.count`` of the network compiled on each method's family (:data:`FAMILIES`, or
    :data:`NO_FLOOD_FAMILIES` for a network of :data:`FLOODING_REFUSED`; ``n`` slots; seeded
    random weights and one all-zero calibration image: the counts depend on the shapes only):
    the operations booked under ``"<layer>/eval"``, the layer's kernel (the protocol's own
    Adds around it, masking and flooding, apart). Columns ``layer, method`` and
    :data:`~ppnn.protocols.gala.costs.HE_OPS`, like
    :func:`~ppnn.protocols.gala.costs.network_counts`."""
    from ppnn import nn
    from ppnn.nn import zoo
    from ppnn.protocols import api

    net = zoo.get(name)
    frames = []
    keys = NO_FLOOD_FAMILIES if name in FLOODING_REFUSED else FAMILIES
    for meth, key in keys.items():
        rng = np.random.default_rng(seed)
        plan = api.compile(key, net, nn.init_params(net, rng, np.float32),
                            calib=np.zeros((1, *net.input_shape)), n=n)
        ops = api.count(plan).ops_frame()
        del plan
        ops = ops[ops["label"].str.endswith("/eval") & ops["op"].isin(costs.HE_OPS)]
        tab = ops.groupby([ops["label"].str.removesuffix("/eval"), "op"])["n"].sum()
        tab = tab.unstack(fill_value=0).reindex(columns=list(costs.HE_OPS), fill_value=0)
        frames.append(tab.rename_axis(index="layer", columns=None).reset_index()
                      .assign(method=meth))
    return pd.concat(frames, ignore_index=True)[["layer", "method", *costs.HE_OPS]]


#: the families' variants without circuit privacy: the same plan and kernels, no flooding
NO_FLOOD_FAMILIES = {"GAZELLE": "gazelle_gc_noflood", "GALA": "gala_gc_noflood"}
#: zoo networks whose flooding ``compile`` refuses at Table IX's ``n = 2048``, and why: their
#: kernels' operations are counted on :data:`NO_FLOOD_FAMILIES` (the kernels do not depend
#: on the flooding, which is booked apart under ``"<layer>/flood"``)
FLOODING_REFUSED = {
    "vgg16_imagenet": "at n = 2048 GAZELLE's kernel of its fc1 (25088 -> 4096) leaves too "
                      "little noise budget in the families' 174-bit q for the flooding of "
                      "2^20 queries (ppnn.compile refuses it on gazelle_gc)",
}
#: zoo networks the families do not compile, counted on the kernels alone, and why
KERNELS_ONLY: dict[str, str] = {}


def network_counter(name: str, quick: bool = False) -> str:
    """How :func:`network_layers` and :func:`imagenet_op_totals` count ``name``:
    ``"family"`` (:func:`family_op_counts`; ``"family without flooding"`` for a network of
    :data:`FLOODING_REFUSED`), or ``"kernels"``
    (:func:`~ppnn.protocols.gala.costs.network_counts`, the same counts: tests) for a network
    of :data:`KERNELS_ONLY` and, in quick mode, one above :data:`QUICK_FAMILY_PARAMS`
    weights."""
    from ppnn.nn import zoo

    if name in KERNELS_ONLY or quick and zoo.get(name).n_params > QUICK_FAMILY_PARAMS:
        return "kernels"
    return "family without flooding" if name in FLOODING_REFUSED else "family"


def network_layers(name: str, unit: pd.DataFrame, relu: dict, ct_bits: int,
                   n: int = 2048, quick: bool = False) -> pd.DataFrame:
    """Per layer (in network order): HE op counts (:func:`network_counter`: ``ppnn.count``
    on the GAZELLE and GALA families, column ``counted_by``), projected compute (counts x
    measured unit costs), ciphertext traffic, and for ReLU / max-pool layers the GC stand-in
    cost. Residual additions and mean-pooling are local.
    """
    from ppnn.nn import zoo
    from ppnn.nn.layers import Conv2d, Dense, MaxPool, ReLU

    net = zoo.get(name)
    counter = network_counter(name, quick)
    counts = (family_op_counts(name, n) if counter != "kernels"
              else costs.network_counts(net, n_slots=n, run=True))
    rows = []
    for node in net.leaves():
        layer = node.layer
        if isinstance(layer, Conv2d | Dense):
            sub = counts[counts.layer == node.name].set_index("method")
            if isinstance(layer, Conv2d):
                g = layer.groups  # g independent convolutions (costs.network_counts)
                L = conv_kernel("GALA", node.in_shape[1], node.in_shape[2],
                                node.in_shape[0] // g, layer.kernel, layer.out_channels // g,
                                n).layout
                up, down = g * L.ct_in, g * L.ct_out
            else:
                from ppnn.protocols.gala.layout import MatVecLayout

                L = MatVecLayout(layer.out_features, node.in_shape[0], n)
                up, down = L.C, L.R
            row = {"layer": node.name, "type": "linear", "kind": type(layer).__name__,
                   "ct_up": up, "ct_down": down, "comm_bits": (up + down) * ct_bits,
                   "rounds": 2, "gc_elements": 0}
            for m in ("GAZELLE", "GALA"):
                c = sub.loc[m, list(costs.HE_OPS)].to_dict()
                row[f"{m}_s"] = project_seconds(c, unit)
                for op in costs.HE_OPS:
                    row[f"{m}_{op}"] = int(c[op])
            rows.append(row)
        elif isinstance(layer, ReLU | MaxPool):
            cnt = node.counts
            elems = cnt["relus"] + cnt["comparisons"]
            rows.append({"layer": node.name, "type": "nonlinear", "kind": type(layer).__name__,
                         "ct_up": 0, "ct_down": 0, "comm_bits": elems * relu["comm_bits"],
                         "rounds": relu["rounds"], "gc_elements": elems,
                         "GAZELLE_s": elems * relu["seconds"], "GALA_s": elems * relu["seconds"]})
    df = pd.DataFrame(rows).assign(counted_by=counter)
    for net_ in (GALA_LAN, GALA_WAN):
        tag = "lan" if net_ is GALA_LAN else "wan"
        comm = df["rounds"] * net_.latency_s + df["comm_bits"] / 8 / net_.bandwidth_Bps
        for m in ("GAZELLE", "GALA"):
            df[f"{m}_{tag}_s"] = df[f"{m}_s"] + comm
            df[f"{m}_{tag}_cum_s"] = df[f"{m}_{tag}_s"].cumsum()
    return df


def network_totals(layers: pd.DataFrame) -> dict:
    """A network's totals from :func:`network_layers`: communication, LAN/WAN times and
    speed-ups, the linear layers' share, the HE operation totals per method, and what the
    projection is made of (:func:`network_ops` and ``ct_up``, ``ct_down``, ``ct_comm_bits``,
    ``gc_elements``, ``gc_s``, ``gc_comm_bits``, ``rounds``, ``gc_rounds``: the inputs of
    :func:`ppnn.protocols.gala.runtime.network_seconds`, whose value equals the per-layer
    sums)."""
    lin = layers[layers.type == "linear"]
    nl = layers[layers.type == "nonlinear"]
    out = {"comm_MB": layers["comm_bits"].sum() / 8 / 1e6,
           "ct_up": int(lin["ct_up"].sum()), "ct_down": int(lin["ct_down"].sum()),
           "ct_comm_bits": int(lin["comm_bits"].sum()),
           "gc_elements": int(nl["gc_elements"].sum()), "gc_s": float(nl["GAZELLE_s"].sum()),
           "gc_comm_bits": int(nl["comm_bits"].sum()), "rounds": int(layers["rounds"].sum()),
           "gc_rounds": int(nl["rounds"].sum()),
           "counted_by": str(layers["counted_by"].iloc[0]) if "counted_by" in layers else ""}
    for tag in ("lan", "wan"):
        gz, ga = layers[f"GAZELLE_{tag}_s"].sum(), layers[f"GALA_{tag}_s"].sum()
        out |= {f"gazelle_{tag}_s": gz, f"gala_{tag}_s": ga, f"{tag}_speedup": gz / ga}
    out["linear_speedup"] = lin["GAZELLE_s"].sum() / lin["GALA_s"].sum()
    out["linear_pct_gazelle"] = 100 * lin["GAZELLE_lan_s"].sum() / layers["GAZELLE_lan_s"].sum()
    out["linear_pct_gazelle_compute"] = 100 * lin["GAZELLE_s"].sum() / layers["GAZELLE_s"].sum()
    for m in ("GAZELLE", "GALA"):
        for op in costs.HE_OPS:
            out[f"{m}_{op}"] = int(lin[f"{m}_{op}"].sum())
    return out


def network_ops(totals: dict, method: str) -> dict[str, int]:
    """The HE operation totals of ``method`` in a :func:`network_totals` (or
    :func:`network_op_totals`) dict, as :func:`~ppnn.protocols.gala.runtime.project_seconds`
    takes them."""
    return {op: int(totals[f"{method}_{op}"]) for op in costs.HE_OPS}


def delphi_layer_comm_MB(n_in: int, n_out: int, ring_bits: int = 64) -> dict[str, float]:
    """DELPHI's communication for one linear layer of ``n_in`` inputs and ``n_out`` outputs
    (:func:`ppnn.protocols.delphi.layer_bits`: the offline HE mask exchange at BFV N = 8192,
    the online ``ring_bits``-bit shares), decimal MB: ``offline``, ``online``, ``total``."""
    from ppnn.protocols import delphi

    b = delphi.layer_bits(n_in, n_out, ring_bits)
    return {"offline": b["offline"] / 8e6, "online": b["online"] / 8e6,
            "total": (b["offline"] + b["online"]) / 8e6}


def delphi_network_comm(name: str) -> dict:
    """DELPHI's communication for one inference of zoo network ``name``, from its closed
    forms: every Conv2d/Dense layer's :func:`delphi_layer_comm_MB` (ring and fixed point of
    the ``delphi_gc`` family's defaults) and one Delphi garbled activation (all of its
    traffic: tables, labels, OT, decoding bits) per ReLU output and per max-pool comparison,
    as :func:`network_layers` counts them. Decimal MB: ``he_offline``, ``online_shares``,
    ``gc``, ``total``."""
    from ppnn.he import gc as gcmod
    from ppnn.nn import zoo
    from ppnn.nn.layers import Conv2d, Dense, MaxPool, ReLU
    from ppnn.protocols import gc_act
    from ppnn.protocols.delphi_gc import DelphiGCConfig

    cfg = DelphiGCConfig()
    act = gcmod.gc_cost(gc_act.act_circuit(gc_act.ActSpec(cfg.k, cfg.weight_frac_bits, 1)))
    he = shares = gc_bits = 0.0
    elements = 0
    for node in zoo.get(name).leaves():
        if isinstance(node.layer, Conv2d | Dense):
            c = delphi_layer_comm_MB(int(np.prod(node.in_shape)), int(np.prod(node.out_shape)),
                                     cfg.k)
            he, shares = he + c["offline"], shares + c["online"]
        elif isinstance(node.layer, ReLU | MaxPool):
            elements += node.counts["relus"] + node.counts["comparisons"]
    gc_bits = elements * act.total
    return {"he_offline": he, "online_shares": shares, "gc": gc_bits / 8e6,
            "total": he + shares + gc_bits / 8e6, "gc_elements": elements,
            "gc_bytes_per_element": act.total / 8, "ring_bits": cfg.k}


#: layer kinds that are non-linear in GALA's split (GC work); every other layer is linear
NONLINEAR_KINDS = ("ReLU", "MaxPool")


def plaintext_shares(names: dict[str, str], repeats: int = 3, seed: int = 0) -> pd.DataFrame:
    """The plaintext model's split (GALA Table XII, column 'Plaintext'): one image through each
    zoo network ``names`` (label -> zoo name) in float (numpy, one BLAS thread; random
    weights, batch-norm folded into the convolutions), timed layer by layer
    (:func:`ppnn.nn.forward.layer_times`, median of ``repeats``). Linear = convolutions, FC,
    mean-pooling and residual additions; non-linear = ReLU and max-pooling. Measured CPU
    seconds; one row per network."""
    from ppnn.nn import zoo
    from ppnn.nn.forward import fold_batchnorm, init_params, layer_times

    rng = np.random.default_rng(seed)
    rows = []
    for label, name in names.items():
        net = zoo.get(name)
        net, params = fold_batchnorm(net, init_params(net, rng))
        x = rng.random((1, *net.input_shape), dtype=np.float32)
        times = pd.DataFrame(layer_times(net, params, x, repeats), columns=["kind", "s"])
        nl = float(times.loc[times["kind"].isin(NONLINEAR_KINDS), "s"].sum())
        total = float(times["s"].sum())
        rows.append({"network": label, "zoo": name, "linear_s": total - nl,
                     "nonlinear_s": nl, "linear_pct": 100 * (total - nl) / total,
                     "repeats": repeats})
    return pd.DataFrame(rows)


def network_op_totals(name: str, n: int = 2048) -> dict:
    """HE operation totals of every linear layer of zoo network ``name`` (GAZELLE and GALA
    kernels run on the counting backend, one run per distinct layer shape; channels larger
    than ``n`` slots tiled as in GAZELLE), keyed ``"<method>_<op>"`` like
    :func:`network_totals`. Counting only: ResNet-152 at 224x224 takes about a second."""
    from ppnn.nn import zoo

    df = costs.network_counts(zoo.get(name), n_slots=n, run=True)
    tot = df.groupby("method")[list(costs.HE_OPS)].sum()
    return {f"{m}_{op}": int(tot.loc[m, op]) for m in ("GAZELLE", "GALA")
            for op in costs.HE_OPS}


# -- peer comparison: TenSEAL's own matrix product -------------------------------------------------
def tenseal_peer(dims=MATVEC_DIMS, repeats: int = 3, seed: int = 0, he=None) -> pd.DataFrame:
    """TenSEAL's built-in encrypted vector x plain matrix (``CKKSVector.matmul``, CKKS, N=4096)
    and BFV row-by-row ``BFVVector.dot`` on the same dimensions, vs GALA on our SEAL backend,
    timed in the same run (CPU seconds, all threads: TenSEAL may use several). TenSEAL does
    not expose how many rotations it performs."""
    import tenseal as ts

    from ppnn.he.bfv.seal import SealBFV

    rng = np.random.default_rng(seed)
    he = he or SealBFV()
    ck = ts.context(ts.SCHEME_TYPE.CKKS, 4096, coeff_mod_bit_sizes=[40, 20, 40])
    ck.global_scale = 2 ** 20
    ck.generate_galois_keys()
    bf = ts.context(ts.SCHEME_TYPE.BFV, 4096, plain_modulus=he.p)
    bf.generate_galois_keys()
    rows = []
    for n_o, n_i in dims:
        W = rng.integers(-8, 9, (n_o, n_i))
        x = rng.integers(-8, 9, n_i)
        ref = W @ x
        gala = GalaMatVec(n_o, n_i, he.n)
        t_gala = float(np.median([time_kernel(gala, he, W, x, rng)["online_s"]
                                  for _ in range(repeats)]))
        vec = ts.ckks_vector(ck, x.astype(float).tolist())
        mat = W.T.astype(float).tolist()
        ts_times = []
        for _ in range(repeats):
            t0 = time.process_time()
            res = vec.matmul(mat)
            ts_times.append(time.process_time() - t0)
        ck_err = float(np.max(np.abs(np.array(res.decrypt()) - ref)))
        bvec = ts.bfv_vector(bf, x.tolist())
        rows_w = [w.tolist() for w in W]
        bt = []
        for _ in range(repeats):
            t0 = time.process_time()
            outs = [bvec.dot(w) for w in rows_w]
            bt.append(time.process_time() - t0)
        b_ok = all(o.decrypt()[0] == int(r) for o, r in zip(outs, ref))
        for meth, t, note in [
            ("GALA (ours, SEAL BFV)", t_gala, "1 ScMult, n_i n_o/n - 1 Perm"),
            ("TenSEAL CKKSVector.matmul", float(np.median(ts_times)),
             f"CKKS N=4096; max |error| {ck_err:.3g}; rotations not observable"),
            ("TenSEAL BFVVector.dot per row", float(np.median(bt)),
             f"BFV N=4096, one dot (mul + sum) per output; exact: {b_ok}"),
        ]:
            rows.append({"dims": mv_label(n_o, n_i), "method": meth, "seconds": t,
                         "note": note})
    df = pd.DataFrame(rows)
    gala = df[df.method.str.startswith("GALA")].set_index("dims")["seconds"]
    df["ratio_vs_gala"] = df["seconds"] / df["dims"].map(gala)
    return df


def imagenet_op_totals(n: int, quick: bool = False) -> dict[str, dict]:
    """HE operation totals of Table IX's networks on the ImageNet geometry
    (:data:`IMAGENET_NETWORKS`), by the paper's row label: Table IX's check of the dataset.
    Keyed like :func:`network_op_totals`, plus ``"counted_by"`` (:func:`network_counter`):
    ``ppnn.count`` on the families (:func:`family_op_counts`) or the kernels alone."""
    out = {}
    for label, name in IMAGENET_NETWORKS.items():
        counter = network_counter(name, quick)
        if counter == "kernels":
            out[label] = network_op_totals(name, n=n) | {"counted_by": counter}
            continue
        tot = family_op_counts(name, n).groupby("method")[list(costs.HE_OPS)].sum()
        out[label] = {f"{m}_{op}": int(tot.loc[m, op]) for m in ("GAZELLE", "GALA")
                      for op in costs.HE_OPS} | {"counted_by": counter}
    return out


def counting_backend(n: int = 2048) -> BFVSim:
    return BFVSim(n=n, values=False)


def save_results(counts_mv: pd.DataFrame, counts_conv: pd.DataFrame, net_df: pd.DataFrame,
                 unit: pd.DataFrame, mv_runs: pd.DataFrame, conv_runs: pd.DataFrame,
                 peer: pd.DataFrame, timings: dict[str, float], t0: float) -> None:
    """Write the notebook's results files under ``results_dir("gala")``: the counted kernel
    and network operation counts (identical between runs) and, separately, every wall-clock
    value (unit costs, the measured runs, the TenSEAL peer, ``timings`` plus the notebook's
    total since ``t0``, a ``time.perf_counter()`` reading)."""
    out = paths.results_dir("gala")
    paths.atomic_write(out / "counts_matvec.csv", counts_mv.to_csv(index=False))
    paths.atomic_write(out / "counts_conv.csv", counts_conv.to_csv(index=False))
    paths.atomic_write(out / "network_totals_counts.csv", net_df[[
        c for c in net_df.columns if c.split("_")[-1] in costs.HE_OPS]].to_csv())
    timings["notebook_total_s"] = time.perf_counter() - t0
    tim = pd.concat([
        unit["seconds"].rename(lambda s: f"unit_{s}_s"),
        mv_runs.set_index(mv_runs.dims + " " + mv_runs.method)["online_s"].rename(
            lambda s: f"matvec {s} online_s"),
        conv_runs.set_index(conv_runs.dims + " " + conv_runs.method)["online_s"].rename(
            lambda s: f"conv {s} online_s"),
        pd.Series(timings)])
    paths.atomic_write(out / "gala_timings.csv", tim.rename("value").to_csv())
    paths.atomic_write(out / "tenseal_peer_timings.csv", peer.to_csv(index=False))
    paths.atomic_write(out / "unit_costs_timings.csv", unit.to_csv())
    print(f"notebook ran in {timings['notebook_total_s']:.0f} s")

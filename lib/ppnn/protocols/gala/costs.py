"""Operation counts: closed forms (sympy), counts from running kernels, whole networks.

* ``PAPER_TABLE2/3/4`` transcribe the paper's formulas (Tables II-IV) into sympy, so they can be
  compared *symbolically* with ours.
* :func:`matvec_formula` / :func:`conv_formula` are our closed forms for the kernels as
  implemented, including block splitting (``R`` row blocks, ``C`` column blocks) and channel
  padding. With the paper's assumptions (powers of two, ``n_i n_o >= n``, dimensions ``<= n``,
  ``c_n`` dividing the channels) they reduce to Tables II and III (checked in the tests and the
  notebook with ``sympy.simplify``).
* :func:`count_kernel` runs a kernel on a counting backend (no slot values) and returns the
  ledger's counts; :func:`network_counts` does so for every linear layer of a zoo network.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import sympy as sp

from ppnn.core import Ledger
from ppnn.he.bfv.sim import BFVSim

from .layout import ConvLayout, MatVecLayout

__all__ = ["SYM", "PAPER_TABLE2", "PAPER_TABLE3", "PAPER_TABLE4", "matvec_formula",
           "conv_formula", "matvec_counts", "conv_counts", "count_kernel", "network_counts",
           "paper_form_matvec", "paper_form_conv", "noise_formula", "HE_OPS"]

HE_OPS = ("Perm", "DecPerm", "HstPerm", "ScMult", "Add")

n, n_i, n_o, c_i, c_o, c_n, k_w, k_h = sp.symbols("n n_i n_o c_i c_o c_n k_w k_h", positive=True)
eta_0, eta_mult, eta_rot = sp.symbols("eta_0 eta_mult eta_rot", positive=True)
R, C, G, M, b_i, d = sp.symbols("R C G M b_i d", positive=True)
SYM = {s.name: s for s in (n, n_i, n_o, c_i, c_o, c_n, k_w, k_h, eta_0, eta_mult, eta_rot,
                           R, C, G, M, b_i, d)}
log2 = lambda x: sp.log(x, 2)

# -- the paper's formulas, transcribed ---------------------------------------------------------
PAPER_TABLE2 = {
    "Naive": {"perm": n_o * log2(n_i), "hstperm": 0, "scmult": n_o, "add": n_o * log2(n_i)},
    "GAZELLE": {"perm": log2(n / n_o), "hstperm": n_i * n_o / n - 1, "scmult": n_i * n_o / n,
                "add": log2(n / n_o) + n_i * n_o / n - 1},
    "GALA": {"perm": n_i * n_o / n - 1, "hstperm": 0, "scmult": n_i * n_o / n,
             "add": n_i * n_o / n - 1},
}
PAPER_TABLE3 = {
    "GAZELLE": {"perm": c_i * c_o * (c_n - 1) / c_n**2, "hstperm": c_i * (k_w * k_h - 1) / c_n,
                "scmult": c_i * c_o * k_w * k_h / c_n, "add": c_o * (c_i * k_w * k_h - 1) / c_n},
    "GALA": {"perm": c_o * (c_n - 1) / c_n, "hstperm": c_i * (k_w * k_h - 1) / c_n,
             "scmult": c_i * c_o * k_w * k_h / c_n, "add": c_o * (c_i * k_w * k_h - 1) / c_n},
}
eta_delta = k_w * k_h * eta_mult * eta_0 + (k_w * k_h - 1) * eta_rot * eta_mult
PAPER_TABLE4 = {
    "Matrix-vector; Naive": n_i * eta_0 * eta_mult + (n_i - 1) * eta_rot,
    "Matrix-vector; GAZELLE": n_i * eta_0 * eta_mult
    + ((n_i * n_o - n) / n_o * eta_mult + (n - n_o) / n_o) * eta_rot,
    "Matrix-vector; GALA": n_i * n_o / n * eta_0 * eta_mult + (n_i * n_o / n - 1) * eta_rot,
    "Convolution; GAZELLE": c_i * eta_delta + c_i / c_n * (c_n - 1) * eta_rot,
    "Convolution; GALA": c_i * eta_delta + (c_n - 1) * eta_rot,
}


# -- our closed forms (as implemented) ----------------------------------------------------------
def matvec_formula(method: str) -> dict[str, sp.Expr]:
    """Counts of our matrix-vector kernels in terms of ``R, C, G, M, b_i, d, n_o``
    (``G = b_i b_o / n``, ``M = n / b_o``; ``d`` is the diagonal method's square size)."""
    forms = {
        "Naive": {"Perm": n_o * log2(b_i), "DecPerm": 0, "HstPerm": 0, "ScMult": n_o * C,
                  "Add": n_o * (C - 1 + log2(b_i))},
        "Diagonal": {"Perm": 0, "DecPerm": 1, "HstPerm": d - 1, "ScMult": d, "Add": d - 1},
        "GAZELLE": {"Perm": R * log2(M), "DecPerm": C, "HstPerm": C * (G - 1),
                    "ScMult": R * C * G, "Add": R * (C * G - 1 + log2(M))},
        "GALA": {"Perm": R * (G - 1), "DecPerm": 0, "HstPerm": 0, "ScMult": R * C * G,
                 "Add": R * (C * G - 1)},
    }
    if method not in forms:
        raise ValueError(f"unknown matrix-vector method {method!r}; one of {sorted(forms)}")
    return {k: sp.sympify(v) for k, v in forms[method].items()}


def conv_formula(method: str) -> dict[str, sp.Expr]:
    """Counts of our convolution kernels; ``c_i, c_o`` are the channel counts padded to
    multiples of ``c_n`` (the DecPerm of a ``1 x 1`` kernel is 0: nothing is rotated)."""
    taps = k_w * k_h
    forms = {
        "SISO": {"Perm": 0, "DecPerm": 1, "HstPerm": taps - 1, "ScMult": taps, "Add": taps - 1},
        "GAZELLE": {"Perm": c_i * c_o * (c_n - 1) / c_n**2, "DecPerm": c_i / c_n,
                    "HstPerm": c_i * (taps - 1) / c_n, "ScMult": c_i * c_o * taps / c_n,
                    "Add": c_o * (c_i * taps - 1) / c_n},
        "GALA": {"Perm": c_o * (c_n - 1) / c_n, "DecPerm": c_i / c_n,
                 "HstPerm": c_i * (taps - 1) / c_n, "ScMult": c_i * c_o * taps / c_n,
                 "Add": c_o * (c_i * taps - 1) / c_n},
    }
    if method not in forms:
        raise ValueError(f"unknown convolution method {method!r}; one of {sorted(forms)}")
    return {k: sp.sympify(v) for k, v in forms[method].items()}


def paper_form_matvec(method: str) -> dict[str, sp.Expr]:
    """Our matrix-vector forms under the paper's assumptions (one block, ``n_i n_o >= n``)."""
    sub = {R: 1, C: 1, G: n_i * n_o / n, M: n / n_o, b_i: n_i, d: n_i}
    return {k: sp.simplify(v.subs(sub)) for k, v in matvec_formula(method).items()}


def paper_form_conv(method: str) -> dict[str, sp.Expr]:
    return {k: sp.simplify(v) for k, v in conv_formula(method).items()}


def matvec_counts(method: str, layout: MatVecLayout) -> dict[str, int]:
    """Our closed form evaluated for a concrete layout (blocks and padding included)."""
    sub = {R: layout.R, C: layout.C, G: layout.G, M: layout.M, b_i: layout.b_i, n_o: layout.n_o,
           d: max(layout.no_pad, layout.ni_pad)}
    out = {k: int(sp.nsimplify(v.subs(sub))) for k, v in matvec_formula(method).items()}
    if method == "GAZELLE" and layout.G == 1:
        out["DecPerm"] = 0  # no input rotation at all: nothing to decompose
    return out


def conv_counts(method: str, layout: ConvLayout) -> dict[str, int]:
    """Our closed form for a concrete layout. A tiled layout (a channel larger than ``n``
    slots, :class:`ConvLayout`) multiplies only the ``pairs`` of (output, input) ciphertexts
    that share a tile: ``c_i c_o / c_n^2`` becomes ``pairs`` in every term (unsplit,
    ``pairs = (c_i / c_n)(c_o / c_n)`` and this is :func:`conv_formula`)."""
    taps = layout.k * layout.k
    if layout.split and method in ("GAZELLE", "GALA"):
        P, cn, ct_in, ct_out = layout.pairs, layout.c_n, layout.ct_in, layout.ct_out
        out = {"Perm": (P if method == "GAZELLE" else ct_out) * (cn - 1), "DecPerm": ct_in,
               "HstPerm": ct_in * (taps - 1), "ScMult": P * cn * taps,
               "Add": P * cn * taps - ct_out}
    else:
        sub = {c_i: layout.ci_pad, c_o: layout.co_pad, c_n: layout.c_n, k_w: layout.k,
               k_h: layout.k}
        out = {k: int(sp.nsimplify(v.subs(sub))) for k, v in conv_formula(method).items()}
    if taps == 1:
        out["DecPerm"] = 0
    return out


def noise_formula(row: str, **values) -> float:
    """Evaluate a Table IV formula for concrete dimensions and noise constants."""
    expr = PAPER_TABLE4[row]
    sub = {SYM[k]: v for k, v in values.items() if k in SYM}
    return float(expr.subs(sub))


# -- counting by running ---------------------------------------------------------------------------
def count_kernel(kernel, n_slots: int | None = None) -> dict[str, int]:
    """Run ``kernel.evaluate`` on a counting backend (no values) and return the HE op counts."""
    slots = n_slots or kernel.layout.n
    he = BFVSim(n=slots, values=False)
    ledger = Ledger(["client", "server"])
    he.keygen(kernel.rotation_steps())
    ct = he.encrypt(np.zeros((_input_cts(kernel), slots), dtype=np.int64))
    with he.recording(ledger):
        kernel.evaluate(he, ct, None)
    counts = ledger.op_counts()
    return {op: int(counts.get(op, 0)) for op in HE_OPS}


def _input_cts(kernel) -> int:
    L = kernel.layout
    if isinstance(L, ConvLayout):
        return 1 if kernel.name == "SISO" else L.ct_in
    return 1 if kernel.name == "Diagonal" else L.C


def network_counts(net, n_slots: int = 2048, methods=("GAZELLE", "GALA"),
                   run: bool = True) -> pd.DataFrame:
    """HE operation counts of every linear layer of a zoo network, per method.

    ``run=True`` counts by running the kernels on the counting backend; ``False`` evaluates
    the closed forms (the tests check both agree); each distinct layer shape is counted once
    (a network repeats a few shapes many times). A channel larger than ``n`` slots is tiled
    (:class:`ConvLayout`; ``tiles`` column). A grouped convolution (``groups = g``) is ``g``
    independent convolutions of ``c_i / g`` to ``c_o / g`` channels, counted as such.
    Batch-norm is folded into the preceding linear layer, pooling/ReLU/residual additions are
    local or GC work (no HE operations).
    """
    from ppnn.nn.layers import Conv2d, Dense
    from ppnn.protocols.gala.conv import GalaConv
    from ppnn.protocols.gala.matvec import GalaMatVec
    from ppnn.protocols.gazelle import GazelleConv, GazelleMatVec

    kernels = {"GAZELLE": (GazelleMatVec, GazelleConv), "GALA": (GalaMatVec, GalaConv)}

    @functools.cache  # every distinct layer shape is counted once (ResNet-152: 24 shapes)
    def count(meth, kind, *dims):
        K = kernels[meth][kind](*dims)
        if run:
            return K.layout, count_kernel(K)
        return K.layout, (conv_counts if kind else matvec_counts)(meth, K.layout)

    rows = []
    for node in net.leaves():
        layer = node.layer
        if isinstance(layer, Conv2d):
            c, h, w = node.in_shape
            g = layer.groups
            for meth in methods:
                L, cnt = count(meth, 1, c // g, layer.out_channels // g, h, w, layer.kernel,
                               n_slots, layer.padding, layer.stride)
                rows.append({"layer": node.name, "kind": "conv", "method": meth,
                             "c_n": L.c_n, "tiles": L.tiles,
                             **{op: g * v for op, v in cnt.items()}})
        elif isinstance(layer, Dense):
            for meth in methods:
                _, cnt = count(meth, 0, layer.out_features, node.in_shape[0], n_slots)
                rows.append({"layer": node.name, "kind": "fc", "method": meth, "c_n": 0,
                             "tiles": 1, **cnt})
    return pd.DataFrame(rows, columns=["layer", "kind", "method", "c_n", "tiles", *HE_OPS])


def log2i(x: int) -> int:
    return int(math.log2(x))

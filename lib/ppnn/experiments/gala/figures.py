"""Slot diagrams: which partial products ``W[r, c] x[c]`` sit in which slot after each step.

Every slot is tracked as a 0/1 matrix over ``(row, column)`` pairs (``terms[..., slot, r, c]``),
rotated and added exactly as the kernels rotate and add ciphertexts (GALA Figs. 3-5). A slot
is "done" for output ``r`` when it holds the whole row ``r``. Also: the per-layer runtime plot
of Fig. 9.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ppnn.protocols.gala.layout import MatVecLayout

__all__ = ["trace_matvec", "plot_trace", "plot_fig9", "plot_flood_leakage"]


def _roll(t: np.ndarray, k: int) -> np.ndarray:
    """Left rotation by k of the slot axis (axis -3)."""
    return np.roll(t, -k, axis=-3)


def trace_matvec(method: str, n_o: int, n_i: int, n: int) -> list[tuple[str, np.ndarray]]:
    """Steps of ``method`` (Naive / GAZELLE / GALA) as ``(caption, terms)`` with
    ``terms`` of shape ``(ciphertexts, n, n_o, n_i)`` (0/1)."""
    L = MatVecLayout(n_o, n_i, n)
    if L.R != 1 or L.C != 1 or L.no_pad != n_o or L.ni_pad != n_i:
        raise ValueError("slot diagrams use one block with power-of-two n_o, n_i <= n")
    pi = L.pi
    steps = []
    if method == "Naive":
        t = np.zeros((n_o, n, n_o, n_i), dtype=np.int64)
        for r in range(n_o):
            t[r, np.arange(n_i), r, np.arange(n_i)] = 1
        steps.append(("(b) [u_r] = w_r * [x]: one ciphertext per row", t))
        k = n_i // 2
        while k >= 1:
            t = t + _roll(t, k)
            steps.append((f"(c) RaS: rotate by {k} (Perm) and add", t))
            k //= 2
        return steps
    # the G products, after being brought together (GAZELLE rotates x, GALA rotates products)
    prods = np.zeros((L.G, n, n_o, n_i), dtype=np.int64)
    for g in range(L.G):
        j = np.arange(n)
        if method == "GAZELLE":
            cols = pi[(j + g) % n]
            rows = j % L.b_o
        elif method == "GALA":
            cols = pi
            rows = ((j - g) % n) % L.b_o
        else:
            raise ValueError(f"method must be Naive, GAZELLE or GALA, got {method!r}")
        ok = cols < L.b_i
        prods[g, j[ok], rows[ok], cols[ok]] = 1
    if method == "GAZELLE":
        steps.append(("(b)+(c) ScMult of diagonals with [x] rotated by g (HstPerm)", prods))
    else:
        steps.append(("(b) ScMult of row-encoded w_g with the unrotated [x]", prods))
        prods = np.stack([_roll(prods[g], g) for g in range(L.G)])
        steps.append(("(c) rotate product g by g (Perm)", prods))
    acc = prods.sum(axis=0, keepdims=True)
    steps.append(("sum of the products (Add): n/n_o blocks still to accumulate", acc))
    for k in L.ras_steps:
        acc = acc + _roll(acc, k)
        where = "HE Perm + Add" if method == "GAZELLE" else "plaintext, on both shares"
        steps.append((f"RaS: rotate by {k} and add ({where})", acc))
    return steps


def plot_trace(steps: list[tuple[str, np.ndarray]], title: str = "", max_rows: int | None = None):
    """One row of slots per (step, ciphertext): colour = output row held (grey: mixed or
    empty), number = partial products summed in the slot."""
    rows = []
    for cap, t in steps:
        for m in range(min(t.shape[0], 4)):
            rows.append((cap if m == 0 else "", t[m]))
    rows = rows[:max_rows]
    n = rows[0][1].shape[0]
    n_o = rows[0][1].shape[1]
    fig, ax = plt.subplots(figsize=(min(16, 0.45 * n + 4), 0.5 * len(rows) + 0.8))
    cmap = plt.get_cmap("tab10")
    for y, (cap, t) in enumerate(rows):
        per_row = t.sum(axis=2)                      # (n, n_o) terms per output row
        for s in range(n):
            nz = np.nonzero(per_row[s])[0]
            color = cmap(nz[0] % 10) if len(nz) == 1 else (0.85, 0.85, 0.85)
            ax.add_patch(plt.Rectangle((s, -y - 1), 1, 1, facecolor=color, edgecolor="white"))
            cnt = int(per_row[s].sum())
            if cnt:
                ax.text(s + 0.5, -y - 0.5, str(cnt), ha="center", va="center", fontsize=7)
        ax.text(-0.3, -y - 0.5, cap, ha="right", va="center", fontsize=8)
    ax.set_xlim(0, n)
    ax.set_ylim(-len(rows), 0)
    ax.set_xticks(np.arange(n) + 0.5, [str(i) for i in range(n)], fontsize=7)
    ax.set_yticks([])
    ax.set_xlabel("slot")
    handles = [plt.Rectangle((0, 0), 1, 1, color=cmap(r % 10)) for r in range(min(n_o, 10))]
    ax.legend(handles, [f"row {r}" for r in range(min(n_o, 10))], loc="upper left",
              bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
    ax.set_title(title, fontsize=10)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    return fig


def plot_fig9(layers: dict[str, pd.DataFrame], net: str = "lan"):
    """Fig. 9: per layer, accumulated runtime (lines, right axis) and GALA's speedup over
    GAZELLE (bars, left axis), one panel per network."""
    names = list(layers)
    cols = 3
    rows = -(-len(names) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.2 * rows), squeeze=False)
    for ax, name in zip(axes.flat, names):
        df = layers[name].reset_index(drop=True)
        x = np.arange(1, len(df) + 1)
        sp = df["GAZELLE_s"] / df["GALA_s"]
        ax.bar(x, sp, color=np.where(df["type"] == "linear", "tab:blue", "tab:gray"))
        ax.set_ylabel("speedup (bars)")
        ax.set_xlabel("layer index")
        ax2 = ax.twinx()
        ax2.plot(x, df[f"GAZELLE_{net}_cum_s"], color="tab:red", label="GAZELLE")
        ax2.plot(x, df[f"GALA_{net}_cum_s"], color="tab:green", label="GALA")
        ax2.set_ylabel("accumulated s (lines)")
        ax2.legend(fontsize=7, loc="upper left")
        ax.set_title(name, fontsize=10)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    fig.tight_layout()
    return fig


def plot_flood_leakage(df: pd.DataFrame):
    """The returned ciphertext's noise (client view, ``log2 max|e|``) against the weights'
    largest entry, without and with flooding (:func:`..flooding.leakage_curve`)."""
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for flooded, style, label in ((False, "o-", "no flooding"), (True, "s-", "flooded")):
        d = df[df.flooded == flooded]
        const = d[d.weights.str.startswith("constant")].groupby("max_abs_w")["log2_max_noise"]
        m = const.mean()
        ax.plot(np.log2(m.index), m.values, style, label=f"{label}: W = c (constant)")
        rnd = d[~d.weights.str.startswith("constant")]
        ax.plot(np.log2(rnd.max_abs_w), rnd.log2_max_noise, "*", ms=12,
                label=f"{label}: random |w| <= 8")
    ax.set_xlabel("log2 c (largest weight)")
    ax.set_ylabel("log2 max |noise| of [y - r]")
    ax.set_title("What the client reads in the returned ciphertext's noise")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig

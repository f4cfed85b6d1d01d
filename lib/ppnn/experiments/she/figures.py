"""Schematics of SHE's units (she.txt Fig. 2), drawn from the gates :mod:`.circuits` uses."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch

__all__ = ["draw_relu_unit", "draw_max_unit", "relu_and_max_figure"]


def _box(ax, x, y, text, w=0.9, h=0.5, color="#dbe9f6"):
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0.02",
                                fc=color, ec="#333333", lw=1))
    ax.text(x, y, text, ha="center", va="center", fontsize=9)


def _wire(ax, x0, y0, x1, y1, **kw):
    ax.plot([x0, x1], [y0, y1], color=kw.get("color", "#333333"), lw=1, zorder=0)


def draw_relu_unit(ax, bits: int = 3) -> None:
    """``r_i = x_i AND NOT x_sign`` for the magnitude bits; the sign plane is dropped."""
    s = bits - 1
    ax.text(0, s + 0.1, f"$X_{{{s}}}$ (sign)", ha="right", va="center", fontsize=10)
    _box(ax, 1.2, s, "NOT", color="#eeeeee")
    _wire(ax, 0.05, s, 0.75, s)
    _wire(ax, 1.65, s, 2.2, s)
    _wire(ax, 2.2, s, 2.2, -0.1)
    for i in range(s - 1, -1, -1):
        ax.text(0, i, f"$X_{{{i}}}$", ha="right", va="center", fontsize=10)
        _wire(ax, 0.05, i, 2.55, i)
        _wire(ax, 2.2, i - 0.12, 2.55, i - 0.12)
        _box(ax, 3.0, i, "AND")
        _wire(ax, 3.45, i, 4.1, i)
        ax.text(4.15, i, f"$R_{{{i}}}$", ha="left", va="center", fontsize=10)
    ax.set_title(f"{bits}-bit ReLU unit: {bits - 1} AND gates, depth 1", fontsize=10)
    ax.set_xlim(-1.2, 5)
    ax.set_ylim(-0.8, s + 0.7)
    ax.axis("off")


def draw_max_unit(ax, bits: int = 3) -> None:
    """A borrow-chain comparator ``lt = (X < Y)`` then one MUX per bit ``Z_i = lt ? Y_i : X_i``."""
    for i in range(bits):
        y = bits - 1 - i
        ax.text(0, y + 0.15, f"$X_{{{i}}}$", ha="right", va="center", fontsize=9)
        ax.text(0, y - 0.15, f"$Y_{{{i}}}$", ha="right", va="center", fontsize=9)
        _wire(ax, 0.05, y + 0.15, 0.75, y + 0.15)
        _wire(ax, 0.05, y - 0.15, 0.75, y - 0.15)
        label = "OR(x,~y)" if i == 0 else ("XOR,XOR,AND\nXOR,XOR" if i == bits - 1 else
                                           "XOR,XOR\nAND,XOR")
        _box(ax, 1.4, y, label, w=1.3, h=0.6, color="#f6e3db")
        if i < bits - 1:
            _wire(ax, 1.4, y - 0.3, 1.4, y - 0.7)
    ax.text(1.4, -0.75, "borrow chain: lt = X < Y", ha="center", fontsize=8)
    _wire(ax, 2.05, 0, 2.6, 0)
    _wire(ax, 2.6, 0, 2.6, bits - 1)
    for i in range(bits):
        y = bits - 1 - i
        _wire(ax, 2.6, y, 3.05, y)
        _box(ax, 3.5, y, "MUX")
        _wire(ax, 3.95, y, 4.4, y)
        ax.text(4.45, y, f"$Z_{{{i}}}$", ha="left", va="center", fontsize=10)
    ax.set_title(f"{bits}-bit max unit: comparator ({4 * bits - 2} gates) + {bits} MUX",
                 fontsize=10)
    ax.set_xlim(-1.0, 5.2)
    ax.set_ylim(-1.0, bits - 0.3)
    ax.axis("off")


def relu_and_max_figure(bits: int = 3):
    """Fig. 2 of she.txt as we implement it: ReLU unit (left) and max unit (right)."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3))
    draw_relu_unit(axes[0], bits)
    draw_max_unit(axes[1], bits)
    fig.tight_layout()
    return fig

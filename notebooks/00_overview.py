# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 00 — A tour of PPNN Lab: shares, Beaver products, the ledger, one network through five families
#
# Reproduces: the cross-paper comparison (one MNIST network through every protocol family)
#
# PPNN Lab runs the protocols of five papers on privacy-preserving neural networks —
# **Tabula** (secure lookup tables), **GALA** (rotation-frugal packed HE), **SwaNN**
# (Paillier + 2PC switching), **SHE** (TFHE gate-level ReLU) and **Falcon** (3-party
# replicated sharing) — in *simulated multi-party mode*: all parties live in this process, and
# every value that crosses from one party to another is booked in a **cost ledger**.
#
# **What you will learn**
# 1. how a secret is shared among two or three parties, and why one share reveals nothing;
# 2. how two parties multiply shared values with a Beaver triple, and what that costs;
# 3. how the ledger turns a run into bytes, rounds and a *projected* LAN/WAN time;
# 4. where each notebook of this toolkit goes next.

# %% tags=["parameters"]
QUICK = True
SEED = 0
N_ELEMENTS = 1000

# %%
import numpy as np
import pandas as pd
from IPython.display import display

import ppnn
from ppnn.core import (
    LAN,
    WAN,
    Dealer,
    FixedPoint,
    Ledger,
    Ring,
    beaver_mul,
    local_truncate,
    project,
    share_additive,
    share_replicated,
)

rng = np.random.default_rng(SEED)
print("ppnn", ppnn.__version__)

# %% [markdown]
# ## 1. Sharing a secret
#
# Real numbers become integers in the ring $\mathbb{Z}_{2^{64}}$ through fixed point with
# $f = 16$ fractional bits. A 2-of-2 **additive sharing** gives the client $x_0$ and the
# server $x_1$ with $x_0 + x_1 = x \bmod 2^{64}$; each share alone is uniformly random.

# %%
fx = FixedPoint(Ring(64), frac_bits=16)
x = np.array([3.25, -1.5, 0.0, 42.0])
X = share_additive(fx.encode(x), fx.ring, rng)
display(pd.DataFrame({"x": x, "client share x0": X.shares[0], "server share x1": X.shares[1],
                      "x0 + x1 decoded": fx.decode(X.reveal())}))

# %% [markdown]
# Falcon uses **2-of-3 replicated sharing**: $x = x_0 + x_1 + x_2$ and party $P_i$ holds
# $(x_i, x_{i+1})$, so any two parties can reconstruct and no single party learns anything.

# %%
R = share_replicated(fx.encode(x), fx.ring, rng)
display(pd.DataFrame({f"P{i} holds": [f"({a}, {b})" for a, b in zip(*R.view(i))]
                      for i in range(3)}, index=x))

# %% [markdown]
# **Why one share reveals nothing**: for a uniformly random mask the share of $x = 0$ and the
# share of $x = 2^{63}$ have the same distribution. We compare the top bit of the client's
# share over many sharings of the two secrets.

# %%
n_trials = 2000 if QUICK else 20000
s_zero = share_additive(np.zeros(n_trials, np.uint64), fx.ring, rng).shares[0]
s_big = share_additive(np.full(n_trials, 1 << 63, np.uint64), fx.ring, rng).shares[0]
print("P[top bit of client's share = 1 | x = 0]    =", fx.ring.msb(s_zero).mean())
print("P[top bit of client's share = 1 | x = 2^63] =", fx.ring.msb(s_big).mean())

# %% [markdown]
# ## 2. A Beaver multiplication, booked on the ledger
#
# To multiply shared $x$ and $y$, a trusted dealer hands out (offline) shares of a random
# triple $a, b, c = ab$. Online, each party sends its shares of $e = x - a$ and $f = y - b$;
# both open $e, f$ and compute $z = c + e b + f a + e f$ locally. Then SecureML's local
# truncation drops the extra $f$ fractional bits.

# %%
ledger = Ledger(["client", "server"])
dealer = Dealer(rng, ledger, ["client", "server"])
a_vals = rng.uniform(-10, 10, N_ELEMENTS)
b_vals = rng.uniform(-10, 10, N_ELEMENTS)
A = share_additive(fx.encode(a_vals), fx.ring, rng)
B = share_additive(fx.encode(b_vals), fx.ring, rng)
with ledger.label("product"):
    Z = local_truncate(beaver_mul(A, B, dealer), fx.frac_bits)
err = np.abs(fx.decode(Z.reveal()) - a_vals * b_vals)
print(f"max |protocol - plaintext| = {err.max():.2e} (fixed-point resolution {fx.resolution:.2e})")

# %% [markdown]
# The ledger now holds every message. The closed form for one Beaver product of $n$ elements
# of $k$ bits between two parties is $2 \cdot 2nk$ bits online in one round, and $2 \cdot 3nk$
# bits of dealer material offline.

# %%
display(ledger.summary())
display(ledger.bytes_per_party())
k = fx.ring.k
closed_form = pd.DataFrame({
    "ledger": [ledger.total_bits("online"), ledger.rounds("online"),
               ledger.total_bits("offline")],
    "closed form": [2 * 2 * N_ELEMENTS * k, 1, 2 * 3 * N_ELEMENTS * k],
}, index=["online bits", "online rounds", "offline bits"])
display(closed_form)
assert (closed_form["ledger"] == closed_form["closed form"]).all()

# %% [markdown]
# ## 3. From counts to time: the network model (a projection)
#
# $T = \sum_{\text{rounds}} (\text{latency} + \text{busiest sender's bytes} / \text{bandwidth})$.
# The presets are Falcon's LAN (625 MBps, 0.2 ms) and WAN (40 MBps, 70 ms). These are
# **projections**, labelled as such in every table of the toolkit.

# %%
proj = pd.DataFrame([project(ledger, net).__dict__ | {"total_s": project(ledger, net).total_s}
                     for net in (LAN, WAN)]).set_index("network")
display(proj)

# %% [markdown]
# Move the slider to change the number of multiplied elements and watch bytes and projected
# times move (the default value is shown below in non-interactive runs).

# %%
import ipywidgets as widgets

from ppnn.widgets import interactive_table, transcript_stepper


def beaver_costs(n: int) -> pd.DataFrame:
    led = Ledger(["client", "server"])
    dl = Dealer(np.random.default_rng(SEED), led, ["client", "server"])
    xs = share_additive(fx.ring.random(dl.rng, n), fx.ring, dl.rng)
    beaver_mul(xs, xs, dl)
    return pd.DataFrame({"online bytes": [led.total_bytes("online")],
                         "offline bytes": [led.total_bytes("offline")],
                         "LAN s (projected)": [project(led, LAN).total_s],
                         "WAN s (projected)": [project(led, WAN).total_s]}, index=[n])


slider = widgets.IntSlider(value=N_ELEMENTS, min=100, max=100_000, step=100,
                           description="elements")
box, default = interactive_table(beaver_costs, n=slider)
display(box)
display(default)

# %% [markdown]
# And a step-through of the transcript, round by round:

# %%
display(transcript_stepper(ledger))

# %% [markdown]
# ## 4. The notebooks
#
# | notebook | paper | what it reproduces |
# |---|---|---|
# | `01_tabula` | Tabula | secure lookup-table activations vs garbled circuits |
# | `02_gala` | GALA | rotation-frugal matrix-vector and convolution on real BFV |
# | `03_swann` | SwaNN | Paillier + 2PC switching, client-server and two-server |
# | `04_she` | SHE | TFHE gate-level ReLU and shift-accumulate networks |
# | `05_falcon` | Falcon | 3-party replicated sharing, semi-honest and malicious |
#
# ## Summary and exercises
# - A share is uniformly random; only the sum of all shares means anything.
# - A Beaver product costs one round and $2nk$ bits per party online.
# - Exercise: change `frac_bits` to 8 and find the largest product that still decodes.
# - Exercise: book the same product among three parties and compare the ledger.

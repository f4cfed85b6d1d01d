# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
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
# **Tabula** (secure [lookup tables](../GLOSSARY.md#secure-lookup-table)), **GALA** ([rotation](../GLOSSARY.md#rotation)-frugal packed HE), **SwaNN**
# ([Paillier](../GLOSSARY.md#paillier) + 2PC switching), **SHE** (TFHE gate-level ReLU) and **Falcon** (3-party
# [replicated sharing](../GLOSSARY.md#replicated-secret-sharing)) — in *simulated multi-party mode*: all parties live in this process, and
# every value that crosses from one party to another is booked in a **cost [ledger](../GLOSSARY.md#ledger)**.
#
# **Prerequisites.** Modular arithmetic (integers mod $2^k$), what a public-key encryption
# scheme is, and a neural network's forward pass (convolution, fully connected layer, ReLU,
# max-pool). No paper needs to be read first; every term is in the [glossary](../GLOSSARY.md).
#
# **What you will learn**
# 1. how a secret is shared among two or three parties, and why one share reveals nothing;
# 2. how two parties multiply shared values with a [Beaver triple](../GLOSSARY.md#beaver-triple), and what that costs;
# 3. how to step through a protocol from each party's seat, and how to test what a party's
#    [view](../GLOSSARY.md#view) reveals against a deliberately broken variant;
# 4. how the ledger turns a run into bytes, [rounds](../GLOSSARY.md#round) and a *[projected](../GLOSSARY.md#network-model)* LAN/WAN time, and why
#    small products pay for latency and large ones for bandwidth;
# 5. how the five protocol families compare on one network, and where each notebook of this
#    toolkit goes next.
#
# **How this notebook is organised.** §1-§6 are the tour, then a summary, the exercises
# (each with a check) and questions to think about. §7 is the *reproduction* part, for a
# reviewer: the same comparison measured with every party as its own process on real
# sockets, real keys across processes, and the tables saved for the report. It is the
# slowest part of the notebook; a student can stop at the exercises.
#
# **Reading guide.** Where the paper's sections are taught here:
#
# | where the idea comes from | this notebook |
# |---|---|
# | additive and replicated sharing (Tabula §3.1, Falcon §3.2) | §1 Sharing a secret |
# | Beaver products with a [dealer](../GLOSSARY.md#dealer) (Tabula §3.1, Falcon §3.2) | §2, §3 |
# | a party's view in the security proofs (Tabula §3.4, Falcon §4.1) | §3 Step through it |
# | LAN/WAN settings (Falcon §5.1, GALA §IV, Tabula §4) | §4 The network model |
# | the papers' shared threat model: [semi-honest](../GLOSSARY.md#semi-honest-malicious) two-party (Tabula, GALA, SwaNN), one server (SHE), honest-majority three-party (Falcon) | §5 |
# | not in any paper: the five families on one network, measured on real sockets | §5, §7 |

# %% tags=["parameters"]
QUICK = True
SEED = 0
N_ELEMENTS = 1000

# %%
import numpy as np
import pandas as pd
from IPython.display import display

import ppnn
from ppnn import paths, plotting
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

OUTPUTS = paths.notebook_outputs(QUICK)  # build/quick|full/figures unless the pipeline runs us
print("this run writes its tables and figures to", OUTPUTS)

rng = np.random.default_rng(SEED)
print("ppnn", ppnn.__version__)


# %% [markdown]
# ## 1. Sharing a secret
#
# Real numbers become integers in [the ring](../GLOSSARY.md#ring) $\mathbb{Z}_{2^{64}}$ through [fixed point](../GLOSSARY.md#fixed-point) with
# $f = 16$ fractional bits. A 2-of-2 **[additive sharing](../GLOSSARY.md#additive-secret-sharing)** gives the client $x_0$ and the
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
# To multiply shared $x$ and $y$, a trusted [dealer](../GLOSSARY.md#dealer) hands out (offline) shares of a random
# triple $a, b, c = ab$. Online, each party sends its shares of $e = x - a$ and $f = y - b$;
# both open $e, f$ and compute $z = c + e b + f a + e f$ locally. Then SecureML's local
# [truncation](../GLOSSARY.md#truncation) drops the extra $f$ fractional bits.

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
# ## 3. Step through it: who sends what to whom
#
# The ledger of §2 counted bytes. Made with `record_values=True`, it also keeps **the values
# that crossed** and what each party **holds** at named steps. Here is the same Beaver
# product on three small numbers in $\mathbb{Z}_{2^{16}}$ (so the values fit on a line): the
# client's input $x$, the server's input $y$, the dealer's triple, the masked $e = x - a$ and
# $f = y - b$ each party sends, and the output share that goes back to the client.
#
# The **protocol player** draws the run as a sequence diagram: one lane per party (and one for
# the dealer, whose material is *offline*, shaded), one arrow per message labelled with what it
# is and its size. Move the step slider (or press play) to walk through it, and pick a
# **seat**: as `client` or `server` you see only your own messages and holdings; everything
# else is greyed and its values hidden. In an executed notebook (no live kernel) the whole
# diagram and the table of every party's [view](../GLOSSARY.md#view) are shown instead.

# %%
from ppnn.experiments import overview
from ppnn.widgets import protocol_player

small = Ring(16)
demo_ledger, demo_z = overview.beaver_demo([3, 5, 7], [2, 4, 6], small, rng)
print("x * y =", demo_z, "(opened to the client)")
protocol_player(demo_ledger, title="A Beaver product in Z_2^16, every value recorded")

# %% [markdown]
# ### The server's view, as data
#
# `ppnn.views(ledger, party)` is that party's **view** in the sense of the security
# definitions: everything it received and held, step by step. The server receives a random
# share of $x$, its triple shares and the client's shares of $e$ and $f$ -- and opens
# $e = x - a$ itself. None of it depends on $x$: $a$ is a fresh uniform mask.

# %%
ppnn.views(demo_ledger, "server")[["step", "kind", "peer", "what", "shown"]]

# %% [markdown]
# ### The view as an experiment, and a broken variant
#
# "Depends on nothing" is a claim we can test. Run $n$ products with the client's secret
# $x = 0$ and $n$ with $x = 2^{63}$, collect the $e$ the server computes from its view, and
# compare the two samples with a two-sample **[Kolmogorov](../GLOSSARY.md#ks-test)-Smirnov test** at level
# $\alpha = 0.001$: the server can tell the secrets apart only if the statistic $D$ exceeds the
# threshold $c(\alpha)\sqrt{2/n}$.
#
# Then break the protocol the way real code breaks: a dealer that **reuses one mask** $a$ for
# every product (a cached or seeded mask). Now $e = x - a$ moves with $x$, and the same test
# tells the secrets apart at once. (The dealer is simulated and seeded in both runs: this
# shows the protocol's logic, not the strength of a real triple generator.)

# %%
n_view = 2000 if QUICK else 20000
view_tests = {"honest: fresh mask per product": overview.beaver_view_experiment(n_view, SEED),
              "broken: one mask reused": overview.beaver_view_experiment(n_view, SEED,
                                                                         broken=True)}
for label, exp in view_tests.items():
    print(f"{label:31s} -> {exp.test}")
plotting.show(plotting.view_panels(view_tests, "e / 2^64 as the server computes it",
                                   "products", value=lambda e: e / 2.0**64, range=(0, 1),
                                   secret_label=lambda x: "x = 2^63" if x else "x = 0"))

# %% [markdown]
# Each panel has its own y axis: the honest histograms are flat (every $e$ equally likely,
# whatever $x$ is), while the broken dealer's $e$ sits on one value per secret -- two spikes
# the server reads $x$ from.

# %% [markdown]
# ### Any protocol in the same player
#
# The ledger API is public, so any toy protocol can be played. Below, three parties compute a
# **secure sum** of their salaries: each splits its salary into three additive shares, keeps
# one and sends one to each other party; each then adds what it holds and announces the
# partial sum. The player opens in `P1`'s seat: it sees one share of each other salary, three
# partial sums and the total, never a salary but its own. (The questions at the end ask you
# to break it.)

# %%
def secure_sum(salaries, ring, rng):
    parties = ["P0", "P1", "P2"]
    led = Ledger(parties, record_values=True)
    shares = {p: share_additive(np.array([s], np.uint64), ring, rng, n_parties=3).shares
              for p, s in zip(parties, salaries)}
    with led.label("share"), led.round():
        for i, p in enumerate(parties):
            led.hold(p, f"salary of {p}", np.array([salaries[i]]))
            for j, q in enumerate(parties):
                if q != p:
                    led.send(p, q, ring.bits, f"share of {p}'s salary", shares[p][j])
    partial = {q: ring.sum(np.stack([shares[p][j] for p in parties]), axis=0)
               for j, q in enumerate(parties)}
    with led.label("announce"):
        led.exchange(parties, ring.bits, "partial sum", values=partial)
    total = ring.sum(np.stack(list(partial.values())), axis=0)
    for p in parties:
        led.hold(p, "total", total)
    return led, int(total[0])


sum_ledger, total = secure_sum([5100, 4700, 6200], Ring(32), rng)
print("total =", total)
protocol_player(sum_ledger, seat="P1", title="A secure sum of three salaries")

# %% [markdown]
# ## 4. From counts to time: the network model (a projection)
#
# $T = \sum_{\text{rounds}} (\text{latency} + \text{busiest sender's bytes} / \text{bandwidth})$.
# The presets are Falcon's LAN (625 MBps, ping 0.2 ms) and WAN (40 MBps, ping 70 ms); a ping
# is a round trip, so a round costs half of it (0.1 ms and 35 ms one way). These are
# **projections**, labelled as such in every table of the toolkit.

# %%
proj = pd.DataFrame([project(ledger, net).__dict__ | {"total_s": project(ledger, net).total_s}
                     for net in (LAN, WAN)]).set_index("network")
display(proj)

# %% [markdown]
# ### Bytes and time against the number of elements
#
# The same product for $n$ from 10 to a million elements, each run read off its own ledger
# (points), against the closed forms of §2 and the model above (lines). Bytes grow in
# proportion to $n$. Time does not: one round costs a latency whatever it carries, so a small
# product pays only for the latency (the dotted floor), and the bytes take over once
# $2nk / 8$ bytes per party take longer to send than one latency -- at a few thousand elements
# on the LAN and near a hundred thousand on the WAN. The dashed line is the product of §2.

# %%
costs = overview.beaver_costs([10, 100, 1_000, 10_000, 100_000, 1_000_000], fx.ring, SEED)
formula = overview.beaver_closed_form(costs["n"].to_numpy(), fx.ring.k)
assert all(np.allclose(costs[c], formula[c]) for c in formula)  # ledger == closed form
plotting.show(overview.plot_beaver_costs(costs, fx.ring.k, mark=N_ELEMENTS))

# %% [markdown]
# ## 5. One network, five protocol families
#
# None of the five papers compares its protocol family with the others on the same network
# and with the same cost accounting. Here MiniONN's MNIST network (conv 5x5 16 → ReLU →
# max-pool → conv 5x5 16 → ReLU → max-pool → FC 100 → ReLU → FC 10; Falcon's Network-C with
# ReLU before max-pool), trained once, classifies **the same test images** through every
# family implemented in `ppnn`:
#
# | family | what runs here |
# |---|---|
# | [Delphi](../GLOSSARY.md#delphi) + GC ReLU | Delphi linear layers (HE preprocessing counted) + real [garbled circuits](../GLOSSARY.md#garbled-circuit) (ReLU, truncation and max-pool in one circuit) |
# | Delphi + Tabula | Tabula's runner: Delphi linear layers + one secure lookup table per activation |
# | [GAZELLE](../GLOSSARY.md#gazelle) + GC, GALA + GC | their packed-HE kernels on the [BFV](../GLOSSARY.md#bfv) [slot](../GLOSSARY.md#slots) simulator (SEAL's counts) at SEAL's 128-bit N = 8192 with [noise flooding](../GLOSSARY.md#noise-flooding) on every returned ciphertext + real garbled circuits mod p; a second row each, labelled *no circuit privacy*, runs them as the papers did (N = 2048, a 60-bit q above SEAL's 128-bit bound, no flooding) |
# | SwaNN client-server / two-server | Paillier (simulated, same counts; real 2048-bit in full mode) + 2PC |
# | SHE | log-quantized network as TFHE gate circuits on the bit simulator (every gate counted) |
# | Falcon semi-honest / malicious | 3-party replicated sharing, every layer on shares |
#
# Every family books its messages on **one cost ledger** and its latency is projected with
# **one time model** (Falcon's LAN and WAN); accuracy is measured on the same images; each
# number says whether it was *measured*, *counted* or *projected*.
#
# Every family sits behind the same three calls -- `ppnn.compile(family, net, params,
# calib=...)`, `ppnn.run(plan, x, seed=...)` and `ppnn.count(plan, batch)` -- and the
# registry says what each one is:

# %%
ppnn.families()

# %% [markdown]
# The labelled variants run in the comparison beside their families but are never a default
# (the decision guide below ignores them): GAZELLE + GC and GALA + GC as the papers ran them,
# where the client, who holds the secret key, can read the server's weights in the noise of
# what it gets back (`02_gala`, §5b shows how).

# %%
ppnn.variants()

# %%
import matplotlib.pyplot as plt
from IPython.display import Image, Markdown

import ppnn
from ppnn.experiments import compare
from ppnn.experiments.compare import table as cmp_table
from ppnn.core import Network
from ppnn.plotting import savefig

sizes = compare.SIZES[QUICK]
print(f"protocol runs on {sizes['n_run']} image(s), accuracy on the first {sizes['n_acc']} "
      "MNIST test images")
cmp = compare.run_comparison(quick=QUICK, seed=SEED, progress=print)

# %% [markdown]
# ### The table
#
# Per inference of one image: online and offline communication and online rounds (counted on
# each family's ledger), compute (measured here, or counted operations × unit costs measured
# here on the real backend), online latency on LAN and WAN (projected: rounds × latency +
# busiest sender's bytes / bandwidth + compute), storage a party keeps for one inference, and
# accuracy. The last column checks that the protocol's predictions equal the family's own
# plaintext oracle on the run images.

# %%
show = cmp.frame[["family", "threat_model", "online_MB", "offline_MB", "online_rounds",
                  "compute_s", "compute_kind", "lan_s", "wan_s", "storage_MB", "accuracy",
                  "run_agreement"]]
display(show.style.format({"online_MB": "{:.3g}", "offline_MB": "{:.3g}",
                           "online_rounds": "{:g}", "compute_s": "{:.3g}", "lan_s": "{:.3g}",
                           "wan_s": "{:.3g}", "storage_MB": "{:.3g}", "accuracy": "{:.4g}"}))
print(f"float model on the same {len(cmp.workload.y_acc)} images: "
      f"{cmp.workload.float_accuracy:.4g}")

# %% [markdown]
# What each number is made of (measured / counted / projected), per family:

# %%
display(Markdown("\n".join(f"- **{f}**: {p}" for f, p in
                           zip(cmp.frame["family"], cmp.frame["provenance"]))))

# %% [markdown]
# ### Communication against latency
#
# One colour per family; circles are the LAN projection, squares the WAN one. Down-left is
# better. The vertical distance between a family's two points is what the network costs it:
# many rounds (SwaNN, Falcon) hurt on the WAN, heavy compute (SHE) does not care about the
# network at all.

# %%
fig = cmp_table.plot_comm_latency(cmp.frame)
svg, png = savefig(fig, "overview", "comparison_comm_latency")
plt.close(fig)
display(Image(filename=str(png)))

# %% [markdown]
# ### Where the cost goes, by layer type
#
# From the ledger labels (each protocol books its messages under the layer it belongs to):
# the share of communication and of projected WAN time spent in linear layers (convolutions,
# fully connected), nonlinear layers (ReLU, max-pool) and moving inputs and outputs.

# %%
fig = cmp_table.plot_breakdown(cmp.breakdown)
svg, png = savefig(fig, "overview", "comparison_breakdown")
plt.close(fig)
display(Image(filename=str(png)))

# %% [markdown]
# ### A ResNet beside MiniONN
#
# MiniONN's network is a chain of four layers; the first network most people bring is a
# ResNet, whose blocks add two branches. Every family compiles He et al.'s CIFAR ResNet-20
# (3 stages of 3 basic blocks, 16/32/64 channels; random weights and batch-norm statistics,
# calibrated on random images) and **counts** one inference with `ppnn.count` -- the ledger
# a run would book, without running it. So its WAN column is the network time of the
# counted rounds and bytes only, no compute. To keep the [quick mode](../GLOSSARY.md#quick-mode)
# quick, it counts the same graph at widths 2/4/8 on 16 × 16 images; the full pipeline counts
# ResNet-20 itself.
# `06_your_model` runs a ResNet through every family end to end (and shows which layers
# dominate), as `python -m ppnn compare resnet20.onnx` does.

# %%
from ppnn.experiments.compare import resnet as resnet_exp

resnet_counts = resnet_exp.resnet_counts(QUICK, SEED, progress=print)
print(f"{resnet_counts.attrs['network']}: {resnet_counts.attrs['macs']:,} MACs, "
      f"{resnet_counts.attrs['relus']:,} ReLUs (MiniONN's network: "
      f"{cmp.workload.net.n_macs:,} MACs, {cmp.workload.net.n_relus:,} ReLUs)")
both = resnet_exp.side_by_side(cmp.frame, resnet_counts)
display(both.style.format({c: "{:.3g}" for c in both.columns if c != "family"}))

# %% [markdown]
# ### Which approach for which setting
#
# The guide below is generated from the table (change the seed, the mode or the network
# model and it changes with the numbers).

# %%
display(Markdown("\n".join(f"- {g}" for g in cmp.guide)))

# %% [markdown]
# ### Move the network
#
# The ledgers do not change with the network, only the projection does. Move latency and
# bandwidth and watch the ranking: with a fast network compute decides, with a slow one
# rounds and bytes do. (Falcon's LAN: 0.1 ms one way, 625 MBps; WAN: 35 ms, 40 MBps.)

# %%
import ipywidgets as widgets

from ppnn.widgets import interactive_table


def ranking(latency_ms: float, bandwidth_MBps: float) -> pd.DataFrame:
    net = Network.from_units("custom", latency_ms, bandwidth_MBps)
    return compare.latency_frame(cmp.results, net).style.format(
        {"rounds": "{:g}", "network_s": "{:.3g}", "compute_s": "{:.3g}", "latency_s": "{:.3g}"})


# the settings the papers name (Falcon's LAN 0.1 ms / 625 MBps, WAN 35 ms / 40 MBps) are
# among the stops, so the sliders can select them exactly
lat = widgets.SelectionSlider(options=[0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 35, 50, 70, 100,
                                       200, 500, 1000], value=35, description="latency ms")
bw = widgets.SelectionSlider(options=[1, 2, 5, 10, 20, 40, 100, 200, 500, 625, 1000, 2000,
                                      5000, 10000], value=40, description="MB/s")
box, default = interactive_table(ranking, latency_ms=lat, bandwidth_MBps=bw)
display(box)

# %% [markdown]
# ## 6. Where to go next: the notebooks
#
# | notebook | paper | what it reproduces |
# |---|---|---|
# | `01_tabula` | Tabula | secure lookup-table activations vs [garbled circuits](../GLOSSARY.md#garbled-circuit) |
# | `02_gala` | GALA | rotation-frugal matrix-vector and convolution on real [BFV](../GLOSSARY.md#bfv) |
# | `03_swann` | SwaNN | Paillier + 2PC switching, client-server and two-server |
# | `04_she` | SHE | TFHE gate-level ReLU and shift-accumulate networks |
# | `05_falcon` | Falcon | 3-party replicated sharing, [semi-honest](../GLOSSARY.md#semi-honest-malicious) and malicious |
#
# ## Summary
#
# - A share is uniformly random; only the sum of all shares means anything.
# - A Beaver product costs one round and $2nk$ bits per party online, and $3nk$ bits per
#   party of dealer material offline; the ledger books exactly that.
# - A party's view is data: a statistical test on it cannot tell two secrets apart when the
#   masks are fresh, and tells them apart at once when a mask is reused.
# - Projected time is rounds × latency plus the busiest sender's bytes over the bandwidth:
#   small products pay for the latency, large ones for the bytes.
# - The same network costs from kilobytes online (Delphi + Tabula, after a heavy
#   preprocessing) to days of server compute (SHE), and the order changes with the network.
# - The nonlinear layers dominate communication in every interactive family; only SHE pays
#   for its linear layers (every multiplication is a gate circuit).

# %% [markdown]
# ## Exercises
#
# 3 exercises, each a stub cell to fill in and a `check` cell that says right or not yet,
# with a hint: "write it yourself" exercises are checked against the library's own ledger,
# "break it" exercises have you attack a deliberately flawed protocol, and the rest against the
# library's counts or closed forms. `hint("00.1")` gives the next hint; the reference
# solutions are hidden in `ppnn.exercises.solutions` (`solution_of("00.1")` prints one).

# %%
from ppnn.exercises import check, hint, solution_of

# %% [markdown]
# ### Exercise 00.1 — write a Beaver product yourself
#
# *Write it yourself -- checked against the library's ledger.* Write
# `my_beaver(x, y, dealer, ledger)`: the elementwise product of two additive sharings `x`,
# `y` held by `dealer.parties` (two or three of them), with one Beaver triple
# `t = dealer.triple(x.ring, x.shape)`. Open `e = x - a` and `f = y - b` in *one* round with
# `ledger.exchange(parties, bits, what, values={party: what it sends})`, then combine
# locally. The check runs your function and `ppnn.core.beaver_mul` on the same seeded inputs
# and compares the two ledgers message by message (who sends whom how many bits in which
# round, and what crosses), then the product.
#
# Stuck? `hint("00.1")` gives the next hint. The reference solution: `solution_of("00.1")`.

# %%
def my_beaver(x, y, dealer, ledger):
    """x * y on additive shares with one Beaver triple (one online round)."""
    parties, ring = dealer.parties, x.ring
    t = dealer.triple(ring, x.shape)  # t.a, t.b, t.c: shares of a, b and c = a b
    ...  # your code here


answer = ...

# %%
check("00.1", answer)

# %% [markdown]
# ### Exercise 00.2 — break it: one Beaver triple for two products
#
# *Productive failure -- break a flawed protocol.* A lazy dealer hands out the same triple
# (a, b, c) for two products, x1 * y1 and then x2 * y2. Both products are right, but the
# openings are not safe: you are the client, you know your own first input `x1`, and you saw
# the opened `e1 = x1 - a`, `f1 = y1 - b`, `e2 = x2 - a`, `f2 = y2 - b` (read off the ledger
# of the library's `beaver_mul`). Write `recover_x2(view)`: `view` is a dict of uint64
# arrays (ring Z_2^64) with keys `x1, e1, f1, e2, f2`; return the secret `x2`. The check
# runs the flawed protocol on fresh secrets and compares with them.
#
# Stuck? `hint("00.2")` gives the next hint. The reference solution: `solution_of("00.2")`.

# %%
def recover_x2(view):
    """The secret x2 from the openings of two products that shared one triple."""
    x1, e1, f1, e2, f2 = (view[k] for k in ("x1", "e1", "f1", "e2", "f2"))
    ...  # your code here


answer = ...

# %%
check("00.2", answer)

# %% [markdown]
# ### Exercise 00.3 — the online cost of a Beaver product among P parties
#
# The notebook multiplies between two parties. Derive the online bits of `beaver_mul` on `n`
# elements shared among `P` parties in Z_2^k as a closed form: a sympy expression in the
# symbols `n`, `P` and `k` (not a number, not a function). The check evaluates it at several
# sizes against the ledger of real runs.
#
# Stuck? `hint("00.3")` gives the next hint. The reference solution: `solution_of("00.3")`.

# %%
import sympy as sp

n, P, k = sp.symbols("n P k", positive=True, integer=True)

answer = ...

# %%
check("00.3", answer)

# %% [markdown]
# ## Questions to think about
#
# No check: explore them with the code above.
#
# 1. Change `frac_bits` to 8 in §1 and multiply again: what is the largest product that still
#    decodes, and what happens just above it?
# 2. Break the secure sum of §3: let `P0` send its salary in the clear, or skip the masking.
#    What does `P1`'s seat show now, and how would a view experiment like §3's tell?
# 3. With the latency and bandwidth sliders of §5, find the latency at which Falcon (three
#    servers) overtakes Delphi + GC (two parties). Which of the two counts decides it?
# 4. Run Tabula with smaller tables,
#    `compare.run_family("delphi_tabula", cmp.workload, cmp.units, bits=6)`, and put the
#    result next to the 8-bit row with `compare.comparison_frame([...], cmp.workload)`: what
#    do accuracy and offline bytes do?

# %% [markdown]
# ## 7. Reproduction: the comparison on real sockets, and the saved tables
#
# The tour ends above. This part is for a reviewer who wants to know whether the projections
# of §4 and §5 hold on a real network stack, and it is the slowest part of the notebook: in
# quick mode a few minutes of wall time on a shared two-core machine, each cell saying what it
# runs and how long it took.
#
# ### Is the projection right? The parties as processes on real sockets
#
# Every LAN and WAN time above is a **projection**: compute + rounds × latency + bytes /
# bandwidth. Nothing in it has met a real network stack -- TCP framing, per-message costs,
# a party that waits for a message before it can send its own. *Wire mode* runs the same
# protocol with **each party as its own operating-system process**, talking over TCP:
#
# - every message on the ledger crosses as real bytes, packed to its booked bit width, plus
#   a 12-byte frame header (so wire bytes = ledger bytes + 12 per message);
# - each process holds only its own party's inputs, keys and shares; everything else is
#   filled with random garbage before the protocol starts, so the outputs come out right
#   only if no party ever read what it does not hold (the *SPMD with garbage* check);
# - with root, each process sits in its own network namespace, joined by virtual Ethernet
#   pairs, with the kernel's `tbf` limiting each uplink to the link's bandwidth, and the
#   latency added by `netem` -- or, on kernels without it (like this machine's), held by the
#   receiving process for the one-way latency.
#
# The table puts the measured median wall time of one image beside three models:
# **tables** (the projection the comparison above and the paper tables use), **network**
# (the link's extra time over the *base* run -- the same namespaces and transport with no
# latency and no bandwidth limit -- against the projection's network part alone) and
# **calibrated** (the same run's base time + the longer of two paths: the parties',
# k × rounds × latency + their bytes / bandwidth, and the dealer's, whose material leaves on
# its own uplink *as the dealer makes it*, so the link delays it only by what
# material / bandwidth exceeds the dealer's own time in the base run, plus a latency and the
# rounds after its last message; k measured on a separate run). In [quick mode](../GLOSSARY.md#quick-mode) two families on MiniONN over
# the LAN, once each; the pipeline measures every wire-mode family on MiniONN and LeNet over
# LAN and WAN before any notebook starts: base and LAN runs seven times, alternated
# (medians), loopback three times, a WAN run, dominated by its latency, once (read its error
# as ± the run-to-run noise of a shared 2-core machine).

# %%
from ppnn.experiments import wire as wire_exp
from ppnn.widgets import progress

st = wire_exp.settings(QUICK)
with progress(f"wire mode: {len(st['families'])} families x {len(st['models'])} network(s) x "
              f"{len(st['links'])} link(s), one process per party"):
    wire_table = wire_exp.measured_vs_projected(QUICK, SEED)
display(wire_table[["family", "model", "network", "ledger bytes online", "wire bytes online",
                    "ledger rounds", "measured depth", "measured s (median)",
                    "projected s (tables)", "calibrated s", "calibrated error %"]])

# %% [markdown]
# Measured against projected, one panel per link, one group of bars per run: where the bars
# differ, the model is off. The tables' projection adds the *in-process* compute, but on
# this machine each wire-mode process also computes share components its party does not
# hold, on garbage (that is how the garbage check works; Falcon's parties skip them in
# their multiplications and comparisons) and two to four processes share two cores -- so
# on the LAN the projection misses compute, not the network. The calibrated model takes compute from the
# base run and only models the network.

# %%
fig = wire_exp.plot(wire_table)
svg, png = savefig(fig, "overview", "wire_measured_vs_projected")
plt.close(fig)
display(Image(filename=str(png)))

# %% [markdown]
# ### Real keys across processes
#
# On the simulators a ciphertext carries its plaintext, so the garbage check above shows
# *which values each party used*, not that a party could not read them. With
# `backend="real"` the cryptography is real and the secret key exists in the client's
# process only:
#
# - **GALA on SEAL**: the server's process is built from the encryption parameters, the
#   public key and the Galois keys the client sent; it has no secret key, and it tries to
#   decrypt one of its own ciphertexts to show it;
# - **SwaNN on Paillier** (2048-bit N): the server's process holds the public key and, in
#   the secret key's place, a stand-in that raises when anything reads it.
#
# One MNIST image each, on loopback, with the logits compared against the in-process run:
# each family runs twice, in process and then across processes with the real scheme (the
# line the cell leaves says how long that took). SHE on tfhe-rs does the same in the tests,
# on a tiny network: several ms per [bootstrapped gate](../GLOSSARY.md#tfhe-gate-bootstrapping) is too slow for MiniONN here.

# %%
with progress("real keys: " + " and ".join(wire_exp.KEY_SEPARATION_FAMILIES) + ", one MNIST "
              "image each, in-process and across processes",
              total=len(wire_exp.KEY_SEPARATION_FAMILIES)) as p:
    real_keys = wire_exp.key_separation(SEED, progress=p)
display(real_keys.set_index("family").T)

# %% [markdown]
# The online messages, ciphertexts included, cross at their booked size. SEAL's Galois keys cross as SEAL's own
# seeded serialization, about 0.6 of the size the ledger books (2 × N × log q bits per key
# part); the public key crosses too, unbooked. The logits equal the in-process run's, so the
# simulators the tables count with compute what the real schemes compute.

# %% [markdown]
# ### Reproduced tables
#
# The comparison table (with the measured / counted / projected notes and the decision guide)
# goes to `figures/tables/overview_comparison.{csv,md}` for the reproduction report; the
# counted columns alone to `figures/overview/comparison_counted.csv` (identical between runs
# with the same seed), wall-clock values to `*_timings.csv`.

# %%
compare.save_and_show(cmp)

# %% [markdown]
# The measured-vs-projected table goes to `figures/tables/overview_wire.md` (in the report,
# with the largest error per family) and `overview_wire_timings.csv` (wall-clock values).

# %%
wire_exp.save_and_show(wire_table)


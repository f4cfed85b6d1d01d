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
# # 06 — Your model: an ONNX network through every protocol family
#
# Reproduces: no paper table; your own network through every protocol family
#
# It answers the question none of the five papers can: what would *my* network cost under
# Falcon, [Delphi](../GLOSSARY.md#delphi) + Tabula, SHE, ...? Each paper evaluates its protocol on its own networks. Here you bring a network -- exported
# from PyTorch or Keras as an ONNX file -- and PPNN Lab compiles it for every protocol family,
# runs it in simulated multi-party mode on real MNIST images, checks every run against the
# family's integer model, and puts the costs side by side with one [ledger](../GLOSSARY.md#ledger) and one time model.
#
# **Prerequisites.** Notebook 00, and the notebook of the family you want to study (01-05);
# a model exported to ONNX, or the small one built below.
#
# **What you will learn**
# 1. how to export a model to ONNX and load it into PPNN Lab (`ppnn.nn.from_onnx`);
# 2. the one protocol interface: `ppnn.families()`, `ppnn.compile`, `ppnn.run`, `ppnn.count`;
# 3. what each family does to your network (its integer plan) and what it cannot run;
# 4. the comparison table for your network, and the command that makes it from a terminal;
# 5. a ResNet from ONNX: how each family adds the two branches of a residual block, and which
#    layers dominate its cost.

# %% tags=["parameters"]
QUICK = True
SEED = 0
MODEL = ""  # path to your .onnx file; empty: this notebook trains and exports a small LeNet
N_IMAGES = 200  # test images for accuracy

# %%
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Image, Markdown, display

import ppnn
from ppnn import data, nn, paths
from ppnn.core import WAN
from ppnn.experiments import compare
from ppnn.experiments.compare import table as cmp_table
from ppnn.plotting import savefig
from ppnn.protocols.api import ledger_summary

out = paths.build_dir() / ("quick" if QUICK else "full") / "your_model"
out.mkdir(parents=True, exist_ok=True)
print(f"this notebook writes under {out} (never into figures/)")

# %% [markdown]
# ## 1. A model you could have exported from PyTorch or Keras
#
# In PyTorch a trained `model` for 28 × 28 grey images is exported with
#
# ```python
# torch.onnx.export(model.eval(), torch.zeros(1, 1, 28, 28), "my_model.onnx",
#                   input_names=["input"], output_names=["logits"],
#                   dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}})
# ```
#
# and in Keras with `tf2onnx.convert.from_keras(model, output_path="my_model.onnx")`. PPNN
# Lab reads Conv, Gemm (or MatMul + Add), Relu, MaxPool, AveragePool, GlobalAveragePool,
# BatchNormalization, Flatten / Reshape and residual blocks (the `Add` of two branches, §5);
# anything else is refused with the op and node named. Set `MODEL` above to your file.
# Without one, we train a small LeNet-style network here (neither PyTorch nor Keras is
# needed) and export it exactly as those would.

# %%
x_train, y_train, x_test, y_test = data.load_mnist()
if MODEL:
    model_path = Path(MODEL)
else:
    lenet = nn.Network("small_lenet", (1, 28, 28), (
        nn.Conv2d(6, 5), nn.ReLU(), nn.MaxPool(2),
        nn.Conv2d(12, 5), nn.ReLU(), nn.MaxPool(2),
        nn.Flatten(), nn.Dense(64), nn.ReLU(), nn.Dense(10)),
        source="06_your_model: a LeNet-style example network", dataset="mnist")
    n_train = 6000 if QUICK else 60000
    trained, history = nn.train(lenet, nn.init_params(lenet, np.random.default_rng(SEED)),
                                x_train[:n_train], y_train[:n_train], epochs=1 if QUICK else 3,
                                batch_size=64, lr=2e-3, rng=np.random.default_rng(SEED))
    model_path = nn.to_onnx(lenet, trained, out / "small_lenet.onnx")
    display(history[["epoch", "loss", "train_acc"]])
print(f"model: {model_path}")

# %% [markdown]
# ## 2. Load it
#
# `from_onnx` turns the ONNX graph into PPNN Lab's layer specs and float parameters; the
# float forward pass is the reference every family's integer model is compared with.

# %%
net, params = nn.from_onnx(model_path)
print(net.source)
display(net.summary()[["name", "kind", "in_shape", "out_shape", "relus", "macs", "params"]])
acc = (nn.predict(net, params, x_test[:N_IMAGES]) == y_test[:N_IMAGES]).mean()
print(f"float accuracy on the first {N_IMAGES} MNIST test images: {acc:.3f}")

# %% [markdown]
# ## 3. The families, and one of them step by step
#
# The registry says who the parties are, what each family trusts, what runs on real
# cryptography here and what on a simulator, and which layers it compiles.

# %%
ppnn.families()

# %% [markdown]
# `compile` quantizes the network the way the family does ([fixed point](../GLOSSARY.md#fixed-point), tables, power-of-two
# weights, ...) and shows the plan; `run` executes the protocol -- every party in this
# process, every message on the ledger; `count` books the same ledger without running.

# %%
plan = ppnn.compile("falcon_mal", net, params, calib=x_train[:500])
display(plan.table())
res = ppnn.run(plan, x_test[:2], seed=SEED)
print("protocol predictions:", res.predictions, " integer oracle:", plan.predict(x_test[:2]),
      " labels:", y_test[:2])
counted = ppnn.count(plan, batch=2)
pd.DataFrame({"run": ledger_summary(res.ledger), "count": ledger_summary(counted)})

# %% [markdown]
# **Your network as a protocol, layer by layer.** Run one image again with
# `record_values=True`: the ledger now keeps what crossed as well as how much (the first 64
# elements of each message, within a 32 MiB budget). A whole network is hundreds of
# messages, so the player groups them per layer and direction: one arrow per layer, its bytes
# summed, and each party's operations as one mark per layer. Take a seat: `P0`'s [view](../GLOSSARY.md#view) is all
# that one of Falcon's three servers sees of your image.

# %%
from ppnn.widgets import protocol_player

recorded = ppnn.run(plan, x_test[:1], seed=SEED, record_values=True)
assert np.array_equal(recorded.predictions, res.predictions[:1])
print(f"{len(recorded.ledger.messages)} messages, "
      f"{recorded.ledger.value_bytes / 1e6:.2f} MB of recorded values")
protocol_player(recorded.ledger, seat="P0", group="label",
                title=f"{plan.family} on {net.name}: one image, per layer")

# %% [markdown]
# ## 4. Every family on your network
#
# The same loop as the overview notebook: compile, run on the run images, check the protocol
# against the family's integer oracle, accuracy on `N_IMAGES` test images, and each family's
# compute (measured or [projected](../GLOSSARY.md#network-model) from unit costs measured here) and storage. A family that
# cannot run a layer of your network says which and why.

# %%
from ppnn.widgets import progress

with progress("every family on your network", total=len(ppnn.families())) as bar:
    w = compare.make_workload(QUICK, SEED, n_run=1, n_acc=N_IMAGES, net=net, params=params)
    units = compare.Units(QUICK, SEED)
    results, skipped = [], {}
    for key, spec in ppnn.families().items():
        try:
            results.append(compare.run_family(key, w, units))
        except ValueError as e:  # UnsupportedNetwork is a ValueError
            skipped[spec.name] = str(e)
        bar.step(note=spec.name)
df = compare.comparison_frame(results, w)
cmp = compare.Comparison(w, units, results, df, compare.breakdown_frame(results, WAN),
                         compare.decision_guide(df), {})
display(Markdown(compare.to_markdown(df, cmp.guide)))
if skipped:
    display(pd.Series(skipped, name="cannot run this network").to_frame())

# %%
written = compare.save(cmp, figures=False, directory=out)
fig = cmp_table.plot_comm_latency(df)
for p in savefig(fig, "your_model", "comparison_comm_latency", directory=out):
    written.append(p)
plt.close(fig)
display(Image(str(out / "comparison_comm_latency.png")))
print("written:", ", ".join(sorted(p.name for p in written)))

# %% [markdown]
# ## 4b. Your network on a real network stack
#
# The LAN and WAN columns above are projections. In *wire mode* each party of a family runs
# as its own process and every message crosses a TCP socket as real bytes; with root, the
# processes sit in network namespaces behind links shaped to Falcon's LAN (and, in the full
# run, WAN). Here your network goes through every family that has a wire mode, one image,
# and the measured wall time stands beside the projection (the overview notebook explains
# the three models and why the projection misses compute on this machine).

# %%
from ppnn.experiments import wire as wire_exp

wire_mine, no_wire = wire_exp.measure_model(net, params, x_train[:500], x_test, net.name,
                                            QUICK, SEED)
display(wire_mine[["family", "network", "ledger bytes online", "wire bytes online",
                   "ledger rounds", "measured depth", "measured s (median)",
                   "projected s (tables)", "calibrated s", "calibrated error %"]])
if no_wire:
    display(pd.Series(no_wire, name="cannot run this network on the wire").to_frame())
fig = wire_exp.plot(wire_mine)
for p in savefig(fig, "your_model", "wire_measured_vs_projected", directory=out):
    print("wrote", p)
plt.close(fig)
display(Image(str(out / "wire_measured_vs_projected.png")))
print("wrote", paths.atomic_write(out / "wire_measured_vs_projected_timings.csv",
                                  wire_mine.to_csv(index=False)))

# %% [markdown]
# ## 5. A ResNet: residual blocks through every family
#
# The first network most people bring is a ResNet. He et al.'s CIFAR ResNet-20 (3 stages of 3
# basic blocks, 16/32/64 channels, a global average pool; `nn.zoo.get("resnet20_cifar10")`)
# adds two branches in every block -- the block's input itself (*identity shortcut*) or, where
# the shape changes, a strided 1x1 convolution (*projection*) -- and puts a batch-norm after
# every convolution. PyTorch exports it with `torch.onnx.export` exactly like the LeNet above;
# here the project's own exporter writes it (random weights: no training, no download), and
# `from_onnx` reads it back: every tensor read by two nodes opens a block, the `Add` of the two
# branches closes it.
#
# Each family adds the two branches the way its paper would, and compiles the rest as for any
# network:
#
# | family | the residual Add | batch-norm, average pool |
# |---|---|---|
# | Delphi + GC, Delphi + Tabula, Falcon | local: each party adds its shares (the identity shortcut first shifted to the body's fixed-point scale); the next garbled ReLU / table / [truncation](../GLOSSARY.md#truncation) rescales the sum | folded into the convolution; the pool is a local window sum, its 1/k² in the scale |
# | [GAZELLE](../GLOSSARY.md#gazelle) / GALA + GC | the two branches' HE results added where they are, on the shares mod p; the identity lifted by 2^f_w, the rescale and clip in the next garbled ReLU | folded; the pool sums the shares ("without extra cost", GALA §II) |
# | SwaNN | a product of the two branches' [Paillier](../GLOSSARY.md#paillier) ciphertexts at the server, the identity raised to 2^f_w first: operations, no message | folded before anything is switched; the scaled mean pool of Paillier |
# | SHE | a ripple-carry adder on the gate level, the coarser branch shifted (free wiring), then the block's ReLU-and-saturate unit | folded; an adder tree, 1/k² in the next layer's weights |
#
# In [quick mode](../GLOSSARY.md#quick-mode) the same graph runs at widths 2/4/8 on 16 × 16
# images (a few seconds per family); the full pipeline runs ResNet-20 itself on random
# 32 × 32 images (minutes per family: SHE's billion gates, SwaNN's Paillier), with
# `ppnn.count` beside every run.

# %%
from ppnn.experiments.compare import resnet as resnet_exp

resnet = resnet_exp.resnet_network(QUICK)
resnet_path = nn.to_onnx(resnet, resnet_exp.random_params(resnet, SEED),
                         out / f"{resnet.name}.onnx")
rnet, rparams = nn.from_onnx(resnet_path)
assert rnet.layers == resnet.layers  # identity and projection shortcuts read back as blocks
rows = rnet.summary()
print(f"{resnet_path.name}: {rnet.n_macs:,} MACs, {rnet.n_relus:,} ReLUs, "
      f"{(rows['kind'] == 'Add').sum()} residual blocks")
# an identity block (block3) and the first projection block (block4)
display(rows[rows["name"].str.startswith(("block3.", "block4."))][
    ["name", "kind", "in_shape", "out_shape", "relus", "macs"]])

# %% [markdown]
# Every family on it: one random image each, the protocol checked against the family's
# oracle, compute measured or projected with the unit costs measured in §4.

# %%
with progress("every family on the ResNet", total=len(ppnn.families())) as bar:
    rcmp, kinds = resnet_exp.compare_resnet(QUICK, SEED, units, net=rnet, params=rparams,
                                            progress=lambda line: bar.step(note=line))
display(Markdown(compare.to_markdown(rcmp.frame)))
rdir = out / "resnet"
rwritten = compare.save(rcmp, figures=False, directory=rdir)
display(compare.seconds_frame(rcmp.results).drop(columns="key").dropna(axis=1, how="all")
        .style.format({"compile_s": "{:.2f}", "run_s": "{:.2f}", "count_s": "{:.2f}"}))

# %% [markdown]
# **Which layers dominate.** The same ledgers by layer kind: the convolutions and the ReLUs
# carry almost everything; the residual Adds cost nothing where they are local (Delphi,
# Tabula, GAZELLE, GALA, Falcon), Paillier operations in SwaNN and an adder circuit in SHE.

# %%
fig = cmp_table.plot_layer_kinds(kinds)
for p in savefig(fig, "your_model", "resnet_layer_kinds", directory=rdir):
    rwritten.append(p)
plt.close(fig)
display(Image(str(rdir / "resnet_layer_kinds.png")))
display(kinds.pivot_table(index="family", columns="kind", values="comm_MB", sort=False)
        .style.format("{:.3g}"))
print("written:", ", ".join(sorted(p.name for p in rwritten)))

# %% [markdown]
# ## 6. The same from a terminal
#
# ```bash
# python -m ppnn compare my_model.onnx                       # every family, 200 images
# python -m ppnn compare my_model.onnx --families falcon_sh she --images 1000
# python -m ppnn compare resnet20_cifar10.onnx               # a ResNet, random 32x32 images
# python -m ppnn families                                    # what each family is
# python -m ppnn wire falcon_sh minionn_mnist --link wan     # one family in wire mode
# ```
#
# It prints this table and each family's compile, run and count seconds, and writes the CSV,
# Markdown and figures (the per-layer-kind breakdown among them) under
# `build/compare/<model>/`.
#
# ### Exercises
# - Put a `BatchNormalization` after a convolution of your model: which families fold it,
#   and does any number change?
# - Export the same network with the max-pool *before* the ReLU (as Falcon's networks do):
#   the GC families rewrite it (ReLU is monotone) -- see `plan.info["rewrites"]`.
# - Which family wins for your network on a WAN, and does the answer match the overview's
#   MiniONN network?

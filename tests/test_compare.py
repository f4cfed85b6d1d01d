"""The cross-paper comparison: garbled activations, the HE-GC runners, every family's run on
the same network and images, the table, the time model and determinism."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppnn import nn
from ppnn.core import LAN, WAN, Ledger, Ring, project, share_additive
from ppnn.experiments import compare
from ppnn.he import gc as gcmod
from ppnn.he.bfv.sim import BFVSim
from ppnn.protocols import delphi_gc, gc_act, hegc
from ppnn.protocols.api import families, split_one_time, variants
from ppnn.protocols.api import layer_kinds as layer_classes
from ppnn.protocols.she.family import tfhe_key_bytes

FAMILIES = {**families(), **variants()}  # the comparison runs both

P20 = BFVSim(n=2048).p  # GALA's 20-bit batching prime


def _shares(rng, v, mod):
    c = rng.integers(0, mod, size=v.shape, dtype=np.uint64)
    s = ((v.astype(object) - c.astype(object)) % mod).astype(np.uint64)
    return c, s


# -- garbled activations ------------------------------------------------------------------------
@pytest.mark.parametrize("spec", [gc_act.ActSpec(32, 8, 4), gc_act.ActSpec(16, 0, 1),
                                  gc_act.ActSpec(12, 5, 3), gc_act.ActSpec(20, 3, 4, p=P20),
                                  gc_act.ActSpec(20, 6, 1, p=P20, clip=300),
                                  gc_act.ActSpec(5, 0, 2, p=17, clip=3)])
def test_garbled_activation_equals_oracle(spec):
    rng = np.random.default_rng(spec.k * 7 + spec.m)
    c = gc_act.act_circuit(spec)
    assert c.n_and == gc_act.act_and_gates(spec)
    lim = spec.p // 2 if spec.p else (1 << (spec.k - 2)) - 1
    v = rng.integers(-lim, lim + 1, size=(300, spec.m))
    v[:4] = [[-lim] * spec.m, [lim] * spec.m, [0] * spec.m, [-1] * spec.m]  # the edges
    cs, ss = _shares(rng, v, spec.modulus)
    z, r, t = gc_act.garbled_activation(cs, ss, spec, rng, chunk=128)
    y = (z.astype(object) + r.astype(object)) % spec.modulus
    assert np.array_equal(np.array(y, dtype=np.int64), gc_act.plain_act(v, spec))
    assert t["garble_s"] > 0 and t["evaluate_s"] > 0


def test_act_spec_rejects_bad_parameters():
    with pytest.raises(ValueError, match="d must be"):
        gc_act.ActSpec(16, 15)
    with pytest.raises(ValueError, match="k must be p.bit_length"):
        gc_act.ActSpec(16, 0, 1, p=P20)
    with pytest.raises(ValueError, match="window size m"):
        gc_act.ActSpec(16, 0, 0)
    with pytest.raises(ValueError, match="share bits k"):
        gc_act.ActSpec(1)
    with pytest.raises(TypeError, match="k must be an int"):
        gc_act.ActSpec(16.0)
    with pytest.raises(ValueError, match="clip"):
        gc_act.ActSpec(16, 0, 1, clip=0)
    with pytest.raises(TypeError, match="ActSpec"):
        gc_act.act_circuit((16, 0, 1))
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"\(n, 2\)"):
        gc_act.garbled_activation(np.zeros((3, 1)), np.zeros((3, 1)),
                                  gc_act.ActSpec(16, 0, 2), rng)
    with pytest.raises(ValueError, match="residues mod p"):
        gc_act.garbled_activation(np.full((2, 1), 17), np.zeros((2, 1)),
                                  gc_act.ActSpec(5, 0, 1, p=17), rng)
    with pytest.raises(ValueError, match="split"):
        gc_act.book_gc(Ledger(["client", "server"]), 1, gc_act.act_circuit(
            gc_act.ActSpec(16)), "offline")


@pytest.mark.parametrize("b", [8, 16])
def test_online_booking_equals_gc_relu_ledger(b):
    """The counted booking of a circuit equals what the real gc_relu run books."""
    rng = np.random.default_rng(b)
    ring, n = Ring(b), 50
    real = Ledger(["client", "server"])
    gcmod.gc_relu(share_additive(ring.random(rng, (n,)), ring, rng), real, rng)
    counted = Ledger(["client", "server"])
    gc_act.book_gc(counted, n, gcmod.relu_circuit(b), "online")
    assert counted.total_bits("online") == real.total_bits("online")
    assert counted.rounds("online") == real.rounds("online") == 2
    assert counted.op_counts() == real.op_counts()
    assert counted.round_loads() == real.round_loads()


def test_delphi_split_moves_everything_but_server_share_labels_offline():
    spec = gc_act.ActSpec(32, 8, 4)
    c = gc_act.act_circuit(spec)
    cost = gcmod.gc_cost(c)
    online, delphi = Ledger(["client", "server"]), Ledger(["client", "server"])
    gc_act.book_gc(online, 10, c, "online")
    gc_act.book_gc(delphi, 10, c, "delphi")
    # online: the labels of the server's 4 shares of the window; those of r go offline
    assert delphi.total_bits("online") == 10 * cost.share_labels == 10 * 128 * 4 * 32
    assert delphi.rounds("online") == 1
    assert delphi.total_bits() == online.total_bits()
    assert delphi.op_count("garble", phase="offline") == 10 * c.n_and


# -- the HE-GC runners on small networks ---------------------------------------------------------
def _small_net():
    return nn.Network("tiny", (1, 10, 10), (nn.Conv2d(3, 3), nn.ReLU(), nn.MaxPool(2), nn.Flatten(),
                                         nn.Dense(6), nn.ReLU(), nn.Dense(4)))


@pytest.mark.parametrize("seed", [0, 1])
def test_delphi_gc_equals_integer_oracle(seed):
    rng = np.random.default_rng(seed)
    net = _small_net()
    params = nn.init_params(net, rng)
    x = rng.uniform(0, 1, (3, 1, 10, 10))
    plan = delphi_gc.DelphiGCPlan.build(net, params, delphi_gc.DelphiGCConfig(24, 6, 7), x)
    led = Ledger(delphi_gc.PARTIES)
    logits, t = delphi_gc.secure_inference(plan, x, rng, led)
    assert np.array_equal(logits, plan.forward_int(x))
    # every linear output is below 2^(k-2); the logits are not all zero (a real test)
    assert plan.peak_bits <= 22 and np.abs(logits).max() > 0
    # online: one message per linear layer, one per garbled layer, the output
    assert led.rounds("online") == 3 + 2 + 1
    assert set(t) == {"online_linear_s", "online_gc_s", "offline_s"}


def test_delphi_gc_plan_errors():
    rng = np.random.default_rng(0)
    net = _small_net()
    params = nn.init_params(net, rng)
    x = rng.uniform(0, 1, (2, 1, 10, 10))
    with pytest.raises(ValueError, match="accumulators reach"):
        delphi_gc.DelphiGCPlan.build(net, params, delphi_gc.DelphiGCConfig(16, 8, 8), x)
    with pytest.raises(ValueError, match="k must be"):
        delphi_gc.DelphiGCConfig(k=8)
    sq = nn.Network("sq", (1, 6, 6), (nn.Conv2d(2, 3), nn.Square(), nn.Flatten(), nn.Dense(2)))
    with pytest.raises(ValueError, match="must be followed by ReLU"):
        delphi_gc.DelphiGCPlan.build(sq, nn.init_params(sq, rng))
    mp = nn.Network("mp", (1, 6, 6), (nn.MaxPool(2), nn.Flatten(), nn.Dense(2)))
    with pytest.raises(ValueError, match="not supported"):
        delphi_gc.DelphiGCPlan.build(mp, nn.init_params(mp, rng))
    with pytest.raises(ValueError, match="x must have shape"):
        delphi_gc.DelphiGCPlan.build(net, params).encode(np.zeros((1, 1, 9, 9)))


@pytest.mark.parametrize("method", ["GAZELLE", "GALA"])
def test_hegc_equals_gala_integer_oracle(method):
    rng = np.random.default_rng(3)
    net = _small_net()
    params = nn.init_params(net, rng)
    x = rng.uniform(0, 1, (8, 1, 10, 10))
    he = BFVSim(n=256)
    plan = hegc.HEGCPlan.build(net, params, x, he.p)
    led = Ledger(hegc.PARTIES)
    logits, _ = hegc.secure_inference(plan, x[0], he, method, rng, led)
    assert np.array_equal(logits, plan.forward_int(x[:1]))
    assert led.op_count("ScMult") > 0 and led.op_count("garble") > 0
    # GAZELLE's flow between layers: the client sends its share, the server adds its own
    # under encryption (one AddPlain per input ciphertext, besides the one of [y - r])
    sent = {m.label: m for m in led.messages if m.what.startswith("[x")}
    back = {m.label: m for m in led.messages if m.what == "[y - r]_C"}
    layers = list(sent)
    assert len(layers) >= 2 and sent[layers[0]].what == "[x]_C"
    for i, lab in enumerate(layers):
        n_in = sent[lab].bits // he.ciphertext_bits
        n_out = back[lab].bits // he.ciphertext_bits
        adds = sum(o.n for o in led.ops if o.op == "AddPlain" and o.label == lab)
        if i:
            assert sent[lab].what == "[x_C]_C (client's share)"
        assert adds == n_out + (n_in if i else 0), (lab, adds, n_in, n_out)
    with pytest.raises(ValueError, match="method"):
        hegc.secure_inference(plan, x[0], he, "naive", rng)
    with pytest.raises(ValueError, match="one image"):
        hegc.secure_inference(plan, x[:2], he, method, rng)


@pytest.mark.parametrize("method", ["GAZELLE", "GALA"])
def test_hegc_network_ending_in_relu_returns_the_oracles_rectified_logits(method):
    """Falcon's networks end with a ReLU after the last layer: the garbled ReLU there does not
    rescale (the logits have no clip), as GALA's integer pipeline does."""
    rng = np.random.default_rng(4)
    net = nn.Network("relu_out", (1, 6, 6), (nn.Conv2d(2, 3), nn.ReLU(), nn.Flatten(),
                                             nn.Dense(4), nn.ReLU()))
    x = rng.uniform(0, 1, (4, 1, 6, 6))
    he = BFVSim(n=256)
    plan = hegc.HEGCPlan.build(net, nn.init_params(net, rng), x, he.p)
    assert plan.steps[-1].kind == "act" and plan.steps[-1].spec.d == 0
    logits, _ = hegc.secure_inference(plan, x[0], he, method, rng)
    assert np.array_equal(logits, plan.forward_int(x[:1])) and (logits >= 0).all()


# -- the whole comparison -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def cmp():
    return compare.run_comparison(quick=True, seed=0, n_run=2, n_acc=40)


def test_every_family_runs_and_matches_its_oracle(cmp):
    assert [r.key for r in cmp.results] == list(FAMILIES)
    for r in cmp.results:
        # the protocol's predictions equal the family's oracle on the run images
        assert np.array_equal(r.run_predictions, r.oracle_run_predictions), r.key
        assert len(r.predictions) == 40
    # exact families: the oracle *is* the protocol's output; the float model is close
    float_acc = cmp.workload.float_accuracy
    for acc in cmp.frame["accuracy"]:
        assert abs(acc - float_acc) <= 0.1


def test_frame_has_all_families_and_columns(cmp):
    df = cmp.frame
    assert list(df.columns) == compare.COLUMNS
    assert set(df["key"]) == set(FAMILIES) and len(df) == len(FAMILIES)
    assert df[["online_MB", "online_rounds", "lan_s", "wan_s", "accuracy"]].notna().all().all()
    assert (df["online_MB"] > 0).all() and (df["wan_s"] > df["lan_s"]).all()
    assert (df["run_agreement"] == "2/2").all()
    assert df["provenance"].str.contains("counted").all()
    assert df["provenance"].str.contains("projected").all()
    md = compare.to_markdown(df, cmp.guide)
    assert all(name in md for name in df["family"]) and "Decision guide" in md


def test_latencies_come_from_the_shared_time_model(cmp):
    """Recompute every LAN/WAN latency from the ledger's rounds and bytes by hand."""
    for r, row in zip(cmp.results, cmp.frame.itertuples(False)):
        for net, col in ((LAN, "lan_s"), (WAN, "wan_s")):
            loads = r.ledger.round_loads("online")
            t = sum(net.latency_s + max(d.values()) / 8 / net.bandwidth_Bps for d in loads)
            t += r.compute_run_s
            assert getattr(row, col) == pytest.approx(t / r.images_per_run, rel=1e-12)
        # the per-layer-type attribution of the network time adds up to the projection
        pr = project(r.ledger, WAN)
        by = compare.network_time_by_class(r.ledger, WAN, r.classify)
        assert sum(by.values()) == pytest.approx(pr.latency_s + pr.transfer_s, rel=1e-12)
    bd = cmp.breakdown
    for r in cmp.results:
        sub = bd[bd["key"] == r.key]
        assert sub["comm_MB"].sum() == pytest.approx(r.ledger.total_bytes() / 1e6
                                                     / r.images_per_run)


def test_counted_columns_are_deterministic_per_seed(cmp):
    again = compare.run_comparison(quick=True, seed=0, n_run=2, n_acc=40,
                                   families=["delphi_gc", "delphi_tabula", "gala_gc",
                                             "swann_2s", "falcon_mal"])
    cols = compare.COUNTED_COLUMNS
    a = cmp.frame.set_index("key").loc[again.frame["key"], cols[1:]].reset_index()
    pd.testing.assert_frame_equal(a, again.frame[cols].reset_index(drop=True))


def test_decision_guide_is_computed_from_the_frame(cmp):
    df = cmp.frame
    guide = compare.decision_guide(df)
    best = df.sort_values("wan_s").iloc[0]["family"]
    assert guide[0].startswith("**Lowest projected WAN latency**: " + best)
    # change the numbers: the guide follows
    df2 = df.copy()
    df2.loc[df2["key"] == "she", "wan_s"] = 1e-9
    assert compare.decision_guide(df2)[0].startswith(
        "**Lowest projected WAN latency**: " + FAMILIES["she"].name)
    assert any("malicious" in g and FAMILIES["falcon_mal"].name in g for g in guide)


def test_latency_frame_for_any_network(cmp):
    from ppnn.core import Network as TimeNetwork

    slow = compare.latency_frame(cmp.results, TimeNetwork.from_units("slow", 500.0, 1.0))
    fast = compare.latency_frame(cmp.results, TimeNetwork.from_units("fast", 0.0, 1e6))
    assert len(slow) == len(FAMILIES)
    s, f = slow.set_index("family"), fast.set_index("family")
    assert (s["latency_s"] > f.loc[s.index, "latency_s"]).all()
    assert (s["compute_s"] == f.loc[s.index, "compute_s"]).all()


def test_outputs_are_written(cmp, tmp_path, monkeypatch):
    monkeypatch.setenv("PPNN_FIGURES", str(tmp_path))
    written = compare.save(cmp)
    names = {p.name for p in written}
    assert {"overview_comparison.csv", "overview_comparison.md", "comparison_counted.csv",
            "comparison_comm_latency.svg", "comparison_breakdown.png"} <= names
    back = pd.read_csv(tmp_path / "tables" / "overview_comparison.csv")
    assert list(back["key"]) == list(FAMILIES)


def test_layer_kind_breakdown_adds_up_to_each_familys_ledger_and_projection(cmp):
    kf = compare.layer_kind_frame(cmp.results, cmp.workload, WAN)
    assert set(kf["kind"]) == set(compare.KINDS)
    for r in cmp.results:
        sub = kf[kf["key"] == r.key]
        per = r.images_per_run
        assert sub["comm_MB"].sum() == pytest.approx(r.ledger.total_bytes() / 1e6 / per)
        pr = project(r.ledger, WAN)
        assert sub["network_s"].sum() == pytest.approx((pr.latency_s + pr.transfer_s) / per)
        assert sub["compute_s"].sum() == pytest.approx(r.compute_run_s / per)
        # MiniONN has no residual block: nothing is booked under an Add
        assert sub.loc[sub["kind"] == "Add", ["comm_MB", "time_s"]].to_numpy().sum() == 0
    relu = kf[kf["kind"] == "ReLU"].set_index("key")["comm_MB"]
    assert (relu.drop(["she"]) > 0).all()  # every interactive family pays for its ReLUs


def test_random_images_workload_measures_agreement_with_the_float_model():
    net = nn.zoo.resnet_cifar(3, (2, 4, 8), 8)
    params = nn.init_params(net, np.random.default_rng(0))
    w = compare.make_workload(True, 0, n_run=1, n_acc=3, n_calib=16, net=net, params=params,
                              dataset="random")
    assert w.x_acc.shape == (3, 3, 8, 8) and w.x_calib.shape == (16, 3, 8, 8)
    assert w.float_accuracy == 1.0  # the labels are the float model's predictions
    with pytest.raises(ValueError, match="dataset must be one of"):
        compare.make_workload(dataset="svhn")


def test_resnet_counts_sit_beside_the_comparison(cmp):
    counts = compare.resnet.resnet_counts(True, 0, families=["delphi_tabula", "falcon_sh"])
    assert counts.attrs["network"] == "resnet20_w2-4-8_16px"
    both = compare.resnet.side_by_side(cmp.frame, counts)
    assert list(both["family"]) == [FAMILIES[k].name for k in ("delphi_tabula", "falcon_sh")]
    name = counts.attrs["network"]
    assert (both[f"online rounds, {name}"] > both["online rounds"]).all()  # 19 activations
    assert (both[f"WAN network s, {name}"] > 0).all()


def test_one_time_key_material_is_split_off():
    led = Ledger(["client", "server"])
    with led.label("conv1"):
        with led.offline(), led.label("keys"):
            led.send("client", "server", 800, "Galois keys")
        led.send("client", "server", 64, "[x]_C")
    with led.label("setup"):
        led.send("client", "server", 16, "key share")
    led.count("ScMult", 3, "server")
    per, once = split_one_time(led)
    assert per.total_bits() == 64 and per.rounds("online") == 1
    assert per.total_bits("offline") == 0 and per.op_count("ScMult") == 3
    assert once == {"server": (800 + 16) / 8}
    assert led.total_bits() == 880  # the original is untouched


def test_layer_classes_and_key_formula():
    classify = layer_classes(nn.zoo.get("minionn_mnist"))
    assert classify("conv1/keys") == "linear" and classify("relu2") == "nonlinear"
    assert classify("maxpool1") == "nonlinear" and classify("Act+Pool 1") == "nonlinear"
    assert classify("FC 2") == "linear" and classify("output") == "input/output"
    p = {"lwe_dimension": 805, "glwe_dimension": 3, "polynomial_size": 512, "pbs_level": 2,
         "ks_level": 5}
    assert tfhe_key_bytes(p) == 4 * (805 * 16 * 2 * 512 + 3 * 512 * 5 * 806)


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown families"):
        compare.run_comparison(families=["cheetah"])
    with pytest.raises(ValueError, match="n_run"):
        compare.make_workload(n_run=5, n_acc=2)
    with pytest.raises(ValueError, match="n_acc"):
        compare.make_workload(n_acc=0)

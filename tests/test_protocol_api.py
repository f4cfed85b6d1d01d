"""The one protocol interface: every family compiles, runs and counts a zoo network and a
network loaded from an ONNX file; each run equals the family's integer oracle and ``count``
books exactly the ledger ``run`` booked."""

from __future__ import annotations

import numpy as np
import pytest

import ppnn
from ppnn import data, nn
from ppnn.protocols import api

KEYS = list(api._REGISTRY)


def _ledger_key(led):
    """Everything count must reproduce: every message (sender, receiver, bits, round, phase,
    label) and every operation count."""
    msgs = sorted((m.sender, m.receiver, m.bits, m.round, m.phase, m.label)
                  for m in led.messages)
    return msgs, led.op_counts()


@pytest.fixture(scope="module")
def mnist():
    x, _, xt, _ = data.load_mnist()
    return np.asarray(x[:300]), np.asarray(xt[:4])


@pytest.fixture(scope="module")
def zoo_net():
    return nn.zoo.get("minionn_mnist"), nn.pretrained("minionn_mnist", quick=True, seed=0)


def _lenet_onnx(path):
    """A PyTorch-style export (Conv with bias, Relu, MaxPool, Flatten, Gemm transB=1), built
    with onnx's own helpers and random weights -- a network that is not in the zoo."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)

    def init(name, shape, fan_in):
        a = (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        return numpy_helper.from_array(a, name)

    inits = [init("c1.w", (4, 1, 5, 5), 25), init("c1.b", (4,), 25),
             init("c2.w", (8, 4, 3, 3), 36), init("c2.b", (8,), 36),
             init("f1.w", (32, 200), 200), init("f1.b", (32,), 200),
             init("f2.w", (10, 32), 32), init("f2.b", (10,), 32)]
    nodes = [
        helper.make_node("Conv", ["input", "c1.w", "c1.b"], ["a"], name="/conv1/Conv",
                         kernel_shape=[5, 5], strides=[1, 1], pads=[0, 0, 0, 0]),
        helper.make_node("Relu", ["a"], ["b"], name="/relu1/Relu"),
        helper.make_node("MaxPool", ["b"], ["c"], name="/pool1/MaxPool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["c", "c2.w", "c2.b"], ["d"], name="/conv2/Conv",
                         kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 0, 0]),
        helper.make_node("Relu", ["d"], ["e"], name="/relu2/Relu"),
        helper.make_node("Flatten", ["e"], ["f"], name="/Flatten", axis=1),
        helper.make_node("Gemm", ["f", "f1.w", "f1.b"], ["g"], name="/fc1/Gemm", transB=1),
        helper.make_node("Relu", ["g"], ["h"], name="/relu3/Relu"),
        helper.make_node("Gemm", ["h", "f2.w", "f2.b"], ["logits"], name="/fc2/Gemm",
                         transB=1),
    ]
    graph = helper.make_graph(
        nodes, "small_lenet",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 1, 28, 28])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], inits)
    model = helper.make_model(graph, producer_name="pytorch-style test",
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


@pytest.fixture(scope="module")
def onnx_net(tmp_path_factory):
    path = _lenet_onnx(tmp_path_factory.mktemp("onnx") / "small_lenet.onnx")
    return nn.from_onnx(path)


def _check_family(key, net, params, calib, x):
    fam = api.family(key)
    per = fam.spec.images_per_run
    plan = ppnn.compile(key, net, params, calib=calib)
    assert plan.family == key and len(plan.table()) > 0
    xs = x[:per]
    res = ppnn.run(plan, xs, seed=3)
    ref = plan.oracle(xs)
    assert res.logits.shape == ref.shape
    if fam.exact:  # the protocol computes the integer network bit for bit
        assert np.array_equal(np.asarray(res.logits, object), np.asarray(ref, object)), key
    else:  # probabilistic truncation (+-1 ulp of each layer's input step): close, not equal
        err = np.abs(np.asarray(res.logits, float) - np.asarray(ref, float)).max()
        assert err <= 0.15 * np.abs(np.asarray(ref, float)).max() + 1e-6, (key, err)
    assert np.array_equal(res.predictions, plan.predict(xs)), key
    counted = ppnn.count(plan, batch=per)
    assert _ledger_key(counted) == _ledger_key(res.ledger), key
    s, c = api.ledger_summary(res.ledger), api.ledger_summary(counted)
    assert s == c and s["online_bytes"] > 0 and s["online_rounds"] > 0
    assert set(res.provenance) >= {"communication", "compute"}
    return plan, res


@pytest.mark.parametrize("key", KEYS)
def test_family_runs_zoo_network_equal_to_its_oracle_and_count_equals_run(key, zoo_net, mnist):
    net, params = zoo_net
    calib, x = mnist
    _check_family(key, net, params, calib, x)


@pytest.mark.parametrize("key", KEYS)
def test_family_runs_onnx_network_equal_to_its_oracle_and_count_equals_run(key, onnx_net,
                                                                           mnist):
    net, params = onnx_net
    calib, x = mnist
    _check_family(key, net, params, calib, x)


def test_count_scales_with_the_batch(zoo_net, mnist):
    net, params = zoo_net
    plan = ppnn.compile("falcon_sh", net, params, calib=mnist[0])
    one, three = ppnn.count(plan, 1), ppnn.count(plan, 3)
    # a batch is one pass: the same rounds, more bytes per round
    assert three.rounds("online") == one.rounds("online")
    assert three.total_bytes("online") > 2 * one.total_bytes("online")
    assert _ledger_key(three) == _ledger_key(ppnn.run(plan, mnist[1][:3], seed=0).ledger)


def test_registry_lists_every_family_with_what_runs_for_real():
    reg = ppnn.families()
    assert list(reg) == KEYS and len(KEYS) == 9
    df = reg.frame()
    assert df["real cryptography"].str.len().min() > 5
    assert df["simulated / counted"].str.len().min() > 5
    for spec in reg.values():
        assert spec.parties and spec.layers and set(spec.backends) <= set(api.BACKENDS)


def test_unsupported_layer_is_named(mnist):
    net = nn.zoo.get("cryptonets_mnist")
    params = nn.init_params(net, np.random.default_rng(0))
    with pytest.raises(ppnn.UnsupportedNetwork, match=r"square1 \(Square\)"):
        ppnn.compile("falcon_sh", net, params, calib=mnist[0])
    padded = nn.zoo.get("she_mnist")  # padded max-pool
    with pytest.raises(ValueError, match="maxpool1"):
        ppnn.compile("delphi_gc", padded, nn.init_params(padded, np.random.default_rng(0)),
                     calib=mnist[0])


def test_bad_arguments_raise_clear_errors(zoo_net, mnist):
    net, params = zoo_net
    with pytest.raises(ValueError, match="unknown family"):
        ppnn.compile("cheetah", net, params, calib=mnist[0])
    with pytest.raises(ValueError, match="calibration"):
        ppnn.compile("falcon_sh", net, params)
    plan = ppnn.compile("falcon_sh", net, params, calib=mnist[0])
    with pytest.raises(ValueError, match="backend"):
        ppnn.run(plan, mnist[1][:1], backend="real")
    with pytest.raises(ValueError, match="shape"):
        ppnn.run(plan, np.zeros((1, 3, 28, 28)))
    with pytest.raises(ValueError, match="batch"):
        ppnn.count(plan, 0)
    with pytest.raises(TypeError, match="Plan"):
        ppnn.run("falcon_sh", mnist[1][:1])
    two = ppnn.compile("swann_2s", net, params, calib=mnist[0])
    with pytest.raises(ValueError, match="2 images per run"):
        ppnn.run(two, mnist[1][:1])
    with pytest.raises(ValueError, match="k must be"):
        ppnn.compile("delphi_gc", net, params, calib=mnist[0], k=8)


def test_maxpool_before_relu_is_rewritten_exactly(mnist):
    """Falcon's networks pool before the ReLU; Delphi + GC evaluates ReLU then max-pool in one
    circuit: equal, because ReLU is monotone, and the plan says it rewrote the network."""
    net = nn.zoo.get("falcon_network_c")
    params = nn.init_params(net, np.random.default_rng(1))
    plan, _ = _check_family("delphi_gc", net, params, mnist[0], mnist[1])
    assert any("monotone" in r for r in plan.info["rewrites"])


def test_command_line_compare_writes_the_table_and_names_what_cannot_run(tmp_path, capsys):
    from ppnn.__main__ import main

    path = _lenet_onnx(tmp_path / "small_lenet.onnx")
    out = tmp_path / "out"
    assert main(["compare", str(path), "--families", "falcon_sh", "delphi_gc", "--images",
                 "20", "--calib", "100", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| Falcon semi-honest |" in text and "| Delphi + GC ReLU |" in text
    assert {"comparison.csv", "comparison.md", "comparison_counted.csv",
            "comparison_comm_latency.svg"} <= {p.name for p in out.iterdir()}
    import pandas as pd

    df = pd.read_csv(out / "comparison_counted.csv")
    assert list(df["key"]) == ["falcon_sh", "delphi_gc"] and (df["n_accuracy"] == 20).all()
    assert main(["compare", str(tmp_path / "missing.onnx")]) == 2
    assert main(["compare", str(path), "--families", "cheetah"]) == 2


def test_command_line_compare_on_a_resnet_runs_all_nine_families(tmp_path, capsys):
    """A ResNet-20 graph (reduced copy: widths 2/4/8 on 16x16 images) written by the project's
    exporter: every family compiles, runs and counts it; the table, each family's compile /
    run / count seconds and the per-layer-kind breakdown come out."""
    from ppnn.__main__ import main
    from ppnn.experiments.compare import resnet

    net = nn.zoo.resnet_cifar(3, (2, 4, 8), 16)
    path = nn.to_onnx(net, resnet.random_params(net, 0), tmp_path / "resnet20.onnx")
    out = tmp_path / "out"
    assert main(["compare", str(path), "--calib", "32", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "9 residual blocks" in text and "random uniform images of shape (3, 16, 16)" in text
    for spec in ppnn.families().values():
        assert f"| {spec.name} |" in text
    assert "count = run's ledger: NO" not in text and text.count("count = run's ledger: yes") == 9
    assert {"comparison_layer_kinds.png", "comparison_layer_kinds_timings.csv",
            "comparison_seconds_timings.csv"} <= {p.name for p in out.iterdir()}
    import pandas as pd

    kinds = pd.read_csv(out / "comparison_layer_kinds_timings.csv")
    assert set(kinds["key"]) == set(KEYS)
    secs = pd.read_csv(out / "comparison_seconds_timings.csv")
    assert secs["count_equals_run"].all() and (secs[["compile_s", "run_s", "count_s"]] > 0).all(
        axis=None)

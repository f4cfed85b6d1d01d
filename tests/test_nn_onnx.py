"""ONNX import / export: zoo round trips, ONNX's own reference evaluator as the oracle of the
export, a hand-built PyTorch-style model, and every clear error of the importer."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from ppnn import nn
from ppnn.nn import (
    BatchNorm,
    Conv2d,
    Dense,
    Flatten,
    MaxPool,
    MeanPool,
    Network,
    ReLU,
    Residual,
    Square,
)

# Conv/Dense/ReLU/MaxPool/Flatten (minionn, falcon), Square + scaled MeanPool with padding
# (cryptonets), MeanPool (minionn_cifar10), BatchNorm on images and on flat inputs (she_mnist)
ZOO = ["minionn_mnist", "falcon_network_a", "falcon_network_b", "falcon_network_c",
       "falcon_lenet", "cryptonets_mnist", "she_mnist", "dshe_mnist", "minionn_cifar10",
       "mlp_784_128_128_10"]


def random_params(net, seed, dtype=np.float32):
    """He-normal weights plus non-trivial biases and batch-norm statistics."""
    rng = np.random.default_rng(seed)
    params = nn.init_params(net, rng, dtype)

    def fill(ps):
        for p in ps:
            if "body" in p:
                fill(p["body"])
                fill(p["shortcut"])
                continue
            for key in ("b", "beta", "mean"):
                if key in p:
                    p[key][:] = rng.normal(0, 0.3, p[key].shape)
            for key in ("gamma", "var"):
                if key in p:
                    p[key][:] = rng.uniform(0.5, 2.0, p[key].shape)

    fill(params)
    return params


def kinds(net):
    return [n.kind for n in net.nodes()]


@pytest.mark.parametrize("name", ZOO)
def test_zoo_round_trip_gives_equal_layers_and_forward(name, tmp_path):
    net = nn.zoo.get(name)
    params = random_params(net, 1)
    path = nn.to_onnx(net, params, tmp_path / f"{name}.onnx")
    net2, params2 = nn.from_onnx(path)
    assert kinds(net2) == kinds(net)
    assert net2.layers == net.layers  # hyper-parameters too (BatchNorm eps reads back 1e-05)
    assert net2.input_shape == net.input_shape and net2.name == name
    nn.check_params(net2, params2)
    x = np.random.default_rng(2).standard_normal((3, *net.input_shape))
    np.testing.assert_allclose(nn.forward(net2, params2, x), nn.forward(net, params, x),
                               rtol=0, atol=1e-9)
    assert f"file {name}.onnx" in net2.source and "producer ppnn" in net2.source
    assert "opset 17" in net2.source
    assert net2.dataset == ("mnist" if net.input_shape == (1, 28, 28) else "")


@pytest.mark.parametrize("name", ZOO + ["resnet32_cifar10"])
def test_export_equals_onnx_reference_evaluator(name, tmp_path):
    net = nn.zoo.get(name)
    params = random_params(net, 3, np.float64)
    path = nn.to_onnx(net, params, tmp_path / "m.onnx")
    x = np.random.default_rng(4).standard_normal((2, *net.input_shape))
    (y_onnx,) = ReferenceEvaluator(str(path)).run(None, {"input": x})
    y = nn.forward(net, params, x)
    assert y_onnx.shape == y.shape
    np.testing.assert_allclose(y_onnx, y, rtol=1e-6, atol=1e-6 * max(1.0, np.abs(y).max()))


def test_export_of_grouped_depthwise_and_residual_network_matches_reference(tmp_path):
    net = Network("small_groups", (4, 9, 9), (
        Conv2d(6, 3, 1, 1, groups=2), BatchNorm(), ReLU(), Conv2d(6, 3, 2, 1, bias=False,
                                                                  groups=6),
        Residual((Conv2d(6, 3, 1, 1), ReLU(), Conv2d(6, 1)), ()), Square(),
        MeanPool(3, 1, 1, scaled=True), MaxPool(3, 2, 1), Flatten(), Dense(5, bias=False)))
    params = random_params(net, 5, np.float64)
    path = nn.to_onnx(net, params, tmp_path / "g.onnx")
    x = np.random.default_rng(6).standard_normal((3, *net.input_shape))
    (y_onnx,) = ReferenceEvaluator(str(path)).run(None, {"input": x})
    np.testing.assert_allclose(y_onnx, nn.forward(net, params, x), rtol=1e-6, atol=1e-9)


def test_concat_block_exports_and_channel_shuffle_is_refused_by_name(tmp_path):
    """ShuffleNet's stride-2 unit (a concat block) exports as an ONNX Concat; its channel
    shuffle has no single-node mapping and is refused with the layer's name."""
    net = Network("cat", (4, 6, 6), (Conv2d(4, 1), Residual((Conv2d(2, 3, 2, 1),),
                                                            (MeanPool(3, 2, 1),),
                                                            merge="concat"), ReLU(), Flatten(),
                                      Dense(3)))
    params = random_params(net, 7, np.float64)
    path = nn.to_onnx(net, params, tmp_path / "c.onnx")
    x = np.random.default_rng(8).standard_normal((2, *net.input_shape))
    (y_onnx,) = ReferenceEvaluator(str(path)).run(None, {"input": x})
    np.testing.assert_allclose(y_onnx, nn.forward(net, params, x), rtol=1e-6, atol=1e-9)
    shuffled = Network("sh", (4, 6, 6), (nn.ChannelShuffle(2), Flatten(), Dense(3)))
    with pytest.raises(ValueError, match="ChannelShuffle"):
        nn.to_onnx(shuffled, random_params(shuffled, 0), tmp_path / "s.onnx")


def test_export_is_checked_named_after_layers_and_has_symbolic_batch(tmp_path):
    net = nn.zoo.get("minionn_mnist")
    path = nn.to_onnx(net, random_params(net, 0), tmp_path / "sub" / "m.onnx")
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    assert [n.name for n in model.graph.node] == net.layer_names
    assert [n.op_type for n in model.graph.node] == [
        "Conv", "Relu", "MaxPool", "Conv", "Relu", "MaxPool", "Flatten", "Gemm", "Relu", "Gemm"]
    dims = model.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param == "N" and [d.dim_value for d in dims[1:]] == [1, 28, 28]
    assert model.graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT
    assert model.opset_import[0].version == 17
    assert not list(tmp_path.glob("sub/*.tmp*"))


@pytest.mark.parametrize("name", ["resnet20_cifar10", "resnet32_cifar10"])
def test_resnet_round_trip_gives_equal_blocks_and_forward(name, tmp_path):
    net = nn.zoo.get(name)
    params = random_params(net, 2)
    net2, params2 = nn.from_onnx(nn.to_onnx(net, params, tmp_path / "r.onnx"))
    assert net2.layers == net.layers and net2.name == "r"
    blocks = [layer for layer in net2.layers if isinstance(layer, Residual)]
    assert {len(b.shortcut) for b in blocks} == {0, 2}  # identity and projection (conv + BN)
    x = np.random.default_rng(3).random((2, *net.input_shape)).astype(np.float32)
    np.testing.assert_array_equal(nn.forward(net2, params2, x), nn.forward(net, params, x))


def test_reduced_resnet_export_equals_onnx_reference_evaluator(tmp_path):
    net = nn.zoo.resnet_cifar(3, (2, 4, 8), 8)
    params = random_params(net, 4, np.float64)
    model = onnx.load(str(nn.to_onnx(net, params, tmp_path / "r.onnx")))
    x = np.random.default_rng(5).random((2, *net.input_shape))
    (y,) = ReferenceEvaluator(model).run(None, {"input": x})
    np.testing.assert_allclose(nn.forward(net, params, x), y, rtol=1e-9, atol=1e-9)


def test_to_onnx_rejects_bad_opset_and_bad_params(tmp_path):
    net = nn.zoo.get("falcon_network_a")
    params = random_params(net, 0)
    with pytest.raises(ValueError, match="opset must be an int in"):
        nn.to_onnx(net, params, tmp_path / "a.onnx", opset=7)
    with pytest.raises(ValueError, match="params"):
        nn.to_onnx(net, params[:-1], tmp_path / "a.onnx")


# -- hand-built models (PyTorch export style) ------------------------------------------------
def value_info(name, dims, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, dims)


def make_model(nodes, inits, in_dims=("batch_size", 1, 8, 8), out_dims=None, inputs=None,
               opset=17, producer=("pytorch", "2.6.0")):
    inputs = inputs or [value_info("input.1", list(in_dims))]
    elem = inputs[0].type.tensor_type.elem_type
    graph = helper.make_graph(
        nodes, "main_graph", inputs, [value_info(nodes[-1].output[0], out_dims, elem)],
        initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name=producer[0], producer_version=producer[1])
    model.ir_version = 8
    return model


def torch_style_model(rng):
    """Conv(bias) -> Relu -> MaxPool -> Flatten -> Gemm(transB=1) as torch.onnx.export writes
    it for nn.Sequential(Conv2d(1, 4, 3, padding=1), ReLU(), MaxPool2d(2), Flatten(),
    Linear(64, 10))."""
    w = {"0.weight": rng.standard_normal((4, 1, 3, 3)).astype(np.float32),
         "0.bias": rng.standard_normal(4).astype(np.float32),
         "4.weight": rng.standard_normal((10, 64)).astype(np.float32),
         "4.bias": rng.standard_normal(10).astype(np.float32)}
    nodes = [
        helper.make_node("Conv", ["input.1", "0.weight", "0.bias"], ["/0/Conv_output_0"],
                         name="/0/Conv", dilations=[1, 1], group=1, kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("Relu", ["/0/Conv_output_0"], ["/1/Relu_output_0"], name="/1/Relu"),
        helper.make_node("MaxPool", ["/1/Relu_output_0"], ["/2/MaxPool_output_0"],
                         name="/2/MaxPool", ceil_mode=0, dilations=[1, 1], kernel_shape=[2, 2],
                         pads=[0, 0, 0, 0], strides=[2, 2]),
        helper.make_node("Flatten", ["/2/MaxPool_output_0"], ["/3/Flatten_output_0"],
                         name="/3/Flatten", axis=1),
        helper.make_node("Gemm", ["/3/Flatten_output_0", "4.weight", "4.bias"], ["15"],
                         name="/4/Gemm", alpha=1.0, beta=1.0, transB=1),
    ]
    return make_model(nodes, w, out_dims=["batch_size", 10]), w


def test_pytorch_style_model_imports_with_its_weights(tmp_path):
    model, w = torch_style_model(np.random.default_rng(7))
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(tmp_path / "tiny_cnn.onnx"))
    net, params = nn.from_onnx(tmp_path / "tiny_cnn.onnx")
    assert net.layers == (Conv2d(4, 3, 1, 1), ReLU(), MaxPool(2), Flatten(), Dense(10))
    assert net.input_shape == (1, 8, 8) and net.name == "tiny_cnn" and net.dataset == ""
    assert "tiny_cnn.onnx" in net.source and "pytorch 2.6.0" in net.source
    np.testing.assert_array_equal(params[0]["W"], w["0.weight"])
    np.testing.assert_array_equal(params[4]["W"], w["4.weight"])  # transB=1: already (out, in)
    x = np.random.default_rng(8).standard_normal((5, 1, 8, 8)).astype(np.float32)
    (y_onnx,) = ReferenceEvaluator(model).run(None, {"input.1": x})
    np.testing.assert_allclose(nn.forward(net, params, x), y_onnx, rtol=1e-5, atol=1e-5)


def torchvision_style_resnet(rng, fused_bn: bool):
    """What ``torch.onnx.export`` writes for a torchvision-style ResNet (a 3x3 stem, one
    BasicBlock with an identity shortcut and one with a stride-2 1x1 ``downsample``,
    ``AdaptiveAvgPool2d(1)`` -> GlobalAveragePool, ``torch.flatten(x, 1)`` -> Flatten,
    ``fc`` -> Gemm(transB=1)): node and tensor names in PyTorch's style; convolutions with
    bias (``fused_bn``: the exporter folded each BatchNorm, eval mode) or without bias,
    followed by BatchNormalization. The downsample's nodes come before the block's body (any
    topological order imports the same)."""
    w, nodes = {}, []

    def conv(name, x, c_out, c_in, k, s, p):
        y = f"/{name}/Conv_output_0"
        w[f"{name}.weight"] = (rng.standard_normal((c_out, c_in, k, k))
                               * np.sqrt(2 / (c_in * k * k))).astype(np.float32)
        ins = [x, f"{name}.weight"]
        if fused_bn:
            w[f"{name}.bias"] = rng.normal(0, 0.2, c_out).astype(np.float32)
            ins.append(f"{name}.bias")
        nodes.append(helper.make_node("Conv", ins, [y], name=f"/{name}/Conv", dilations=[1, 1],
                                      group=1, kernel_shape=[k, k], pads=[p] * 4,
                                      strides=[s, s]))
        if fused_bn:
            return y
        bn = name.replace("conv", "bn").replace("downsample.0", "downsample.1")
        z = f"/{bn}/BatchNormalization_output_0"
        for key, v in (("weight", rng.uniform(.5, 2, c_out)), ("bias", rng.normal(0, .2, c_out)),
                       ("running_mean", rng.normal(0, .2, c_out)),
                       ("running_var", rng.uniform(.5, 2, c_out))):
            w[f"{bn}.{key}"] = v.astype(np.float32)
        nodes.append(helper.make_node(
            "BatchNormalization", [y] + [f"{bn}.{k}" for k in ("weight", "bias", "running_mean",
                                                               "running_var")],
            [z], name=f"/{bn}/BatchNormalization", epsilon=1e-5, momentum=0.9))
        return z

    def relu(name, x):
        nodes.append(helper.make_node("Relu", [x], [f"/{name}/Relu_output_0"],
                                      name=f"/{name}/Relu"))
        return f"/{name}/Relu_output_0"

    x = relu("relu", conv("conv1", "input.1", 4, 3, 3, 1, 1))
    # layer1.0: identity shortcut
    a = relu("layer1/layer1.0/relu", conv("layer1/layer1.0/conv1", x, 4, 4, 3, 1, 1))
    a = conv("layer1/layer1.0/conv2", a, 4, 4, 3, 1, 1)
    nodes.append(helper.make_node("Add", [a, x], ["/layer1/layer1.0/Add_output_0"],
                                  name="/layer1/layer1.0/Add"))
    x = relu("layer1/layer1.0/relu_1", "/layer1/layer1.0/Add_output_0")
    # layer2.0: stride-2 downsample (1x1 conv + BN) listed first
    ds = conv("layer2/layer2.0/downsample/downsample.0", x, 8, 4, 1, 2, 0)
    a = relu("layer2/layer2.0/relu", conv("layer2/layer2.0/conv1", x, 8, 4, 3, 2, 1))
    a = conv("layer2/layer2.0/conv2", a, 8, 8, 3, 1, 1)
    nodes.append(helper.make_node("Add", [a, ds], ["/layer2/layer2.0/Add_output_0"],
                                  name="/layer2/layer2.0/Add"))
    x = relu("layer2/layer2.0/relu_1", "/layer2/layer2.0/Add_output_0")
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["/avgpool/GlobalAveragePool_output_0"],
                                  name="/avgpool/GlobalAveragePool"))
    nodes.append(helper.make_node("Flatten", ["/avgpool/GlobalAveragePool_output_0"],
                                  ["/Flatten_output_0"], name="/Flatten", axis=1))
    w["fc.weight"] = rng.standard_normal((10, 8)).astype(np.float32)
    w["fc.bias"] = rng.standard_normal(10).astype(np.float32)
    nodes.append(helper.make_node("Gemm", ["/Flatten_output_0", "fc.weight", "fc.bias"], ["191"],
                                  name="/fc/Gemm", alpha=1.0, beta=1.0, transB=1))
    return make_model(nodes, w, in_dims=("batch_size", 3, 8, 8), out_dims=["batch_size", 10])


@pytest.mark.parametrize("fused_bn", [True, False])
def test_torchvision_style_resnet_imports_with_identity_and_projection_shortcuts(fused_bn):
    model = torchvision_style_resnet(np.random.default_rng(11), fused_bn)
    onnx.checker.check_model(model, full_check=True)
    net, params = nn.from_onnx(model)
    bn = () if fused_bn else (BatchNorm(),)
    conv3 = (lambda c, s=1: Conv2d(c, 3, s, 1, bias=fused_bn))
    assert net.layers == (
        conv3(4), *bn, ReLU(),
        Residual((conv3(4), *bn, ReLU(), conv3(4), *bn), ()), ReLU(),
        Residual((conv3(8, 2), *bn, ReLU(), conv3(8), *bn),
                 (Conv2d(8, 1, 2, 0, bias=fused_bn), *bn)), ReLU(),
        MeanPool(4), Flatten(), Dense(10))
    x = np.random.default_rng(12).random((3, 3, 8, 8)).astype(np.float32)
    (y_onnx,) = ReferenceEvaluator(model).run(None, {"input.1": x})
    np.testing.assert_allclose(nn.forward(net, params, x), y_onnx, rtol=1e-5, atol=1e-5)
    # folding at import: no batch-norm left, the same function as the float forward pass
    folded, fparams = nn.from_onnx(model, fold_bn=True)
    assert not any(n.kind == "BatchNorm" for n in folded.nodes())
    assert [n.kind for n in folded.nodes()].count("Add") == 2
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(nn.forward(folded, fparams, x64), nn.forward(net, params, x64),
                               rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="fold_bn must be a bool"):
        nn.from_onnx(model, fold_bn="yes")


def test_matmul_add_reshape_constant_batchnorm_and_skipped_ops_import():
    """Keras/tf2onnx style: SAME padding, BatchNormalization, AveragePool, GlobalAveragePool,
    a Constant shape for Reshape, MatMul + Add, Dropout and Identity (skipped)."""
    rng = np.random.default_rng(9)
    w = {"cw": rng.standard_normal((3, 2, 3, 3)), "g": rng.uniform(.5, 2, 3),
         "be": rng.standard_normal(3), "mu": rng.standard_normal(3), "va": rng.uniform(.5, 2, 3),
         "B": rng.standard_normal((3, 4)), "bias": rng.standard_normal(4)}
    nodes = [
        helper.make_node("Conv", ["x", "cw"], ["c"], name="conv", auto_pad="SAME_UPPER",
                         kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c", "g", "be", "mu", "va"], ["bn"], name="bn",
                         epsilon=1e-3),
        helper.make_node("Dropout", ["bn"], ["d"], name="drop"),
        helper.make_node("AveragePool", ["d"], ["ap"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["ap"], ["gap"], name="gap"),
        helper.make_node("Constant", [], ["shape"], name="shape_const",
                         value=numpy_helper.from_array(np.array([0, -1], np.int64))),
        helper.make_node("Reshape", ["gap", "shape"], ["flat"], name="reshape"),
        helper.make_node("Identity", ["flat"], ["id"], name="id"),
        helper.make_node("MatMul", ["id", "B"], ["mm"], name="matmul"),
        helper.make_node("Add", ["bias", "mm"], ["y"], name="add"),
    ]
    model = make_model(nodes, w, out_dims=["n", 4],
                       inputs=[value_info("x", ["n", 2, 6, 6], TensorProto.DOUBLE)])
    onnx.checker.check_model(model, full_check=True)
    net, params = nn.from_onnx(model, name="keras_like")
    assert net.layers == (Conv2d(3, 3, 1, 1, bias=False), BatchNorm(1e-3), MeanPool(2),
                          MeanPool(3), Flatten(), Dense(4))
    assert net.name == "keras_like" and "ModelProto" in net.source
    assert params[1]["gamma"] is not w["g"] and np.array_equal(params[1]["var"], w["va"])
    np.testing.assert_array_equal(params[5]["W"], w["B"].T)
    x = rng.standard_normal((2, 2, 6, 6))
    (y_onnx,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_allclose(nn.forward(net, params, x), y_onnx, rtol=1e-9, atol=1e-12)


# -- clear errors ----------------------------------------------------------------------------
def conv(name="conv_0", k=(3, 3), **attrs):
    return helper.make_node("Conv", ["input.1", "w"], ["y"], name=name, **attrs), \
        {"w": np.ones((2, 1, *k), np.float32)}


def test_unsupported_op_names_op_and_node():
    nodes = [helper.make_node("Relu", ["input.1"], ["r"], name="relu_0"),
             helper.make_node("Sigmoid", ["r"], ["y"], name="sig_0")]
    with pytest.raises(ValueError, match=r"unsupported ONNX op 'Sigmoid' at node 'sig_0': "
                                         r"supported ops are AveragePool, BatchNormalization"):
        nn.from_onnx(make_model(nodes, {}))


def test_unsupported_domain_is_named():
    node = helper.make_node("FusedConv", ["input.1"], ["y"], name="f0", domain="com.microsoft")
    with pytest.raises(ValueError, match=r"unsupported ONNX op 'com.microsoft.FusedConv' at "
                                         r"node 'f0'"):
        nn.from_onnx(make_model([node], {}))


@pytest.mark.parametrize("attrs, k, match", [
    ({}, (3, 2), r"'conv_0' \(Conv\): non-square kernel 3x2"),
    ({"pads": [0, 0, 1, 1]}, (3, 3), r"'conv_0' \(Conv\): asymmetric pads \[0, 0, 1, 1\]"),
    ({"pads": [1, 0, 1, 0]}, (3, 3), r"'conv_0' \(Conv\): asymmetric pads"),
    ({"auto_pad": "SAME_UPPER"}, (2, 2), r"'conv_0' \(Conv\): asymmetric pads \[0, 0, 1, 1\]"),
    ({"dilations": [2, 2]}, (3, 3), r"'conv_0' \(Conv\): dilations \[2, 2\] are not supported"),
    ({"strides": [1, 2]}, (3, 3), r"'conv_0' \(Conv\): unequal strides"),
])
def test_conv_geometry_errors_name_the_node(attrs, k, match):
    node, w = conv(k=k, **attrs)
    with pytest.raises(ValueError, match=match):
        nn.from_onnx(make_model([node], w))


@pytest.mark.parametrize("op, attrs, match", [
    ("MaxPool", {"kernel_shape": [2, 3]}, r"'p0' \(MaxPool\): non-square kernel 2x3"),
    ("MaxPool", {"kernel_shape": [3, 3], "pads": [1, 1, 0, 0]}, r"'p0' .*asymmetric pads"),
    ("MaxPool", {"kernel_shape": [2, 2], "dilations": [2, 2]}, r"'p0' .*dilations"),
    ("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
     r"'p0' .*ceil_mode=1"),
    ("AveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]},
     r"'p0' \(AveragePool\): .*count_include_pad=1"),
])
def test_pool_errors_name_the_node(op, attrs, match):
    node = helper.make_node(op, ["input.1"], ["y"], name="p0", **attrs)
    with pytest.raises(ValueError, match=match):
        nn.from_onnx(make_model([node], {}))


def test_graph_with_two_inputs_is_an_error():
    node = helper.make_node("Relu", ["input.1"], ["y"], name="r")
    inputs = [value_info("input.1", ["N", 1, 8, 8]), value_info("mask", ["N", 1, 8, 8])]
    with pytest.raises(ValueError, match=r"exactly one input, got 2: \['input.1', 'mask'\]"):
        nn.from_onnx(make_model([node], {}, inputs=inputs))


@pytest.mark.parametrize("dims, match", [
    (["N", 28, 28], r"has shape \('N', 28, 28\); ppnn needs \(N, C, H, W\) or \(N, n\)"),
    (["N", "C", 8, 8], r"dimension 1 must be static \(only the batch dimension"),
    (["N", 1, 8, None], r"dimension 3 must be static"),
])
def test_input_shape_must_be_image_or_flat_with_static_dims(dims, match):
    node = helper.make_node("Relu", ["input.1"], ["y"], name="r")
    with pytest.raises(ValueError, match=match):
        nn.from_onnx(make_model([node], {}, in_dims=dims))


def test_static_batch_dimension_is_accepted():
    node = helper.make_node("Relu", ["input.1"], ["y"], name="r")
    net, _ = nn.from_onnx(make_model([node], {}, in_dims=[1, 1, 28, 28]))
    assert net.input_shape == (1, 28, 28) and net.dataset == "mnist"


def test_two_branches_added_import_as_a_residual_block():
    nodes = [helper.make_node("Relu", ["input.1"], ["a"], name="left"),
             helper.make_node("Relu", ["input.1"], ["b"], name="right"),
             helper.make_node("Add", ["a", "b"], ["y"], name="join")]
    net, params = nn.from_onnx(make_model(nodes, {}))
    assert net.layers == (Residual((ReLU(),), (ReLU(),)),) and params == [
        {"body": [{}], "shortcut": [{}]}]


@pytest.mark.parametrize("nodes, inits, match", [
    ([helper.make_node("Relu", ["input.1"], ["a"], name="r1"),
      helper.make_node("Relu", ["input.1"], ["b"], name="r2"),
      helper.make_node("Relu", ["input.1"], ["c"], name="r3"),
      helper.make_node("Add", ["a", "b"], ["d"], name="j1"),
      helper.make_node("Add", ["d", "c"], ["y"], name="j2")], {},
     r"'input.1' feeds 3 nodes \(r1, r2, r3\): .*not a wider branching graph"),
    ([helper.make_node("Relu", ["input.1"], ["a"], name="left"),
      helper.make_node("Relu", ["input.1"], ["b"], name="right"),
      helper.make_node("Concat", ["a", "b"], ["y"], name="cat", axis=1)], {},
     r"unsupported ONNX op 'Concat' at node 'cat': .*DenseNet / Inception"),
    ([helper.make_node("Relu", ["input.1"], ["a"], name="q"),
      helper.make_node("Relu", ["input.1"], ["b"], name="k"),
      helper.make_node("MatMul", ["a", "b"], ["y"], name="scores")], {},
     r"'scores' \(MatMul\): reads \['a', 'b'\]: .*attention-style products are out"),
    ([helper.make_node("Relu", ["input.1"], ["a"], name="r"),
      helper.make_node("Add", ["a", "a"], ["y"], name="twice")], {},
     r"'twice' \(Add\): Add is supported only as the bias after a MatMul or as the Add of "
     r"a residual block's two branches"),
    ([helper.make_node("Relu", ["input.1"], ["y"], name="r"),
      helper.make_node("Relu", ["input.1"], ["z"], name="dangling")], {},
     r"'r' \(Relu\): its output 'y' is read by no node and is not the graph output 'z'"),
    ([helper.make_node("Relu", ["input.1"], ["a"], name="rA"),
      helper.make_node("Relu", ["input.1"], ["b"], name="rB"),
      helper.make_node("Relu", ["a"], ["c"], name="rC"),
      helper.make_node("Relu", ["a"], ["d"], name="rD"),
      helper.make_node("Add", ["c", "b"], ["e"], name="add1"),
      helper.make_node("Add", ["d", "e"], ["y"], name="add2")], {},
     r"'rD' \(Relu\): tensor 'a' opens two branches \(rC, rD\) that do not meet in one Add "
     r"\(they end at add1, add2\)"),
])
def test_graphs_out_of_scope_name_the_node_and_op(nodes, inits, match):
    with pytest.raises(ValueError, match=match):
        nn.from_onnx(make_model(nodes, inits, out_dims=None))


def test_dynamic_flatten_through_shape_is_an_error_with_a_hint():
    nodes = [helper.make_node("Shape", ["input.1"], ["s"], name="shape"),
             helper.make_node("Reshape", ["input.1", "s"], ["y"], name="reshape")]
    with pytest.raises(ValueError, match=r"unsupported ONNX op 'Shape' at node 'shape': .*"
                                         r"use torch.flatten\(x, 1\)"):
        nn.from_onnx(make_model(nodes, {}))


def test_graph_with_two_outputs_is_an_error():
    model = make_model([helper.make_node("Relu", ["input.1"], ["y"], name="r")], {})
    model.graph.output.append(value_info("input.1", ["N", 1, 8, 8]))
    with pytest.raises(ValueError, match=r"exactly one output, got 2"):
        nn.from_onnx(model)


@pytest.mark.parametrize("node, inits, match", [
    (helper.make_node("Gemm", ["input.1", "w"], ["y"], name="fc", alpha=2.0),
     {"w": np.ones((64, 3))}, r"'fc' \(Gemm\): alpha=2.0, beta=1.0 are not supported"),
    (helper.make_node("Reshape", ["input.1", "s"], ["y"], name="rs"),
     {"s": np.array([-1, 8, 8], np.int64)}, r"'rs' \(Reshape\): Reshape to \[-1, 8, 8\]"),
    (helper.make_node("Flatten", ["input.1"], ["y"], name="fl", axis=2), {},
     r"'fl' \(Flatten\): axis=2"),
    (helper.make_node("Add", ["input.1", "c"], ["y"], name="add0"), {"c": np.ones(1)},
     r"'add0' \(Add\): Add is supported only as the bias after a MatMul"),
    (helper.make_node("Mul", ["input.1", "c"], ["y"], name="mul0"), {"c": np.ones(1)},
     r"'mul0' \(Mul\): Mul is supported only as x \* x"),
    (helper.make_node("Conv", ["input.1", "w"], ["y"], name="c3d"), {"w": np.ones((2, 1, 3))},
     r"'c3d' \(Conv\): only 2-D convolutions"),
    (helper.make_node("Conv", ["input.1", "w"], ["y"], name="cw"), {"w": np.ones((2, 3, 3, 3))},
     r"'cw' \(Conv\): weights \(2, 3, 3, 3\) with group=1 do not fit 1 input channels"),
])
def test_unsupported_uses_of_supported_ops_name_the_node(node, inits, match):
    with pytest.raises(ValueError, match=match):
        nn.from_onnx(make_model([node], inits))


def test_dense_on_an_image_names_the_node():
    node = helper.make_node("Gemm", ["input.1", "w"], ["y"], name="fc", transB=1)
    with pytest.raises(ValueError, match=r"'fc' \(Gemm\): Dense needs a flat input"):
        nn.from_onnx(make_model([node], {"w": np.ones((3, 64))}))


def test_from_onnx_rejects_other_types():
    with pytest.raises(TypeError, match="path or an onnx.ModelProto"):
        nn.from_onnx(42)

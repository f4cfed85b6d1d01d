"""GALA / GAZELLE kernels: outputs vs plaintext oracle on both backends, counts vs closed forms,
noise vs Table IV, clear errors."""

import numpy as np
import pytest
import sympy as sp

from ppnn.core import Ledger
from ppnn.he.bfv import BFVSim, NoiseModel, SealBFV
from ppnn.protocols.gala import GalaConv, GalaMatVec, costs, run_linear
from ppnn.protocols.gazelle import (
    DiagonalMatVec,
    GazelleConv,
    GazelleMatVec,
    NaiveMatVec,
    SisoConv,
)

MATVEC = [NaiveMatVec, DiagonalMatVec, GazelleMatVec, GalaMatVec]
CONV = [GazelleConv, GalaConv]


@pytest.fixture(scope="module")
def seal64():
    return SealBFV(n=64)


def _mv_case(rng, n_o, n_i, scale=20):
    return rng.integers(-scale, scale + 1, (n_o, n_i)), rng.integers(-scale, scale + 1, n_i)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kernel", MATVEC, ids=lambda k: k.name)
def test_matvec_equals_plaintext_on_simulator(kernel, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.choice([16, 32, 64]))
    n_o, n_i = int(rng.integers(1, 2 * n)), int(rng.integers(1, 3 * n))
    W, x = _mv_case(rng, n_o, n_i)
    try:
        k = kernel(n_o, n_i, n)
    except ValueError:
        assert kernel is DiagonalMatVec  # only the diagonal baseline refuses dims > n
        return
    res = run_linear(k, BFVSim(n=n), W, x, rng)
    np.testing.assert_array_equal(res.reveal(), W @ x)
    counts = res.ledger.op_counts()
    expect = costs.matvec_counts(k.name, k.layout)
    assert {op: counts.get(op, 0) for op in costs.HE_OPS} == expect


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("kernel", CONV, ids=lambda k: k.name)
def test_conv_equals_plaintext_on_simulator(kernel, seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.choice([64, 128]))
    H, W = int(rng.integers(2, 7)), int(rng.integers(2, 7))
    k = int(rng.choice([1, 3, 5]))
    k = min(k, 2 * min(H, W) - 1) if k > 1 else 1
    c_i, c_o = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    stride = int(rng.choice([1, 2]))
    pad = int(rng.integers(0, (k - 1) // 2 + 1))
    if k > min(H, W) + 2 * pad:
        pad = (k - 1) // 2
    K = rng.integers(-9, 10, (c_o, c_i, k, k))
    x = rng.integers(-9, 10, (c_i, H, W))
    ker = kernel(c_i, c_o, H, W, k, n, pad, stride)
    res = run_linear(ker, BFVSim(n=n), K, x, rng)
    np.testing.assert_array_equal(res.reveal(), ker.plaintext(K, x))
    counts = res.ledger.op_counts()
    assert {op: counts.get(op, 0) for op in costs.HE_OPS} == costs.conv_counts(ker.name,
                                                                               ker.layout)


def test_conv_oracle_matches_direct_loops():
    rng = np.random.default_rng(5)
    K = rng.integers(-3, 4, (2, 3, 3, 3))
    x = rng.integers(-3, 4, (3, 5, 6))
    ker = GalaConv(3, 2, 5, 6, 3, 64, pad=1, stride=2)
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1)))
    ho, wo = ker.layout.out_hw
    ref = np.zeros((2, ho, wo), dtype=np.int64)
    for o in range(2):
        for y in range(ho):
            for z in range(wo):
                ref[o, y, z] = (K[o] * xp[:, 2 * y: 2 * y + 3, 2 * z: 2 * z + 3]).sum()
    np.testing.assert_array_equal(ker.plaintext(K, x), ref)


def test_siso_equals_plaintext_and_counts():
    rng = np.random.default_rng(2)
    K, x = rng.integers(-9, 10, (1, 1, 3, 3)), rng.integers(-9, 10, (1, 5, 7))
    ker = SisoConv(5, 7, 3, 64)
    res = run_linear(ker, BFVSim(n=64), K, x, rng)
    np.testing.assert_array_equal(res.reveal(), ker.plaintext(K, x))
    c = res.ledger.op_counts()
    assert (c["DecPerm"], c["HstPerm"], c["ScMult"], c["Add"], c.get("Perm", 0)) == (1, 8, 9,
                                                                                       8, 0)


REAL_CASES = [
    (GalaMatVec, (16, 32), (32,)), (GazelleMatVec, (16, 32), (32,)),
    (NaiveMatVec, (3, 20), (20,)), (DiagonalMatVec, (5, 9), (9,)),
    (GalaMatVec, (20, 100), (100,)),  # blocks: n_i > n
]


@pytest.mark.parametrize("kernel,wshape,xshape", REAL_CASES,
                         ids=lambda v: getattr(v, "name", str(v)))
def test_matvec_real_bfv_equals_plaintext_and_simulator(seal64, kernel, wshape, xshape):
    rng = np.random.default_rng(11)
    W, x = rng.integers(-60, 61, wshape), rng.integers(-60, 61, xshape)
    k = kernel(*wshape, 64)
    real = run_linear(k, seal64, W, x, np.random.default_rng(1))
    sim = run_linear(k, BFVSim(n=64, p=seal64.p, noise_model=seal64.noise_model), W, x,
                     np.random.default_rng(1))
    np.testing.assert_array_equal(real.reveal(), W @ x)
    np.testing.assert_array_equal(sim.reveal(), W @ x)
    # the real backend's share mask comes from the OS CSPRNG, not from the simulation seed
    assert not np.array_equal(real.server_share, sim.server_share)
    assert real.ledger.op_counts() == sim.ledger.op_counts()
    assert (seal64.noise_budget(real.out) > 0).all()


def test_secret_shared_input_on_real_bfv(seal64):
    """Between layers: the client encrypts its share, the server adds its own (AddPlain) --
    real SEAL and the simulator agree on outputs and counts, and nobody sent x itself."""
    rng = np.random.default_rng(12)
    W, x = rng.integers(-60, 61, (8, 40)), rng.integers(-60, 61, 40)
    x_srv = rng.integers(0, seal64.p, 40)
    x_cli = (x - x_srv) % seal64.p
    k = GalaMatVec(8, 40, 64)
    sim_he = BFVSim(n=64, p=seal64.p, noise_model=seal64.noise_model)
    plain = run_linear(k, sim_he, W, x, np.random.default_rng(1))
    runs = [run_linear(k, he, W, x_cli, np.random.default_rng(1), x_server=x_srv, x_bound=60)
            for he in (seal64, BFVSim(n=64, p=seal64.p, noise_model=seal64.noise_model))]
    for res in runs:
        np.testing.assert_array_equal(res.reveal(), W @ x)
        assert [m.what for m in res.ledger.messages if m.phase == "online"][0] == \
            "[x_C]_C (client's share)"
        # one more AddPlain per input ciphertext than the layer on a plain input
        extra = res.ledger.op_count("AddPlain") - plain.ledger.op_count("AddPlain")
        assert extra == k.layout.C
    assert runs[0].ledger.op_counts() == runs[1].ledger.op_counts()
    he = BFVSim(n=64)
    with pytest.raises(ValueError, match="x_server must be integer shares of shape"):
        run_linear(k, he, W, x_cli % he.p, rng, x_server=x_srv[:-1])
    with pytest.raises(ValueError, match="residues in"):
        run_linear(k, he, W, x_cli % he.p, rng, x_server=x_srv + he.p)
    with pytest.raises(ValueError, match="announced bound"):
        run_linear(k, he, W, x_cli % he.p, rng, x_server=x_srv % he.p, x_bound=5)


@pytest.mark.parametrize("kernel", CONV + [SisoConv], ids=lambda k: k.name)
def test_conv_real_bfv_equals_plaintext_and_simulator(seal64, kernel):
    rng = np.random.default_rng(12)
    if kernel is SisoConv:
        ker, c_i, c_o = SisoConv(4, 4, 3, 64), 1, 1
    else:
        c_i, c_o = 3, 5
        ker = kernel(c_i, c_o, 4, 4, 3, 64)
    K, x = rng.integers(-20, 21, (c_o, c_i, 3, 3)), rng.integers(-20, 21, (c_i, 4, 4))
    K[0, 0] = 0  # an all-zero tap plaintext must work on SEAL too
    real = run_linear(ker, seal64, K, x, np.random.default_rng(3))
    sim = run_linear(ker, BFVSim(n=64, p=seal64.p, noise_model=seal64.noise_model), K, x,
                     np.random.default_rng(3))
    np.testing.assert_array_equal(real.reveal(), ker.plaintext(K, x))
    np.testing.assert_array_equal(sim.reveal(), ker.plaintext(K, x))
    assert real.ledger.op_counts() == sim.ledger.op_counts()


def test_messages_and_shares():
    rng = np.random.default_rng(0)
    W, x = _mv_case(rng, 20, 100)
    he = BFVSim(n=64)
    res = run_linear(GalaMatVec(20, 100, 64), he, W, x, rng)
    L = GalaMatVec(20, 100, 64).layout
    msgs = res.ledger.messages_frame()
    online = msgs[msgs.phase == "online"]
    assert list(online.sender) == ["client", "server"]
    assert list(online.bits) == [L.C * he.ciphertext_bits, L.R * he.ciphertext_bits]
    assert res.ledger.rounds("online") == 2
    assert res.ledger.total_bits("offline") == (L.G - 1) * he.galois_key_bits
    # a share alone is not the output
    assert not np.array_equal(res.client_share % he.p, (W @ x) % he.p)


# -- closed forms -----------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["Naive", "GAZELLE", "GALA"])
def test_our_matvec_forms_reduce_to_table2(method):
    ours = costs.paper_form_matvec(method)
    paper = costs.PAPER_TABLE2[method]
    for op, key in [("Perm", "perm"), ("HstPerm", "hstperm"), ("ScMult", "scmult"),
                    ("Add", "add")]:
        assert sp.simplify(ours[op] - paper[key]) == 0, (method, op)


@pytest.mark.parametrize("method", ["GAZELLE", "GALA"])
def test_our_conv_forms_equal_table3(method):
    ours = costs.paper_form_conv(method)
    paper = costs.PAPER_TABLE3[method]
    for op, key in [("Perm", "perm"), ("HstPerm", "hstperm"), ("ScMult", "scmult"),
                    ("Add", "add")]:
        assert sp.simplify(ours[op] - paper[key]) == 0, (method, op)


@pytest.mark.parametrize("dims", [(1, 2048), (2, 1024), (16, 128), (2, 2048), (128, 784),
                                  (10, 128)])
@pytest.mark.parametrize("kernel", [NaiveMatVec, GazelleMatVec, GalaMatVec])
def test_counting_backend_equals_closed_form(kernel, dims):
    k = kernel(*dims, 2048)
    assert costs.count_kernel(k) == costs.matvec_counts(k.name, k.layout)


@pytest.mark.parametrize("dims", [(128, 128, 16, 1), (128, 128, 16, 3), (64, 32, 8, 5)])
@pytest.mark.parametrize("kernel", CONV)
def test_counting_conv_equals_closed_form(kernel, dims):
    c_i, c_o, hw, k = dims
    ker = kernel(c_i, c_o, hw, hw, k, 2048)
    assert costs.count_kernel(ker) == costs.conv_counts(ker.name, ker.layout)


def test_network_counts_run_equals_formula():
    from ppnn.nn import zoo

    for name in ("mlp_784_128_128_10", "alexnet_cifar10"):
        net = zoo.get(name)
        a = costs.network_counts(net, run=True)
        b = costs.network_counts(net, run=False)
        assert a.equals(b)


# -- noise model == Table IV ---------------------------------------------------------------------
NM = NoiseModel(eta_mult=1000.0, eta_rot=7.0, fresh_bits=60.0)


@pytest.mark.parametrize("kernel,row", [(NaiveMatVec, "Matrix-vector; Naive"),
                                        (GazelleMatVec, "Matrix-vector; GAZELLE"),
                                        (GalaMatVec, "Matrix-vector; GALA")])
@pytest.mark.parametrize("dims", [(4, 64), (16, 64), (8, 32)])
def test_matvec_noise_equals_table4(kernel, row, dims):
    n = 64
    k = kernel(*dims, n)
    he = BFVSim(n=n, noise_model=NM, values=False)
    he.keygen(k.rotation_steps())
    out = k.evaluate(he, he.encrypt(np.zeros((k.layout.C, n), dtype=np.int64)), None)
    want = costs.noise_formula(row, n=n, n_o=dims[0], n_i=dims[1], eta_0=1.0,
                               eta_mult=NM.eta_mult, eta_rot=NM.eta_rot)
    np.testing.assert_allclose(out.noise, want)


@pytest.mark.parametrize("kernel,row", [(GazelleConv, "Convolution; GAZELLE"),
                                        (GalaConv, "Convolution; GALA")])
@pytest.mark.parametrize("dims", [(16, 16, 4, 3), (8, 32, 4, 1), (32, 8, 2, 3)])
def test_conv_noise_equals_table4(kernel, row, dims):
    c_i, c_o, hw, k = dims
    ker = kernel(c_i, c_o, hw, hw, k, 64)
    he = BFVSim(n=64, noise_model=NM, values=False)
    he.keygen(ker.rotation_steps())
    out = ker.evaluate(he, he.encrypt(np.zeros((ker.layout.ct_in, 64), dtype=np.int64)), None)
    want = costs.noise_formula(row, c_i=c_i, c_o=c_o, c_n=ker.layout.c_n, k_w=k, k_h=k,
                               eta_0=1.0, eta_mult=NM.eta_mult, eta_rot=NM.eta_rot)
    np.testing.assert_allclose(out.noise, want)


# -- errors ---------------------------------------------------------------------------------------
def test_plain_modulus_too_small_raises():
    rng = np.random.default_rng(0)
    he = BFVSim(n=64)
    W = np.full((4, 64), 1000)
    x = np.full(64, 1000)
    with pytest.raises(ValueError, match="plaintext modulus p=.* too small"):
        run_linear(GalaMatVec(4, 64, 64), he, W, x, rng)
    with pytest.raises(ValueError, match="too small"):
        run_linear(GazelleConv(1, 1, 4, 4, 3, 64), he, np.full((1, 1, 3, 3), 900),
                   np.full((1, 4, 4), 900), rng)


def test_mismatched_dimensions_raise():
    rng = np.random.default_rng(0)
    he = BFVSim(n=64)
    with pytest.raises(ValueError, match="shape"):
        run_linear(GalaMatVec(4, 8, 64), he, np.ones((4, 9), int), np.ones(8, int), rng)
    with pytest.raises(ValueError, match="shape"):
        run_linear(GazelleMatVec(4, 8, 64), he, np.ones((4, 8), int), np.ones(9, int), rng)
    with pytest.raises(ValueError, match="shape"):
        run_linear(GalaConv(2, 2, 4, 4, 3, 64), he, np.ones((2, 3, 3, 3), int),
                   np.ones((2, 4, 4), int), rng)
    with pytest.raises(ValueError, match="kernel window needs 128 slots > n = 64"):
        GalaConv(1, 1, 12, 12, 9, 64)  # a 9x9 window cannot be tiled into 64 slots
    with pytest.raises(ValueError, match="n_o must be >= 1"):
        GalaMatVec(0, 4, 64)
    with pytest.raises(TypeError, match="integers"):
        run_linear(GalaMatVec(2, 4, 64), he, np.ones((2, 4)), np.ones(4, int), rng)
    with pytest.raises(ValueError, match="announced bound"):
        run_linear(GalaMatVec(2, 4, 64), he, np.ones((2, 4), int), np.full(4, 5), rng,
                   x_bound=3)
    with pytest.raises(TypeError, match="Generator"):
        run_linear(GalaMatVec(2, 4, 64), he, np.ones((2, 4), int), np.ones(4, int), 0)


def test_ledger_labels_split_eval():
    rng = np.random.default_rng(0)
    led = Ledger(["client", "server"])
    W, x = _mv_case(rng, 8, 32)
    run_linear(GazelleMatVec(8, 32, 64), BFVSim(n=64), W, x, rng, ledger=led, label="fc1")
    assert led.op_count("Perm", label="fc1/eval") == 3
    assert led.op_count("Enc", label="fc1") == 1


def test_a_grouped_convolution_counts_as_its_independent_groups():
    """AlexNet's two-group convolutions (the zoo's ImageNet AlexNet, GALA Fig. 9 / Table
    IX): g groups of c_i/g -> c_o/g channels, each a kernel of its own."""
    from ppnn.nn import Conv2d, Network

    net = Network("grouped", (16, 8, 8), (Conv2d(32, 3, 1, 1, groups=2),))
    got = costs.network_counts(net, run=True).set_index("method")
    assert got.equals(costs.network_counts(net, run=False).set_index("method"))
    for meth, K in (("GAZELLE", GazelleConv), ("GALA", GalaConv)):
        one = costs.count_kernel(K(8, 16, 8, 8, 3, 2048, 1, 1))
        assert {op: int(got.loc[meth, op]) for op in costs.HE_OPS} == \
            {op: 2 * v for op, v in one.items()}

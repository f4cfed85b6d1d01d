"""Real TFHE (tfhe-rs through the ppnn_tfhe binding) agrees with the bit simulator: the same
circuits give the same outputs, the binding's own gate and bootstrap counters equal the
simulator's, and wrong keys / mixed keys raise. Kept small: a gate here costs ~15-30 ms."""

import numpy as np
import pytest

from ppnn.he.bitsim import SIM_CIPHERTEXT_BYTES, BitSimulator
from ppnn.he.tfhe import PbsLookup, SimulatedLookup, TfheBackend, load_binding, relu_table
from ppnn.protocols.she import circuits as C

ppnn_tfhe = pytest.importorskip("ppnn_tfhe", reason="build the binding with `make setup`")


@pytest.fixture(scope="module")
def key():
    return ppnn_tfhe.BooleanKey.generate()


@pytest.fixture(scope="module")
def other_key():
    return ppnn_tfhe.BooleanKey.generate()


def _pair(key, public=True):
    return TfheBackend(key, public_constants=public), BitSimulator(public_constants=public)


def _same_counts(real: TfheBackend, sim: BitSimulator):
    native = real.native_counts()
    assert native == real.counts() == sim.counts()


def test_gates_with_trivial_inputs_match_simulator(key):
    real, sim = _pair(key)
    vals = np.array([[0, 0, 1, 1], [0, 1, 0, 1]], np.uint8)
    triv = np.array([False, True, False, True])  # columns 1 and 3 of b are public constants
    outs = {}
    for be in (real, sim):
        be.reset_counts()
        a = be.encrypt(vals[0])
        b_enc, b_triv = be.encrypt(vals[1]), be.trivial(vals[1])
        b = be.take(be.concat([b_enc, b_triv]), np.arange(4) + 4 * triv)
        res = [be.and_(a, b), be.or_(a, b), be.xor(a, b), be.nand(a, b), be.nor(a, b),
               be.xnor(a, b), be.not_(a), be.mux(a, b, be.not_(a)), be.mux(b, a, be.not_(a))]
        outs[be.name] = [be.decrypt(r) for r in res]
    for r, s in zip(outs["tfhe-rs"], outs["bitsim"]):
        assert (r == s).all()
    _same_counts(real, sim)
    assert real.key.op_count["not"] == sim.ops["not"]


def test_mux_two_trivial_branches_counts(key):
    """tfhe-rs evaluates MUX(c, trivial, trivial) without a bootstrap; both backends agree."""
    real, sim = _pair(key)
    for be in (real, sim):
        be.reset_counts()
        c = be.encrypt([0, 1, 1])
        out = be.mux(c, be.trivial([1, 1, 0]), be.trivial([0, 1, 0]))
        assert list(be.decrypt(out)) == [0, 1, 0]
    assert sim.bootstraps == 0
    _same_counts(real, sim)


def test_relu_unit_real_equals_plaintext_and_simulator(key):
    real, sim = _pair(key)
    v = np.array([-16, -3, 0, 7, 15])
    res = {}
    for be in (real, sim):
        be.reset_counts()
        x = C.encrypt_word(be, v, 5, signed=True)
        r = C.relu_unit(x)
        res[be.name] = C.decrypt_word(be, r)
    assert (res["tfhe-rs"] == np.maximum(v, 0)).all() and (res["bitsim"] == res["tfhe-rs"]).all()
    _same_counts(real, sim)
    assert real.hgops == 5 * 4


def test_max_unit_real(key):
    real, sim = _pair(key)
    xv, yv = np.array([-4, 3, 1]), np.array([2, 3, -1])
    res = {}
    for be in (real, sim):
        be.reset_counts()
        z = C.max_unit(C.encrypt_word(be, xv, 3), C.encrypt_word(be, yv, 3))
        res[be.name] = C.decrypt_word(be, z)
    assert (res["tfhe-rs"] == np.maximum(xv, yv)).all()
    _same_counts(real, sim)
    assert real.bootstraps == 3 * C.closed_forms(3)["max_signed_bootstraps"]


@pytest.mark.parametrize("public", [True, False])
def test_adder_and_shift_real(key, public):
    real, sim = _pair(key, public)
    xv, yv, e = np.array([3, -4, 2]), np.array([-1, -4, 3]), np.array([0, 1, 2])
    res = {}
    for be in (real, sim):
        x = C.encrypt_word(be, xv, 3)
        be.reset_counts()
        s = C.add(C.shift_right(x, e), C.encrypt_word(be, yv, 3))
        res[be.name] = C.decrypt_word(be, s)
    assert (res["tfhe-rs"] == (xv >> e) + yv).all() and (res["bitsim"] == res["tfhe-rs"]).all()
    _same_counts(real, sim)


@pytest.mark.slow
def test_shift_accumulate_relu_real(key):
    real, sim = _pair(key)
    rng = np.random.default_rng(0)
    xv = rng.integers(0, 8, size=6)
    src = np.array([[0, 1, 2, -1], [3, 4, 5, 0]])
    e = np.array([[0, 1, 2, 0], [1, 0, 3, 2]])
    sign = np.array([[1, -1, 1, 1], [-1, 1, 1, -1]])
    res = {}
    for be in (real, sim):
        x = C.encrypt_word(be, xv, 3, signed=False)
        be.reset_counts()
        out = C.relu_saturate(C.shift_accumulate(x, src, e, sign, bias=[1, -2]), 3)
        res[be.name] = C.decrypt_word(be, out)
    ref = np.where(src >= 0, sign * (xv[np.maximum(src, 0)] >> e), 0).sum(1) + [1, -2]
    assert (res["tfhe-rs"] == np.clip(ref, 0, 7)).all() and (res["bitsim"] == res["tfhe-rs"]).all()
    _same_counts(real, sim)


def test_wrong_key_and_mixed_keys_raise(key, other_key):
    be1, be2 = TfheBackend(key), TfheBackend(other_key)
    x1, x2 = be1.encrypt([1, 0]), be2.encrypt([1, 1])
    with pytest.raises(ValueError, match="another key"):
        be1.decrypt(x2)
    with pytest.raises(ValueError, match="another key"):
        be1.xor(x1, x2)
    # the binding itself refuses too (its own key-id check)
    with pytest.raises(ValueError, match="key"):
        other_key.decrypt(x1.data)
    with pytest.raises(ValueError, match="key"):
        key.and_(x1.data, x2.data)
    with pytest.raises(TypeError, match="BooleanKey"):
        TfheBackend(key="not a key")


def test_ciphertext_size_matches_simulator_constant(key):
    real = TfheBackend(key)
    assert real.ciphertext_bytes == SIM_CIPHERTEXT_BYTES
    x = real.encrypt(np.ones(5, np.uint8))
    assert real.message_bytes(x) == x.data.serialized_size()
    assert real.parameters["name"] == "DEFAULT_PARAMETERS"


def test_load_binding_returns_module():
    assert load_binding() is ppnn_tfhe


def test_pbs_lookup_small_real_and_simulated():
    real, sim = PbsLookup(3), SimulatedLookup(3)
    v = np.array([0, 3, 4, 7])  # 3-bit two's complement codes: 0, 3, -4, -1
    table = relu_table(3)
    for lut in (real, sim):
        out = lut.decrypt(lut.apply(lut.encrypt(v), table))
        assert list(out) == [0, 3, 0, 0]
        assert lut.bootstraps == 4
    with pytest.raises(ValueError, match="length"):
        sim.apply(sim.encrypt(v), np.arange(4))
    with pytest.raises(ValueError, match="values"):
        real.encrypt([8])


@pytest.mark.slow
def test_pbs_lookup_5bit_relu_real():
    lut = PbsLookup(5)
    codes = np.arange(32)
    out = lut.decrypt(lut.apply(lut.encrypt(codes), relu_table(5)))
    assert (out == relu_table(5)).all() and lut.bootstraps == 32

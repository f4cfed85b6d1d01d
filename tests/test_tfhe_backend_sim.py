"""The numpy bit simulator: gate truth tables, tfhe-rs's trivial-ciphertext shortcuts (mirrored
rule by rule from tfhe-rs 1.8 boolean/engine/mod.rs), depth bookkeeping, routing and errors."""

import itertools

import numpy as np
import pytest

from ppnn.core import Ledger
from ppnn.he.bitsim import SIM_CIPHERTEXT_BYTES, BitSimulator

TRUTH = {
    "and_": lambda a, b: a & b, "or_": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
    "nand": lambda a, b: 1 - (a & b), "nor": lambda a, b: 1 - (a | b),
    "xnor": lambda a, b: 1 - (a ^ b),
}
NAME = {"and_": "and", "or_": "or", "xor": "xor", "nand": "nand", "nor": "nor", "xnor": "xnor"}


def _bits(be, values, trivial):
    return be.trivial(values) if trivial else be.encrypt(values)


@pytest.mark.parametrize("gate", sorted(TRUTH))
def test_binary_gates_truth_table_and_counts(gate):
    be = BitSimulator()
    a = np.array([0, 0, 1, 1], np.uint8)
    b = np.array([0, 1, 0, 1], np.uint8)
    out = getattr(be, gate)(be.encrypt(a), be.encrypt(b))
    assert (be.decrypt(out) == TRUTH[gate](a, b)).all()
    assert be.gates[NAME[gate]] == 4 and be.bootstraps == 4 and be.hgops == 4
    assert not out.trivial.any()


# tfhe-rs: a gate with one trivial input is a shortcut: result trivial (absorbing constant),
# or the encrypted input itself, or its negation; never a bootstrap.
SHORTCUT = {  # gate -> {trivial value: "const0"/"const1"/"copy"/"neg"}
    "and_": {0: "const0", 1: "copy"}, "nand": {0: "const1", 1: "neg"},
    "or_": {0: "copy", 1: "const1"}, "nor": {0: "neg", 1: "const0"},
    "xor": {0: "copy", 1: "neg"}, "xnor": {0: "neg", 1: "copy"},
}


@pytest.mark.parametrize("gate,tval,side", list(itertools.product(sorted(TRUTH), (0, 1), (0, 1))))
def test_trivial_shortcuts_mirror_tfhe_rs(gate, tval, side):
    be = BitSimulator()
    enc = be.encrypt(np.array([0, 1], np.uint8))
    be.and_(enc, enc)  # give the encrypted input a depth of 1
    deep = be.and_(enc, be.encrypt(np.array([1, 1], np.uint8)))
    triv = be.trivial(np.array([tval, tval], np.uint8))
    be.reset_counts()
    args = (triv, deep) if side == 0 else (deep, triv)
    out = getattr(be, gate)(*args)
    assert be.bootstraps == 0 and be.hgops == 0
    assert (be.decrypt(out) == TRUTH[gate](be.decrypt(args[0]), be.decrypt(args[1]))).all()
    kind = SHORTCUT[gate][tval]
    if kind.startswith("const"):
        assert out.trivial.all() and (out.const == int(kind[-1])).all()
        assert (out.md == 0).all()
    else:
        assert not out.trivial.any()
        assert (out.md == deep.md).all() and (out.gd == deep.gd).all()


def test_two_trivial_inputs_give_trivial_output():
    be = BitSimulator()
    a, b = be.trivial([0, 1, 1]), be.trivial([1, 1, 0])
    out = be.nand(a, b)
    assert out.trivial.all() and list(out.const) == [1, 0, 1] and be.bootstraps == 0


MUX_CASES = [  # (c trivial, a trivial, b trivial) -> bootstraps per tfhe-rs's mux shortcuts
    ((False, False, False), 2),
    ((True, False, False), 0),
    ((False, True, False), 1),
    ((False, False, True), 1),
    ((True, True, True), 0),
]


@pytest.mark.parametrize("triv,boots", MUX_CASES)
def test_mux_values_and_bootstraps(triv, boots):
    be = BitSimulator()
    vals = np.array(list(itertools.product((0, 1), repeat=3)), np.uint8).T  # all 8 inputs
    c, a, b = (_bits(be, v, t) for v, t in zip(vals, triv))
    out = be.mux(c, a, b)
    assert (be.decrypt(out) == np.where(vals[0] == 1, vals[1], vals[2])).all()
    assert be.bootstraps == boots * 8
    assert be.gates["mux"] == (8 if boots else 0)


def test_mux_encrypted_condition_both_branches_trivial_is_a_shortcut():
    # c ? 1 : 0 = c and c ? 1 : 1 = 1: tfhe-rs evaluates OR(c, trivial) -> no bootstrap
    be = BitSimulator()
    c = be.encrypt([0, 1])
    out = be.mux(c, be.trivial([1, 1]), be.trivial([0, 1]))
    assert list(be.decrypt(out)) == [0, 1]
    assert list(out.trivial) == [False, True] and be.bootstraps == 0


def test_not_is_free_and_keeps_depth():
    be = BitSimulator()
    x = be.and_(be.encrypt([1, 0]), be.encrypt([1, 1]))
    y = be.not_(x)
    assert list(be.decrypt(y)) == [0, 1] and be.hgops == 2 and (y.md == 1).all()
    assert be.ops["not"] == 2


def test_multiplicative_depth_counts_and_type_gates_only():
    be = BitSimulator()
    x = be.encrypt([1, 0, 1])
    y = x
    for _ in range(3):
        y = be.xor(y, x)
    assert (y.md == 0).all() and (y.gd == 3).all()
    z = be.and_(be.or_(y, x), x)
    assert (z.md == 2).all() and (z.gd == 5).all()
    m = be.mux(z, x, y)
    assert (m.md == 3).all() and (m.gd == 6).all()


def test_constants_trivial_or_encrypted():
    pub = BitSimulator(public_constants=True)
    assert pub.constant([0, 1]).trivial.all()
    enc = BitSimulator(public_constants=False)
    k = enc.constant([[0, 1], [1, 0]])
    assert not k.trivial.any() and k.shape == (2, 2)
    assert (enc.decrypt(k) == [[0, 1], [1, 0]]).all()
    x = enc.encrypt([1, 1])
    enc.reset_counts()
    enc.and_(x, enc.constant([0, 1]))
    assert enc.bootstraps == 2  # an encrypted constant bootstraps like any input


def test_routing_take_concat_reshape():
    be = BitSimulator()
    x = be.encrypt(np.arange(6).reshape(2, 3) % 2)
    t = x.take(np.array([[5, 0], [1, 1]]))
    assert t.shape == (2, 2) and (be.decrypt(t) == [[1, 0], [1, 1]]).all()
    c = be.concat([x, be.trivial([1])])
    assert c.shape == (7,) and c.trivial[-1] and not c.trivial[:6].any()
    assert be.reshape(c, (7, 1)).shape == (7, 1)
    assert be.hgops == 0
    with pytest.raises(IndexError, match="indices"):
        x.take([6])
    with pytest.raises(ValueError, match="reshape"):
        be.reshape(x, (4,))
    with pytest.raises(ValueError, match="at least one"):
        be.concat([])


def test_errors_wrong_key_shape_and_values():
    be1, be2 = BitSimulator(), BitSimulator()
    x1, x2 = be1.encrypt([0, 1]), be2.encrypt([1, 1])
    with pytest.raises(ValueError, match="another key"):
        be1.decrypt(x2)
    with pytest.raises(ValueError, match="another key"):
        be1.and_(x1, x2)
    with pytest.raises(ValueError, match="shape mismatch"):
        be1.xor(x1, be1.encrypt([0, 1, 1]))
    with pytest.raises(ValueError, match="only 0 and 1"):
        be1.encrypt([0, 2])
    with pytest.raises(TypeError, match="integer or bool"):
        be1.encrypt([0.5, 1.0])
    with pytest.raises(TypeError, match="Bits"):
        be1.not_(np.array([1]))
    with pytest.raises(TypeError, match="public_constants"):
        BitSimulator(public_constants=1)


def test_ledger_booking_and_message_size():
    led = Ledger(["client", "server"])
    be = BitSimulator(ledger=led)
    x = be.encrypt(np.ones(10, np.uint8))
    with led.label("layer"):
        be.mux(x, x, be.xor(x, x))
        be.and_(x, be.trivial(np.ones(10, np.uint8)))  # shortcut: nothing booked
    assert led.op_count("gate_XOR", label="layer") == 10
    assert led.op_count("gate_MUX") == 10
    assert led.op_count("bootstrap") == 10 + 20
    assert led.op_count("gate_AND") == 0
    assert be.message_bytes(be.concat([x, be.trivial([0])])) == 10 * SIM_CIPHERTEXT_BYTES

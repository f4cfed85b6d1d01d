"""Paillier backend: real crypto against plaintext oracles, optimisations, threshold keys."""

from __future__ import annotations

import numpy as np
import pytest

from ppnn.core import Ledger
from ppnn.he.paillier import (
    CipherArray,
    KeyShare,
    PackingLayout,
    Paillier,
    PartialDecryption,
    SimulatedPaillier,
    decode_int,
    encode_fixed,
    encode_int,
    keygen,
    multiexp_plan,
    split_private_key,
)


@pytest.fixture(scope="module")
def keys():
    return keygen(512)


@pytest.fixture(scope="module")
def other_keys():
    return keygen(512)


def _ledger():
    return Ledger(["client", "server"])


def _obj(a):
    return np.asarray(a, dtype=object)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_encrypt_decrypt_and_homomorphisms(keys, seed):
    pk, sk = keys
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 5, size=rng.integers(1, 3)))
    a = rng.integers(-2**40, 2**40, size=shape)
    b = rng.integers(-2**40, 2**40, size=shape)
    k = rng.integers(-300, 300, size=shape)
    be = Paillier(pk, _ledger())
    ca, cb = be.encrypt(a, "client"), be.encrypt(b, "client")
    assert ca.shape == shape
    assert (be.decrypt(sk, ca, "client") == _obj(a)).all()
    assert (be.decrypt(sk, be.add(ca, cb, "server"), "client") == _obj(a + b)).all()
    assert (be.decrypt(sk, be.sub(ca, cb, "server"), "client") == _obj(a - b)).all()
    assert (be.decrypt(sk, be.add_plain(ca, b, "server"), "client") == _obj(a + b)).all()
    assert (be.decrypt(sk, be.neg(ca, "server"), "client") == _obj(-a)).all()
    assert (be.decrypt(sk, be.mul_plain(ca, k, "server"), "client") == _obj(a * k)).all()
    assert be.decrypt(sk, be.sum(ca, "server"), "client")[0] == int(a.sum())
    # fresh randomness: the same plaintext encrypts to different ciphertexts
    c1, c2 = be.encrypt([5], "client"), be.encrypt([5], "client")
    assert c1.data[0] != c2.data[0]
    assert be.decrypt(sk, be.rerandomize(c1, "server"), "client")[0] == 5


def test_real_2048_bit_key_runs():
    pk, sk = keygen(2048)
    be = Paillier(pk, _ledger())
    assert be.ct_bits == 4096
    x = np.array([3, -7, 11, 0])
    W = np.array([[1, 2, -3, 4], [-5, 0, 6, 1]])
    c = be.encrypt(x, "client")
    assert (be.decrypt(sk, be.dot(c, W, "server"), "client") == _obj(W @ x)).all()
    assert be.layout(113).rho == 18  # the paper's ⌊log2 N / (t + κ)⌋ with t = 33, κ = 80


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("method", ["multiexp", "naive"])
def test_dot_matches_numpy(keys, seed, method):
    pk, sk = keys
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 30)), int(rng.integers(1, 6))
    x = rng.integers(-1000, 1000, size=n)
    W = rng.integers(-512, 512, size=(m, n))
    if seed == 3:
        W = np.abs(W)  # no offset correction
    be = Paillier(pk, _ledger())
    out = be.dot(be.encrypt(x, "client"), W, "server", method=method)
    assert (be.decrypt(sk, out, "client") == _obj(W.astype(object) @ x.astype(object))).all()


@pytest.mark.parametrize("h", [1, 2, 3, 5, 8])
def test_multiexp_counts_equal_performed_multiplications(keys, h):
    pk, sk = keys
    rng = np.random.default_rng(h)
    x = rng.integers(-50, 50, size=23)
    W = rng.integers(-200, 300, size=(7, 23))
    led = _ledger()
    be = Paillier(pk, led)
    c = be.encrypt(x, "client")
    out = be.dot(c, W, "server", h=h)
    plan = multiexp_plan(W, h)
    assert be.last_multiexp_mults == plan.total_mults()
    assert led.op_count("paillier_mul", party="server") == plan.total_mults()
    assert (be.decrypt(sk, out, "client") == _obj(W @ x)).all()


def test_multiexp_is_cheaper_than_naive_in_multiplications(keys):
    rng = np.random.default_rng(0)
    W = rng.integers(-128, 128, size=(100, 256))
    plan = multiexp_plan(W)
    # naive: ~ (bits + popcount) multiplications per term, plus one per addition
    naive = int((np.abs(W) > 0).sum()) * 8
    assert plan.total_mults() < naive / 4


def test_gather_dot_with_padding_matches_convolution(keys):
    pk, sk = keys
    rng = np.random.default_rng(5)
    x = rng.integers(-20, 20, size=9)
    index = np.array([[0, 1, -1, 3], [-1, -1, 4, 5], [6, 7, 8, 2]])
    W = rng.integers(-9, 9, size=(3, 4))
    xp = np.append(x, 0)
    expected = W @ xp[index].T
    be = Paillier(pk, _ledger())
    c = be.encrypt(x, "client")
    for method in ("multiexp", "naive"):
        out = be.gather_dot(c, index, W, "server", method=method)
        assert out.shape == (3, 3)
        assert (be.decrypt(sk, out, "client") == _obj(expected)).all()


def test_sum_windows(keys):
    pk, sk = keys
    be = Paillier(pk, _ledger())
    x = np.arange(6) - 2
    idx = np.array([[0, 1, -1], [2, 3, 4], [-1, -1, -1]])
    out = be.sum_windows(be.encrypt(x, "client"), idx, "server")
    assert list(be.decrypt(sk, out, "client")) == [-3, 3, 0]


@pytest.mark.parametrize("seed", [0, 1])
def test_simulated_backend_agrees_with_real(keys, seed):
    pk, sk = keys
    rng = np.random.default_rng(seed)
    x = rng.integers(-300, 300, size=12)
    W = rng.integers(-64, 64, size=(4, 12))
    index = np.array([[0, 1, 2, -1], [3, 4, 5, 6], [-1, 7, 8, 9]])
    Wc = rng.integers(-8, 8, size=(2, 4))
    outs, counts = [], []
    for cls in (Paillier, SimulatedPaillier):
        led = _ledger()
        be = cls(pk, led)
        c = be.encrypt(x, "client")
        r = [be.dot(c, W, "server"), be.dot(c, W, "server", method="naive"),
             be.gather_dot(c, index, Wc, "server"),
             be.gather_dot(c, index, Wc, "server", method="naive"),
             be.mul_plain(c, -3, "server"), be.add_plain(c, 7, "server"),
             be.sum_windows(c, index, "server"),
             be.pack(be.add_plain(c, 400, "server"), be.layout(20), 20, "server")]
        dec = [be.decrypt(sk, v, "client") for v in r[:-1]] + [
            be.decrypt_raw(sk, r[-1], "client")]
        outs.append(dec)
        counts.append(led.op_counts())
    for a, b in zip(*outs):
        assert (a == b).all()
    assert counts[0] == counts[1]


def test_packing_roundtrip_and_overflow(keys):
    pk, sk = keys
    lay = PackingLayout(slot_bits=30, n_bits=512)
    assert lay.rho == 17
    vals = np.random.default_rng(0).integers(0, 2**30, size=40)
    packed = lay.pack_plain(vals)
    assert len(packed) == lay.n_packed(40) == 3
    assert (lay.unpack_plain(packed, 40) == _obj(vals)).all()
    with pytest.raises(ValueError, match="does not fit a slot"):
        lay.pack_plain([2**30])
    with pytest.raises(ValueError, match="does not fit a slot"):
        lay.pack_plain([-1])
    with pytest.raises(ValueError, match="beyond its slots"):
        lay.unpack_plain([1 << (30 * 17)], 17)
    with pytest.raises(ValueError, match="slot_bits"):
        PackingLayout(600, 512)
    # encrypted packing: the declared value width must fit the slot
    be = Paillier(pk, _ledger())
    c = be.encrypt(vals[:20], "client")
    with pytest.raises(ValueError, match="packing overflow"):
        be.pack(c, lay, 31, "server")
    pc = be.pack(c, lay, 30, "server")
    assert pc.size == 2
    assert (lay.unpack_plain(be.decrypt_raw(sk, pc, "client"), 20) == _obj(vals[:20])).all()


def test_packing_layout_validates(keys):
    pk, _ = keys
    be = Paillier(pk, _ledger())
    c = be.encrypt([1, 2], "client")
    with pytest.raises(ValueError, match="modulus"):
        be.pack(c, PackingLayout(20, 1024), 20, "server")
    with pytest.raises(TypeError):
        be.pack(c, 20, 20, "server")


def test_threshold_decryption_needs_both_shares(keys):
    pk, sk = keys
    s1, s2 = split_private_key(sk)
    assert s1.d > 0 > s2.d and "d=" not in repr(s1)
    be = Paillier(pk, Ledger(["client", "server1", "server2"]))
    x = np.array([42, -17, 0, 2**60])
    c = be.encrypt(x, "client")
    p1 = be.partial_decrypt(s1, c, "server1")
    p2 = be.partial_decrypt(s2, c, "server2")
    assert (be.combine(p1, p2, "server2") == _obj(x)).all()
    # one partial decryption alone does not decrypt
    with pytest.raises(ValueError, match="both"):
        be.combine(p1, p1, "server2")
    ones = PartialDecryption(np.array([1] * 4, dtype=object), pk, False, 2)
    with pytest.raises(ValueError, match="both servers"):
        be.combine(p1, ones, "server2")
    # the partial is not 1 + mN: its "L value" is not the plaintext
    n, n2 = int(pk.n), int(pk.nsquare)
    assert all((int(v) % n2 - 1) % n != 0 for v in p1.data)
    with pytest.raises(TypeError):
        split_private_key("not a key")
    with pytest.raises(ValueError, match="stat_bits"):
        split_private_key(sk, stat_bits=8)


def test_mismatched_public_keys_raise(keys, other_keys):
    pk, sk = keys
    pk2, sk2 = other_keys
    be, be2 = Paillier(pk, _ledger()), Paillier(pk2, _ledger())
    c, c2 = be.encrypt([1], "client"), be2.encrypt([2], "client")
    with pytest.raises(ValueError, match="public key"):
        be.add(c, c2, "server")
    with pytest.raises(ValueError, match="public key"):
        be.mul_plain(c2, 3, "server")
    with pytest.raises(ValueError, match="does not belong"):
        be.decrypt(sk2, c, "client")
    with pytest.raises(ValueError, match="different public key"):
        be.partial_decrypt(split_private_key(sk2)[0], c, "server")
    with pytest.raises(ValueError, match="public keys"):
        CipherArray.concatenate([c, c2])
    sim = SimulatedPaillier(pk, _ledger())
    with pytest.raises(ValueError, match="simulated"):
        sim.add(c, c, "server")


def test_encoding_errors(keys):
    pk, _ = keys
    with pytest.raises(TypeError, match="floating"):
        encode_int(np.array([1.5]), pk)
    with pytest.raises(ValueError, match="N/3"):
        encode_int([int(pk.n)], pk)
    assert list(decode_int(encode_int([-5, 5], pk), pk)) == [-5, 5]
    with pytest.raises(ValueError, match="out of range"):
        encode_fixed([1.0], 8, bits=8)
    with pytest.raises(ValueError, match="frac_bits"):
        encode_fixed([1.0], -1)
    with pytest.raises(ValueError, match="NaN"):
        encode_fixed([np.nan], 4)
    assert list(encode_fixed([0.5, -0.25], 4, bits=8)) == [8, -4]
    with pytest.raises(ValueError, match="n_bits"):
        keygen(100)
    with pytest.raises(TypeError):
        keygen(512.0)
    with pytest.raises(TypeError):
        Paillier("key")


def test_dot_argument_errors(keys):
    pk, _ = keys
    be = Paillier(pk, _ledger())
    c = be.encrypt([1, 2, 3], "client")
    with pytest.raises(ValueError, match="do not match"):
        be.dot(c, np.ones((2, 4), dtype=np.int64), "server")
    with pytest.raises(TypeError, match="integers"):
        be.dot(c, np.ones((2, 3)), "server")
    with pytest.raises(ValueError, match="method"):
        be.dot(c, np.ones((2, 3), dtype=np.int64), "server", method="fast")
    with pytest.raises(ValueError, match="out of range"):
        be.gather_dot(c, np.array([[0, 5]]), np.ones((1, 2), dtype=np.int64), "server")
    with pytest.raises(ValueError, match="group size"):
        multiexp_plan(np.ones((1, 2), dtype=np.int64), h=20)
    with pytest.raises(TypeError, match="KeyShare"):
        be.partial_decrypt("share", c, "server")
    with pytest.raises(ValueError, match="different public key"):
        be.partial_decrypt(KeyShare(keygen(256)[0], 1, 5), c, "server")


def test_ledger_counts_encryptions_and_exponentiations(keys):
    pk, sk = keys
    led = _ledger()
    be = Paillier(pk, led)
    c = be.encrypt(np.arange(5), "client")
    be.mul_plain(c, np.array([1, -2, 3, -4, 0]), "server")
    be.decrypt(sk, c, "client")
    assert led.op_count("Enc", party="client") == 5
    assert led.op_count("Dec", party="client") == 5
    assert led.op_count("paillier_exp", party="server") == 5
    assert led.op_count("paillier_inv", party="server") == 2
    assert led.op_count("paillier_exp_bits", party="server") == 1 + 2 + 2 + 3 + 0


def test_key_shares_are_booked_at_a_fixed_width_whatever_their_value():
    from ppnn.he.paillier.keys import keygen, split_private_key

    widths, squares = set(), set()
    for _ in range(12):  # N^2 has 2 log2 N bits or one fewer, by key: the width follows neither
        pk, sk = keygen(256)
        squares.add((int(pk.n) ** 2).bit_length())
        widths |= {s.wire_bits for _ in range(3) for s in split_private_key(sk)}
        for s in split_private_key(sk):
            assert abs(s.d).bit_length() + 1 <= s.wire_bits
    assert widths == {2 * 256 + 128 + 1}

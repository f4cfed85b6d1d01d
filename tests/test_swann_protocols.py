"""SwaNN Protocols 1-3 and the 2PC engine, both settings, real Paillier vs plaintext oracles."""

from __future__ import annotations

import numpy as np
import pytest

from ppnn.core import Ledger, Ring, share_additive
from ppnn.he.paillier import Paillier, SimulatedPaillier, keygen, split_private_key
from ppnn.protocols.swann.switching import (
    KeyHolderDecryption,
    Masking,
    Roles,
    SplitKeyDecryption,
    bool_to_phe,
    phe_to_2pc,
    random_ints,
    secure_square,
)
from ppnn.protocols.swann.twopc import (
    OTCostModel,
    TwoPC,
    bits_of,
    bits_to_ints,
    from_bits,
    ints_to_bits,
)


@pytest.fixture(scope="module")
def keys():
    return keygen(1024)


def _setting(name, sk):
    if name == "client-server":
        led = Ledger(["client", "server"])
        return led, Roles("server", "client", KeyHolderDecryption(sk))
    led = Ledger(["client", "server1", "server2"])
    s1, s2 = split_private_key(sk)
    return led, Roles("server1", "server2", SplitKeyDecryption(s1, s2))


def _obj(a):
    return np.asarray(a, dtype=object)


SETTINGS = ["client-server", "two-server"]


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("pack", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_protocol1_secure_square(keys, setting, pack, seed):
    pk, sk = keys
    rng = np.random.default_rng(seed)
    led, roles = _setting(setting, sk)
    be = Paillier(pk, led)
    shape = tuple(rng.integers(1, 6, size=2))
    x = rng.integers(-2**31, 2**31, size=shape)
    out = secure_square(be, be.encrypt(x, "client"), roles, rng, Masking(32), pack)
    assert out.shape == shape
    assert (be.decrypt(sk, out, "client") == _obj(x) ** 2).all()


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("pack", [False, True])
@pytest.mark.parametrize("k", [32, 64])
def test_protocol2_phe_to_2pc(keys, setting, pack, k):
    pk, sk = keys
    rng = np.random.default_rng(k)
    led, roles = _setting(setting, sk)
    be = Paillier(pk, led)
    tpc = TwoPC(led, (roles.helper, roles.evaluator), rng)
    x = rng.integers(-2**31, 2**31, size=(4, 7))
    sh = phe_to_2pc(be, be.encrypt(x, "client"), roles, tpc, rng, Masking(32), Ring(k), pack)
    assert sh.shape == (4, 7)
    assert (Ring(k).to_signed(sh.reveal()) == x).all()


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("seed", [0, 1])
def test_protocol3_bool_to_phe(keys, setting, seed):
    pk, sk = keys
    rng = np.random.default_rng(seed)
    led, roles = _setting(setting, sk)
    be = Paillier(pk, led)
    tpc = TwoPC(led, (roles.helper, roles.evaluator), rng)
    m = int(rng.integers(8, 40))
    x = rng.integers(-2**(m - 1), 2**(m - 1), size=11)
    sh = share_additive(Ring(64).from_signed(x), Ring(64), rng)
    xb = tpc.a2b(sh, m)
    out = bool_to_phe(be, xb, roles, tpc, rng, kappa=40)
    assert (be.decrypt(sk, out, "client") == _obj(x)).all()


@pytest.mark.parametrize("setting", SETTINGS)
def test_round_trip_relu_maxpool_and_square(keys, setting):
    """PHE → 2PC → ReLU + max-pool / x² → truncation → PHE, as the hybrid layers do."""
    pk, sk = keys
    rng = np.random.default_rng(3)
    led, roles = _setting(setting, sk)
    be = Paillier(pk, led)
    tpc = TwoPC(led, (roles.helper, roles.evaluator), rng)
    x = rng.integers(-2**20, 2**20, size=(2, 4, 4))
    c = be.encrypt(x, "client")
    sh = phe_to_2pc(be, c, roles, tpc, rng, Masking(32), Ring(32), True)
    xb = tpc.relu(tpc.a2b(sh, 32))
    win = np.arange(32).reshape(2, 2, 2, 2, 2).transpose(0, 1, 3, 2, 4).reshape(8, 4)
    pooled = TwoPC.truncate(tpc.max_pool(xb, win), 5)
    out = bool_to_phe(be, pooled, roles, tpc, rng)
    want = np.maximum(x, 0).reshape(-1)[win].max(axis=1) >> 5
    assert (be.decrypt(sk, out, "client") == _obj(want)).all()
    sh64 = phe_to_2pc(be, c, roles, tpc, rng, Masking(32), Ring(64), True)
    sq = TwoPC.truncate(tpc.a2b(tpc.square(sh64), 63), 16)
    out = bool_to_phe(be, sq, roles, tpc, rng)
    assert (be.decrypt(sk, out, "client") == _obj(x.astype(object) ** 2 // 2**16)).all()


def test_protocol_messages_match_formulas(keys):
    """Protocol 2 (packed): ⌈n/ρ⌉ ciphertexts + two ℓ-bit share vectors; one decryption and
    one rerandomization per packed ciphertext. Protocol 3: (m+κ) bits in, m+κ ANDs, (m+κ+1)
    bits out, one encryption per value."""
    pk, sk = keys
    rng = np.random.default_rng(0)
    led, roles = _setting("client-server", sk)
    be = Paillier(pk, led)
    tpc = TwoPC(led, ("client", "server"), rng)
    n, mk = 50, Masking(32, 80)
    rho = be.layout(mk.slot_bits).rho
    c = be.encrypt(np.arange(n) - 25, "client")
    with led.label("p2"):
        sh = phe_to_2pc(be, c, roles, tpc, rng, mk, Ring(32), True)
    n_ct = -(-n // rho)
    assert led.total_bits(label="p2") == n_ct * be.ct_bits + 2 * n * 32
    assert led.op_count("Dec", label="p2") == n_ct
    assert led.op_count("Enc", label="p2") == n_ct
    assert led.rounds(label="p2") == 2
    xb = tpc.a2b(sh, 32)
    with led.label("p3"):
        bool_to_phe(be, xb, roles, tpc, rng, kappa=80)
    m, kappa = 32, 80
    assert led.op_count("and_gate", label="p3") == n * (m + kappa)
    assert led.op_count("Enc", label="p3", party="client") == n
    online = led.total_bits(phase="online", label="p3")
    assert online == n * (m + kappa) + n * (m + kappa) * 4 + n * (m + kappa + 1) + n * be.ct_bits
    offline = led.total_bits(phase="offline", label="p3")
    assert offline == n * (m + kappa) * OTCostModel().and_triple_bits()


def test_unpacked_protocol1_costs(keys):
    pk, sk = keys
    rng = np.random.default_rng(0)
    led, roles = _setting("client-server", sk)
    be = Paillier(pk, led)
    n = 9
    c = be.encrypt(np.arange(n), "client")
    with led.label("sq"):
        secure_square(be, c, roles, rng, Masking(32), pack=False)
    assert led.total_bits(label="sq") == 2 * n * be.ct_bits
    assert led.op_count("Enc", label="sq", party="server") == n
    assert led.op_count("Enc", label="sq", party="client") == n
    assert led.op_count("Dec", label="sq", party="client") == n


def test_two_server_decryption_books_partials(keys):
    pk, sk = keys
    rng = np.random.default_rng(0)
    led, roles = _setting("two-server", sk)
    be = Paillier(pk, led)
    c = be.encrypt(np.arange(4), "client")
    with led.label("sq"):
        secure_square(be, c, roles, rng, Masking(16), pack=False)
    assert led.op_count("PartialDec", label="sq", party="server1") == 4
    assert led.op_count("PartialDec", label="sq", party="server2") == 4
    assert led.op_count("Dec", label="sq") == 0
    # ciphertexts, partials, and the squares coming back
    assert led.total_bits(label="sq") == 3 * 4 * be.ct_bits


@pytest.mark.parametrize("setting", SETTINGS)
def test_simulated_protocols_agree_with_real(keys, setting, monkeypatch):
    # the same masks on both backends (the real one draws them from the OS CSPRNG otherwise):
    # paillier_exp_bits counts the bits of the exponent -2r, so it depends on r
    import ppnn.protocols.swann.switching as sw
    monkeypatch.setattr(sw, "mask_source", lambda rng, real: rng)
    pk, sk = keys
    x = np.random.default_rng(9).integers(-2**30, 2**30, size=13)
    res, counts, bits = [], [], []
    for cls in (Paillier, SimulatedPaillier):
        rng = np.random.default_rng(1)
        led, roles = _setting(setting, sk)
        be = cls(pk, led)
        tpc = TwoPC(led, (roles.helper, roles.evaluator), rng)
        c = be.encrypt(x, "client")
        sq = secure_square(be, c, roles, rng, Masking(32), True)
        sh = phe_to_2pc(be, c, roles, tpc, rng, Masking(32), Ring(32), True)
        back = bool_to_phe(be, tpc.relu(tpc.a2b(sh, 32)), roles, tpc, rng)
        res.append([be.decrypt(sk, sq, "client"), be.decrypt(sk, back, "client")])
        counts.append(led.op_counts())
        bits.append(led.total_bits())
    for a, b in zip(*res):
        assert (a == b).all()
    assert counts[0] == counts[1] and bits[0] == bits[1]


def test_masking_and_role_errors(keys):
    pk, sk = keys
    with pytest.raises(ValueError, match="ell"):
        Masking(1)
    with pytest.raises(ValueError, match="kappa"):
        Masking(32, 0)
    with pytest.raises(ValueError, match="outside ℓ = 8"):
        Masking(8).check([200])
    Masking(8).check([-128, 127])
    with pytest.raises(ValueError, match="different"):
        Roles("server", "server", KeyHolderDecryption(sk))
    led, roles = _setting("client-server", sk)
    be = Paillier(pk, led)
    rng = np.random.default_rng(0)
    c = be.encrypt([1, 2], "client")
    with pytest.raises(ValueError, match="helper, evaluator"):
        phe_to_2pc(be, c, roles, TwoPC(led, ("server", "client"), rng), rng, Masking(32),
                   Ring(32))
    with pytest.raises(ValueError, match="cannot hold"):
        phe_to_2pc(be, c, roles, TwoPC(led, ("client", "server"), rng), rng, Masking(32),
                   Ring(16))
    # a value outside ℓ bits makes the slot overflow: the packing check is on ℓ + κ + 1 bits
    with pytest.raises(ValueError, match="packing overflow"):
        be.pack(c, be.layout(20), 21, "server")


def test_twopc_circuits_against_oracle():
    rng = np.random.default_rng(0)
    led = Ledger(["client", "server"])
    tpc = TwoPC(led, ("client", "server"), rng)
    R = Ring(32)
    for m in (2, 9, 32):
        a = rng.integers(-2**(m - 1), 2**(m - 1), size=50)
        b = rng.integers(-2**(m - 1), 2**(m - 1), size=50)
        ab = tpc.a2b(share_additive(R.from_signed(a), R, rng), m)
        bb = tpc.a2b(share_additive(R.from_signed(b), R, rng), m)
        assert (tpc.reveal_bits(ab) == a).all()
        assert (tpc.less_than(ab, bb).reveal() == (a < b)).all()
        assert (tpc.reveal_bits(tpc.maximum(ab, bb)) == np.maximum(a, b)).all()
        assert (tpc.reveal_bits(tpc.relu(ab)) == np.maximum(a, 0)).all()
        if m > 2:
            assert (tpc.reveal_bits(TwoPC.truncate(ab, 2)) == a >> 2).all()
    with pytest.raises(ValueError, match="truncation"):
        TwoPC.truncate(ab, 40)


def test_twopc_gate_counts_match_formulas():
    rng = np.random.default_rng(1)
    led = Ledger(["client", "server"])
    tpc = TwoPC(led, ("client", "server"), rng)
    R, n, m = Ring(32), 17, 32
    sh = share_additive(R.from_signed(rng.integers(-99, 99, size=(n, 4))), R, rng)
    with led.label("a2b"):
        xb = tpc.a2b(sh, m)
    with led.label("relu"):
        r = tpc.relu(xb)
    with led.label("pool"):
        tpc.max_pool(r, np.arange(n * 4).reshape(n, 4))
    with led.label("mul"):
        tpc.square(sh)
    assert led.op_count("and_gate", label="a2b") == n * 4 * (m - 1)
    assert led.op_count("and_gate", label="relu") == n * 4 * (m - 1)
    assert led.op_count("and_gate", label="pool") == n * 3 * 2 * m
    assert led.rounds(label="a2b") == m - 1
    assert led.rounds(label="pool") == 2 * (m + 1)
    ot = OTCostModel()
    assert led.total_bits("offline", "relu") == n * 4 * (m - 1) * ot.and_triple_bits()
    assert led.total_bits("offline", "mul") == n * 4 * ot.arith_triple_bits(32)
    assert led.total_bits("online", "mul") == 2 * n * 4 * 2 * 32
    assert ot.arith_triple_bits(32) == 2 * 32 * (128 + 32)


def test_bit_helpers():
    rng = np.random.default_rng(0)
    v = rng.integers(0, 2**63, size=10, dtype=np.uint64)
    assert (from_bits(bits_of(v, 64)) == v).all()
    big = random_ints(rng, 7, 150)
    assert all(0 <= int(b) < 2**150 for b in big)
    assert (bits_to_ints(ints_to_bits(big, 150)) == big).all()
    with pytest.raises(ValueError):
        ints_to_bits([2**10], 10)
    with pytest.raises(ValueError):
        bits_of(v, 65)
    with pytest.raises(ValueError, match="two parties"):
        TwoPC(Ledger(["a", "b", "c"]), ("a", "b", "c"), rng)
    with pytest.raises(TypeError):
        TwoPC(Ledger(["a", "b"]), ("a", "b"), 0)
    with pytest.raises(ValueError, match="kappa"):
        OTCostModel(0)

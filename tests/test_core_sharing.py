import numpy as np
import pytest

from ppnn.core import (
    AdditiveShares,
    Dealer,
    FixedPoint,
    Ledger,
    ReplicatedShares,
    Ring,
    XorShares,
    beaver_and,
    beaver_matmul,
    beaver_mul,
    local_truncate,
    replicated_mul,
    share_additive,
    share_replicated,
    share_xor,
    truncate_with_pair,
)

SEEDS = range(5)


def _shape(rng):
    return tuple(int(d) for d in rng.integers(1, 6, size=rng.integers(1, 4)))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("k", [8, 32, 64])
def test_share_reconstruct_roundtrip_all_schemes(seed, k):
    rng = np.random.default_rng(seed)
    ring = Ring(k)
    shape = _shape(rng)
    x = ring.random(rng, shape)
    for n in (2, 3, 5):
        a = share_additive(x, ring, rng, n)
        assert a.shares.shape == (n, *shape)
        assert np.array_equal(a.reveal(), x)
    r = share_replicated(x, ring, rng)
    assert np.array_equal(r.reveal(), x)
    # every pair of parties' views covers all three components
    for i in range(3):
        xi, xi1 = r.view(i)
        assert np.array_equal(ring.add(ring.add(xi, xi1), r.view((i + 1) % 3)[1]), x)
    b = share_xor(x, k, rng, 3)
    assert np.array_equal(b.reveal(), x)


def test_shares_look_uniform():
    """A single share is independent of the secret: same distribution for x=0 and x=2^31."""
    rng = np.random.default_rng(0)
    ring = Ring(32)
    s0 = share_additive(np.zeros(20000, np.uint64), ring, rng).shares[0]
    s1 = share_additive(np.full(20000, 1 << 31, np.uint64), ring, rng).shares[0]
    # top-bit frequency of party 0's share ~ 1/2 in both cases
    for s in (s0, s1):
        assert abs(ring.msb(s).mean() - 0.5) < 0.02


@pytest.mark.parametrize("seed", SEEDS)
def test_beaver_products_equal_plaintext(seed):
    rng = np.random.default_rng(seed)
    ring = Ring(64)
    parties = ["P0", "P1", "P2"] if seed % 2 else ["client", "server"]
    ledger = Ledger(parties)
    dealer = Dealer(rng, ledger, parties)
    shape = _shape(rng)
    x, y = ring.random(rng, shape), ring.random(rng, shape)
    n = len(parties)
    z = beaver_mul(share_additive(x, ring, rng, n), share_additive(y, ring, rng, n), dealer)
    assert np.array_equal(z.reveal(), ring.mul(x, y))
    m, k_, p = (int(v) for v in rng.integers(1, 7, 3))
    A, B = ring.random(rng, (m, k_)), ring.random(rng, (k_, p))
    C = beaver_matmul(share_additive(A, ring, rng, n), share_additive(B, ring, rng, n), dealer)
    assert np.array_equal(C.reveal(), ring.matmul(A, B))
    bx, by = rng.integers(0, 2**16, shape), rng.integers(0, 2**16, shape)
    zb = beaver_and(share_xor(bx, 16, rng, n), share_xor(by, 16, rng, n), dealer)
    assert np.array_equal(zb.reveal(), (bx & by).astype(np.uint64))


@pytest.mark.parametrize("seed", SEEDS)
def test_replicated_product_equals_plaintext(seed):
    rng = np.random.default_rng(seed)
    ring = Ring(32)
    shape = _shape(rng)
    x, y = ring.random(rng, shape), ring.random(rng, shape)
    ledger = Ledger(["P0", "P1", "P2"])
    z = replicated_mul(share_replicated(x, ring, rng), share_replicated(y, ring, rng), rng, ledger)
    assert np.array_equal(z.reveal(), ring.mul(x, y))
    n = int(np.prod(shape))
    assert ledger.total_bits() == 3 * n * 32 and ledger.rounds() == 1


@pytest.mark.parametrize("seed", SEEDS)
def test_fixed_point_products_with_truncation(seed):
    rng = np.random.default_rng(seed)
    fx = FixedPoint(Ring(64), 16)
    ledger = Ledger(["client", "server"])
    dealer = Dealer(rng, ledger, ["client", "server"])
    shape = _shape(rng)
    x, y = rng.uniform(-100, 100, shape), rng.uniform(-100, 100, shape)
    X = share_additive(fx.encode(x), fx.ring, rng)
    Y = share_additive(fx.encode(y), fx.ring, rng)
    prod = beaver_mul(X, Y, dealer)
    # encoding error of each factor (<= 2^-17) times the other factor, plus the +-1 ulp of
    # truncation: |err| <= (|x| + |y|) 2^-17 + 2^-16 + 2^-34
    bound = (np.abs(x) + np.abs(y)) * 2.0**-17 + 2.0**-16 + 2.0**-34
    for z in (local_truncate(prod, 16), truncate_with_pair(prod, 16, dealer)):
        assert np.all(np.abs(fx.decode(z.reveal()) - x * y) <= bound + 1e-12)


def test_mismatched_shares_raise():
    rng = np.random.default_rng(0)
    ring = Ring(32)
    a = share_additive(np.zeros(3, np.uint64), ring, rng)
    with pytest.raises(ValueError, match="shape mismatch"):
        _ = a + share_additive(np.zeros(4, np.uint64), ring, rng)
    with pytest.raises(ValueError, match="party count mismatch"):
        _ = a + share_additive(np.zeros(3, np.uint64), ring, rng, 3)
    with pytest.raises(ValueError, match="ring mismatch"):
        _ = a + share_additive(np.zeros(3, np.uint64), Ring(16), rng)
    with pytest.raises(ValueError, match="exactly 3 components"):
        ReplicatedShares(np.zeros((2, 3), np.uint64), ring)
    with pytest.raises(ValueError, match="party axis"):
        AdditiveShares(np.zeros((1, 3), np.uint64), ring)
    with pytest.raises(ValueError, match="XOR share mismatch"):
        _ = XorShares(np.zeros((2, 3)), 1) ^ XorShares(np.zeros((2, 3)), 2)
    ledger = Ledger(["P0", "P1", "P2"])
    dealer = Dealer(rng, ledger, ["P0", "P1", "P2"])
    with pytest.raises(ValueError, match="held by 2 parties but the dealer serves 3"):
        beaver_mul(a, a, dealer)
    with pytest.raises(ValueError, match="held by 2 parties"):
        a.open(ledger, ["P0", "P1", "P2"])
    with pytest.raises(ValueError, match="local truncation is a 2-party"):
        local_truncate(share_additive(np.zeros(3, np.uint64), ring, rng, 3), 4)
    with pytest.raises(TypeError, match="Generator"):
        share_additive(np.zeros(3, np.uint64), ring, 42)


def test_replicated_dealer_shares_per_stream_and_defers_booking_inside_a_round():
    from ppnn.core import Ledger, Ring
    from ppnn.core.dealer import ReplicatedDealer

    ring = Ring(32)
    ledger = Ledger(("P0", "P1", "P2"))
    streams = dict(zip(("a", "b"), np.random.default_rng(0).spawn(2)))
    dealer = ReplicatedDealer(streams, ledger, ("P0", "P1", "P2"))
    x = ring.random(np.random.default_rng(1), (4,))
    sh = dealer.share(x, ring, "a")
    assert np.array_equal(sh.reveal(), x)
    with ledger.round():  # an online round: the dealer's booking waits for it to close
        ledger.send("P0", "P1", 8, "online message")
        dealer.book(64, "triple")
        assert ledger.total_bits("offline") == 0
    dealer.flush()
    assert ledger.total_bits("offline") == 3 * 64 and ledger.rounds("offline") == 1
    with pytest.raises(ValueError, match="unknown dealer stream 'c'"):
        dealer.share(x, ring, "c")
    with pytest.raises(ValueError, match="three parties"):
        ReplicatedDealer(streams, Ledger(("P0", "P1")), ("P0", "P1"))

"""Tabula online (Fig. 2) and preprocessing (Fig. 3) against plaintext oracles and formulas."""

import numpy as np
import pytest

from ppnn.core import Z2_64, FixedPoint, Ledger, Ring, local_truncate, share_additive
from ppnn.protocols import tabula as tb
from ppnn.protocols.tabula import costs
from ppnn.protocols.tabula import preprocessing as pp

PARTIES = ("client", "server")


def _ledger():
    return Ledger(PARTIES)


def _run(F, b, shape, seed, input_bits=14, tables="dealer"):
    """Share random activations |x| < 2^input_bits, run Tabula, return everything."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    x = rng.integers(-(1 << input_bits), 1 << input_bits, size=shape)
    X = share_additive(Z2_64.from_signed(x), Z2_64, rng)
    out = FixedPoint(Z2_64, 16)
    F_table = tb.function_table(F, b, in_step=1.0 / 4, out=out)
    ledger = _ledger()
    if tables == "dealer":
        T = tb.dealer_tables(F_table, n, rng, ledger=ledger)
    else:
        T = tb.preprocess(F_table, n, rng, ledger, **(tb.PUBLISHED if tables == "published"
                                                      else tb.OURS))
    d = tb.scale_shift(input_bits, b)
    Y = tb.tabula_online(X, T, d, ledger, input_bits=input_bits)
    return x, X, d, F_table, Y, ledger, T


@pytest.mark.parametrize("F", [tb.relu, tb.gelu, tb.sigmoid], ids=["relu", "gelu", "sigmoid"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_online_matches_plaintext_up_to_truncation(F, seed):
    rng = np.random.default_rng(100 + seed)
    b = int(rng.integers(2, 11))
    shape = tuple(int(s) for s in rng.integers(1, 9, size=int(rng.integers(1, 4))))
    x, X, d, F_table, Y, ledger, _ = _run(F, b, shape, seed)
    p = 1 << b
    q_exact = x >> d  # floor(x / 2^d)
    # the protocol's truncation is SecureML's: the same shares give exactly this value
    q_proto = Z2_64.to_signed(local_truncate(X, d).reveal())
    assert np.all((q_proto == q_exact) | (q_proto == q_exact + 1))
    got = Y.reveal()
    assert got.shape == x.shape
    np.testing.assert_array_equal(got, F_table[(q_proto % p).astype(np.int64)])
    # and against plaintext F on the quantized input: exact wherever truncation was exact
    exact = q_proto == q_exact
    want = FixedPoint(Z2_64, 16).encode(F(q_exact.astype(float) / 4))
    np.testing.assert_array_equal(got[exact], want[exact])


@pytest.mark.parametrize("variant", ["published", "ours"])
def test_online_with_protocol_tables(variant):
    x, X, d, F_table, Y, _, T = _run(tb.relu, 5, (3, 7), 11, input_bits=8, tables=variant)
    q = Z2_64.to_signed(local_truncate(X, d).reveal())
    np.testing.assert_array_equal(Y.reveal(), F_table[(q % 32).astype(np.int64)])


@pytest.mark.parametrize("b", [1, 3, 8, 16])
def test_online_communication_is_2b_bits_per_activation(b):
    rng = np.random.default_rng(b)
    n = 37
    X = share_additive(Z2_64.from_signed(rng.integers(-1000, 1000, n)), Z2_64, rng)
    T = tb.dealer_tables(tb.function_table(tb.relu, b), n, rng)
    ledger = _ledger()
    tb.tabula_online(X, T, 0, ledger)
    assert ledger.total_bits("online") == 2 * b * n == tb.online_bits(n, b)
    assert ledger.total_bits("online") == costs.tabula_online_bits(n, b)
    assert ledger.rounds("online") == 1
    bpp = ledger.bytes_per_party("online")
    assert bpp.loc["client", "sent_bytes"] == bpp.loc["server", "sent_bytes"] == b * n / 8


def test_tables_are_single_use():
    rng = np.random.default_rng(0)
    X = share_additive(np.arange(4, dtype=np.uint64), Z2_64, rng)
    T = tb.dealer_tables(tb.function_table(tb.relu, 4), 4, rng)
    tb.tabula_online(X, T, 0, _ledger())
    with pytest.raises(tb.TableReuseError, match="already used"):
        tb.tabula_online(X, T, 0, _ledger())


@pytest.mark.parametrize("b", [0, 17, -1])
def test_table_bits_out_of_range(b):
    with pytest.raises(ValueError, match="1..16"):
        tb.function_table(tb.relu, b)


def test_bad_inputs_raise():
    rng = np.random.default_rng(0)
    X = share_additive(np.arange(6, dtype=np.uint64), Z2_64, rng)
    T = tb.dealer_tables(tb.function_table(tb.relu, 4), 5, rng)
    with pytest.raises(ValueError, match="one table per activation"):
        tb.tabula_online(X, T, 0, _ledger())
    T6 = tb.dealer_tables(tb.function_table(tb.relu, 4), 6, rng)
    with pytest.raises(ValueError, match="truncation shift d"):
        tb.tabula_online(X, T6, 64, _ledger())
    big = share_additive(Z2_64.from_signed(np.array([5, -(1 << 20), 0, 1, 2, 3])), Z2_64, rng)
    with pytest.raises(ValueError, match="outside the layer scale"):
        tb.tabula_online(big, T6, 0, _ledger(), input_bits=14)
    with pytest.raises(TypeError):
        tb.tabula_online(np.zeros(6), T6, 0, _ledger())
    with pytest.raises(ValueError, match="shape"):
        tb.TabulaTables(4, Z2_64, np.zeros((2, 16)), np.zeros((2, 8)), [0, 0], [0, 0])
    with pytest.raises(ValueError, match="2\\^b"):
        tb.preprocess(np.zeros(12, np.uint64), 2, rng, _ledger())
    with pytest.raises(ValueError, match="outer"):
        tb.preprocess(np.zeros(16, np.uint64), 2, rng, _ledger(), outer="magic")
    with pytest.raises(ValueError, match="positive"):
        tb.function_table(tb.relu, 4, in_step=0.0)
    with pytest.raises(ValueError, match="input_bits"):
        tb.scale_shift(0, 8)


@pytest.mark.parametrize("b", [2, 4, 6])
def test_preprocessing_variants_give_identical_tables(b):
    F_table = tb.function_table(tb.gelu, b, in_step=0.125, out=FixedPoint(Z2_64, 12))
    results = {}
    for name, kw in (("published", tb.PUBLISHED), ("ours", tb.OURS)):
        T = tb.preprocess(F_table, 9, np.random.default_rng(5), _ledger(), **kw)
        results[name] = T
        # [T]_client[y] + [T]_server[y] = F(y - s) for every y
        np.testing.assert_array_equal(T.unblinded(), np.broadcast_to(F_table, (9, 1 << b)))
    a, o = results["published"], results["ours"]
    np.testing.assert_array_equal(a.secret(), o.secret())  # same seed, same s_0, s_1
    np.testing.assert_array_equal(a.reconstruct(), o.reconstruct())


@pytest.mark.parametrize("b", [1, 3, 5])
@pytest.mark.parametrize("index_sign", [-1, 1])
def test_cubic_and_antidiagonal_sums_agree_share_by_share(b, index_sign):
    rng = np.random.default_rng(b)
    p = 1 << b
    Z = rng.integers(0, 2, size=(4, p, p), dtype=np.uint8)
    F_table = Z2_64.random(rng, (p,))
    for negate in (False, True):
        np.testing.assert_array_equal(
            pp.tables_cubic(Z, F_table, Z2_64, negate, index_sign),
            pp.tables_antidiagonal(Z, F_table, Z2_64, negate, index_sign))


@pytest.mark.parametrize("fn", [pp.outer_product_elementwise, pp.outer_product_matrix])
def test_outer_products_are_the_one_hot_matrix(fn):
    rng = np.random.default_rng(3)
    p, n = 16, 5
    s0, s1 = rng.integers(0, p, n), rng.integers(0, p, n)
    P_sh, Q_sh = pp.share_indicators(pp.indicator(s0, p), pp.indicator(s1, p), rng, _ledger())
    Z = fn(P_sh, Q_sh, rng, _ledger())
    want = np.zeros((n, p, p), np.uint8)
    want[np.arange(n), s0, s1] = 1
    np.testing.assert_array_equal(Z[0] ^ Z[1], want)
    sig = Z2_64.to_signed(pp.sign_shares(Z, Z2_64).sum(axis=0, dtype=np.uint64))
    assert set(np.unique(sig)) <= {-1, 1}


def test_literal_paper_indexing_returns_F_of_x_plus_2s():
    """Erratum: with F(m + n + x) the online lookup T[x + s] gives F(x + 2s), not F(x)."""
    rng = np.random.default_rng(7)
    b, n = 4, 64
    F_table = tb.function_table(lambda v: v, b)  # identity shows the shift
    T = tb.preprocess(F_table, n, rng, _ledger(), index_sign=+1)
    x = rng.integers(-8, 8, n)
    Y = tb.tabula_online(share_additive(Z2_64.from_signed(x), Z2_64, rng), T, 0, _ledger())
    s = T.secret().astype(np.int64)
    np.testing.assert_array_equal(Y.reveal(), F_table[(x + 2 * s) % 16])
    assert np.any(s != 0)


@pytest.mark.parametrize("b", [2, 5, 8])
@pytest.mark.parametrize("variant", ["published", "ours"])
def test_preprocessing_ledger_matches_closed_form(b, variant):
    n = 3 if b == 8 else 6
    ledger = _ledger()
    tb.preprocess(tb.function_table(tb.relu, b), n, np.random.default_rng(0), ledger,
                  **(tb.PUBLISHED if variant == "published" else tb.OURS))
    df = ledger.messages_frame()
    assert (df["phase"] == "offline").all()
    between = df.loc[df["sender"] != "dealer", "bits"].sum()
    dealer = df.loc[df["sender"] == "dealer", "bits"].sum()
    assert between == n * costs.preproc_bits(b, variant)
    assert dealer == n * costs.dealer_bits(b, variant)
    assert ledger.rounds("offline") - df.loc[df["sender"] == "dealer", "round"].nunique() == 3


def test_ours_preprocessing_is_linear_in_p_on_the_wire():
    # published grows ~4 p^2, ours ~ (4k + 6) p
    assert costs.preproc_bits(8, "published") > 4 * 256**2
    assert costs.preproc_bits(8, "ours") < 300 * 256
    assert costs.paper_preproc_bits(8) == 131072  # the paper's 16 KB


def test_truncation_error_rates_follow_the_formulas():
    ring = Ring(24)  # small ring so catastrophic failures (|x| / 2^k) are observable
    rng = np.random.default_rng(0)
    x = rng.integers(-(1 << 14), 1 << 14, size=2000)
    r = tb.truncation_error_rates(x, 6, ring, rng, trials=100)
    assert r["n"] == 200_000
    # binomial 5-sigma bands around the exact predictions
    for key in ("off_by_one", "catastrophic"):
        pred = r[f"predicted_{key}"]
        assert abs(r[f"{key}_rate"] - pred) < 5 * np.sqrt(pred * (1 - pred) / r["n"]) + 1e-12
    assert r["catastrophic_count"] > 0
    r64 = tb.truncation_error_rates(x, 6, Z2_64, rng, trials=10)
    assert r64["catastrophic_count"] == 0
    assert r64["predicted_catastrophic"] < costs.catastrophic_probability(14, 64)


def test_paper_appendix_success_probabilities():
    # "99.98% chance that all 1,000,000 calls to a network with 300,000 ReLUs succeeds"
    assert costs.all_calls_succeed(14, 64, 3e5, 1e6) == pytest.approx(0.99973, abs=5e-5)
    assert costs.all_calls_succeed(14, 80, 3e5, 1e9) == pytest.approx(0.9999959, abs=1e-7)


def test_blinded_value_is_uniform_whatever_x_is():
    """x + s mod 2^b has the same (uniform) distribution for x = 0 and x = 2^(b-1) - 1."""
    rng = np.random.default_rng(9)
    b, n = 4, 16000
    counts = []
    for xv in (0, 7):
        X = share_additive(np.full(n, xv, np.uint64), Z2_64, rng)
        T = tb.dealer_tables(tb.function_table(tb.relu, b), n, rng)
        ledger = _ledger()
        tb.tabula_online(X, T, 0, ledger)
        y = (X.shares[0] + T.s_client + X.shares[1] + T.s_server) & np.uint64(15)
        counts.append(np.bincount(y.astype(np.int64), minlength=16))
    for c in counts:  # chi-square against uniform, 15 dof: 99.9% quantile 37.7
        chi2 = ((c - n / 16) ** 2 / (n / 16)).sum()
        assert chi2 < 37.7


def test_lazy_tables_equal_materialised_tables():
    """Ideal on-demand tables return the same values as materialised ones with the same s."""
    rng = np.random.default_rng(4)
    b, n = 6, 300
    F_table = tb.function_table(tb.sigmoid, b, 0.1, FixedPoint(Z2_64, 16))
    x = rng.integers(-(1 << 10), 1 << 10, n)
    X = share_additive(Z2_64.from_signed(x), Z2_64, rng)
    lazy = tb.LazyTables(F_table, n, np.random.default_rng(1), ledger=(la := _ledger()))
    full = tb.dealer_tables(F_table, n, np.random.default_rng(1), ledger=(lf := _ledger()))
    np.testing.assert_array_equal(lazy.secret(), full.secret())
    Y1 = tb.tabula_online(X, lazy, 5, la)
    Y2 = tb.tabula_online(X, full, 5, lf)
    np.testing.assert_array_equal(Y1.reveal(), Y2.reveal())
    assert la.summary().equals(lf.summary())
    with pytest.raises(tb.TableReuseError):
        tb.tabula_online(X, lazy, 5, la)


def test_walkthrough_reconstructs_F_of_the_truncated_input():
    from ppnn.protocols.tabula import online

    steps = online.walkthrough([-300, -5, 0, 77, 1000], 8, 3, tb.function_table(tb.relu, 8),
                               np.random.default_rng(0))
    assert len(steps) == 5
    assert steps[-1][1]["equal"].all()
    assert (steps[2][1]["sum mod 2^b"] < 256).all()

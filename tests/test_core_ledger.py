import numpy as np
import pandas as pd
import pytest

from ppnn.core import (
    LAN,
    WAN,
    Dealer,
    Ledger,
    Network,
    Ring,
    beaver_mul,
    project,
    share_additive,
)


def test_beaver_multiplication_costs_match_hand_count():
    """Hand count for one Beaver product of n elements in Z_2^k between 2 parties:
    offline: the dealer sends (a, b, c) shares = 3 n k bits to each party, 1 round;
    online: each party sends (x-a, y-b) = 2 n k bits to the other, 1 round."""
    rng = np.random.default_rng(0)
    n, k = 37, 32
    ring = Ring(k)
    ledger = Ledger(["client", "server"])
    dealer = Dealer(rng, ledger, ["client", "server"])
    x = share_additive(ring.random(rng, n), ring, rng)
    with ledger.label("layer1"):
        beaver_mul(x, x, dealer)
    assert ledger.total_bits("online") == 2 * (2 * n * k)
    assert ledger.total_bits("offline") == 2 * (3 * n * k)
    assert ledger.rounds("online") == 1 and ledger.rounds("offline") == 1
    per = ledger.bytes_per_party("online")
    assert per.loc["client", "sent_bytes"] == 2 * n * k / 8
    assert per.loc["server", "received_bytes"] == 2 * n * k / 8
    bl = ledger.by_label()
    assert set(bl["label"]) == {"layer1"}
    assert ledger.total_bytes(label="layer1") == ledger.total_bytes()


def test_rounds_labels_and_ops():
    L = Ledger(["P0", "P1", "P2"])
    with L.label("net"):
        with L.label("conv1"):
            with L.round():
                L.send("P0", "P1", 10)
                L.send("P1", "P2", 20)
            L.send("P2", "P0", 5)  # its own round
            L.count("Perm", 3)
            L.depth("depth", 2)
        with L.label("relu1"), L.round(), L.round():  # nested rounds join
            L.send("P0", "P2", 8)
            L.send("P2", "P0", 8)
            L.count("Perm", 2, party="P0")
            L.depth("depth", 5)
    with L.offline():
        L.send("dealer", "P0", 100)
    assert L.rounds("online") == 3
    assert L.rounds("offline") == 1
    assert L.rounds(label="net/conv1") == 2
    assert L.total_bits("online") == 51
    assert L.total_bits(label="net/relu1") == 16
    assert L.op_count("Perm") == 5 and L.op_count("Perm", party="P0") == 2
    assert L.max_depth() == 5 and L.max_depth(label="net/conv1") == 2
    df = L.by_label(level=2)
    assert isinstance(df, pd.DataFrame)
    assert df.set_index(["label", "phase"]).loc[("net/conv1", "online"), "bytes"] == 35 / 8
    assert L.summary().loc["online", "Perm"] == 5


def test_ledger_bad_input():
    L = Ledger(["client", "server"])
    with pytest.raises(ValueError, match="unknown sender"):
        L.send("eve", "server", 8)
    with pytest.raises(ValueError, match="itself"):
        L.send("client", "client", 8)
    with pytest.raises(ValueError, match=">= 0 bits"):
        L.send("client", "server", -1)
    with pytest.raises(ValueError, match="offline"):
        L.send("dealer", "client", 8)
    with pytest.raises(ValueError, match="at least two"):
        Ledger(["solo"])
    with pytest.raises(ValueError, match="unique"):
        Ledger(["a", "a"])
    with pytest.raises(ValueError, match="label"):
        with L.label("a/b"):
            pass
    with pytest.raises(ValueError, match="phase"):
        L.total_bits("sometimes")


def test_network_projection_hand_computed():
    L = Ledger(["client", "server"])
    with L.round():
        L.send("client", "server", 8 * 1000)
        L.send("server", "client", 8 * 3000)
    L.send("client", "server", 8 * 500)
    net = Network("test", latency_s=0.01, bandwidth_Bps=1000.0)
    p = project(L, net, compute_s=0.5)
    # round 1: 10 ms + max(1000, 3000) B / 1000 B/s = 3.01 s; round 2: 10 ms + 0.5 s
    assert p.rounds == 2
    assert p.total_s == pytest.approx(0.01 + 3.0 + 0.01 + 0.5 + 0.5)
    assert p.kind == "projected"
    assert project(L, WAN).total_s > project(L, LAN).total_s
    with pytest.raises(ValueError, match="bandwidth"):
        Network("bad", 0.1, 0)


def test_exchange_is_one_round_all_to_all():
    L = Ledger(["P0", "P1", "P2"])
    L.exchange(["P0", "P1", "P2"], 64, "open")
    assert L.rounds() == 1 and L.n_messages() == 6 and L.total_bits() == 6 * 64


def test_plain_form_rebuilds_the_ledger_and_refuses_what_is_not_one():
    led = Ledger(["client", "server"])
    with led.label("conv1"), led.round():
        led.send("client", "server", 64, "x - r")
        led.count("Perm", 3, "server")
        led.depth("depth", 2)
    with led.offline():
        led.send(Ledger.DEALER, "client", 8, "triple")
    back = Ledger.from_plain(led.to_plain())
    assert back.messages == led.messages and back.ops == led.ops
    assert (back.op_at, back.depths, back.summary().equals(led.summary())) == (
        led.op_at, led.depths, True)
    with pytest.raises(ValueError, match="records values"):
        Ledger(["a", "b"], record_values=True).to_plain()
    with led.round(), pytest.raises(ValueError, match="inside a label"):
        led.to_plain()
    plain = led.to_plain()
    for key, bad, pattern in [("messages", [["mallory", "client", 8, 1, "online", "", ""]],
                               "not a message of"),
                              ("messages", [["client", "server", "8", 1, "online", "", ""]],
                               "list of \\[str, str, int"),
                              ("op_at", [5], "each operation's position"),
                              ("parties", ["a", 1], "strings")]:
        with pytest.raises(ValueError, match=pattern):
            Ledger.from_plain({**plain, key: bad})

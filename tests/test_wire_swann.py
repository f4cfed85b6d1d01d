"""Wire mode for SwaNN (issue 29): the client, the server(s) and the dealer as processes over
loopback TCP, on the Paillier simulator. Every booked message crosses as its booked bits plus
the stated header, the client's logits and the ledger equal the in-process run with the same
seed (the garbage test: each party's process holds garbage for everything it does not hold),
the rounds measured on the wire are the ledger's causal depth, and a 2PC input that reads
the owner's mask instead of the message fails the garbage test."""

from __future__ import annotations

import numpy as np
import pytest

import ppnn
from ppnn.core import Ledger
from ppnn.nn import Conv2d, Dense, Flatten, MaxPool, Network, ReLU, Square, init_params
from ppnn.wire import HEADER_BYTES
from ppnn.wire.swann import ROLE_OF, reading_owner_mask, run_plan

SEED = 4


def causal_depth(ledger: Ledger) -> int:
    """The longest chain of online messages as the wire measures it (a message's depth is
    one more than its sender's depth when the message's round began)."""
    depth = dict.fromkeys(ledger.parties, 0)
    on = [m for m in ledger.messages if m.phase == "online"]
    for r in sorted({m.round for m in on}):
        base = dict(depth)
        for m in on:
            if m.round == r:
                depth[m.receiver] = max(depth[m.receiver], base[m.sender] + 1)
    return max(depth.values())


def _plan(family, act=ReLU, pool=True):
    layers = [Conv2d(2, 3, 1, 0), act()] + ([MaxPool(2)] if pool else []) + [Flatten(),
                                                                              Dense(3)]
    net = Network(f"tiny_swann_{act.__name__}", (1, 6, 6), layers)
    g = np.random.default_rng(1)
    params = init_params(net, np.random.default_rng(0))
    # 512-bit keys for speed (the simulator uses only the modulus): below the family's claim
    plan = ppnn.compile(family, net, params, calib=g.uniform(0, 1, (16, 1, 6, 6)), key_bits=512,
                        insecure=True)
    return plan, g.uniform(0, 1, (2, 1, 6, 6))


@pytest.fixture(scope="module", params=["swann_cs", "swann_2s"])
def runs(request):
    plan, x = _plan(request.param)
    return plan, x, ppnn.run(plan, x, SEED), ppnn.run(plan, x, SEED, transport="tcp")


def test_garbage_test_the_client_gets_the_in_process_logits(runs):
    _, _, ref, res = runs
    assert np.array_equal(res.logits, ref.logits)
    assert np.array_equal(res.predictions, ref.predictions)
    assert res.extra["transport"] == "tcp"


def test_wire_ledger_equals_in_process_ledger(runs):
    _, _, ref, res = runs
    assert res.ledger.messages == ref.ledger.messages


def test_every_message_is_its_booked_bits_plus_the_header(runs):
    plan, x, ref, res = runs
    w = res.extra["wire"]["classes"]
    msgs = ref.ledger.messages
    online = [m for m in msgs if m.phase == "online"]
    ot = [m for m in msgs if m.phase == "offline"]
    assert online and ot and not [m for m in msgs if m.sender == Ledger.DEALER]
    for name, ms in (("online", online), ("offline setup", ot)):
        assert w[name]["frames"] == len(ms), name
        assert w[name]["bits"] == sum(m.bits for m in ms), name
        assert w[name]["wire bytes"] == sum(-(-m.bits // 8) + HEADER_BYTES for m in ms), name
        assert w[name]["wire bytes"] == w[name]["expected wire bytes"]
    # ciphertexts at 2 log2 N bits each (512-bit keys: 128 bytes)
    n_bits = int(plan.impl["keys"].public_key.n).bit_length()
    image = [m for m in online if m.what == "[image]"]
    assert len(image) == len(x) and all(m.bits == 36 * 2 * n_bits for m in image)
    # the dealer's triples (not booked: OT extension's result), one frame per AND round and
    # 2PC party; 3 bits per gate
    ands = [m for m in online if m.what == "beaver AND: x^a, y^b"]
    assert w["offline ideal"]["frames"] == len(ands)
    assert w["offline ideal"]["bits"] == 3 * sum(m.bits // 2 for m in ands)
    assert w["inputs"]["frames"] == 0  # each party's input is its own


def test_measured_rounds_are_the_ledgers_causal_depth(runs):
    _, _, ref, res = runs
    measured = res.extra["wire"]["measured rounds"]
    # the server's first AND of Protocol 3's adder does not wait for its own <r'>_c: the
    # measured chain can be shorter than the ledger's count of rounds, never longer
    assert measured == causal_depth(ref.ledger) <= ref.ledger.rounds("online")


def test_no_party_waits_twice_in_a_round(runs):
    """The OT extension's filler of an AND layer (booked offline, read by no one) is
    received without waiting for it, and no other party's process (the dealer's frames are
    sent ahead) is waited for twice in one ledger round: a round costs one latency on a
    shaped link (it cost two while the filler was waited for before the Beaver openings)."""
    _, _, ref, res = runs
    w = res.extra["wire"]
    assert set(w["extra waits"].values()) == {0}, w["extra wait steps"]
    assert 0 < max(w["waits"].values()) <= ref.ledger.rounds(None)

def test_only_the_familys_processes_run(runs):
    plan, _, _, res = runs
    scenario = "client-server" if plan.family == "swann_cs" else "two-server"
    assert set(res.extra["wire"]["party seconds"]) == set(ROLE_OF[scenario].values())


def test_a_step_reading_the_owners_mask_fails_the_garbage_test():
    plan, x = _plan("swann_cs")
    ref = ppnn.run(plan, x[:1], SEED)
    # the simulation cannot tell the broken 2PC input from the real one ...
    with reading_owner_mask():
        assert np.array_equal(ppnn.run(plan, x[:1], SEED).logits, ref.logits)
    # ... the garbage test can
    broken = run_plan(plan, x[:1], SEED, broken=True, timeout=20)
    assert not np.array_equal(broken.logits, ref.logits)


def test_square_activations_run_beaver_products_on_the_wire():
    plan, x = _plan("swann_cs", act=Square, pool=False)
    ref, res = ppnn.run(plan, x[:1], SEED), run_plan(plan, x[:1], SEED, timeout=20)
    assert np.array_equal(res.logits, ref.logits)
    assert res.ledger.messages == ref.ledger.messages
    assert any(m.what == "beaver: x-a, y-b" for m in ref.ledger.messages)


def test_cli_runs_swann_two_server_on_the_wire(capsys):
    from ppnn.__main__ import main

    assert main(["wire", "swann_2s", "minionn_mnist", "--timeout", "20"]) == 0
    out = capsys.readouterr().out
    assert "running 2" in out and "client, server1, server2 and the dealer" in out
    assert "logits and ledger equal the in-process run: yes" in out

"""Views of SwaNN (client-server, two-server) and SHE: a MiniONN run recorded with every value
gives each party a complete view; the run's outputs are rebuilt from the recorded values alone
(SwaNN: what the switching protocols' parties held and received combines to the values that
were switched; SHE: the client's decrypted logits); recording changes nothing else. And
03_swann's lesson: Protocols 1-3 played in both settings, and the key holder's view of
Protocol 2 as a KS experiment (honest masks pass, a too-small mask range fails)."""

from __future__ import annotations

import numpy as np
import pytest

import ppnn
from ppnn import nn
from ppnn.core.transcript import SIZE_ONLY
from ppnn.experiments.swann import lesson
from ppnn.protocols.swann.inference import SwannKeys
from ppnn.protocols.swann.twopc import bits_to_ints
from viewcheck import (
    FULL,
    check_recording_changes_nothing,
    check_views_complete,
    held,
    received,
    recorded_run,
)

FAMILIES = ("swann_cs", "swann_2s", "she")
# SwaNN's pipes: image i is evaluated by one party and decrypted (helped) by the other
PIPES = {"swann_cs": [("server", "client")], "swann_2s": [("server1", "server2"),
                                                           ("server2", "server1")]}


@pytest.fixture(scope="module")
def runs():
    return recorded_run


@pytest.mark.parametrize("key", FAMILIES)
def test_every_message_recorded_and_each_view_complete(key, runs):
    _, _, res, _ = runs(key)
    check_views_complete(res.ledger)
    kinds = {res.ledger.messages[j].what: v.kind for j, v in res.ledger.values.items()}
    # the simulators never build ciphertexts: their messages say so, and show no plaintext
    for what in ("[image]", "[logits]", "Protocol 2: [x + r]", "Protocol 3: [x + r']",
                 "OT extension: AND triples", "partial decryption c^{d_i}",
                 "encrypted image bits", "encrypted logits"):
        assert kinds.get(what, "size only") == "size only", what
    for what in ("Protocol 2: <r>_c", "Protocol 2: <x + r>_s", "Protocol 3: <r'>_c",
                 "Protocol 3: <x + r'>_s", "secret-key share"):
        assert kinds.get(what, "array") == "array", what


def _signed_bits(bits: np.ndarray) -> np.ndarray:
    """``(m, n)`` 0/1 bits of m-bit two's-complement values -> Python ints."""
    m = bits.shape[0]
    u = bits_to_ints(bits)
    return np.array([int(v) - (1 << m) if int(v) >> (m - 1) else int(v) for v in u], dtype=object)


@pytest.mark.parametrize("key", ["swann_cs", "swann_2s"])
def test_swann_switching_values_rebuild_every_activation_and_the_output(key, runs):
    plan, xs, res, _ = runs(key)
    led, model = res.ledger, plan.impl["model"]
    oracle = plan.oracle(xs)
    mod32 = 1 << 32
    if key == "swann_2s":  # the two key shares the client handed out sum to d = 1 mod N
        d = sum(int(received(led, s, "secret-key share")[0][0]) for s in ("server1", "server2"))
        assert d % int(plan.impl["keys"].public_key.n) == 1
    for i, (ev, hp) in enumerate(PIPES[key]):
        x_int = model.encode(xs[i])
        assert np.array_equal(held(led, "client", "image (encoded")[i], x_int)
        outs = model.forward_int(x_int, return_steps=True)
        acts = [j for j, s in enumerate(model.steps) if s.interactive]
        assert len(acts) == 3
        P2 = lambda p, n: held(led, p, "Protocol 2: " + n)  # noqa: E731
        P3 = lambda p, n: held(led, p, "Protocol 3: " + n)  # noqa: E731
        for k, j in enumerate(acts):
            x_in = np.asarray(outs[j - 1], dtype=object).ravel()   # the value switched to 2PC
            x_out = np.asarray(outs[j], dtype=object).ravel()      # the value switched back
            # Protocol 2: the helper decrypts x + 2^(l-1) + r, the evaluator knows r + 2^(l-1)
            z, r_off = P2(hp, "x + 2^(ℓ-1) + r (decrypted)")[k], P2(ev, "r + 2^(ℓ-1)")[k]
            assert np.array_equal(z - r_off, x_in)
            # ... the shares of r and of x + r that crossed combine to them, and the output
            # shares to x
            r_c = received(led, hp, "Protocol 2: <r>_c")[k]
            zr_s = received(led, ev, "Protocol 2: <x + r>_s")[k]
            rc = [(int(a) + int(b)) % mod32 for a, b in zip(r_c, P2(ev, "<r>_s")[k])]
            zc = [(int(a) + int(b)) % mod32 for a, b in zip(zr_s, P2(hp, "<x + r>_c")[k])]
            xc = [(int(a) + int(b)) % mod32 for a, b in zip(P2(hp, "<x>_c")[k], P2(ev, "<x>_s")[k])]
            assert rc == [int(v) % mod32 for v in r_off]
            assert zc == [int(v) % mod32 for v in z]
            assert xc == [int(v) % mod32 for v in x_in]
            # Protocol 3: the Boolean shares of ReLU / max-pool / truncation are x_out; the
            # helper opens x + 2^(m-1) + r' from its share and the evaluator's, and the
            # evaluator's mask r' removes everything but x_out
            xc_b, xs_b = P3(hp, "<x>_c (Boolean")[k], P3(ev, "<x>_s (Boolean")[k]
            m = xc_b.shape[0]
            xc_b, xs_b = xc_b.reshape(m, -1), xs_b.reshape(m, -1)
            assert np.array_equal(_signed_bits(xc_b ^ xs_b), x_out)
            opened = P3(hp, "x + 2^(m-1) + r' (opened)")[k]
            zb = received(led, hp, "Protocol 3: <x + r'>_s")[k] ^ P3(hp, "<x + r'>_c")[k]
            assert np.array_equal(bits_to_ints(zb), opened)
            assert np.array_equal(opened - P3(ev, "r' (its mask)")[k] - (1 << (m - 1)), x_out)
        # the output: what the client decrypted is the run's logits and the integer model's
        logits = held(led, "client", "logits (decrypted")[i]
        assert np.array_equal(logits, res.logits[i]) and np.array_equal(logits, oracle[i])
        assert np.array_equal(logits, outs[-1])


def test_she_client_holds_its_input_and_the_decrypted_logits(runs):
    plan, xs, res, _ = runs("she")
    led = res.ledger
    assert np.array_equal(held(led, "client", "image (encoded")[0],
                          plan.impl.encode_input(xs))
    logits = held(led, "client", "logits (decrypted, its output)")[0]
    assert np.array_equal(logits, res.logits) and np.array_equal(logits, plan.oracle(xs))
    # the server's view: two ciphertext messages, nothing held
    v = ppnn.views(led, "server")
    assert v["kind"].tolist() == ["received"] and v["what"].tolist() == ["encrypted image bits"]
    # gates are booked level by level, between the input and the output message
    assert len(led.ops) > 100 and set(led.op_at) == {1}


@pytest.mark.parametrize("key", FAMILIES)
def test_recording_changes_no_message_operation_or_logit(key, runs):
    plan, xs, on, off = runs(key)
    check_recording_changes_nothing(on, off)
    counted = ppnn.count(plan, batch=len(xs))
    assert sorted(counted.messages, key=repr) == sorted(on.ledger.messages, key=repr)
    assert counted.op_counts() == on.ledger.op_counts()


def test_ciphertext_wire_forms():
    keys = SwannKeys.generate(512, two_server=False)
    from ppnn.he.paillier import Paillier, SimulatedPaillier

    real = Paillier(keys.public_key).encrypt(np.array([1, -2, 3]), "client")
    raw = real.serialize()
    assert real.wire() is real and len(raw) == real.bits() // 8
    sim = SimulatedPaillier(keys.public_key).encrypt(np.array([1, -2, 3]), "client")
    assert sim.wire() is SIZE_ONLY
    with pytest.raises(ValueError, match="plaintexts"):
        sim.serialize()


def test_tfhe_wire_is_the_serialized_ciphertexts():
    tfhe = pytest.importorskip("ppnn_tfhe")
    from ppnn.he.bitsim import BitSimulator
    from ppnn.he.tfhe import TfheBackend

    be = TfheBackend(tfhe.BooleanKey.generate(), public_constants=True)
    enc = be.encrypt(np.array([1, 0, 1], np.uint8))
    mixed = be.concat([enc, be.trivial(np.array([1], np.uint8))])
    wire = be.wire([enc, mixed])
    assert [type(b) for b in wire] == [bytes, bytes]
    assert wire[0] == enc.data.to_bytes() and len(wire[1]) == len(wire[0])  # trivial bit left out
    sim = BitSimulator()
    assert sim.wire([sim.encrypt(np.array([1], np.uint8))]) is SIZE_ONLY


def test_she_on_tfhe_rs_records_the_real_ciphertexts():
    pytest.importorskip("ppnn_tfhe")
    from ppnn.core import Ledger
    from ppnn.he.tfhe import TfheBackend
    from ppnn.protocols.she import network
    from ppnn.protocols.she import quant as Q

    net = nn.Network("micro", (1, 2, 2), (nn.Flatten(), nn.Dense(2)), "one dense layer")
    rng = np.random.default_rng(0)
    x = rng.random((20, 1, 2, 2)).astype(np.float32)
    qn = Q.compile_network(net, nn.init_params(net, rng), x, scheme="she")
    led = Ledger(("client", "server"), record_values=FULL)
    res = network.encrypted_inference(qn, TfheBackend(public_constants=False),
                                      qn.encode_input(x[:1]), ledger=led)
    check_views_complete(led)
    for j, m in enumerate(led.messages):  # bincode adds a few header bytes per array
        v = led.values[j]
        assert v.kind == "ciphertext" and v.digest and 0 <= v.size - m.bits // 8 < 1024
    assert np.array_equal(held(led, "client", "logits (decrypted")[0], res.logits)
    assert np.array_equal(res.logits, qn.forward_int(qn.encode_input(x[:1])))


# -- 03_swann's lesson -------------------------------------------------------------------
@pytest.fixture(scope="module")
def keys():
    return SwannKeys.generate(1024)


@pytest.mark.parametrize("setting", ["client-server", "two-server"])
def test_switch_demo_views_complete_and_outputs_right(setting, keys):
    led = lesson.switch_demo(setting, n=4, seed=1, keys=keys)
    check_views_complete(led)
    x = held(led, "client", "x (its input)")[0]
    assert np.array_equal(held(led, "client", "x^2 (decrypted)")[0], x * x)
    assert np.array_equal(held(led, "client", "ReLU(x) (decrypted)")[0], np.maximum(x, 0))
    # real Paillier: every ciphertext message shows a digest, none a plaintext
    cts = [led.values[j] for j, m in enumerate(led.messages) if m.what.startswith("[")
           or "[x" in m.what or "partial" in m.what]
    assert cts and all(v.kind == "ciphertext" and v.digest for v in cts)
    steps = lesson.switching_steps(led)
    assert len(steps.messages) < 20 < len(led.messages)
    assert not any(m.what.startswith(lesson.GATE_TRAFFIC) for m in steps.messages)
    assert len(steps.holds) == len(led.holds) and steps.op_counts() == led.op_counts()


def test_switch_view_experiment_honest_passes_broken_fails(keys):
    a, b, honest = lesson.switch_view_experiment(False, runs=50, n=20, seed=0, keys=keys)
    assert a.size == b.size == 1000 and not honest.distinguishes
    _, _, broken = lesson.switch_view_experiment(True, runs=50, n=20, seed=0, keys=keys)
    assert broken.distinguishes and broken.statistic > 2 * broken.threshold

"""Views of the four HE + GC families (Delphi + GC, Delphi + Tabula, GAZELLE + GC, GALA + GC):
a run recorded with every value gives each party exactly its messages, every message carries
a value (an array, the garbler's real bytes, or ``SIZE_ONLY`` for the counted HE, the
simulated ciphertexts and the OT columns), and the logits are rebuilt from the recorded
values alone. Recording changes nothing else: the ledger and the logits of a run without it
are the same."""

from __future__ import annotations

import numpy as np
import pytest

import ppnn
from ppnn.core import Ledger
from ppnn.core.transcript import ValueBudget
from ppnn.he import gc as gcmod
from ppnn.protocols import gc_act
from ppnn.protocols.gala import centered
from viewcheck import (
    check_recording_changes_nothing,
    check_views_complete,
    held,
    received,
    recorded_run,
)

KEYS = ["delphi_gc", "delphi_tabula", "gazelle_gc", "gala_gc"]


@pytest.fixture(scope="module")
def runs():
    return recorded_run


def _logits_from_views(key, plan, led) -> np.ndarray:
    """The integer logits from what the client held and received, and nothing else."""
    (theirs,) = received(led, "client", "server's share of the logits")
    if key == "delphi_gc":  # Z_2^k: to_signed(client's share + server's share)
        (mine,) = held(led, "client", "client's share of the logits")
        k = plan.impl.cfg.k
        s = (mine.astype(object) + theirs.astype(object)) % (1 << k)
        return np.where(s >= 1 << (k - 1), s - (1 << k), s).astype(np.int64)
    if key == "delphi_tabula":  # Z_2^64: the last linear layer's client share [Wx]_c
        mine = held(led, "client", "[Wx]_c")[-1]
        ring = plan.impl.cfg.ring
        return ring.to_signed(ring.add(mine, theirs))
    # gazelle_gc / gala_gc: mod p, centred; one image, so a batch of one
    (mine,) = held(led, "client", "client's share of the logits")
    return centered(mine.astype(np.int64) + theirs.astype(np.int64), plan.impl["plan"].p)[None]


@pytest.mark.parametrize("key", KEYS)
def test_recorded_run_gives_complete_views_that_rebuild_the_logits(key, runs):
    plan, xs, res, _ = runs(key)
    led = res.ledger
    check_views_complete(led)
    z = _logits_from_views(key, plan, led)
    if key == "delphi_tabula":  # fixed point at the last layer's output step
        assert np.array_equal(z, ppnn.core.Ring(64).to_signed(
            held(led, "client", "logits (fixed point)")[0]))
        assert np.array_equal(z.astype(np.float64) * plan.impl.steps[-1].step_out, res.logits)
    else:  # exact families: the run's logits, which are the integer oracle's
        assert np.array_equal(z, res.logits)
        assert np.array_equal(z, plan.oracle(xs))
    # what cannot be read is not shown: the counted / simulated HE is listed by size only
    kinds = {m.what: led.values[j].kind for j, m in enumerate(led.messages)}
    he = [w for w in kinds if "counted HE" in w or w.startswith(("[x]_C", "[x_C]_C",
                                                                  "[y - r]_C", "Galois"))]
    assert he and all(kinds[w] == "size only" for w in he)
    assert all(kinds[w] == "size only" for w in kinds if w.startswith("IKNP OT"))


@pytest.mark.parametrize("key", KEYS)
def test_recording_changes_neither_the_ledger_nor_the_logits(key, runs):
    _, _, rec, off = runs(key)
    check_recording_changes_nothing(rec, off)


@pytest.mark.parametrize("key", ["delphi_gc", "gazelle_gc"])
def test_garbled_activation_messages_carry_the_garblers_real_bytes(key, runs):
    plan, xs, res, _ = runs(key)
    led = res.ledger
    specs = {st.name: st.spec for st in (plan.impl.steps if key == "delphi_gc"
                                         else plan.impl["plan"].steps) if st.kind == "act"}
    seen = 0
    for j, m in enumerate(led.messages):
        if m.what not in ("garbled tables (2 per AND)", "labels of r", "output decoding bits",
                          "labels of x_s", "OT answers, tables, labels"):
            continue
        v = led.values[j]
        assert v.kind == "ciphertext" and len(v.digest) == 12, m.what
        c = gc_act.act_circuit(specs[m.label])
        cost = gcmod.gc_cost(c)
        n = led.op_count("garble", label=m.label) // c.n_and
        # the OT answers are not built (the simulator hands over the chosen labels): the bytes
        # are the garbled tables, the garbler's labels and the decoding bits (packed per chunk)
        built = m.bits - (n * cost.ot_sender if m.what.startswith("OT answers") else 0)
        pad = 8 * -(-n // 1024) if "decoding" in m.what or "tables, labels" in m.what else 0
        assert 0 <= 8 * v.size - built < max(pad, 1), (m.what, v.size, built)
        seen += 1
    assert seen == (12 if key == "delphi_gc" else 3)  # Delphi's split: 4 messages a layer


@pytest.mark.parametrize("real", [False, True])
def test_linear_layer_records_ciphertexts_by_digest_on_seal_and_by_size_on_the_simulator(real):
    from ppnn.he.bfv.base import NoiseModel
    from ppnn.he.bfv.sim import BFVSim
    from ppnn.protocols.gala import run_linear
    from ppnn.protocols.gazelle import GazelleMatVec

    if real:
        pytest.importorskip("tenseal")
        from ppnn.he.bfv.seal import SealBFV

        he = SealBFV(n=16, noise_model=NoiseModel(1.0, 0.0), seed=1)
    else:
        he = BFVSim(n=16)
    rng = np.random.default_rng(0)
    W, x = rng.integers(-3, 4, (4, 8)), rng.integers(-3, 4, 8)
    led = Ledger([he.client, he.server], record_values=ValueBudget(max_elements=None))
    res = run_linear(GazelleMatVec(4, 8, he.n), he, W, x, rng, led)
    assert np.array_equal(res.reveal(), W @ x)
    kinds = {m.what.split(" for")[0]: led.values[j] for j, m in enumerate(led.messages)}
    assert set(kinds) == {"Galois keys", "[x]_C", "[y - r]_C"}
    for what, v in kinds.items():
        assert v.kind == ("ciphertext" if real else "size only"), what
        if real:
            assert v.size > 0 and len(v.digest) == 12, what
    (r,) = held(led, he.server, "r (its mask")
    assert r.shape == (1, he.n)

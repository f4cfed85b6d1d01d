"""Views of Falcon (semi-honest and malicious): a run recorded with every value gives each
party exactly its messages, every message carries a value (online shares, the PRF keys' bytes,
the dealer's components), and the logits are rebuilt from the replicated shares the parties
held. Recording changes nothing else. Plus notebook 05's lessons: a tampered message caught
(malicious) or carried to the output (semi-honest), and P2's view of private compare under a
KS test, honest and with a broken dealer."""

from __future__ import annotations

import numpy as np
import pytest

from ppnn.core import FixedPoint, Ring
from ppnn.experiments.falcon import lesson as L
from ppnn.protocols.falcon import PARTIES
from viewcheck import (
    check_recording_changes_nothing,
    check_views_complete,
    held,
    received,
    recorded_run,
)

KEYS = ["falcon_sh", "falcon_mal"]


@pytest.fixture(scope="module")
def runs():
    return recorded_run


def _from_replicated(led, name: str) -> np.ndarray:
    """``x_0 + x_1 + x_2 mod 2^32`` from the parties' holdings ``(x_i, x_{i+1})``, after
    checking that every component is held identically by its two holders."""
    (s0,), (s1,), (s2,) = (held(led, p, name) for p in PARTIES)
    for a, b in ((s0, s1), (s1, s2), (s2, s0)):  # P_i's x_{i+1} is P_{i+1}'s first component
        assert np.array_equal(a[1], b[0])
    return Ring(32).add(Ring(32).add(s0[0], s0[1]), s1[1])


@pytest.mark.parametrize("key", KEYS)
def test_recorded_run_gives_complete_views_that_rebuild_the_logits(key, runs):
    plan, xs, res, _ = runs(key)
    led = res.ledger
    check_views_complete(led)
    fxp = FixedPoint(Ring(32), plan.impl["frac_bits"])
    logits = fxp.decode(_from_replicated(led, "share of the logits")) * plan.impl["scale"]
    assert np.array_equal(logits, res.logits)
    image = _from_replicated(led, "share of the image")
    assert np.array_equal(image, fxp.encode(np.asarray(xs, np.float64)))


@pytest.mark.parametrize("key", KEYS)
def test_keys_and_dealer_material_are_what_the_receiver_gets(key, runs):
    _, _, res, _ = runs(key)
    led = res.ledger
    for i in range(3):  # k_i goes from Pi to P_{i-1}: 16 opaque key bytes, the 128 booked
        (k,) = received(led, PARTIES[(i - 1) % 3], f"PRF key k_{i}")
        assert k.dtype == np.uint8 and k.shape == (16,)
    ring = Ring(32)
    # every dealer message: the receiver's two components of each sharing; the material in
    # Z_2^32 is booked at 32 bits an element
    for j, m in enumerate(led.messages):
        if m.sender == "dealer" and m.what.startswith(("matrix triple", "truncation")):
            assert m.bits == 32 * led.values[j].size, m.what
    # the first truncation pair (r, msb(r), (r mod 2^31) >> d), rebuilt from P0's and P1's
    # messages of one round: r's top bit is msb(r), (r mod 2^31) >> d is below 2^31
    first = {m.receiver: led.values[j].array() for j, m in enumerate(led.messages)
             if m.what.startswith("truncation pair") and m.round == next(
                 mm.round for mm in led.messages if mm.what.startswith("truncation pair"))}
    n = first["P0"].size // 6
    p0, p1 = first["P0"].reshape(3, 2, n), first["P1"].reshape(3, 2, n)
    assert np.array_equal(p0[:, 1], p1[:, 0])  # the component both hold
    r, msb, low = (ring.add(ring.add(p0[t, 0], p0[t, 1]), p1[t, 1]) for t in range(3))
    assert np.array_equal(msb, r >> np.uint64(31))
    assert (low < (1 << 31)).all()
    if key == "falcon_mal":  # the triple of the last ReLU's product, from P0 and P1: c = ab
        j, m = next((j, m) for j, m in enumerate(led.messages) if m.label == "relu3/relu"
                    and m.what == "multiplication triple" and m.receiver == "P0")
        q0 = led.values[j].array()
        q1 = next(led.values[i].array() for i, mm in enumerate(led.messages)
                  if mm.what == m.what and mm.round == m.round and mm.receiver == "P1")
        k = q0.size // 6
        a, b, c = (ring.add(ring.add(q0[2 * t * k:(2 * t + 1) * k],
                                     q0[(2 * t + 1) * k:(2 * t + 2) * k]),
                            q1[(2 * t + 1) * k:(2 * t + 2) * k]) for t in range(3))
        assert np.array_equal(ring.mul(a, b), c)


@pytest.mark.parametrize("key", KEYS)
def test_recording_changes_neither_the_ledger_nor_the_logits(key, runs):
    _, _, rec, off = runs(key)
    check_recording_changes_nothing(rec, off)


# -- notebook 05's lessons -------------------------------------------------------------------
def test_tampered_opening_aborts_maliciously_and_the_honest_party_holds_both_copies():
    d = L.tamper_demo(L.DEFAULT_TARGET, malicious=True, seed=0)
    assert d.abort is not None and d.fired == "P0 aborts: open consistency check"
    assert d.output is None
    led = d.ledger
    m = led.messages[d.tampered_index]
    assert (m.sender, m.receiver, m.what) == ("P2", "P0", "pc step 9: open d")
    (a,), (b,) = held(led, "P0", "copy of x_2 from P2"), held(led, "P0", "copy of x_2 from P1")
    assert np.array_equal(a, led.values[d.tampered_index].array())
    assert not np.array_equal(a, b)
    (check,) = held(led, "P0", "check: copies differ -> abort")
    assert np.array_equal(check, (a != b).astype(np.uint8))
    # the player plays the tampered step and the check, the tampered message alerted in red
    sub, alert = d.focus()
    assert list(alert.values()) == ["tampered by P2"]
    (i,) = alert
    assert sub.messages[i] == m
    html = d.player().static_html()
    assert "tampered by P2" in html and "background:#fbe3e0" in html
    assert "aborts" in d.summary()


def test_the_semi_honest_twin_completes_with_a_wrong_output():
    d = L.tamper_demo(L.DEFAULT_TARGET, malicious=False, seed=0)
    assert d.abort is None and d.fired is None and d.tampered_index is not None
    assert np.array_equal(d.expected, [1, 0, 0])
    assert set(d.output) == {"P0", "P1"} and d.wrong == ["P0", "P1"]
    # P0 reconstructed d from the tampered copy; P1 and P2 did not
    d0, d1 = held(d.ledger, "P0", "d = m * prod c")[0], held(d.ledger, "P1", "d = m * prod c")[0]
    assert not np.array_equal(d0, d1)
    assert "WRONG" in d.summary()


def test_a_tampered_product_is_caught_by_its_check_and_may_leave_the_output_unchanged():
    step = "private_compare::pc step 5: u = (-1)^beta (S - T)"
    mal = L.tamper_demo(step, malicious=True, seed=0)
    assert mal.fired == "P0 aborts: multiplication check"
    (v,) = held(mal.ledger, "P0", "mult-check v: pc step 5")
    assert np.any(v != 0)
    sh = L.tamper_demo(step, malicious=False, seed=0)
    assert sh.tampered_index is not None and sh.wrong == []
    assert "unchanged" in sh.summary()


def test_a_malicious_only_step_changes_nothing_semi_honestly():
    targets = dict((s, w) for w, s in L.tamper_targets(0))
    assert L.DEFAULT_TARGET in targets and L.OUTPUT_STEP in targets
    check = next(s for s in targets if "mult-check v" in s)
    d = L.tamper_demo(check, malicious=False, seed=0)
    assert d.tampered_index is None and d.wrong == []
    assert "nothing to change" in d.summary()
    sub, alert = d.focus()
    assert alert == {} and len(sub.messages) == 3  # the output opening


def test_p2_view_of_private_compare_passes_ks_and_a_fixed_blinding_fails_it():
    ok = L.pc_view_experiment(n=2000, seed=0)
    assert ok.samples[0].size == ok.samples[1].size == 2000
    assert not ok.test.distinguishes, str(ok.test)
    # d is 0 about half of the time, whatever r is
    for s in ok.samples:
        assert abs(np.mean(s == 0) - 0.5) < 0.05
    bad = L.pc_view_experiment(n=2000, seed=0, broken=True)
    assert bad.test.distinguishes and bad.test.statistic == 1.0, str(bad.test)


@pytest.mark.parametrize("key", KEYS)
def test_the_output_is_opened_on_the_ledger_and_each_party_holds_it(key, runs):
    """Issue 28: the logits were revealed by an unbooked oracle. They are opened through the
    booked (malicious: two-copy) opening: one element per logit from each party to the next,
    and in the malicious run a second copy the other way, in one round labelled "output";
    every party holds the logits it reconstructed, and they are the run's."""
    plan, xs, res, _ = runs(key)
    led = res.ledger
    msgs = led.messages_frame()
    out = msgs[msgs["label"].astype(str).str.startswith("output")]
    n = res.logits.size
    copies = 2 if key == "falcon_mal" else 1
    assert len(out) == 3 * copies and out["round"].nunique() == 1
    assert (out["bits"] == n * 32).all()
    assert sorted(zip(out["sender"], out["receiver"])) == sorted(
        [(PARTIES[i], PARTIES[(i + 1) % 3]) for i in range(3)]
        + ([(PARTIES[(i + 1) % 3], PARTIES[i]) for i in range(3)] if copies == 2 else []))
    fxp = FixedPoint(Ring(32), plan.impl["frac_bits"])
    for p in PARTIES:
        (mine,) = held(led, p, "logits (opened)")
        assert np.array_equal(fxp.decode(mine).reshape(res.logits.shape) * plan.impl["scale"],
                              res.logits)


def test_the_tamper_dropdown_offers_only_changes_that_do_something_in_its_protocol():
    semi, mal = L.tamper_targets(0, malicious=False), L.tamper_targets(0)
    assert len(semi) == 9 and len(mal) == 30
    assert mal[:len(semi)] == semi  # the protocol's own messages first, then the checks
    assert all(label.startswith(L.CHECK_LABEL) for label, _ in mal[len(semi):])
    checks = [label.removeprefix(L.CHECK_LABEL).split(":")[0] for label, _ in mal[len(semi):]]
    assert checks == sorted(checks, key=["mult-check rho", "mult-check sigma",
                                         "mult-check v"].index)  # grouped by check
    for _, step in semi:  # every semi-honest choice changes a message the run sends
        assert L.tamper_demo(step, malicious=False, seed=0).tampered_index is not None


def test_the_tamper_explorer_has_a_static_twin_and_narrows_its_choices_semi_honestly():
    pytest.importorskip("ipywidgets")
    view = L.tamper_explorer(0)
    static = view._repr_mimebundle_()["text/html"]
    assert "ppnn-player-static" in static and "<svg" in static
    assert "VBox(" not in static and "ToggleButtons(" not in static
    assert "30 messages" in static and "9 in the semi-honest" in static
    mode, target, said, holder = view.widget.children
    assert len(target.options) == 30 and "aborts" in said.value
    target.value = "private_compare::pc step 9: m * prod c level 2"
    mode.value = "semi-honest"
    assert len(target.options) == 9 and target.value.endswith("level 2")
    assert "semi-honest" in said.value and "WRONG" in said.value
    assert "ppnn-player" in holder.children[0]._dom_classes
    mode.value = "malicious"
    target.value = next(s for label, s in target.options if label.startswith(L.CHECK_LABEL))
    mode.value = "semi-honest"  # a check does not exist here: back to the default
    assert target.value == L.DEFAULT_TARGET

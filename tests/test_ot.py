"""Oblivious transfer (ppnn.he.ot): the RFC 3526 group, 128 base OTs and IKNP extension. The
receiver gets the string of its choice and nothing of the other; the sender's view (the
columns) does not depend on the choices; the messages have exactly the sizes the ledger books
for the garbled circuits' OT."""

from __future__ import annotations

import gmpy2
import numpy as np
import pytest

from ppnn.he import gc as gcmod
from ppnn.he import ot
from ppnn.protocols import gc_act


@pytest.fixture(scope="module")
def base():
    """One session's base OTs: the receiver (IKNP's sender) and the sender's strings."""
    rcv = ot.BaseOTReceiver()
    request = rcv.request()
    reply, seeds = ot.BaseOTSender().reply(request)
    return rcv, request, reply, seeds, rcv.seeds(reply)


def _session(base):
    rcv, _, _, seeds, mine = base
    return ot.IKNPReceiver(seeds), ot.IKNPSender(rcv.choices, mine)


def _pairs(g, m):
    """m pairs (W0, W0 ^ Delta) with one Delta, like a garbler's labels of one chunk."""
    w0 = g.integers(0, 2**64, (m, 2), dtype=np.uint64)
    delta = g.integers(0, 2**64, 2, dtype=np.uint64)
    return np.stack([w0, w0 ^ delta], axis=1), delta


def test_the_group_is_rfc3526_3072():
    with gmpy2.context(gmpy2.get_context(), precision=3200):
        pi = int(gmpy2.floor(gmpy2.const_pi() * gmpy2.mpz(2) ** 2942))
    assert ot.P == 2**3072 - 2**3008 - 1 + 2**64 * (pi + 1690314)
    q = (ot.P - 1) // 2
    assert gmpy2.is_prime(ot.P, 40) and gmpy2.is_prime(q, 40)
    for e in (ot.G, ot.C):  # both in the subgroup of order q, neither trivial
        assert gmpy2.powmod(e, q, ot.P) == 1 and e not in (1, ot.P - 1)


def test_base_ots_give_the_receiver_the_string_of_its_choice(base):
    rcv, request, reply, seeds, mine = base
    assert request.shape == (ot.KAPPA, ot.ELEMENT_BYTES)
    assert request.nbytes == ot.BASE_REQUEST_BYTES == 128 * 384
    assert reply.nbytes == ot.BASE_REPLY_BYTES == 384
    assert seeds.shape == (128, 2, 16) and mine.shape == (128, 16)
    i = np.arange(ot.KAPPA)
    assert np.array_equal(mine, seeds[i, rcv.choices])
    assert not (mine == seeds[i, 1 - rcv.choices]).all(axis=1).any()
    assert 0 < rcv.choices.sum() < ot.KAPPA  # drawn with secrets: both values occur


def test_base_ot_refuses_what_is_not_a_group_element(base):
    rcv, request, _, _, _ = base
    with pytest.raises(ValueError, match="not a group element"):
        rcv.seeds(np.zeros(ot.ELEMENT_BYTES, np.uint8))
    bad = request.copy()
    bad[3] = 0xFF
    with pytest.raises(ValueError, match="not a group element"):
        ot.BaseOTSender().reply(bad)
    with pytest.raises(ValueError, match="request is"):
        ot.BaseOTSender().reply(request[:5])


@pytest.mark.parametrize("sizes", [(1, 7, 100), (ot.CHUNK + 13, 9)])
def test_the_receiver_gets_the_chosen_strings(base, sizes):
    """Several batches of one session (the PRG streams and the OT index continue), sizes
    that are not multiples of 8 and one that spans two chunks."""
    recv, send = _session(base)
    g = np.random.default_rng(1)
    for m in sizes:
        x, _ = _pairs(g, m)
        r = g.integers(0, 2, m)
        batch = recv.extend(r)
        y = send.answer(batch.columns, x)
        assert np.array_equal(batch.open(y), x[np.arange(m), r])
    assert recv.count == send.count == sum(sizes)


def test_the_unchosen_string_stays_masked(base):
    """What the receiver can compute from the answers gives it its label and, in the other
    place, a pseudorandom string: neither real label, and never Delta when xored with its
    own (the garbler's pairs (W0, W0 ^ Delta) stay one label each)."""
    recv, send = _session(base)
    g = np.random.default_rng(2)
    m = 5000
    x, delta = _pairs(g, m)
    r = g.integers(0, 2, m)
    batch = recv.extend(r)
    y = send.answer(batch.columns, x)
    j = np.arange(m)
    cand = batch.unmask(y)
    other = cand[j, 1 - r]
    assert np.array_equal(cand[j, r], x[j, r])
    for b in (0, 1):
        assert not (other == x[:, b]).all(axis=1).any()
        assert not (y[:, b] == x[:, b]).all(axis=1).any()  # no label crosses in the clear
    assert not ((cand[:, 0] ^ cand[:, 1]) == delta).all(axis=1).any()
    bits = np.unpackbits(other.view(np.uint8))
    assert abs(bits.mean() - 0.5) < 0.01  # 1.28 M bits: balanced


def test_the_senders_view_does_not_depend_on_the_choices(base):
    """The sender sees only the columns: they have the same size for any choices, and what
    it can strip off with its strings k_i^{s_i} leaves a pseudorandom matrix whether every
    choice is 0 or 1; for the same columns its answers are the same whatever the receiver
    chose (its code never reads them)."""
    rcv, _, _, seeds, mine = base
    m = 4096
    g = np.random.default_rng(3)
    x, _ = _pairs(g, m)
    stripped = {}
    for b in (0, 1):
        recv = ot.IKNPReceiver(seeds)  # a fresh session on the same base OTs each time
        batch = recv.extend(np.full(m, b))
        assert batch.columns.shape == (ot.columns_bytes(m),) == (16 * m,)
        known = np.stack([ot._bits(ot._prgs(mine[i:i + 1]), m)[0] for i in range(ot.KAPPA)])
        cols = np.unpackbits(batch.columns, bitorder="little").reshape(ot.KAPPA, m)
        stripped[b] = cols ^ known  # G(k_i^{1-s_i}) ^ (s_i = 0: r; s_i = 1: t^i ^ r)
        assert abs(stripped[b].mean() - 0.5) < 0.01
        a1 = ot.IKNPSender(rcv.choices, mine).answer(batch.columns, x)
        a2 = ot.IKNPSender(rcv.choices, mine).answer(batch.columns, x)
        assert np.array_equal(a1, a2)
    assert abs((stripped[0] ^ stripped[1]).mean() - 1.0) < 1e-12  # the choices differ everywhere


def test_message_sizes_are_the_booked_ones():
    """For n instances of an activation circuit: kappa bits of columns and two 128-bit
    answers per evaluator input bit, as ppnn.he.gc.gc_cost books them."""
    c = gc_act.act_circuit(gc_act.ActSpec(16, 4, 4))
    cost = gcmod.gc_cost(c)
    n = 37
    m = c.evaluator_inputs.size * n
    assert ot.columns_bits(m) == n * cost.ot_receiver == 8 * ot.columns_bytes(m)
    assert ot.answers_bits(m) == n * cost.ot_sender
    rcv = ot.BaseOTReceiver(np.arange(128) % 2)
    reply, seeds = ot.BaseOTSender().reply(rcv.request())
    recv, send = ot.IKNPReceiver(seeds), ot.IKNPSender(rcv.choices, rcv.seeds(reply))
    g = np.random.default_rng(4)
    pairs = g.integers(0, 2**64, (c.evaluator_inputs.size, n, 2, 2), dtype=np.uint64)
    batch = recv.extend(g.integers(0, 2, (c.evaluator_inputs.size, n)))
    assert batch.columns.nbytes * 8 == n * cost.ot_receiver
    y = send.answer(batch.columns, pairs)
    assert y.shape == pairs.shape and y.nbytes * 8 == n * cost.ot_sender


def test_bad_arguments_are_refused(base):
    recv, send = _session(base)
    with pytest.raises(ValueError, match="choices must be"):
        recv.extend([0, 2, 1])
    batch = recv.extend([0, 1, 1])
    with pytest.raises(ValueError, match="take 48 bytes"):
        send.answer(batch.columns[:-1], np.zeros((3, 2, 2), np.uint64))
    with pytest.raises(ValueError, match="answers must hold 3 pairs"):
        batch.open(np.zeros((4, 2, 2), np.uint64))
    with pytest.raises(ValueError, match="seeds must be"):
        ot.IKNPReceiver(np.zeros((128, 16), np.uint8))
    with pytest.raises(ValueError, match="s must be"):
        ot.IKNPSender(np.zeros(127, np.uint8), np.zeros((128, 16), np.uint8))

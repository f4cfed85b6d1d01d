"""04_she's lesson: ReLU then a max on encrypted integers, one player step per gate batch,
on the bit simulator and on real tfhe-rs (the same gates, the same bits)."""

import numpy as np
import pytest

from ppnn.experiments.she import lesson
from ppnn.he.bitsim import BitSimulator
from ppnn.widgets import protocol_player


def test_the_played_units_are_correct_and_every_gate_batch_is_a_step():
    p = lesson.relu_play(values=(-5, 3, 6, -1), bits=4)
    assert p.correct and not p.real
    assert list(p.relu) == [0, 3, 6, 0] and list(p.pooled) == [3, 6]
    ops = [o for o in p.ledger.ops if o.party == "server"]
    assert len(ops) == len(p.levels)
    # the ReLU unit: the free NOT of the sign, then w - 1 ANDs per value at depth 1
    assert ops[0].op.startswith("NOT") and ops[1].op == "AND at depth 1" and ops[1].n == 12
    assert ops[-1].op.startswith("MUX") and ops[-1].n == 6
    # levels deepen and the panel follows the slider
    player = protocol_player(p.ledger, seat="server", split_ops=True, panel=p.panel)
    seq = [p.level_at(s) for s in player.rows["step"]]
    assert seq == sorted(seq) and seq[-1] == len(p.levels) - 1
    assert "client's input bits" in p.panel(1) and "for your eyes only" in p.panel(1)
    assert "gate batch 2/" in p.panel(int(player.rows["step"][player.rows["what"]
                                                              == "AND at depth 1 x12"].iloc[0]))
    # what the client sent is listed (size only on the simulator) and it decrypts the result
    sent = [v for j, v in p.ledger.values.items() if p.ledger.messages[j].sender == "client"]
    assert sent[0].kind == "size only"
    assert p.ledger.holds[-1].value.array().tolist() == [3, 6]


def test_bad_values_are_refused():
    with pytest.raises(ValueError, match="even length"):
        lesson.relu_play(values=(1, 2, 3))
    with pytest.raises(ValueError, match=r"\[-8, 7\]"):
        lesson.relu_play(values=(9, 1), bits=4)
    be = lesson.traced(BitSimulator(), lesson.Ledger(["client", "server"]))
    with pytest.raises(ValueError, match="already traced"):
        lesson.traced(be, lesson.Ledger(["client", "server"]))


def test_on_real_tfhe_the_same_gates_give_the_same_bits_and_ciphertexts_cross():
    pytest.importorskip("ppnn_tfhe", reason="build the binding with `make setup`")
    from ppnn.he.tfhe import TfheBackend

    real = lesson.relu_play(TfheBackend(), values=(-5, 3, 6, -1), bits=4)
    sim = lesson.relu_play(values=(-5, 3, 6, -1), bits=4)
    assert real.correct and real.real
    assert [(lv.gate, lv.n, lv.depth) for lv in real.levels] == \
        [(lv.gate, lv.n, lv.depth) for lv in sim.levels]
    assert all(np.array_equal(a.bits, b.bits) for a, b in zip(real.levels, sim.levels))
    kinds = [v.kind for v in real.ledger.values.values()]
    assert kinds == ["ciphertext", "ciphertext"]

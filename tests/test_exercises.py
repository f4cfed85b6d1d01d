"""ppnn.exercises: every exercise accepts its reference solution, rejects a wrong answer with a
hint, says "no answer yet" to the stub; the write-it-yourself checkers compare ledgers; the
notebook fragments are in sync with the registry and run clean as written."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jupytext
import numpy as np
import pytest
import sympy as sp

from ppnn.exercises import check, exercises, get, hint, solution_of
from ppnn.exercises import registry as reg
from ppnn.exercises.fragments import fragment
from ppnn.protocols.falcon import PARTIES, RSS
from ppnn.protocols.she.circuits import Word

ROOT = Path(__file__).resolve().parents[1]
ALL = exercises()
IDS = [e.id for e in ALL]
NUMBERS = ("00", "01", "02", "03", "04", "05")


def _mux_relu(x):
    be = x.backend
    zero = be.zeros(x.shape)
    return Word(tuple(be.mux(x.sign, zero, p) for p in x.planes[:-1]), signed=False)


def _falcon_no_alpha(fal, x, y):
    ring = fal.ring
    X, Y = x.components, y.components
    z = ring.add(ring.add(ring.mul(X, Y), ring.mul(X, Y[[1, 2, 0]])), ring.mul(X[[1, 2, 0]], Y))
    with fal.ledger.round():
        for i in range(3):
            fal.ledger.send(PARTIES[i], PARTIES[(i - 1) % 3], z[i].size * ring.bits, "z_i",
                            value=z[i])
    return RSS(z, ring)


#: one wrong answer per exercise
WRONG = {
    "00.1": lambda x, y, dealer, ledger: x + y,
    "00.2": lambda view: view["x1"],
    "00.3": 2 * sp.Symbol("n") * sp.Symbol("k"),
    "01.1": lambda x, tables, d, ledger: x,
    "01.2": lambda view: view["y2"] - view["y1"],
    "01.3": lambda *args: 64,
    "02.1": lambda he, u, layout: u,
    "02.2": (2, 16, 16),
    "02.3": lambda query, n_i, j, p: query(np.eye(n_i, dtype=np.int64)[j]),
    "03.1": lambda ell, kappa, n_bits: n_bits // (ell + kappa),
    "03.2": lambda m, n: n * (m - 1),
    "03.3": lambda z, ell, kappa: np.ones(len(z), dtype=bool),
    "04.1": _mux_relu,
    "04.2": (4 * sp.Symbol("w") - 2, sp.Symbol("w")),
    "04.3": (sp.Symbol("K") - 1) * (5 * sp.Symbol("b") - 3),
    # terms that cancel: the total fits, the narrow tree is right
    "04.4": lambda K, b, width: np.array([(1 << (b - 1)) - 1, -(1 << (b - 1)) + 1] * (K // 2)
                                         + [0] * (K % 2)),
    "05.1": _falcon_no_alpha,
    "05.2": lambda r, k, d: 0,
    "05.3": (3 + sp.Symbol("ell"), 36 * sp.Symbol("n") * sp.Symbol("ell")),
}


def test_every_exercise_has_a_wrong_answer_here():
    assert set(WRONG) == set(IDS)


@pytest.mark.parametrize("number", NUMBERS)
def test_at_least_three_exercises_per_notebook(number):
    assert len(exercises(number)) >= 3


def test_write_it_yourself_and_productive_failures_where_asked():
    ledgered = {e.id[:2] for e in ALL if e.compares_ledgers}
    failing = {e.id[:2] for e in ALL if e.productive_failure}
    assert {"00", "01", "02", "05"} <= ledgered
    assert set(NUMBERS) - {"00", "01", "02", "05"} <= ledgered | failing
    assert set(NUMBERS) <= failing


@pytest.mark.parametrize("exercise_id", IDS)
def test_reference_solution_is_accepted(exercise_id):
    ex = get(exercise_id)
    result = check(exercise_id, ex.reference_answer())
    assert result and result.ok and result.status == "right", repr(result)
    assert result.hint is None and result.message


@pytest.mark.parametrize("exercise_id", IDS)
@pytest.mark.parametrize("stub", [Ellipsis, None], ids=["ellipsis", "none"])
def test_the_stub_says_no_answer_yet_without_raising(exercise_id, stub):
    ex = get(exercise_id)
    result = check(exercise_id, stub)
    assert not result and result.status == "no answer yet"
    assert result.hint == ex.hints[0]
    assert "no answer yet" in repr(result).lower() and "no answer yet" in result._repr_html_()


@pytest.mark.parametrize("exercise_id", IDS)
def test_a_wrong_answer_is_rejected_with_a_hint(exercise_id):
    result = check(exercise_id, WRONG[exercise_id])
    assert not result and result.status == "not yet", repr(result)
    assert result.hint and result.message
    assert "not yet" in result._repr_html_() and result.hint in repr(result)


@pytest.mark.parametrize("exercise_id", IDS)
def test_a_wrong_type_names_what_was_expected(exercise_id):
    ex = get(exercise_id)
    result = check(exercise_id, "forty-two")
    assert not result and ex.expects in result.message and "Expected" in result.message


@pytest.mark.parametrize("exercise_id", [e.id for e in ALL if e.kind == "function"])
def test_an_error_in_the_students_code_is_reported_not_raised(exercise_id):
    def broken(*args):
        raise ZeroDivisionError("oops")

    result = check(exercise_id, broken)
    assert not result and "raised ZeroDivisionError: oops" in result.message


def test_a_function_returning_the_wrong_type_is_named():
    result = check("00.1", lambda x, y, dealer, ledger: None)
    assert not result and "returned a NoneType, not AdditiveShares" in result.message


def test_unknown_id_raises_value_error_naming_the_known_ids():
    for bad in ("99.1", "00.99", "x"):
        with pytest.raises(ValueError, match=r"00\.1.*05\.3"):
            check(bad, 1)


# -- the write-it-yourself checkers compare ledgers, not only outputs ------------------------
def _patched(solution, get_ledger, mode):
    """The reference solution with the booking changed, the output untouched: ``extra`` adds
    a message, ``missing`` drops the first online message, ``wide`` adds a bit to every
    online message."""

    def student(*args):
        led = get_ledger(*args)
        send = led.send
        dropped = []

        def patched(sender, receiver, bits, what="", value=None):
            if led.phase == "online" and mode == "missing" and not dropped:
                dropped.append(1)
                return None
            if led.phase == "online" and mode == "wide":
                bits += 1
            return send(sender, receiver, bits, what, value)

        led.send = patched
        try:
            out = solution(*args)
        finally:
            del led.send
        if mode == "extra":
            led.send(led.parties[0], led.parties[1], 8, "one more", value=np.zeros(1))
        return out

    return student


MESSAGE_LEDGERS = {
    "00.1": lambda x, y, dealer, ledger: ledger,
    "01.1": lambda x, tables, d, ledger: ledger,
    "05.1": lambda fal, x, y: fal.ledger,
}


@pytest.mark.parametrize("exercise_id", sorted(MESSAGE_LEDGERS))
@pytest.mark.parametrize("mode", ["extra", "missing", "wide"])
def test_a_right_output_with_a_different_ledger_is_rejected(exercise_id, mode):
    ex = get(exercise_id)
    result = check(exercise_id, _patched(ex.solution, MESSAGE_LEDGERS[exercise_id], mode))
    assert not result, repr(result)
    assert "do not reconstruct" not in result.message and "do not sum" not in result.message
    assert "library" in result.message


@pytest.mark.parametrize("exercise_id, leaky", [("05.1", _falcon_no_alpha)])
def test_the_right_sizes_with_the_wrong_values_are_rejected(exercise_id, leaky):
    result = check(exercise_id, leaky)
    assert not result and "zero sharing" in result.message and "zero3" in result.hint


def test_an_unblinded_tabula_message_is_rejected():
    from ppnn.core import AdditiveShares, local_truncate

    def unblinded(x, tables, d, ledger):  # the client sends its share without s_0
        b, n = tables.b, x.shares[0].size
        mask = np.uint64((1 << b) - 1)
        xt = local_truncate(x, d)
        xt0, xt1 = (xt.shares[i].reshape(-1) & mask for i in (0, 1))
        y0, y1 = (xt0 + tables.s_client) & mask, (xt1 + tables.s_server) & mask
        with ledger.round():
            ledger.send("client", "server", n * b, "x_0", value=xt0)
            ledger.send("server", "client", n * b, "y_1", value=y1)
        out0, out1 = tables.lookup((y0 + y1) & mask)
        return AdditiveShares(np.stack([out0, out1]).reshape(2, *x.shape), tables.ring)

    result = check("01.1", unblinded)
    assert not result and "not the values" in result.message


def test_gazelle_ras_checker_compares_the_he_operations():
    ex = get("02.1")

    def extra_perm(he, u, layout):
        he.rotate(u, layout.ras_steps[0])  # an unused rotation: the slots stay right
        return ex.solution(he, u, layout)

    def missing_booking(he, u, layout):
        count = he.ledger.count
        he.ledger.count = lambda op, n=1, party=None: None if op == "Perm" else count(op, n,
                                                                                     party)
        return ex.solution(he, u, layout)

    for fn in (extra_perm, missing_booking):
        result = check("02.1", fn)
        assert not result and "Perm: the library books" in result.message


def test_relu_unit_checker_compares_the_gates():
    ex = get("04.1")

    def extra_gate(x):
        x.backend.and_(x.planes[0], x.planes[1])  # an unused AND
        return ex.solution(x)

    result = check("04.1", extra_gate)
    assert not result and "gate_AND: the library books" in result.message
    result = check("04.1", _mux_relu)
    assert not result and "gate_MUX" in result.message


# -- hints, solutions, display -------------------------------------------------------------
def test_hints_progress_and_stop_at_the_last():
    ex = get("00.1")
    reg._HINTS_SHOWN.pop(ex.id, None)
    shown = [str(hint("00.1")) for _ in range(len(ex.hints) + 1)]
    assert [s.split(") ", 1)[1] for s in shown] == [*ex.hints, ex.hints[-1]]
    assert str(hint("00.1", 1)).endswith(ex.hints[0])
    with pytest.raises(ValueError, match="hints 1.."):
        hint("00.1", len(ex.hints) + 1)


@pytest.mark.parametrize("exercise_id", IDS)
def test_solution_of_prints_the_reference_source(exercise_id, capsys):
    solution_of(exercise_id)
    out = capsys.readouterr().out
    assert f"def {get(exercise_id).solution.__name__}(" in out and exercise_id in out


def test_results_display_green_right_and_red_not_yet():
    ok = check("00.3", get("00.3").reference_answer())
    bad = check("00.3", WRONG["00.3"])
    assert "#1a7f37" in ok._repr_html_() and "right" in ok._repr_html_()
    assert "#cf222e" in bad._repr_html_() and "Hint" in bad._repr_html_()
    assert repr(ok).startswith("✓ 00.3") and repr(bad).startswith("✗ 00.3")


# -- notebook fragments ------------------------------------------------------------------------
def _blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def _run_cell(source: str, namespace: dict):
    """Run a code cell like a notebook: the value of a final expression is returned."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, "<cell>", "exec"), namespace)
    if last is not None:
        return eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)
    return None


@pytest.mark.parametrize("number", NUMBERS)
def test_fragment_file_is_in_sync_with_the_registry(number):
    path = ROOT / "notebooks" / "exercises" / f"{number}.md"
    assert path.read_text(encoding="utf-8") == fragment(number), (
        f"{path.name} is stale: run python -m ppnn.exercises")


@pytest.mark.parametrize("number", NUMBERS)
def test_fragment_cells_parse_and_the_stubs_run_clean(number):
    text = (ROOT / "notebooks" / "exercises" / f"{number}.md").read_text(encoding="utf-8")
    blocks = _blocks(text)
    ids = [e.id for e in exercises(number)]
    assert len(blocks) == 1 + len(ids)
    namespace: dict = {}
    results = []
    for block, exercise_id in zip(blocks, [None, *ids]):
        nb = jupytext.reads(block, fmt="py:percent")
        kinds = [c.cell_type for c in nb.cells]
        if exercise_id is None:
            assert kinds == ["code"]
        else:
            assert kinds == ["markdown", "code", "code"], kinds
            assert f"Exercise {exercise_id}" in nb.cells[0].source
            assert f'check("{exercise_id}", answer)' in nb.cells[2].source
        for cell in nb.cells:
            if cell.cell_type == "code":
                compile(cell.source, f"<{number}.md>", "exec")
                value = _run_cell(cell.source, namespace)
                if value is not None:
                    results.append(value)
    assert [r.id for r in results] == ids
    assert all(r.status == "no answer yet" for r in results)


def test_the_librarys_own_function_is_not_an_answer():
    from ppnn.core import beaver_mul
    from ppnn.protocols.falcon import Falcon
    from ppnn.protocols.she.circuits import relu_unit
    from ppnn.protocols.tabula import tabula_online

    for exercise_id, fn in (("00.1", beaver_mul), ("01.1", tabula_online),
                            ("04.1", relu_unit), ("05.1", Falcon.mul)):
        result = check(exercise_id, fn)
        assert not result and "the library's own" in result.message


def test_one_reference_solution_per_exercise_in_solutions():
    from ppnn.exercises.solutions import SOLUTIONS

    assert set(SOLUTIONS) == set(IDS)
    assert all(get(i).solution is SOLUTIONS[i] for i in IDS)


# -- checks that are sound both ways (issue 47 §3) -------------------------------------------
def test_00_2_accepts_the_secret_as_python_ints_in_either_representation():
    """A list of Python ints mod 2^64 (numpy would make it float64) or signed is right; a
    wrong answer is shown beside the secret in one representation."""
    from ppnn.exercises.solutions import recover_x2_from_reused_triple as sol

    assert check("00.2", lambda v: [int(a) for a in sol(v)])
    assert check("00.2", lambda v: [int(a) - (1 << 64) if int(a) >= 1 << 63 else int(a)
                                    for a in sol(v)])
    bad = check("00.2", lambda v: v["x1"])
    assert "both as signed residues mod 2^64" in bad.message
    assert "floats" not in bad.message


def test_01_3_uses_the_formula_of_the_notebook_and_the_glossary():
    """One bound everywhere: 2^(l-k), the notebook's §4 helper (costs) and the library's
    closed form agree, and the notebook's case needs Z_2^63."""
    from ppnn.core import local_truncation_failure_probability
    from ppnn.exercises.solutions import smallest_ring
    from ppnn.protocols.tabula import costs

    for k in (20, 32, 64):
        assert local_truncation_failure_probability(14, k) == costs.catastrophic_probability(
            14, k) == 2.0 ** (14 - k)
    assert smallest_ring(14, 300_000, 10**6, 0.999) == 63
    assert "Z_2^63" in check("01.3", smallest_ring).message
    glossary = (ROOT / "GLOSSARY.md").read_text(encoding="utf-8")
    assert "|x|/2^k" in glossary


def _beaver_in_the_clear(x, y, dealer, ledger):
    """Books the right messages, but takes the product of the revealed secrets."""
    from ppnn.core import share_additive

    parties, ring = dealer.parties, x.ring
    t = dealer.triple(ring, x.shape)
    e_sh, f_sh = x - t.a, y - t.b
    ledger.exchange(parties, 2 * int(np.prod(x.shape)) * ring.bits, "e, f",
                    values={p: np.stack([e_sh.shares[i], f_sh.shares[i]])
                            for i, p in enumerate(parties)})
    return share_additive(ring.mul(x.reveal(), y.reveal()), ring,
                          np.random.default_rng(0), len(parties))


def test_00_1_refuses_a_product_computed_from_revealed_secrets():
    result = check("00.1", _beaver_in_the_clear)
    assert not result and "reconstructed x with .reveal()" in result.message


@pytest.mark.parametrize("exercise_id", ["00.3", "04.2", "04.3", "05.3"])
def test_counting_exercises_want_a_closed_form_not_a_number_or_a_wrapper(exercise_id):
    ex = get(exercise_id)
    ref = ex.reference_answer()
    assert check(exercise_id, ref)
    exprs = ref if isinstance(ref, tuple) else (ref,)
    # the same formula written another way is right
    other = tuple(sp.expand(sp.simplify(e)) for e in exprs)
    assert check(exercise_id, other if isinstance(ref, tuple) else other[0])
    # a bare number (the value at one size) is refused, as is a function of the sizes
    number = tuple(int(e.subs({s: 8 for s in e.free_symbols})) for e in exprs)
    refused = check(exercise_id, number if isinstance(ref, tuple) else number[0])
    assert not refused and ("the number" in refused.message or "Expected" in refused.message)
    wrapper = check(exercise_id, lambda *sizes: number)
    assert not wrapper and "not a function" in wrapper.message


def test_05_1_accepts_prf_values_drawn_in_another_order():
    """What Falcon's product guarantees: each z_i masked by a zero sharing, one round, the
    right product -- not the order of the PRF draws."""

    def other_order(fal, x, y):
        ring = fal.ring
        X, Y = x.components, y.components
        alpha = fal.zero3(ring, (2,) + x.shape)[:, 1]  # another draw of a zero sharing
        z = ring.add(ring.add(ring.add(ring.mul(X, Y), ring.mul(X, Y[[1, 2, 0]])),
                              ring.mul(X[[1, 2, 0]], Y)), alpha)
        with fal.ledger.round():
            for i in (2, 0, 1):
                fal.ledger.send(PARTIES[i], PARTIES[(i - 1) % 3], z[i].size * ring.bits,
                                "z_i", value=z[i])
        return RSS(z, ring)

    assert check("05.1", other_order)
    bad = check("05.1", _falcon_no_alpha)
    assert not bad and "zero sharing" in bad.message


def test_hints_render_their_code_spans_in_html():
    result = check("00.3", None)
    html_ = result._repr_html_()
    assert "`" not in html_ and "<code>beaver_mul</code>" in html_

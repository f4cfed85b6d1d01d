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
    "00.3": lambda n, parties, k: 2 * n * k,
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
    "04.2": lambda w: (4 * w - 2, w),
    "04.3": lambda K, b: (K - 1) * (5 * b - 3),
    # terms that cancel: the total fits, the narrow tree is right
    "04.4": lambda K, b, width: np.array([(1 << (b - 1)) - 1, -(1 << (b - 1)) + 1] * (K // 2)
                                         + [0] * (K % 2)),
    "05.1": _falcon_no_alpha,
    "05.2": lambda r, k, d: 0,
    "05.3": lambda n, ell: (3 + ell, 0),
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
    assert not result and "not the values" in result.message and "zero3" in result.hint


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
    ok = check("00.3", get("00.3").solution)
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

"""The sequence diagram and the protocol player (ppnn.sequence, ppnn.widgets.protocol_player)."""

import io

import numpy as np

from ppnn.core import Ledger, Ring
from ppnn.experiments import overview
from ppnn.sequence import fmt_bits, lanes, sequence_diagram, steps
from ppnn.widgets import protocol_player, views_table


def _demo():
    return overview.beaver_demo([3, 5, 7], [2, 4, 6], Ring(16), np.random.default_rng(0))[0]


def _svg(fig) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    return buf.getvalue()


def test_beaver_demo_is_correct_and_every_message_is_a_row():
    led, z = overview.beaver_demo([3, 5, 7], [2, 4, 6], Ring(16), np.random.default_rng(0))
    assert z.tolist() == [6, 20, 42]
    rows = steps(led)
    assert (rows["kind"] == "message").sum() == len(led.messages)
    assert (rows["kind"] == "held").sum() == len(led.holds)
    assert lanes(led) == ["dealer", "client", "server"]


def test_sequence_diagram_svg_is_deterministic():
    a, b = _svg(sequence_diagram(_demo(), highlight=3)), _svg(sequence_diagram(_demo(),
                                                                              highlight=3))
    assert a == b and b"beaver: x-a, y-b" in a


def test_operations_are_marks_on_their_lane_and_long_runs_are_grouped():
    led = Ledger(["client", "server"])
    for layer in ("conv1", "conv2"):
        with led.label(layer):
            for _ in range(30):
                led.send("client", "server", 64, "ct")
                led.count("Perm", 2, "server")
                led.send("server", "client", 64, "masked result")
    rows = steps(led, "label")
    assert len(rows[rows["kind"] == "message"]) == 4  # two layers x two directions
    ops = rows[rows["kind"] == "op"]
    assert ops["what"].tolist() == ["Perm x60", "Perm x60"]
    assert set(ops["party"]) == {"server"}
    fig = sequence_diagram(led)  # 'auto' groups past max_rows
    assert fig is not None


def test_views_table_shows_each_party_only_what_reached_it():
    led = _demo()
    t = views_table(led)
    for r in t.itertuples(index=False):
        row = dict(zip(t.columns, r))
        for lane in ("client", "server"):
            if row["to"] == lane:
                assert row[lane] not in ("", "sent")
            elif row["from"] == lane and row["to"]:
                assert row[lane] == "sent"


def test_player_steps_change_the_highlight_and_the_seat_hides_other_values():
    led = _demo()
    p = protocol_player(led, title="demo")
    msgs = p.rows[p.rows["kind"] == "message"]
    first, last = int(msgs["step"].iloc[0]), int(msgs["step"].iloc[-1])
    assert p.describe(first) != p.describe(last)
    to_server = int(msgs[msgs["peer"] == "server"]["step"].iloc[0])
    assert "does not see" not in p.describe(to_server, "server")
    to_client_only = msgs[(msgs["peer"] == "client") & (msgs["party"] != "server")]
    step = int(to_client_only["step"].iloc[0])
    assert "server does not see this step" in p.describe(step, "server")
    assert "nothing sent yet" in p.so_far(0) and "online" in p.so_far(p.n_steps)


def test_player_static_twin_holds_the_diagram_and_the_views_table():
    p = protocol_player(_demo())
    bundle = p._repr_mimebundle_()
    html = bundle["text/html"]
    assert "<svg" in html and "ppnn-views" in html and "share of z" in html
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_fmt_bits():
    assert fmt_bits(64) == "8 B" and fmt_bits(3) == "3 bit" and fmt_bits(8 * 1500) == "1.5 KB"


def test_beaver_view_experiment_passes_honest_and_catches_the_reused_mask():
    """00's view experiment: the server's e = x - a for x = 0 vs x = 2^63 is not told apart by
    a KS test at alpha = 0.001 with fresh masks, and is told apart with one mask reused."""
    for seed in range(3):
        honest = overview.beaver_view_experiment(1000, seed)
        broken = overview.beaver_view_experiment(1000, seed, broken=True)
        assert not honest.test.distinguishes, honest.test
        assert broken.test.distinguishes, broken.test


def test_tabula_lookup_demo_is_correct_and_the_server_never_holds_x():
    from ppnn.experiments.tabula import lesson

    x = np.array([-300, -5, 0, 77, 1000])
    led, out = lesson.lookup_demo(x, 8, 3, np.random.default_rng(0), Ring(32))
    assert np.abs(out - np.maximum(x >> 3, 0)).max() <= 1  # SecureML's off-by-one at most
    import ppnn

    server = ppnn.views(led, "server")
    assert set(server["kind"]) == {"received", "held"}
    assert "x_trunc_0 + s_0 mod 2^b" in set(server["what"])
    assert not any("F(x)" in w for w in server["what"])  # the output goes to the client only


def test_tabula_index_view_passes_fresh_tables_and_catches_a_reused_table():
    from ppnn.experiments.tabula import lesson

    for seed in range(3):
        fresh = lesson.index_view_experiment(1000, 8, seed)
        reused = lesson.index_view_experiment(1000, 8, seed, reuse=True)
        assert not fresh.test.distinguishes, fresh.test
        assert reused.test.distinguishes, reused.test


def test_grouped_steps_merge_holdings_per_party_and_layer():
    import numpy as np

    from ppnn.core import Ledger
    from ppnn.sequence import steps

    led = Ledger(["a", "b"], record_values=True)
    for layer in ("conv1", "relu1"):
        with led.label(layer):
            led.hold("a", f"{layer} share", np.arange(3))
            led.hold("a", f"{layer} mask", np.arange(3))
            led.send("a", "b", 8, "m", value=np.array([1]))
    rows = steps(led, "label")
    held = rows[rows["kind"] == "held"]
    assert held["what"].tolist() == ["holds conv1 share (+1 more)", "holds relu1 share (+1 more)"]
    assert len(steps(led, None)[lambda r: r["kind"] == "held"]) == 4


def test_interactive_table_shows_one_static_copy_and_a_refused_setting_as_text():
    import pandas as pd
    import pytest

    from ppnn.widgets import InteractiveView, _render, interactive_table

    ipywidgets = pytest.importorskip("ipywidgets")

    def fn(n):
        if n > 5:
            raise ValueError(f"n must be <= 5, got {n}")
        return pd.DataFrame({"n": [n]})

    s = ipywidgets.IntSlider(value=2, min=0, max=9)
    view, default = interactive_table(fn, n=s)
    assert isinstance(view, InteractiveView) and default["n"].tolist() == [2]
    bundle = view._repr_mimebundle_()
    assert "<table" in bundle["text/html"]
    s.value = 7  # the function refuses: the widget says so, nothing raises
    assert "n must be &lt;= 5" in _render(fn, {"n": 7}).data
    s.value = 2
    view2, _ = interactive_table(fn, static="<p>all steps</p>", n=s)
    assert view2._repr_mimebundle_()["text/html"] == "<p>all steps</p>"

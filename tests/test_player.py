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


# -- the player as a student reads it ------------------------------------------------------------
def _lookup():
    from ppnn.experiments.tabula import lesson

    return lesson.lookup_demo([-300, -5, 0, 77, 1000], 8, 3, np.random.default_rng(0),
                              Ring(32))[0]


def _long_run(n=40):
    """A three-party run of ``n`` messages, every value recorded."""
    led = Ledger(["P0", "P1", "P2"], record_values=True)
    rng = np.random.default_rng(1)
    for i in range(n):
        a, b = [("P0", "P1"), ("P1", "P2"), ("P2", "P0"), ("P0", "P2")][i % 4]
        with led.round():
            led.send(a, b, 64, f"message {i}", value=rng.integers(0, 1000, 3))
    return led


def _texts(fig):
    import matplotlib.pyplot as plt

    plt.close(fig)  # the artists stay readable
    return {t.get_gid(): t for t in fig.findobj(lambda a: hasattr(a, "get_text"))
            if t.get_gid()}


def _widget_parts(p):
    wd = p.widget()
    play, slider, seat = wd.children[0].children
    line, diagram, _, table = wd.children[1:]
    return slider, seat, line, diagram, table


def test_the_title_follows_the_seat():
    pytest = __import__("pytest")
    pytest.importorskip("ipywidgets")
    p = protocol_player(_lookup(), seat="server", title="Tabula online lookup")
    slider, seat, line, diagram, _ = _widget_parts(p)
    assert "Tabula online lookup (seat: server)" in diagram.value
    seat.value = "client"
    assert "Tabula online lookup (seat: client)" in diagram.value
    assert "(seat: server)" not in diagram.value
    assert "(seat: server)" in p.static_html()  # the static twin: the player's own seat


def test_a_player_opens_on_the_first_step_its_seat_sees():
    pytest = __import__("pytest")
    pytest.importorskip("ipywidgets")
    led = _lookup()
    p = protocol_player(led, seat="server")
    assert 1 not in p.seen("server")  # the client's own share comes first
    slider, _, line, _, _ = _widget_parts(p)
    assert slider.value == p.first_seen("server") == min(p.seen("server"))
    assert "does not see" not in line.value
    assert _widget_parts(protocol_player(led))[0].value == 1


def test_the_live_diagram_reveals_the_steps_so_far_and_keeps_the_current_one_last():
    p = protocol_player(_long_run(), window=6)
    for k in (1, 4, 6, 23, 40):
        fig = p.figure(k, live=True)
        drawn = fig.ppnn["steps"]
        assert drawn[-1] == k and len(drawn) == min(k, 6)
        assert fig.ppnn["hidden"] == max(0, k - 6)
        assert f"ppnn-step-{k}-value" in _texts(fig)  # the current step's value is drawn
        assert fig.get_size_inches()[1] == p.figure(40, live=True).get_size_inches()[1]
    # the current step and its value are on the line next to the controls
    assert "message 22" in p.describe(23) and "= [" in p.describe(23)


def test_values_are_drawn_past_24_rows():
    led = _long_run(40)
    fig = sequence_diagram(led, group=None)
    values = [g for g in _texts(fig) if g.endswith("-value")]
    assert len(values) == 40


def test_an_unseen_current_step_looks_unseen():
    import matplotlib.colors as mc

    led = _lookup()
    p = protocol_player(led, seat="server")
    unseen = min(set(p.rows["step"]) - p.seen("server"))
    texts = _texts(p.figure(unseen, "server"))
    label = texts[f"ppnn-step-{unseen}-label"]
    assert mc.to_hex(label.get_color()) != "#c0392b" and label.get_fontweight() == "normal"
    assert f"ppnn-step-{unseen}-value" not in texts  # and its value stays hidden
    seen = min(p.seen("server"))
    assert mc.to_hex(_texts(p.figure(seen, "server"))[f"ppnn-step-{seen}-label"]
                     .get_color()) == "#c0392b"
    slider, *_ = _widget_parts(p)
    slider.value = unseen
    table = p.widget().children[4].value
    row = table.split(f"data-step='{unseen}'")[0].rsplit("<tr", 1)[-1]
    assert "#c0392b" not in table.split(f"data-step='{unseen}'")[1].split("</tr>")[0]
    assert "ppnn-current-row" in row


def _extents(fig):
    """Each text's x-range in inches, and the lanes' x positions."""
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    dpi = fig.dpi
    lanes_x = [ln.get_xdata()[0] for ln in fig.axes[0].lines
               if (ln.get_gid() or "").startswith("ppnn-lane-")]
    out = {}
    for gid, t in _texts(fig).items():
        if gid.startswith("ppnn-step-"):
            e = t.get_window_extent(r)
            out[gid] = (e.x0 / dpi, e.x1 / dpi)
    return out, lanes_x


def test_no_label_crosses_a_lane_or_is_cut_while_the_figure_has_room():
    import ppnn.protocols.falcon as F

    pc = Ledger(F.PARTIES, record_values=True)
    fal = F.Falcon(np.random.default_rng(0), ledger=pc)
    r, x, b = (np.array(v, dtype=np.uint64) for v in ([1000, 5], [999, 5], [0, 1]))
    F.private_compare(fal, fal.share(F.bits_of(fal.ring, r), fal.field), x,
                      fal.share(b, fal.bit), fal.share(b, fal.field),
                      fal.share(np.array([3, 7], np.uint64), fal.field))
    for led in (_lookup(), pc, _demo(), _long_run(12)):
        for seat in [None, *lanes(led)]:
            p = protocol_player(led, seat=seat or "everyone")
            fig = p.figure(seat=p.seat)
            spans, lanes_x = _extents(fig)
            assert len(lanes_x) == len(lanes(led))
            for gid, (x0, x1) in spans.items():
                crossed = [x for x in lanes_x if x0 + 0.01 < x < x1 - 0.01]
                assert not crossed, (gid, x0, x1, lanes_x)
            assert not p.layout(p.seat).full and not fig.ppnn["cut"], fig.ppnn["cut"]
    # the old cut at 34 characters: a long value on a middle lane now fits
    assert not protocol_player(_lookup()).figure().ppnn["cut"]
    # a figure held to a narrow width cuts, and says it is at its widest
    p = protocol_player(_lookup(), max_width=4)
    assert p.layout().full and p.figure().ppnn["cut"]
    assert "data-full='1'" in p.static_html()


def test_concatenated_material_names_its_parts_in_the_player():
    p = protocol_player(_demo())
    assert any("a, b, c (3 each)" in s for s in p.rows["shown"])
    assert "(9,)" not in p.static_html()
    t = protocol_player(_lookup())
    assert any("s_0 (5), [T]_0 (5 x 256)" in s for s in t.rows["shown"])


def test_tex_in_a_label_is_rendered_not_shown_raw():
    from ppnn.textfit import math_html, math_text

    led = Ledger(["server1", "server2"], record_values=True)
    led.send("server1", "server2", 2048, "partial decryption c^{d_i}", value=b"\x01" * 256)
    p = protocol_player(led)
    label = _texts(p.figure(1))["ppnn-step-1-label"]
    assert "$c^{d_i}$" in label.get_text()  # mathtext
    assert "c<sup>d<sub>i</sub></sup>" in p.static_html()
    assert "c^{d_i}" not in p.static_html().split("<table", 1)[1]
    assert math_text("a $5 price, x^{2}") == r"a \$5 price, $x^{2}$"
    assert math_html("2^(l-1) and x_r^2") == "2^(l-1) and x_r^2"  # no braces: as written


def test_player_arguments_are_checked():
    pytest = __import__("pytest")
    with pytest.raises(ValueError, match="window must be an int >= 1"):
        protocol_player(_demo(), window=0)
    with pytest.raises(ValueError, match="max_width must be >"):
        protocol_player(_demo(), max_width=1).layout()

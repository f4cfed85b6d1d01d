"""The measured-vs-projected table (ppnn.wire.timing, ppnn.experiments.wire): its models are
the formulas they say, its report sentence reads the table, bad settings are refused."""

import copy

import pandas as pd
import pytest

from ppnn.core import netmodel
from ppnn.experiments import wire as wire_exp
from ppnn.wire import timing
from ppnn.wire.framing import HEADER_BYTES
from ppnn.wire.links import parse_link


@pytest.fixture(scope="module")
def measured():
    """One real loopback measurement of Delphi + Tabula on MiniONN (a few seconds), plus a
    LAN row made from it with a chosen wall time (the formulas are checked, not the link)."""
    m = timing.measure("minionn_mnist", "delphi_tabula", links=(), repeats=1)
    lan = copy.deepcopy(m["runs"]["loopback"])
    lan.update(link=parse_link("lan"), wall_s=m["runs"]["loopback"]["wall_s"] + 0.05)
    lan["shaping"] = {**lan["shaping"], "link": "LAN", "how": "test", "latency": "test"}
    m["runs"]["LAN"] = lan
    # the base stack (namespaces, no shaping), as measure() adds it when links are measured
    m["base"] = {"wall_s": m["runs"]["loopback"]["wall_s"] - 0.03, "walls": [], "shaped": True,
                 "dealer_s": 0.05}
    return m


def test_wire_bytes_are_ledger_bytes_plus_framing(measured):
    df = timing.table([measured], k=1.0)
    led = measured["ledger"]
    online = [msg for msg in led.messages if msg.phase == "online"]
    expected = sum(-(-msg.bits // 8) + HEADER_BYTES for msg in online)
    assert (df["wire bytes online"] == expected).all()
    assert (df["ledger rounds"] == df["measured depth"]).all()


def test_the_models_are_their_formulas(measured):
    k = 1.7
    row = timing.table([measured], k=k).set_index("network").loc["LAN"]
    led, lan = measured["ledger"], parse_link("lan")
    base = measured["base"]["wall_s"]
    comm = netmodel.project(led, lan.network).total_s
    assert row["projected s (tables)"] == pytest.approx(measured["compute_s"] + comm, abs=1e-4)
    assert row["network s projected"] == pytest.approx(comm, abs=1e-4)
    party_off, dealer = timing._offline_bytes(led)
    s_parties = timing._online_bytes_per_round(led) + party_off
    assert dealer > 0 and party_off > 0  # Delphi + Tabula: the tables, and the counted HE
    r_dealer = timing.dealer_tail_rounds(led)
    assert 0 < r_dealer < led.rounds("online")  # the last table layers' rounds and the output
    dealer_path = max(0.0, dealer / lan.bandwidth_Bps - 0.05) + k * (1 + r_dealer) * lan.latency_s
    cal = base + max(k * led.rounds("online") * lan.latency_s + s_parties / lan.bandwidth_Bps,
                     dealer_path)
    assert dealer / lan.bandwidth_Bps - 0.05 > 0  # the dealer's path is the longer here
    wall = row["measured s (median)"]
    assert row["network s measured"] == pytest.approx(wall - base, abs=1e-4)
    assert row["base s (median)"] == pytest.approx(base, abs=1e-4)
    assert row["calibrated s"] == pytest.approx(cal, abs=1e-4)
    assert row["dealer s (base)"] == pytest.approx(0.05)
    assert row["calibrated error %"] == pytest.approx(100 * (cal - wall) / wall, abs=0.1)


def test_summary_and_report_sentence(measured, tmp_path):
    df = timing.table([measured], k=1.0)
    summ = wire_exp.summary(df)
    assert list(summ["family"]) == ["delphi_tabula"] and list(summ["network"]) == ["LAN"]
    (tmp_path / "overview_wire_timings.csv").write_text(df.to_csv(index=False))
    note = " ".join(wire_exp.projection_note(tmp_path))
    assert "on LAN" in note and "delphi_tabula" in note
    assert "not checked" in " ".join(wire_exp.projection_note(tmp_path / "missing"))


def test_loopback_only_table_plots_and_summarises(measured):
    m = copy.deepcopy(measured)
    del m["runs"]["LAN"]
    df = timing.table([m], k=1.0)
    assert wire_exp.summary(df).empty
    fig = wire_exp.plot(df)
    assert fig is not None


def test_full_mode_takes_medians_of_seven_on_base_and_lan_three_on_loopback_one_wan_run():
    assert wire_exp.settings(False)["repeats"] == {"loopback": 3, "base": 7, "lan": 7, "wan": 1}


def test_a_family_without_a_dealer_has_no_dealer_path(measured):
    from ppnn.core import Ledger

    assert timing.dealer_tail_rounds(Ledger(["P0", "P1"])) == 0
    m = copy.deepcopy(measured)
    m["ledger"].messages[:] = [msg for msg in m["ledger"].messages
                               if msg.sender != m["ledger"].DEALER]
    row = timing.table([m], k=1.0).set_index("network").loc["LAN"]
    assert row["dealer bytes"] == 0 and row["dealer s (base)"] is None


def test_bad_settings_are_refused():
    with pytest.raises(TypeError, match="quick"):
        wire_exp.settings("yes")
    with pytest.raises(ValueError, match="repeats"):
        timing.measure("minionn_mnist", "falcon_sh", repeats=0)
    with pytest.raises(ValueError, match="repeats"):
        timing.measure("minionn_mnist", "falcon_sh", repeats={"loopback": 0})
    with pytest.raises(ValueError, match="no count for 'lan'"):
        timing.measure("minionn_mnist", "falcon_sh", links=("lan",), repeats={"loopback": 1})
    with pytest.raises(ValueError, match="plan and x"):
        timing.measure("mine", "falcon_sh", plan=object())


def test_the_pipeline_csv_is_read_in_full_mode(tmp_path, monkeypatch):
    monkeypatch.setenv("PPNN_FIGURES", str(tmp_path))
    frame = pd.DataFrame([{"family": "falcon_sh", "network": "loopback"}])
    wire_exp.csv_path().write_text(frame.to_csv(index=False))
    got = wire_exp.measured_vs_projected(False)
    assert list(got["family"]) == ["falcon_sh"]


def test_save_and_show_writes_both_files_and_returns_nothing(measured, tmp_path, monkeypatch):
    """A notebook cell ending in it shows the table once (no list of paths as a raw repr)."""
    monkeypatch.setenv("PPNN_FIGURES", str(tmp_path))
    assert wire_exp.save_and_show(timing.table([measured], k=1.0)) is None
    assert (tmp_path / "tables" / "overview_wire_timings.csv").exists()
    assert "Measured vs projected" in (tmp_path / "tables" / "overview_wire.md").read_text()


def test_base_runs_alternate_with_the_first_links_runs():
    assert timing._interleave(["b"] * 3, ["lan"] * 3) == ["b", "lan"] * 3
    assert timing._interleave(["b"] * 3, ["lan"]) == ["b", "lan", "b", "b"]
    assert timing._interleave([], ["wan"]) == ["wan"]

"""The counted-rows diff: a moved counted value is found, a measured one is ignored."""

from __future__ import annotations

from pathlib import Path

from ppnn import reportdiff

HEAD = "table,row,metric,unit,paper,ours,ratio,kind,status,reason\n"


def _write(d: Path, ours_counted: str, ours_measured: str, cmp_bytes: str) -> Path:
    (d / "tables").mkdir(parents=True)
    (d / "tables" / "x_table1.csv").write_text(
        HEAD + f"T1,a,bytes,MB,1,{ours_counted},1,counted,exact,\n"
        f"T1,a,time,s,1,{ours_measured},1,measured,differs,\n")
    (d / "overview").mkdir()
    (d / "overview" / "cmp_counted.csv").write_text(f"key,online_MB\nfam,{cmp_bytes}\n")
    (d / "overview" / "cmp_timings.csv").write_text("key,s\nfam,3.2\n")
    return d


def test_identical_counted_values_do_not_move_measured_ones_are_ignored(tmp_path):
    a = _write(tmp_path / "a", "1.5", "0.3", "2")
    b = _write(tmp_path / "b", "1.5", "0.9", "2")
    before, after = reportdiff._files_from_dir(a), reportdiff._files_from_dir(b)
    assert len(reportdiff.counted_values(before)) == 2
    assert reportdiff.diff(before, after).empty
    assert reportdiff.main(["--before", str(a), "--after", str(b)]) == 0


def test_a_moved_counted_value_is_reported_with_both_values(tmp_path, capsys):
    a = _write(tmp_path / "a", "1.5", "0.3", "2")
    b = _write(tmp_path / "b", "1.6", "0.3", "3")
    d = reportdiff.diff(reportdiff._files_from_dir(a), reportdiff._files_from_dir(b))
    assert d[["file", "row", "metric", "before", "after"]].values.tolist() == [
        ["overview/cmp_counted.csv", "fam", "online_MB", "2", "3"],
        ["tables/x_table1.csv", "a", "bytes", "1.5", "1.6"]]
    assert reportdiff.main(["--before", str(a), "--after", str(b)]) == 1
    assert "2 moved" in capsys.readouterr().out


def test_committed_tables_are_read_from_a_git_revision():
    """``--before REV`` reads the tables committed at a revision (here HEAD)."""
    files = reportdiff._files_from_rev("HEAD", Path(__file__).resolve().parents[1])
    assert len(reportdiff.counted_values(files)) > 500

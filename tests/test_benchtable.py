"""benchmarks/README.md's ratio table is what the committed CSVs give (ppnn.benchtable)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from ppnn import benchtable

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "benchmarks" / "README.md"


def _committed_figures(dest: Path) -> Path:
    """A copy of the benchmarks' CSVs that git tracks (the git-ignored wire CSVs of this
    machine, and any CSV not yet added, are left out)."""
    r = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--", "figures"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("not a git checkout: cannot tell the committed CSVs")
    tracked = set(r.stdout.split("\0"))
    for b in benchtable.BENCHMARKS:
        if f"figures/{b.csv}" in tracked:
            (dest / b.csv).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / "figures" / b.csv, dest / b.csv)
    return dest


def test_readme_ratio_table_is_what_the_committed_csvs_give(tmp_path):
    figures = _committed_figures(tmp_path / "figures")
    assert benchtable.generated_readme(ROOT, figures) == README.read_text(encoding="utf-8"), (
        "benchmarks/README.md's ratio table is stale: run `python -m ppnn.benchtable` "
        "(make bench does it) and commit the CSVs it read")


def test_a_changed_csv_makes_the_committed_table_stale(tmp_path):
    figures = _committed_figures(tmp_path / "figures")
    csv = figures / "tabula" / "bench_tabula_preprocessing_timings.csv"
    if not csv.is_file():
        pytest.skip("the Tabula preprocessing CSV is not committed")
    df = pd.read_csv(csv)
    df["speedup"] *= 2
    df.to_csv(csv, index=False)
    assert benchtable.generated_readme(ROOT, figures) != README.read_text(encoding="utf-8")


def test_missing_csv_gives_a_not_run_yet_row(tmp_path):
    got = benchtable.rows(tmp_path)
    assert [(s, r, c) for s, _, r, c in got] == [
        (b.script, benchtable.NOT_RUN, f"figures/{b.csv}") for b in benchtable.BENCHMARKS]
    assert f"| {benchtable.NOT_RUN} |" in benchtable.ratio_table(tmp_path)


def test_every_benchmark_script_has_a_row():
    scripts = {b.script.split()[0] for b in benchtable.BENCHMARKS}
    assert scripts == {p.name for p in (ROOT / "benchmarks").glob("bench_*.py")}


def test_every_number_in_the_table_comes_from_the_csvs_not_the_readme(tmp_path):
    """With no CSV at all the generated section holds no digit but the CSV paths'."""
    text = benchtable.ratio_table(tmp_path)
    rows = text.splitlines()[2:]
    cells = [c for r in rows for c in r.split("|")[2:4]]
    assert cells and not any(ch.isdigit() for c in cells for ch in c)


def _write(figures: Path, name: str, rows: list[dict]) -> None:
    path = figures / name
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(path, index=False)


def _wire_row(case, network, shaping, online):
    """A row of bench_wire.py's CSV, with the columns its ``_row`` writes."""
    return {"case": case, "family": "falcon_sh", "network": network, "shaping": shaping,
            "dealer's material": "all before the online phase" if online else
            "streamed during the run", "online wire MB": 1.0, "online ledger MB": 1.0,
            "all classes wire MB": 2.0, "online frames": 10, "ledger rounds": 5,
            "measured depth": 5, "seconds (median)": 3.0,
            "online seconds (median)": online, "party cpu s (median of the slowest)": 1.0,
            "dealer cpu s (median)": 1.0, "online cpu s (median of the slowest party)": 1.0,
            "online page faults (median of the most)": 100, "peak MB per process (max)": 50,
            "runs": 3}


def test_csvs_no_benchmark_has_committed_are_read_as_their_scripts_write_them(tmp_path):
    lan = "lan: 0.1 ms one-way, 625 MB/s per process uplink"
    _write(tmp_path, "falcon/bench_wire.csv", [
        _wire_row("relu 2^20", "loopback", "loopback (not shaped); latency: none", None),
        _wire_row("relu 2^20", "loopback", "loopback (not shaped); latency: none", 2.0),
        _wire_row("relu 2^20", lan, "netns; latency: held", None),
        _wire_row("relu 2^20", lan, "netns; latency: held", 3.0)])
    _write(tmp_path, "falcon/bench_wire_vs_cpp.csv", [
        {"case": "relu 2^20", "family": "falcon_sh", "link": "lan", "C++ build": b,
         "C++ wall s (median)": c, "ppnn online s (median)": 2.0, "ppnn / C++": 2.0 / c,
         "runs": 3} for b, c in (("par", 1.0), ("nopar", 1.6))])
    _write(tmp_path, "falcon/bench_wire_split.csv", [
        {"case": "lenet 1 image", "family": "falcon_sh", "link": "lan", "shaping": "netns",
         "ledger rounds": 119, "online s (median)": 0.2, "party online cpu s": 0.1,
         "wire path cpu s": 0.05, "protocol's own cpu s": 0.05, "wire path share": 0.5,
         "ring s, whole party cpu": 0.19, "ring / measured": 0.95,
         "ring s, protocol's own cpu (wire path free)": 0.1, "ring s, no cpu": 0.01,
         "runs": 3, "C++ par wall s (median)": 0.05, "online / C++ par": 4.0,
         "ring, wire path free / C++ par": 2.0}])
    _write(tmp_path, "gala/bench_gala_tenseal_timings.csv", [
        {"dims": d, "method": m, "seconds": s, "note": "", "ratio_vs_gala": s / g}
        for d, g in (("1x2048", 0.5), ("2x1024", 0.4))
        for m, s in (("GALA (ours, SEAL BFV)", g), ("TenSEAL CKKSVector.matmul", 2 * g))])
    _write(tmp_path, "nn/bench_nn_forward_train_timings.csv", [
        {"network": n, "macs": 1, "float_us_per_image": 1.0, "fixed_us_per_image": r,
         "fixed_over_float": r, "train_us_per_image": 1.0, "projected_epoch_s": 1.0}
        for n, r in (("a", 2.0), ("b", 3.5))])
    got = {(s, w): r for s, w, r, _ in benchtable.rows(tmp_path)}
    assert got[("bench_wire.py", f"relu 2^20 (falcon_sh): online seconds, {lan} / loopback")
               ] == "1.50x"
    assert got[("bench_wire.py --cpp",
                "relu 2^20 (falcon_sh, lan): ppnn online / C++ nopar")] == "1.25x"
    assert got[("bench_wire.py --split", "lenet 1 image (falcon_sh, lan): online / C++ par; "
                "with the wire path free")] == "4.00x; 2.00x"
    assert got[("bench_gala_tenseal.py", "TenSEAL CKKSVector.matmul / GALA (ours, SEAL BFV), "
                "CPU seconds")] == "1x2048 2.00x, 2x1024 2.00x"
    assert got[("bench_nn_forward_train.py",
                "fixed-point / float inference per image, 2 MNIST networks")] == "2.00x–3.50x"


def test_a_csv_of_other_columns_is_an_error_naming_it(tmp_path):
    _write(tmp_path, "she/bench_tfhe_binding.csv", [{"metric": "other", "value": 1.0}])
    with pytest.raises(ValueError, match="bench_tfhe_binding.csv"):
        benchtable.rows(tmp_path)


def test_update_readme_rewrites_only_the_generated_section(tmp_path):
    (tmp_path / "benchmarks").mkdir()
    readme = tmp_path / "benchmarks" / "README.md"
    readme.write_text("# B\n\n<!-- BEGIN GENERATED: ratios -->\nold\n"
                      "<!-- END GENERATED: ratios -->\ntail\n", encoding="utf-8")
    benchtable.update_readme(tmp_path, tmp_path / "figures")
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("# B\n\n<!-- BEGIN GENERATED: ratios -->\n| benchmark |")
    assert text.endswith("<!-- END GENERATED: ratios -->\ntail\n") and "old" not in text
    assert [p.name for p in readme.parent.iterdir()] == ["README.md"]  # no temporary left

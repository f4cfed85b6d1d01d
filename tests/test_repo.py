"""Repository conventions: jupytext pairs in sync, notebooks without outputs, pinned deps."""

import ast
import re
import tomllib
from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PY_NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))


def test_there_are_notebooks():
    assert any(p.stem == "00_overview" for p in PY_NOTEBOOKS)


@pytest.mark.parametrize("py", PY_NOTEBOOKS, ids=[p.stem for p in PY_NOTEBOOKS])
def test_ipynb_twin_in_sync_and_stripped(py):
    ipynb = py.with_suffix(".ipynb")
    assert ipynb.exists(), f"{ipynb.name} missing: run jupytext --to ipynb {py.name}"
    twin = nbformat.read(ipynb, as_version=4)
    source = jupytext.read(py)
    assert twin.metadata["kernelspec"]["name"] == "python3"
    assert [c.source for c in twin.cells] == [c.source for c in source.cells], (
        f"{ipynb.name} is out of sync with {py.name}: run jupytext --to ipynb {py.name}")
    for c in twin.cells:
        if c.cell_type == "code":
            assert c.outputs == [] and c.execution_count is None, f"{ipynb.name} has outputs"


@pytest.mark.parametrize("py", PY_NOTEBOOKS, ids=[p.stem for p in PY_NOTEBOOKS])
def test_one_parameters_cell_of_literals(py):
    nb = jupytext.read(py)
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1, f"{py.name}: exactly one cell tagged 'parameters'"
    tree = ast.parse(params[0].source)
    names = set()
    for node in tree.body:
        assert isinstance(node, ast.Assign), f"{py.name}: parameters cell holds only assignments"
        ast.literal_eval(node.value)  # raises if not a literal
        names |= {t.id for t in node.targets}
    assert {"QUICK", "SEED"} <= names
    text = py.read_text()
    assert not re.search(r"^[^#]*sys\.path|%run |^\s*!pip|%pip ", text, re.M)


def _pins_pyproject():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    deps = data["project"]["dependencies"] + sum(
        data["project"]["optional-dependencies"].values(), [])
    return dict(d.split("==") for d in deps)


def test_dependencies_pinned_and_environment_consistent():
    pins = _pins_pyproject()
    assert all(re.fullmatch(r"[\d.]+", v) for v in pins.values())
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    env_pins = dict(d.split("==") for d in pip)
    for name, ver in env_pins.items():
        assert pins.get(name) == ver, f"environment.yml pins {name}=={ver}, pyproject differs"
    # Binder installs the package with --no-deps: every runtime and lab dependency must be
    # in the conda environment, at the Makefile's pin
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    needed = data["project"]["dependencies"] + data["project"]["optional-dependencies"]["lab"]
    missing = sorted(set(needed) - set(pip))
    assert not missing, f"environment.yml lacks {missing} (binder/postBuild uses --no-deps)"
    assert (ROOT / "binder" / "environment.yml").read_text() == (
        ROOT / "environment.yml").read_text()
    assert (ROOT / "binder" / "postBuild").read_text().count("pip install") >= 2


def test_lib_is_tracked_not_ignored():
    gi = (ROOT / ".gitignore").read_text().splitlines()
    assert "lib/" not in gi and "lib" not in gi


def test_readme_generated_sections_are_fresh():
    from ppnn import frontdoor

    readme = (ROOT / "README.md").read_text()
    assert "make reproduce" in readme and "make test" in readme
    assert frontdoor.generated_readme() == readme, (
        "README's generated sections are stale: run `python -m ppnn.frontdoor` "
        "(make reproduce does it)")


def test_project_root_from_any_folder(tmp_path, monkeypatch, repo_root):
    """Outside the checkout (and without PPNN_ROOT) the root is the checkout ppnn is
    installed from, so `python -m ppnn compare model.onnx` works from any folder."""
    from ppnn import paths

    monkeypatch.delenv("PPNN_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)
    assert paths.root() == repo_root
    monkeypatch.chdir(repo_root / "notebooks")
    assert paths.root() == repo_root
    monkeypatch.setenv("PPNN_ROOT", str(tmp_path))
    assert paths.root() == tmp_path.resolve()

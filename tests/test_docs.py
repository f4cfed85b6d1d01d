"""The documentation as a newcomer meets it: short reference docstrings, explanation pages in
``docs/`` whose links resolve, and no path a reader of the repository does not have.

- Every module docstring of ``lib/ppnn`` is at most :data:`MAX_MODULE_DOCSTRING` lines (a
  summary, the contract, the main names and a pointer to ``docs/``) and names no issue and no
  sitting: the design prose lives in ``docs/``, history in git.
- No tracked file points at ``shared/`` (papers a user does not have) or at a machine path
  (this checkout's or a home directory's absolute path). This file is the one exception: it
  spells the patterns out.
- ``docs/`` holds the explanation pages, and every relative link of them and of the README
  reaches a file of the repository (and, for a markdown target, a heading or anchor of it).
  ``tests/test_site.py`` checks that ``make site`` renders them.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "lib" / "ppnn"
MAX_MODULE_DOCSTRING = 30

#: the explanation pages the issue asks for (more may exist)
REQUIRED_DOCS = ("wire", "numerics", "time-model", "security")

#: a path into ``shared/`` (``../shared/papers/falcon.txt``, ``shared/papers``), not a word
#: that ends in it (``reshared/truncated``)
SHARED = re.compile(r"(?<![\w-])shared/")
#: an absolute path to a machine's checkout or home directory
MACHINE = re.compile(r"(?<![\w.~-])/(?:work|root|home|Users)/|\b[A-Za-z]:\\Users\\")
#: history in a module docstring: an issue number, a sitting of the lab notebook
HISTORY = re.compile(r"\bissue\s+#?\d+|\bsittings?\b|\bwe tried\b", re.I)


def _module_docstrings() -> dict[str, str]:
    out = {}
    for path in sorted(LIB.rglob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        out[path.relative_to(ROOT).as_posix()] = doc or ""
    return out


def test_every_module_has_a_docstring_of_at_most_30_lines():
    docs = _module_docstrings()
    assert len(docs) > 100
    long = {path: len(doc.splitlines()) for path, doc in docs.items()
            if len(doc.splitlines()) > MAX_MODULE_DOCSTRING}
    assert not long, (f"module docstrings over {MAX_MODULE_DOCSTRING} lines (move the design "
                      f"prose to docs/): {long}")


def test_module_docstrings_name_no_issue_and_no_sitting():
    found = {path: m.group(0) for path, doc in _module_docstrings().items()
             if (m := HISTORY.search(doc))}
    assert not found, f"history in module docstrings (git keeps it): {found}"


def _tracked_files() -> list[str]:
    try:
        res = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: no tracked files to check")
    return [p for p in res.stdout.decode().split("\0") if p]


def offending_lines(files: list[str], root: Path = ROOT) -> list[str]:
    """``path:line: text`` for every line of the text files ``files`` (paths relative to
    ``root``) that names a ``shared/`` path or a machine path."""
    found = []
    for rel in files:
        try:
            data = (root / rel).read_bytes()
        except OSError:  # listed but absent (e.g. deleted in the work tree)
            continue
        if b"\0" in data:
            continue  # binary
        text = data.decode("utf-8", errors="replace")
        for n, line in enumerate(text.splitlines(), 1):
            if SHARED.search(line) or MACHINE.search(line):
                found.append(f"{rel}:{n}: {line.strip()[:160]}")
    return found


def test_the_path_patterns_find_what_they_should_and_nothing_else(tmp_path):
    lines = {"bad1": "(`../shared/papers/falcon.txt`)", "bad2": "see shared/papers",
             "bad3": "cd /work/lab && make", "bad4": "open /root/notes.md",
             "bad5": "/home/someone/lab/x.py", "bad6": r"C:\Users\me\lab",
             "ok1": "only the outputs are reshared/truncated", "ok2": "https://example.com/home/",
             "ok3": "~/.cache/ppnn-lab/cargo-target", "ok4": "a homework/ folder"}
    for name, line in lines.items():
        (tmp_path / name).write_text(f"first\n{line}\n")
    (tmp_path / "bin").write_bytes(b"\0../shared/papers")
    found = offending_lines(sorted(lines) + ["bin", "gone"], tmp_path)
    assert [f.split(":")[0] for f in found] == [f"bad{i}" for i in range(1, 7)]
    assert found[0] == "bad1:2: (`../shared/papers/falcon.txt`)"


def test_no_tracked_file_names_a_shared_path_or_a_machine_path():
    """Papers are cited by venue and DOI or arXiv id (``data/paper/README.md`` says which text
    the transcriptions were made from); nothing points at a folder a user does not have."""
    this = Path(__file__).resolve().relative_to(ROOT).as_posix()
    found = offending_lines([p for p in _tracked_files() if p != this])
    assert not found, "paths a reader does not have:\n" + "\n".join(found)


def _github_anchors(text: str) -> set[str]:
    """The anchors GitHub gives a markdown file: its headings' slugs (numbered repeats) and
    explicit ``<a id=...>`` / ``<a name=...>``."""
    ids = set(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
    seen: dict[str, int] = {}
    fence = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            ids.add(f"{slug}-{n}" if n else slug)
    return ids


_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """The relative links of the markdown file ``page`` whose target file (or anchor) does
    not exist; code spans and fenced blocks are skipped."""
    text = page.read_text(encoding="utf-8")
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    out = []
    for url in _LINK.findall(prose):
        parts = urlsplit(url)
        if parts.scheme or parts.netloc or url.startswith(("/", "mailto:")):
            continue
        target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
        if not target.exists() or not target.is_relative_to(root):
            out.append(f"{url}: no such file")
        elif parts.fragment and target.suffix == ".md" and parts.fragment not in (
                _github_anchors(target.read_text(encoding="utf-8"))):
            out.append(f"{url}: no anchor #{parts.fragment}")
    return out


def test_docs_has_the_explanation_pages():
    have = {p.stem for p in (ROOT / "docs").glob("*.md")}
    assert set(REQUIRED_DOCS) <= have, sorted(set(REQUIRED_DOCS) - have)


@pytest.mark.parametrize("page", ["README.md"] + sorted(
    p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")))
def test_every_relative_link_of_the_docs_and_the_readme_resolves(page):
    assert not broken_links(ROOT / page), broken_links(ROOT / page)


def test_the_link_check_finds_a_missing_file_and_a_missing_anchor(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "b.md").write_text("# Bee page\n\n## The part\n")
    page = tmp_path / "docs" / "a.md"
    page.write_text("[ok](b.md#the-part) [top](#x) [gone](c.md) [no](b.md#nope) "
                    "[away](https://x.org/c.md) `[code](c.md)`\n\n# X\n")
    assert broken_links(page, tmp_path) == ["c.md: no such file", "b.md#nope: no anchor #nope"]

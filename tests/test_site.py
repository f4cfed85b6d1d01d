"""The static site of executed notebooks (``make site``, :mod:`ppnn.site`).

Quick tests (no browser): link rewriting, the choice of full over quick runs, and a site
built from synthetic notebooks in a temporary checkout.

The browser check builds the site from the quick runs the notebook tests leave in
``build/quick/notebooks/`` (``make test`` runs tests/test_notebooks.py before this file), serves
it on 127.0.0.1 and opens every page in Debian's headless Chromium: every relative link
resolves to a file of the site and its ``#anchor`` exists on that page, every ``<img>`` is
shown (naturalWidth > 0; inline SVG counts as present), no output area holds an error or a
widget's repr, MathJax (the site's own copy: the browser reaches no network) typeset every
``$...$``, and each notebook page shows its protocol players' static diagrams. Run alone, it
builds from the quick runs that exist; when there are none it runs 00_overview in quick mode
first (about a minute). External links are not followed (the browser resolves no host but
127.0.0.1).
"""

from __future__ import annotations

import contextlib
import functools
import html
import http.server
import re
import shutil
import struct
import threading
import zlib
from collections import defaultdict
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import nbformat
import pytest

from ppnn import site

ROOT = Path(__file__).resolve().parents[1]
QUICK_NOTEBOOKS = ROOT / "build" / "quick" / "notebooks"


# ---------------------------------------------------------------- synthetic checkouts

def _notebook(cells, widgets: bool = False):
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    if widgets:
        nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {
            "version_major": 2, "version_minor": 0, "state": {}}}
    return nb


PLAYER_SVG = ("<div class='ppnn-player-static'><svg xmlns='http://www.w3.org/2000/svg' "
              "width='40' height='20' viewBox='0 0 40 20'><rect width='40' height='20'/></svg>"
              "<table class='ppnn-views'><tr><td>client</td></tr></table></div>")


def _player_output():
    return nbformat.v4.new_output("display_data", data={
        "application/vnd.jupyter.widget-view+json": {"model_id": "abc", "version_major": 2,
                                                      "version_minor": 0},
        "text/html": PLAYER_SVG, "text/plain": "<protocol player: 3 steps>"})


#: what a widget with no static twin leaves in an executed notebook: its repr
WIDGET_REPR = ("VBox(children=(ToggleButtons(description='protocol', options=('malicious', "
               "'semi-honest'), value='malicious'), Dropdown(description='P2 changes')))")


def _checkout(tmp: Path, intro: str = "", error: bool = False, bare_widget: bool = False
              ) -> Path:
    """A tiny repository: two notebooks (00_a run in full and quick mode, 01_b in quick
    mode only; math in their text; ``bare_widget``: a widget output with no static twin),
    README, GLOSSARY, figures/REPORT.md with a figure, two explanation pages in docs/ that
    link to each other and to the rest, pyproject.toml."""
    root = tmp / "repo"
    for d in ("notebooks", "figures/x", "build/full/notebooks", "build/quick/notebooks",
              "lib/pkg", "docs"):
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text('[tool.ppnn]\nrepository = "someone/lab"\n')
    (root / "README.md").write_text("# Lab\n\nA small lab.\n\n## Two commands\n")
    (root / "GLOSSARY.md").write_text('# Glossary\n\n<a id="beaver-triple"></a>\n'
                                      "### Beaver triple\nShares of a, b, ab.\n\n"
                                      "## What you will learn\nTerms.\n")
    (root / "figures" / "REPORT.md").write_text(
        "# Report\n\n![fig](x/fig.png)\n\n[table](x/t.csv) and [the glossary](../GLOSSARY.md)"
        " and [notebook 00](../notebooks/00_a.py)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    (root / "figures" / "x" / "fig.png").write_bytes(_PNG)
    (root / "figures" / "x" / "t.csv").write_text("a,b\n1,2\n")
    (root / "lib" / "pkg" / "mod.py").write_text("x = 1\n")
    (root / "docs" / "wire.md").write_text(
        "# Wire mode: processes\n\nSee [the time model](time-model.md#the-projection), "
        "[the lab](../README.md), [a Beaver triple](../GLOSSARY.md#beaver-triple), "
        "[notebook 00](../notebooks/00_a.py), [the report](../figures/REPORT.md) and "
        "[the code](../lib/pkg/mod.py).\n")
    (root / "docs" / "time-model.md").write_text(
        "# The time model\n\n## The projection\n\nBack to [wire mode](wire.md).\n")
    for stem, title in (("00_a", "00 — A: shares"), ("01_b", "01 — B: tables")):
        (root / "notebooks" / f"{stem}.py").write_text(
            f"# %% [markdown]\n# # {title}\n#\n# **Claim.** It works. Really.\n")

    def executed(mode: str, stem: str):
        md = nbformat.v4.new_markdown_cell(
            f"# {stem[:2]} — {mode} copy\n\nReproduces: nothing.\n\n**Claim.** {intro}It works."
            " Really.\n\nSee [a Beaver triple](../GLOSSARY.md#beaver-triple), "
            "[the report](../figures/REPORT.md#report), [the next one](01_b.ipynb), "
            "[the code](../lib/pkg/mod.py), [away](https://example.org/x) and "
            "![the figure](../figures/x/fig.png).\n\nShares live in $\\mathbb{Z}_{2^{16}}$."
            "\n\n## What you will learn\n1. shares")
        code = nbformat.v4.new_code_cell("player", execution_count=1)
        code.outputs = [_player_output()]
        if bare_widget:
            code.outputs.append(nbformat.v4.new_output("display_data", data={
                "application/vnd.jupyter.widget-view+json": {
                    "model_id": "def", "version_major": 2, "version_minor": 0},
                "text/plain": WIDGET_REPR}))
        if error:
            code.outputs.append(nbformat.v4.new_output(
                "error", ename="ValueError", evalue="boom",
                traceback=["Traceback (most recent call last)", "ValueError: boom"]))
        nb = _notebook([md, code], widgets=True)
        nb.metadata["papermill"] = {"end_time": "2026-01-02T03:04:05"}
        nbformat.write(nb, root / "build" / mode / "notebooks" / f"{stem}.ipynb")

    executed("full", "00_a")
    executed("quick", "00_a")
    executed("quick", "01_b")
    return root


def _png() -> bytes:
    """A 1 x 1 PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b""))


_PNG = _png()


# ---------------------------------------------------------------- quick tests

def test_links_between_pages_are_rewritten_to_the_pages_and_assets(tmp_path):
    root = _checkout(tmp_path)
    pages = site.page_names(["00_a", "01_b"])
    repo = "https://github.com/someone/lab"

    def url(u, d="notebooks"):
        return site.rewrite_url(u, d, pages, root, repo)

    assert url("../GLOSSARY.md#beaver-triple") == ("glossary.html#beaver-triple", None)
    assert url("GLOSSARY.md#beaver-triple", "") == ("glossary.html#beaver-triple", None)
    assert url("01_b.ipynb") == ("01_b.html", None)
    assert url("00_a.py#What-you-will-learn") == ("00_a.html#What-you-will-learn", None)
    assert url("../notebooks/01_b.py", "figures") == ("01_b.html", None)
    assert url("REPORT.md", "figures") == ("report.html", None)
    assert url("../README.md") == ("index.html", None)
    assert url("../figures/x/fig.png") == ("assets/figures/x/fig.png", "figures/x/fig.png")
    assert url("x/t.csv", "figures") == ("assets/figures/x/t.csv", "figures/x/t.csv")
    assert url("../lib/pkg/mod.py") == (f"{repo}/blob/HEAD/lib/pkg/mod.py", None)
    assert url("../lib/pkg") == (f"{repo}/tree/HEAD/lib/pkg", None)
    assert url("../README.md#two-commands") == (f"{repo}/blob/HEAD/README.md#two-commands",
                                                None)
    for same in ("#term", "https://example.org/a.md", "mailto:a@b.c", "data:image/png;x",
                 "../no/such/file.png", "../../outside.png", "/abs.png"):
        assert url(same) == (same, None)


def test_rewrite_links_changes_only_relative_href_and_src_and_collects_assets(tmp_path):
    root = _checkout(tmp_path)
    assets: set[str] = set()
    page = ('<a href="../GLOSSARY.md#t">t</a> <img alt="f" src=\'../figures/x/fig.png\'> '
            '<a href="https://x.org/GLOSSARY.md">x</a> <a href="#here">h</a> '
            '<a href="../no/such.md">n</a> <p>see GLOSSARY.md</p>')
    out = site.rewrite_links(page, "notebooks", site.page_names(["00_a"]), root, None, assets)
    assert out == ('<a href="glossary.html#t">t</a> <img alt="f" src=\'assets/figures/x/fig.png\'>'
                   ' <a href="https://x.org/GLOSSARY.md">x</a> <a href="#here">h</a> '
                   '<a href="../no/such.md">n</a> <p>see GLOSSARY.md</p>')
    assert assets == {"figures/x/fig.png"}


def test_markdown_links_of_a_notebook_line_are_rebased_for_the_index():
    line = "a [t](../GLOSSARY.md#t), [n](01_b.ipynb \"title\"), [w](https://x.org/y), [h](#h)"
    assert site.rebase_markdown_links(line, "notebooks") == (
        "a [t](GLOSSARY.md#t), [n](notebooks/01_b.ipynb \"title\"), [w](https://x.org/y), "
        "[h](#h)")


def test_headings_get_githubs_anchor_too():
    page = ('<h2 id="What-you-will-learn">What you will learn<a class="anchor-link" '
            'href="#What-you-will-learn">¶</a></h2><h2 id="x">X &amp; y!</h2>'
            '<h2 id="x-1">X &amp; y!</h2><p id="taken"></p><h3 id="Taken">Taken</h3>')
    out = site.github_anchors(page)
    assert '<h2 id="What-you-will-learn"><a id="what-you-will-learn"></a>' in out
    assert '<a id="x--y"></a>' in out and '<a id="x--y-1"></a>' in out
    assert '<a id="taken">' not in out  # an id already on the page is not repeated


def test_full_runs_win_over_quick_runs(tmp_path):
    root = _checkout(tmp_path)
    build = root / "build"
    got = site.find_sources(["00_a", "01_b", "02_c"], build)
    assert got["00_a"] == site.Source(build / "full" / "notebooks" / "00_a.ipynb", "full")
    assert got["01_b"] == site.Source(build / "quick" / "notebooks" / "01_b.ipynb", "quick")
    assert got["02_c"] is None
    quick = site.find_sources(["00_a", "01_b"], build, quick_only=True)
    assert quick["00_a"].mode == "quick" and quick["01_b"].mode == "quick"


def test_a_notebooks_title_and_claim_make_its_index_entry():
    nb = _notebook([nbformat.v4.new_markdown_cell(
        "# 01 — Tabula: tables\n\nReproduces: a paper.\n\n**The claim.** One round. "
        "And more.\n\n**What you will learn**\n1. x")])
    assert site.notebook_summary(nb) == ("01 — Tabula: tables", "One round.")
    nb.cells[0].source = "# 00 — Tour\n\nReproduces: x\n\nIt runs, e.g. here. Then more."
    assert site.notebook_summary(nb)[1] == "It runs, e.g. here."


def test_the_site_has_every_page_with_links_rewritten_assets_copied_and_svg_kept(tmp_path):
    root = _checkout(tmp_path)
    res = site.build(root=root, run_missing=False)
    out = root / "build" / "site"
    assert res["out"] == out
    assert sorted(p.name for p in out.glob("*.html")) == [
        "00_a.html", "01_b.html", "docs-time-model.html", "docs-wire.html", "glossary.html",
        "index.html", "report.html"]
    assert (out / "assets" / "figures" / "x" / "fig.png").read_bytes() == _PNG
    assert (out / "assets" / "figures" / "x" / "t.csv").exists()
    page = (out / "00_a.html").read_text()
    assert "00 — full copy" in page  # the full run, not the quick one
    for link in ('href="glossary.html#beaver-triple"', 'href="report.html#report"',
                 'href="01_b.html"', 'href="https://github.com/someone/lab/blob/HEAD/lib/pkg/'
                 'mod.py"', 'src="assets/figures/x/fig.png"', 'href="index.html"'):
        assert link in page, link
    assert "../GLOSSARY.md" not in page and "../figures/" not in page
    # the player's static twin, inline SVG and all, not a widget placeholder
    assert "ppnn-player-static" in page and "<svg" in page and "<rect" in page
    assert "application/vnd.jupyter.widget-view+json" not in page
    index = (out / "index.html").read_text()
    assert 'href="00_a.html"' in index and 'href="01_b.html"' in index
    assert 'href="report.html"' in index and 'href="glossary.html"' in index
    assert "A small lab." in index and "It works." in index
    assert index.count("full run") == 1 and index.count("quick run") == 1
    report = (out / "report.html").read_text()
    assert 'src="assets/figures/x/fig.png"' in report and 'href="00_a.html"' in report
    assert "<table" in report
    glossary = (out / "glossary.html").read_text()
    assert 'id="beaver-triple"' in glossary and 'id="what-you-will-learn"' in glossary
    quick = site.build(root=root, quick_only=True, run_missing=False,
                       out=tmp_path / "quick-site")
    assert {s: m for s, (m, _) in quick["sources"].items()} == {"00_a": "quick",
                                                               "01_b": "quick"}
    assert "00 — quick copy" in (tmp_path / "quick-site" / "00_a.html").read_text()


def test_the_docs_pages_are_site_pages_linked_from_the_index_and_to_each_other(tmp_path):
    root = _checkout(tmp_path)
    assert site.doc_stems(root) == ["time-model", "wire"]
    pages = site.page_names(["00_a"], site.doc_stems(root))
    assert site.rewrite_url("wire.md", "docs", pages, root) == ("docs-wire.html", None)
    assert site.rewrite_url("docs/wire.md", "", pages, root) == ("docs-wire.html", None)
    assert site.rewrite_url("../README.md", "docs", pages, root) == ("index.html", None)
    res = site.build(root=root, run_missing=False)
    out = res["out"]
    assert {"docs-wire.html", "docs-time-model.html"} <= set(res["pages"])
    index = (out / "index.html").read_text()
    assert 'href="docs-wire.html"' in index and 'href="docs-time-model.html"' in index
    assert "Wire mode: processes" in index and "The time model" in index
    wire = (out / "docs-wire.html").read_text()
    for link in ('href="docs-time-model.html#the-projection"', 'href="index.html"',
                 'href="glossary.html#beaver-triple"', 'href="00_a.html"',
                 'href="report.html"',
                 'href="https://github.com/someone/lab/blob/HEAD/lib/pkg/mod.py"'):
        assert link in wire, link
    assert ".md" not in re.sub(r"https://github\.com/\S+", "", " ".join(
        re.findall(r'href="([^"]*)"', wire)))
    assert "<title>PPNN Lab — Wire mode: processes</title>" in wire
    time_model = (out / "docs-time-model.html").read_text()
    assert 'id="the-projection"' in time_model and 'href="docs-wire.html"' in time_model


def test_pages_load_math_from_the_site_itself_not_a_cdn(tmp_path):
    root = _checkout(tmp_path)
    out = site.build(root=root, run_missing=False)["out"]
    for name in ("00_a.html", "index.html", "report.html", "glossary.html", "docs-wire.html"):
        page = (out / name).read_text()
        assert f'src="{site.MATHJAX_URL}"' in page, name
        assert "cdnjs" not in page and "mathjax/2.7" not in page.lower(), name
    mathjax = out / "assets" / "mathjax"
    assert (mathjax / "MathJax.js").is_file()
    assert (mathjax / "config" / "TeX-AMS-MML_HTMLorMML-full.js").is_file()
    assert "STIX-Web" in (mathjax / "config" / "local" / "ppnn.js").read_text()
    assert any((mathjax / "fonts" / "HTML-CSS" / "STIX-Web").rglob("*.woff"))


#: a widget's repr, as nbconvert shows a widget output that has only text/plain
_WIDGET_REPR = re.compile(
    r"\b(?:VBox|HBox|Box|GridBox|IntSlider|FloatSlider|IntRangeSlider|SelectionSlider|"
    r"Dropdown|ToggleButtons|ToggleButton|RadioButtons|Select|Checkbox|Button|Play|Output|"
    r"HTML|HTMLMath|Label|Text|Textarea|Tab|Accordion)\((?:children|value|options|"
    r"description|layout|index|outputs|min|max)=")


def widget_reprs(nb) -> list[str]:
    """The outputs of an executed notebook that would show a widget's repr on a static page:
    a widget view with no text/html twin, or text that reads like a widget repr."""
    found = []
    for i, c in enumerate(nb.cells):
        for o in c.get("outputs", []) if c.cell_type == "code" else []:
            data = o.get("data", {})
            text = data.get("text/plain", "") if "text/html" not in data else ""
            text = text or (o.get("text", "") if o.get("output_type") == "stream" else "")
            if "application/vnd.jupyter.widget-view+json" in data and "text/html" not in data:
                found.append(f"cell {i}: a widget with no static twin: {text[:120]!r}")
            elif _WIDGET_REPR.search(text) or "<interactive view>" in text:
                found.append(f"cell {i}: a widget repr: {text[:120]!r}")
    return found


def test_the_check_for_widget_reprs_finds_a_widget_without_a_static_twin(tmp_path):
    root = _checkout(tmp_path, bare_widget=True)
    nb = nbformat.read(root / "build" / "quick" / "notebooks" / "00_a.ipynb", as_version=4)
    assert len(widget_reprs(nb)) == 1 and "no static twin" in widget_reprs(nb)[0]
    page = (site.build(root=root, run_missing=False)["out"] / "00_a.html").read_text()
    assert _WIDGET_REPR.search(html.unescape(page))  # what the site would show
    assert not widget_reprs(nbformat.read(
        _checkout(tmp_path / "ok") / "build" / "quick" / "notebooks" / "00_a.ipynb", 4))


def test_every_widget_of_the_executed_notebooks_leaves_a_static_output():
    have = sorted(p for p in QUICK_NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")
                  if not p.name.endswith(".input.ipynb"))
    if not have:
        pytest.skip("no quick runs in build/quick/notebooks (make test runs them first)")
    found = {p.stem: widget_reprs(nbformat.read(p, as_version=4)) for p in have}
    assert not {k: v for k, v in found.items() if v}, found


def test_a_failed_build_leaves_the_previous_site_and_no_temporary_folder(tmp_path):
    root = _checkout(tmp_path)
    site.build(root=root, run_missing=False)
    out = root / "build" / "site"
    before = {p.name: p.read_bytes() for p in out.glob("*.html")}
    (root / "GLOSSARY.md").unlink()
    (root / "GLOSSARY.md").mkdir()  # unreadable: the build fails after the notebook pages
    with pytest.raises(IsADirectoryError):
        site.build(root=root, run_missing=False)
    assert {p.name: p.read_bytes() for p in out.glob("*.html")} == before
    assert sorted(p.name for p in (root / "build").iterdir()) == ["full", "quick", "site"]


def test_a_notebook_never_run_is_listed_without_a_page(tmp_path):
    root = _checkout(tmp_path)
    (root / "notebooks" / "02_c.py").write_text("# %% [markdown]\n# # 02 — C: later\n#\n"
                                                "# It is not run.\n")
    res = site.build(root=root, run_missing=False)
    assert res["sources"]["02_c"] is None and "02_c.html" not in res["pages"]
    index = (root / "build" / "site" / "index.html").read_text()
    assert "02 — C: later" in index and "not run yet" in index and "02_c.html" not in index


# ---------------------------------------------------------------- the browser check

def _browser():
    from browser import _driver

    # the site is checked on its own: no CDN (MathJax, require.js), no network
    return _driver(1200, 900, ("--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",))


@contextlib.contextmanager
def _serve(folder: Path):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


_PAGE_JS = r"""
const done = arguments[arguments.length - 1], REPR = new RegExp(arguments[0]);
const look = () => {
  const imgs = [...document.images];
  const outs = [...document.querySelectorAll(
      '.jp-OutputArea-output, [data-mime-type="application/vnd.jupyter.stderr"]')];
  const errors = outs.map(o => o.textContent)
      .filter(t => t.includes('Traceback'));
  if (document.body.textContent.includes('An Exception was encountered at'))
      errors.push('papermill: An Exception was encountered');
  // math a reader sees still as TeX ($...$ that MathJax did not typeset), outside code
  const raw = [], walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const n = walk.currentNode, p = n.parentElement, t = n.nodeValue;
    if (!p || p.closest('script, style, pre, code, svg, .MathJax_Preview')) continue;
    if (/\$[^$]*(\\[A-Za-z]+|[_^]\{)[^$]*\$/.test(t)) raw.push(t.trim().slice(0, 120));
  }
  const reprs = outs.map(o => o.textContent).map(t => {
    const m = REPR.exec(t), i = m ? m.index : Math.max(t.indexOf('<interactive view>'),
                                                      t.indexOf('<protocol player'));
    return i >= 0 ? t.slice(i) : null;
  }).filter(t => t !== null);
  done({
    ids: [...document.querySelectorAll('[id]')].map(e => e.id)
          .concat([...document.querySelectorAll('a[name]')].map(a => a.name)),
    hrefs: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
    broken: imgs.filter(i => !(i.complete && i.naturalWidth > 0))
                .map(i => (i.getAttribute('src') || '').slice(0, 120)),
    images: imgs.length,
    svgs: document.querySelectorAll('svg').length,
    players: document.querySelectorAll('.ppnn-player-static svg').length,
    tables: document.querySelectorAll('table').length,
    errors: errors.map(t => t.slice(0, 300)),
    mathjax: !!(window.MathJax && window.MathJax.Hub),
    math: document.querySelectorAll('.MathJax, .MathJax_Display, mjx-container').length,
    math_errors: [...document.querySelectorAll('.MathJax_Error, merror, .mjx-merror')]
                 .map(e => e.textContent.slice(0, 120)),
    raw_math: raw,
    reprs: reprs.map(t => t.slice(0, 200)),
  });
};
// MathJax typesets after the page loads: wait for its start-up (typesetting included)
if (window.MathJax && MathJax.Hub && MathJax.Hub.Register)
  MathJax.Hub.Register.StartupHook('End', () => setTimeout(() => MathJax.Hub.Queue(look)));
else look();
"""


def check_site(folder: Path) -> tuple[dict[str, list[str]], dict[str, dict]]:
    """Open every page of the site in headless Chromium with no network; ``(problems,
    seen)``: the problems of each page (broken link, missing anchor, image not shown, error
    output, a widget's repr, math MathJax did not typeset) and what each page holds (images,
    svgs, players, tables, typeset math)."""
    problems: dict[str, list[str]] = defaultdict(list)
    seen: dict[str, dict] = {}
    pages = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.html"))
    with _serve(folder) as base:
        driver = _browser()
        try:
            driver.set_page_load_timeout(60)
            driver.set_script_timeout(120)
            for rel in pages:
                driver.get(base + rel)
                seen[rel] = driver.execute_async_script(_PAGE_JS, _WIDGET_REPR.pattern)
        finally:
            driver.quit()
    for rel, info in seen.items():
        problems[rel] += [f"image not shown: {src}" for src in info["broken"]]
        problems[rel] += [f"error output: {t}" for t in info["errors"]]
        problems[rel] += [f"a widget's repr on the page: {t}" for t in info["reprs"]]
        problems[rel] += [f"math not rendered: {t}" for t in info["raw_math"]]
        problems[rel] += [f"math error: {t}" for t in info["math_errors"]]
        if not info["mathjax"]:
            problems[rel].append("no MathJax on the page")
        for href in info["hrefs"]:
            parts = urlsplit(urljoin(base + rel, href))
            if not (parts.scheme + "://" + parts.netloc + "/").startswith(base):
                continue  # an external link: not followed
            target = unquote(parts.path).lstrip("/") or "index.html"
            if (folder / target).is_dir():
                target = f"{target.rstrip('/')}/index.html"
            if not (folder / target).is_file():
                problems[rel].append(f"broken link: {href}")
            elif parts.fragment and target in seen:
                ids = set(seen[target]["ids"])
                if parts.fragment not in ids and unquote(parts.fragment) not in ids:
                    problems[rel].append(f"no anchor #{parts.fragment} on {target}: {href}")
    return {k: v for k, v in problems.items() if v}, seen


@pytest.fixture(scope="module")
def browser_ok():
    from browser import browser_missing

    why = browser_missing()
    if why:
        pytest.skip(f"BROWSER TEST NOT RUN: {why}")


@pytest.mark.browser
def test_the_check_finds_broken_links_missing_images_and_error_cells(tmp_path, browser_ok):
    """The check can fail: a page with a link to nowhere, an anchor that does not exist, an
    image that is not there and an error output."""
    root = _checkout(tmp_path, intro="[gone](../nowhere.md), [no term](../GLOSSARY.md#nope), "
                                     "![missing](../figures/x/missing.png) ", error=True,
                     bare_widget=True)
    site.build(root=root, run_missing=False)
    problems, seen = check_site(root / "build" / "site")
    found = "\n".join(problems.get("00_a.html", []))
    assert "broken link: ../nowhere.md" in found
    assert "no anchor #nope on glossary.html" in found
    assert "image not shown: ../figures/x/missing.png" in found
    assert "error output: " in found and "Traceback" in found
    assert "a widget's repr on the page: VBox(children=(ToggleButtons(" in found
    assert "math not rendered" not in found  # MathJax typeset it, from the site's own copy
    assert seen["00_a.html"]["math"] > 0
    assert not problems.get("report.html") and not problems.get("glossary.html")


@pytest.mark.browser
def test_the_check_sees_math_that_is_not_typeset(tmp_path, browser_ok):
    """Without the site's MathJax (as with a CDN and no network), the TeX stays raw."""
    root = _checkout(tmp_path)
    out = site.build(root=root, run_missing=False)["out"]
    shutil.rmtree(out / "assets" / "mathjax")
    problems, _ = check_site(out)
    found = "\n".join(problems.get("00_a.html", []))
    assert "math not rendered: " in found and "mathbb" in found, found


@pytest.mark.browser
def test_every_page_of_the_quick_site_opens_with_no_broken_link_image_or_error(
        tmp_path, browser_ok):
    have = [p for p in QUICK_NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")
            if not p.name.endswith(".input.ipynb")]
    if have:  # what make test's notebook tests left
        res = site.build(out=tmp_path / "site", quick_only=True, run_missing=False)
    else:  # run alone with no quick run yet: the overview is run first (about a minute)
        res = site.build(out=tmp_path / "site", quick_only=True, names=["00_overview"],
                         progress=False)
    built = [s for s, src in res["sources"].items() if src]
    assert built, "no notebook page in the site"
    problems, seen = check_site(res["out"])
    assert not problems, problems
    assert {"index.html", "report.html", "glossary.html"} <= set(seen)
    assert {site.doc_page(s) for s in site.doc_stems(ROOT)} <= set(seen)
    assert {"wire", "numerics", "time-model", "security"} <= set(site.doc_stems(ROOT))
    for stem in built:
        nb = nbformat.read(res["sources"][stem][1], as_version=4)
        players = sum("ppnn-player-static" in o.get("data", {}).get("text/html", "")
                      for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
        assert seen[f"{stem}.html"]["players"] >= players, f"{stem}: player diagrams lost"
    assert sum(v["images"] for v in seen.values()) > 0
    assert sum(v["players"] for v in seen.values()) > 0
    assert sum(v["math"] for v in seen.values()) > 0  # typeset with no network
    assert seen["report.html"]["tables"] > 0
    print(f"site: {len(seen)} pages from {len(built)} quick runs, built in "
          f"{res['seconds']:.1f} s")

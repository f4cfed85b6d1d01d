"""The static site of executed notebooks (``make site``, :mod:`ppnn.site`).

Quick tests (no browser): link rewriting, the choice of full over quick runs, and a site
built from synthetic notebooks in a temporary checkout.

The browser check builds the site from the quick runs the notebook tests leave in
``build/quick/notebooks/`` (``make test`` runs tests/test_notebooks.py before this file), serves
it on 127.0.0.1 and opens every page in Debian's headless Chromium: every relative link
resolves to a file of the site and its ``#anchor`` exists on that page, every ``<img>`` is
shown (naturalWidth > 0; inline SVG counts as present), no output area holds an error, and
each notebook page shows its protocol players' static diagrams. Run alone, it builds from the
quick runs that exist; when there are none it runs 00_overview in quick mode first (about a
minute). External links are not followed (the browser resolves no host but 127.0.0.1).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
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


def _checkout(tmp: Path, intro: str = "", error: bool = False) -> Path:
    """A tiny repository: two notebooks (00_a run in full and quick mode, 01_b in quick
    mode only), README, GLOSSARY, figures/REPORT.md with a figure, pyproject.toml."""
    root = tmp / "repo"
    for d in ("notebooks", "figures/x", "build/full/notebooks", "build/quick/notebooks",
              "lib/pkg"):
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
    for stem, title in (("00_a", "00 — A: shares"), ("01_b", "01 — B: tables")):
        (root / "notebooks" / f"{stem}.py").write_text(
            f"# %% [markdown]\n# # {title}\n#\n# **Claim.** It works. Really.\n")

    def executed(mode: str, stem: str):
        md = nbformat.v4.new_markdown_cell(
            f"# {stem[:2]} — {mode} copy\n\nReproduces: nothing.\n\n**Claim.** {intro}It works."
            " Really.\n\nSee [a Beaver triple](../GLOSSARY.md#beaver-triple), "
            "[the report](../figures/REPORT.md#report), [the next one](01_b.ipynb), "
            "[the code](../lib/pkg/mod.py), [away](https://example.org/x) and "
            "![the figure](../figures/x/fig.png).\n\n## What you will learn\n1. shares")
        code = nbformat.v4.new_code_cell("player", execution_count=1)
        code.outputs = [_player_output()]
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
        "00_a.html", "01_b.html", "glossary.html", "index.html", "report.html"]
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


_PAGE_JS = """
const imgs = [...document.images];
const outs = [...document.querySelectorAll(
    '.jp-OutputArea-output, [data-mime-type="application/vnd.jupyter.stderr"]')];
const errors = outs.map(o => o.textContent)
    .filter(t => t.includes('Traceback'));
if (document.body.textContent.includes('An Exception was encountered at'))
    errors.push('papermill: An Exception was encountered');
return {
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
};
"""


def check_site(folder: Path) -> tuple[dict[str, list[str]], dict[str, dict]]:
    """Open every page of the site in headless Chromium; ``(problems, seen)``: the problems
    of each page (broken link, missing anchor, image not shown, error output) and what each
    page holds (images, svgs, players, tables)."""
    problems: dict[str, list[str]] = defaultdict(list)
    seen: dict[str, dict] = {}
    pages = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.html"))
    with _serve(folder) as base:
        driver = _browser()
        try:
            driver.set_page_load_timeout(60)
            for rel in pages:
                driver.get(base + rel)
                seen[rel] = driver.execute_script(_PAGE_JS)
        finally:
            driver.quit()
    for rel, info in seen.items():
        problems[rel] += [f"image not shown: {src}" for src in info["broken"]]
        problems[rel] += [f"error output: {t}" for t in info["errors"]]
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
                                     "![missing](../figures/x/missing.png) ", error=True)
    site.build(root=root, run_missing=False)
    problems, _ = check_site(root / "build" / "site")
    found = "\n".join(problems.get("00_a.html", []))
    assert "broken link: ../nowhere.md" in found
    assert "no anchor #nope on glossary.html" in found
    assert "image not shown: ../figures/x/missing.png" in found
    assert "error output: " in found and "Traceback" in found
    assert not problems.get("report.html") and not problems.get("glossary.html")


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
    for stem in built:
        nb = nbformat.read(res["sources"][stem][1], as_version=4)
        players = sum("ppnn-player-static" in o.get("data", {}).get("text/html", "")
                      for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
        assert seen[f"{stem}.html"]["players"] >= players, f"{stem}: player diagrams lost"
    assert sum(v["images"] for v in seen.values()) > 0
    assert sum(v["players"] for v in seen.values()) > 0
    assert seen["report.html"]["tables"] > 0
    print(f"site: {len(seen)} pages from {len(built)} quick runs, built in "
          f"{res['seconds']:.1f} s")

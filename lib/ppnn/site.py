"""The executed notebooks as a static site anyone can read without running them.

    python -m ppnn.site              # build/site/: full-mode runs where they exist, else quick
    python -m ppnn.site --quick      # quick-mode runs only
    python -m ppnn.site --no-run     # execute nothing: pages only for the runs that exist
    python -m ppnn.site --out DIR

**Pages.** ``index.html`` (what PPNN Lab is, one entry per notebook with what it teaches and
whether the page is a full or a quick run, links to the report, the glossary and the
explanation pages), ``NN_name.html`` per notebook, ``report.html`` (``figures/REPORT.md``),
``glossary.html`` (``GLOSSARY.md``), ``docs-<name>.html`` per ``docs/<name>.md``
(:func:`doc_page`) and ``assets/`` (every other file a page shows or links to). nbconvert's
``HTMLExporter`` (lab template) makes every page, a markdown file as a one-cell notebook;
nothing is sanitized, so the protocol players' static twins stay inline SVG.

**Sources.** A notebook's page is its executed copy from ``build/full/notebooks/`` (``make
reproduce``), else from ``build/quick/notebooks/`` (``make test``), else the notebook is run in
quick mode there (not with ``--no-run``: its index entry then says it was not run).

**Links.** A relative link on a page is resolved against its source's folder in the
repository and rewritten (:func:`rewrite_url`): a file that has a page links to the page
(``README.md`` -> ``index.html``, ``docs/wire.md`` -> ``docs-wire.html``, ...), an image or a
file under ``figures/`` to its copy in ``assets/``, any other file of the repository to it on
GitHub; a missing target is left as it is (``tests/test_site.py`` fails on it). Headings also
get GitHub's anchor (:func:`github_anchors`), so links written for GitHub keep their anchor.

Pages typeset their math with the site's own MathJax 2 (:func:`mathjax_dir`, from the
``jupyter-server-mathjax`` package) and load no script from the network. The site is built in
a temporary folder beside ``--out`` and renamed into place: a failed build leaves the
previous site as it was.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from . import frontdoor, paths

__all__ = ["Source", "find_sources", "rewrite_url", "rewrite_links", "github_anchors",
           "rebase_markdown_links", "mathjax_dir", "MATHJAX_URL", "doc_stems", "doc_page",
           "markdown_title", "notebook_summary", "build", "main"]

#: files copied into ``assets/`` when a page links to them (besides everything under figures/)
ASSET_SUFFIXES = {".png", ".svg", ".jpg", ".jpeg", ".gif", ".webp", ".csv", ".pdf"}
_ATTR = re.compile(r"""\b(href|src)=(["'])(.*?)\2""", re.S)
_HEADING = re.compile(r"<h([1-6]) id=\"([^\"]*)\">(.*?)</h\1>", re.S)


#: where a page loads MathJax from (relative: every page is at the site's top level); the
#: config is the package's own plus ``local/ppnn`` (:data:`_MATHJAX_LOCAL`)
MATHJAX_URL = "assets/mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe,local/ppnn"
#: the package ships MathJax's STIX web fonts only: use them, and no image fonts
_MATHJAX_LOCAL = """MathJax.Hub.Config({
  "HTML-CSS": {availableFonts: [], preferredFont: null, webFont: "STIX-Web", imageFont: null},
  menuSettings: {zoom: "None"}
});
MathJax.Ajax.loadComplete("[MathJax]/config/local/ppnn.js");
"""


#: nbconvert's lab template without the scripts it would fetch from a CDN and no page of the
#: site uses (require.js; mermaid, for diagrams no notebook draws)
_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""


def mathjax_dir() -> Path:
    """The MathJax 2 folder (``MathJax.js``, its config, jax and fonts) of the installed
    ``jupyter-server-mathjax`` package (found without importing it)."""
    import importlib.util

    spec = importlib.util.find_spec("jupyter_server_mathjax")
    where = [Path(p) / "static" for p in (spec.submodule_search_locations or [])] if spec else []
    found = next((p for p in where if (p / "MathJax.js").is_file()), None)
    if found is None:
        raise RuntimeError("the site's math renderer comes from the jupyter-server-mathjax "
                           "package, which is not installed: pip install -e . (make setup)")
    return found


def _copy_mathjax(dest: Path) -> None:
    shutil.copytree(mathjax_dir(), dest, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "config" / "local").mkdir(parents=True, exist_ok=True)
    (dest / "config" / "local" / "ppnn.js").write_text(_MATHJAX_LOCAL, encoding="utf-8")


@dataclass(frozen=True)
class Source:
    """The executed notebook a page is made from, and the mode it ran in."""

    path: Path
    mode: str  # "full" or "quick"


def find_sources(names: list[str], build: Path, quick_only: bool = False
                 ) -> dict[str, Source | None]:
    """For each notebook stem, its executed copy: full mode over quick mode (``quick_only``:
    quick mode only); None when neither exists."""
    modes = ("quick",) if quick_only else ("full", "quick")
    out: dict[str, Source | None] = {}
    for name in names:
        out[name] = next((Source(p, m) for m in modes
                          if (p := Path(build) / m / "notebooks" / f"{name}.ipynb").is_file()),
                         None)
    return out


def doc_stems(root: Path) -> list[str]:
    """The explanation pages of ``docs/`` (``docs/<stem>.md``), by stem, sorted."""
    return sorted(p.stem for p in (Path(root) / "docs").glob("*.md") if p.is_file())


def doc_page(stem: str) -> str:
    """The site page of ``docs/<stem>.md``."""
    return f"docs-{stem}.html"


def markdown_title(text: str, default: str = "") -> str:
    """The first ``# `` heading of a markdown text."""
    return next((ln[2:].strip() for ln in text.splitlines() if ln.startswith("# ")), default)


def page_names(notebook_stems: list[str], docs: list[str] = ()) -> dict[str, str]:
    """Repository path -> site page, for every file that has a page (``docs``: the stems of
    the ``docs/`` pages)."""
    pages = {"GLOSSARY.md": "glossary.html", "figures/REPORT.md": "report.html",
             "README.md": "index.html"}
    for stem in notebook_stems:
        for ext in (".py", ".ipynb"):
            pages[f"notebooks/{stem}{ext}"] = f"{stem}.html"
    for stem in docs:
        pages[f"docs/{stem}.md"] = doc_page(stem)
    return pages


def _repo_url(root: Path) -> str | None:
    """``https://github.com/OWNER/NAME`` from pyproject.toml's ``[tool.ppnn] repository``."""
    slug = frontdoor.repository(root)
    return f"https://github.com/{slug}" if slug else None


def rewrite_url(url: str, page_dir: str, pages: dict[str, str], root: Path,
                repo_url: str | None = None) -> tuple[str, str | None]:
    """Where a link or image ``url`` of a page whose source lives in ``page_dir`` (relative
    to the repository ``root``) points in the site: ``(new_url, asset)`` where ``asset`` is
    the repository path to copy into ``assets/`` (or None). Absolute URLs, in-page anchors and
    targets that do not exist come back unchanged."""
    parts = urlsplit(url)
    if parts.scheme or parts.netloc or not parts.path or url.startswith(("/", "data:")):
        return url, None
    frag = f"#{parts.fragment}" if parts.fragment else ""
    rel = os.path.normpath(os.path.join(page_dir, unquote(parts.path))).replace(os.sep, "/")
    if rel == ".." or rel.startswith("../"):
        return url, None
    if rel in pages and not (rel == "README.md" and frag):
        return pages[rel] + frag, None
    target = Path(root) / rel
    if target.is_file() and (PurePosixPath(rel).suffix.lower() in ASSET_SUFFIXES
                             or rel.startswith("figures/")):
        return f"assets/{rel}{frag}", rel
    if target.exists() and repo_url:
        kind = "tree" if target.is_dir() else "blob"
        return f"{repo_url}/{kind}/HEAD/{rel}{frag}", None
    return url, None


def rewrite_links(page: str, page_dir: str, pages: dict[str, str], root: Path,
                  repo_url: str | None, assets: set[str]) -> str:
    """Every ``href``/``src`` attribute of the HTML ``page`` through :func:`rewrite_url`; the
    assets it needs are added to ``assets``."""
    def one(m: re.Match) -> str:
        new, asset = rewrite_url(html.unescape(m.group(3)), page_dir, pages, root, repo_url)
        if asset:
            assets.add(asset)
        if new == html.unescape(m.group(3)):
            return m.group(0)
        return f"{m.group(1)}={m.group(2)}{html.escape(new, quote=True)}{m.group(2)}"

    return _ATTR.sub(one, page)


def _github_slug(text: str) -> str:
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def github_anchors(page: str) -> str:
    """Give every heading nbconvert rendered also GitHub's anchor for it (an empty
    ``<a id=...>`` inside the heading), numbered as GitHub numbers repeats."""
    ids = set(re.findall(r"\bid=\"([^\"]*)\"", page))
    seen: dict[str, int] = {}

    def one(m: re.Match) -> str:
        inner = re.sub(r"<a class=\"anchor-link\".*?</a>", "", m.group(3), flags=re.S)
        slug = _github_slug(html.unescape(re.sub(r"<[^>]+>", "", inner)))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        slug = f"{slug}-{n}" if n else slug
        if not slug or slug in ids:
            return m.group(0)
        ids.add(slug)
        level, hid, body = m.group(1), m.group(2), m.group(3)
        return f'<h{level} id="{hid}"><a id="{slug}"></a>{body}</h{level}>'

    return _HEADING.sub(one, page)


def notebook_summary(nb) -> tuple[str, str]:
    """``(title, what it teaches)`` from a notebook's first markdown cell: the heading, and
    the first sentence of the claim (or of the first paragraph after the citation)."""
    cell = next((c for c in nb.cells if c.cell_type == "markdown"), None)
    text = cell.source if cell else ""
    title = next((ln[2:].strip() for ln in text.splitlines() if ln.startswith("# ")), "")
    paras = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text)]
    paras = [p for p in paras if p and not p.startswith(("#", "Reproduces", "**Paper",
                                                         "**What you will learn"))]
    claim = next((p for p in paras if re.match(r"\*\*(The )?[Cc]laim", p)), None)
    line = claim or (paras[0] if paras else "")
    line = re.sub(r"^\*\*[^*]+\*\*\s*", "", line)
    line = re.split(r"(?<=[.?!])\s+(?=[A-Z*])", line, maxsplit=1)[0]
    return title, line


def rebase_markdown_links(text: str, from_dir: str) -> str:
    """Markdown links and images of ``text`` written relative to ``from_dir`` made relative
    to the repository root (a notebook's summary line, moved onto the index)."""
    def one(m: re.Match) -> str:
        url = m.group(2)
        parts = urlsplit(url)
        if parts.scheme or parts.netloc or not parts.path or url.startswith("/"):
            return m.group(0)
        rel = os.path.normpath(os.path.join(from_dir, parts.path)).replace(os.sep, "/")
        frag = f"#{parts.fragment}" if parts.fragment else ""
        return f"{m.group(1)}{rel}{frag}{m.group(3)}"

    return re.sub(r"(\]\()([^)\s]+)((?:\s+\"[^\"]*\")?\))", one, text)


def _run_note(nb, src: Source | None) -> str:
    """One line on how the page's notebook ran."""
    if src is None:
        return "not run yet (`make test` or `make reproduce`)"
    meta = nb.metadata.get("papermill", {})
    when = str(meta.get("end_time") or meta.get("start_time") or "")[:10]
    mode = ("full run (`QUICK = False`, `make reproduce`)" if src.mode == "full"
            else "quick run (`QUICK = True`: smaller sizes, as `make test` runs it)")
    errors = sum(1 for c in nb.cells if c.cell_type == "code"
                 for o in c.get("outputs", []) if o.get("output_type") == "error")
    return (mode + (f", {when}" if when else "")
            + (" -- **this run stopped at an error**" if errors or meta.get("exception")
               else ""))


def _markdown_notebook(text: str):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(text)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    return nb


def _intro(root: Path) -> str:
    """The README's opening paragraphs (before its first section or generated block)."""
    try:
        text = (root / "README.md").read_text(encoding="utf-8")
    except OSError:
        return ""
    body = []
    for ln in text.splitlines()[1:]:
        if ln.startswith(("#", "<!--")):
            break
        body.append(ln)
    return "\n".join(body).strip()


def _nav(stems: list[str], i: int, note: str, repo_url: str | None) -> str:
    """The line at the top of a notebook's page (links as repository paths, relative to
    notebooks/; rewritten like every other link)."""
    items = ["[all notebooks](../README.md)"]
    if i > 0:
        items.append(f"previous: [{stems[i - 1][:2]}]({stems[i - 1]}.ipynb)")
    if i + 1 < len(stems):
        items.append(f"next: [{stems[i + 1][:2]}]({stems[i + 1]}.ipynb)")
    items += ["[report](../figures/REPORT.md)", "[glossary](../GLOSSARY.md)"]
    if repo_url:
        owner_name = repo_url.removeprefix("https://github.com/")
        items.append(f"[source]({repo_url}/blob/HEAD/notebooks/{stems[i]}.py)")
        items.append(f"[run it on Binder](https://mybinder.org/v2/gh/{owner_name}/HEAD"
                     f"?urlpath=lab/tree/notebooks/{stems[i]}.ipynb)")
    return " · ".join(items) + f"\n\n*This page: {note}.*"


def _index(root: Path, stems: list[str], titles: dict[str, str], lines: dict[str, str],
           notes: dict[str, str], built: set[str], docs: dict[str, str] | None = None) -> str:
    """The index page as markdown (links as repository paths, rewritten like the others)."""
    out = ["# PPNN Lab — the notebooks, executed", "", _intro(root), "",
           "Every page below is a notebook as it ran, outputs included: tables, figures and "
           "the protocol players' diagrams (a player's slider needs a running kernel: open "
           "the notebook in JupyterLab or Binder to step through it).", "",
           "| | notebook | what it teaches | the page shows |", "|---|---|---|---|"]
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    for s in stems:
        name = f"[{cell(titles[s])}](notebooks/{s}.ipynb)" if s in built else cell(titles[s])
        out.append(f"| {s[:2]} | {name} | {cell(lines[s])} | {cell(notes[s])} |")
    out += ["", "Also:", "",
            "- [The reproduction report](figures/REPORT.md): the five papers' tables, each "
            "paper value beside ours with a status (`figures/REPORT.md`, written by "
            "`make reproduce`).",
            "- [The glossary](GLOSSARY.md): the terms the notebooks use, in a sentence or two "
            "each."]
    if docs:
        out.append("- How it works (`docs/`): why the design is this way, what is real and "
                   "what is simulated:")
        out += [f"  - [{cell(title)}](docs/{stem}.md)" for stem, title in docs.items()]
    out.append("")
    return "\n".join(out)


def _export(exporter, nb, title: str) -> str:
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    return body


def _replace_dir(tmp: Path, out: Path) -> None:
    """Put ``tmp`` where ``out`` is (the old site moved aside first, removed after)."""
    old = None
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}-old-", dir=out.parent))
        os.replace(out, old / out.name)
    os.replace(tmp, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def build(out: Path | None = None, quick_only: bool = False, run_missing: bool = True,
          names: list[str] | None = None, root: Path | None = None,
          progress: bool = True) -> dict:
    """Build the site into ``out`` (default ``build/site``); returns a summary: the pages
    written, each notebook's source and mode, the seconds it took."""
    import jinja2
    import nbformat
    from nbconvert import HTMLExporter

    from . import reproduce

    t0 = time.monotonic()
    root = Path(root or paths.root()).resolve()
    build_dir = root / "build"
    out = Path(out or build_dir / "site").resolve()
    notebooks = sorted((root / "notebooks").glob("[0-9][0-9]_*.py"))
    if names is not None:
        notebooks = [nb for nb in notebooks if nb.stem in names]
    stems = [nb.stem for nb in notebooks]
    sources = find_sources(stems, build_dir, quick_only)
    for nb in notebooks:
        if sources[nb.stem] is None and run_missing:
            print(f"site: no executed {nb.stem}: running it in quick mode", file=sys.stderr)
            path = reproduce.run_notebook(nb, quick=True, seed=0,
                                          out_dir=build_dir / "quick" / "notebooks",
                                          progress=progress)
            sources[nb.stem] = Source(path, "quick")

    exporter = HTMLExporter(template_name="lab", sanitize_html=False, mathjax_url=MATHJAX_URL,
                            extra_loaders=[jinja2.DictLoader({"ppnn_site.html.j2": _TEMPLATE})],
                            template_file="ppnn_site.html.j2")
    mathjax_dir()  # before anything is written: the site needs its math renderer
    repo_url = _repo_url(root)
    assets: set[str] = set()
    executed = {s: nbformat.read(src.path, as_version=4) for s, src in sources.items() if src}
    docs = {s: markdown_title((root / "docs" / f"{s}.md").read_text(encoding="utf-8"), s)
            for s in doc_stems(root)}
    pages = page_names([s for s in stems if s in executed], list(docs))  # unrun: on GitHub
    titles, lines, notes = {}, {}, {}
    for nb in notebooks:
        shown = executed.get(nb.stem)
        if shown is None:
            import jupytext

            shown = jupytext.read(nb)
        titles[nb.stem], line = notebook_summary(shown)
        lines[nb.stem] = rebase_markdown_links(line, "notebooks")
        titles[nb.stem] = titles[nb.stem] or nb.stem
        notes[nb.stem] = _run_note(shown, sources[nb.stem])

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-new-", dir=out.parent))
    written = []
    try:
        def write(name: str, page: str, page_dir: str) -> None:
            page = github_anchors(rewrite_links(page, page_dir, pages, root, repo_url, assets))
            (tmp / name).write_text(page, encoding="utf-8")
            written.append(name)

        for i, s in enumerate(stems):
            if s not in executed:
                continue
            nb = executed[s]
            # no saved widget state: nbconvert then shows each widget's text/html twin (the
            # players' static diagrams) instead of a widget no kernel can drive
            nb.metadata.pop("widgets", None)
            nav = nbformat.v4.new_markdown_cell(_nav(stems, i, notes[s], repo_url))
            nb.cells.insert(0, nav)
            write(f"{s}.html", _export(exporter, nb, titles[s]), "notebooks")
        markdown_pages = [("figures/REPORT.md", "report.html", "PPNN Lab — report"),
                          ("GLOSSARY.md", "glossary.html", "PPNN Lab — glossary")]
        markdown_pages += [(f"docs/{s}.md", doc_page(s), f"PPNN Lab — {title}")
                           for s, title in docs.items()]
        for rel, name, title in markdown_pages:
            text = (root / rel).read_text(encoding="utf-8")
            back = "[all notebooks](" + os.path.relpath("README.md", os.path.dirname(rel) or
                                                         ".") + ")\n\n"
            write(name, _export(exporter, _markdown_notebook(back + text), title),
                  os.path.dirname(rel))
        index = _index(root, stems, titles, lines, notes, set(executed), docs)
        write("index.html", _export(exporter, _markdown_notebook(index),
                                    "PPNN Lab — the notebooks, executed"), "")
        for rel in sorted(assets):
            dest = tmp / "assets" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / rel, dest)
        _copy_mathjax(tmp / "assets" / "mathjax")
        os.chmod(tmp, 0o755)
        _replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {"out": out, "pages": written, "assets": sorted(assets),
            "sources": {s: (src.mode, src.path) if src else None
                        for s, src in sources.items()},
            "seconds": time.monotonic() - t0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ppnn.site", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="quick-mode runs only")
    ap.add_argument("--no-run", action="store_true",
                    help="execute no notebook: pages only for the runs that exist")
    ap.add_argument("--out", type=Path, default=None, help="the site folder (build/site)")
    args = ap.parse_args(argv)
    res = build(args.out, quick_only=args.quick, run_missing=not args.no_run)
    root = paths.root()
    for s, src in res["sources"].items():
        where = os.path.relpath(src[1], root) if src else "not run"
        print(f"  {s:<16} {src[0] if src else '-':<6} {where}")
    out = res["out"]
    shown = out.relative_to(root) if out.is_relative_to(root) else out
    print(f"site: {len(res['pages'])} pages, {len(res['assets'])} assets in {shown}/ "
          f"({res['seconds']:.1f} s); open {shown}/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Run notebooks in JupyterLab in a real browser (Debian's headless Chromium via selenium).

What a user does: JupyterLab opens a notebook, Run > Run All Cells, wait until the kernel is
idle. The harness then saves the notebook (in a temporary copy of the notebooks, never the
checkout's) and reports, from the saved file and from the page:

* ``errors`` -- error outputs (a cell raised);
* ``widgets_expected`` / ``widgets_rendered`` / ``widget_failures`` -- widget-view outputs in
  the file, widget views the page actually drew, and "Error displaying widget" / unrendered
  fallbacks;
* ``images_expected`` / ``images_shown`` -- image outputs in the file and ``<img>`` elements
  the page shows in output areas;
* ``players`` / ``player_failures`` -- every protocol player stepped from its opening step to
  its last and every seat taken (:func:`step_players`), and what a student could not read;
* ``screenshot`` -- a PNG of the page after the run;
* ``walk`` / ``walk_failures`` / ``walk_notes`` -- every widget control moved to its ends and
  a middle position (:func:`walk_widgets`), and what :func:`check_page` found wrong on the
  page after Run All and after each move (:class:`WalkFinding`).

Nothing downloads a browser: the system's ``chromium`` and ``chromedriver`` are used, or the
caller is told they are missing (:func:`browser_missing`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def browser_missing() -> str | None:
    """Why the browser test cannot run here, or None."""
    for exe in (CHROMIUM, CHROMEDRIVER):
        if not Path(exe).exists():
            return f"{Path(exe).name} is not installed (Debian: apt-get install chromium " \
                   "chromium-driver; make test installs them when run as root)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class WalkFinding:
    """One thing wrong on the page: in which cell, after moving which widget to which
    position (``widget`` empty: after Run All, before any move)."""

    notebook: str
    cell: int  # index in the notebook's cells (markdown included), as in the .ipynb
    widget: str  # 'slider "step" (control 2 of the cell)', or '' after Run All
    position: str  # 'after Run All', 'min (1)', 'max (10)', 'middle (5)', 'option 3 "P1"'
    problem: str  # what is wrong, with the text that shows it

    def __str__(self) -> str:
        where = f"{self.widget} at {self.position}" if self.widget else self.position
        return f"{self.notebook} cell {self.cell} [{where}]: {self.problem}"


@dataclass
class RunReport:
    notebook: str
    seconds: float = 0.0
    finished: bool = False
    errors: list[str] = field(default_factory=list)
    widgets_expected: int = 0
    widgets_rendered: int = 0
    widget_failures: list[str] = field(default_factory=list)
    images_expected: int = 0
    images_shown: int = 0
    screenshot: Path | None = None
    dialogs: list[str] = field(default_factory=list)
    cells: int = 0
    executed: int = 0
    #: each protocol player's (current-step line, views-table text) at opening and at its
    #: last step, and the steps and seats checked (:func:`step_players`)
    players: list[dict] = field(default_factory=list)
    #: what :func:`step_players` found wrong with a player as a student reads it
    player_failures: list[str] = field(default_factory=list)
    #: each control moved by :func:`walk_widgets`: cell, widget, kind, positions reached
    walk: list[dict] = field(default_factory=list)
    #: what :func:`check_page` found after Run All and after each move (each finding once,
    #: at the first position that shows it)
    walk_failures: list[WalkFinding] = field(default_factory=list)
    #: settings a function refuses with its message (by design: no traceback), seen on the walk
    walk_notes: list[WalkFinding] = field(default_factory=list)
    walk_seconds: float = 0.0

    def problems(self) -> list[str]:
        out = []
        if not self.finished:
            out.append("the run did not finish (kernel still busy or cells pending)")
        if self.executed < self.cells and not self.errors:
            out.append(f"only {self.executed} of {self.cells} code cells ran (or the "
                       "notebook was not saved)")
        out += [f"error output: {e}" for e in self.errors]
        if self.widgets_rendered < self.widgets_expected:
            out.append(f"{self.widgets_expected - self.widgets_rendered} of "
                       f"{self.widgets_expected} widget views not rendered")
        out += [f"widget: {w}" for w in self.widget_failures]
        for i, p in enumerate(self.players):
            if not p.get("moved"):
                out.append(f"protocol player {i + 1}: moving its slider changed nothing "
                           f"(line before: {p.get('before', '')[:80]!r}, after: "
                           f"{p.get('after', '')[:80]!r})")
        out += [f"player: {p}" for p in self.player_failures]
        if self.images_shown < self.images_expected:
            out.append(f"{self.images_expected - self.images_shown} of "
                       f"{self.images_expected} figures not displayed")
        out += [f"walk: {f}" for f in self.walk_failures]
        return out


@contextlib.contextmanager
def jupyterlab(root_dir: Path, env: dict | None = None):
    """A JupyterLab server on a free local port serving ``root_dir``; yields its base URL
    (with the token as query)."""
    port, token = _free_port(), "ppnn-browser-test"
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
           "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={root_dir}", "--ServerApp.open_browser=False",
           "--allow-root", "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    log = open(root_dir / "jupyterlab.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(cmd, cwd=root_dir, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("JupyterLab did not start: see "
                                       f"{root_dir / 'jupyterlab.log'}") from None
                time.sleep(0.5)
        yield url, token
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _driver(width: int = 1400, height: int = 1000, extra: tuple[str, ...] = ()):
    """Headless Debian Chromium through its chromedriver; ``extra``: more command-line
    switches."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
              f"--window-size={width},{height}", *extra):
        opts.add_argument(a)
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)


def _dialogs(driver) -> list[str]:
    """Texts of the modal dialogs now open (then closed with their default button)."""
    texts = driver.execute_script("""
        const ds = [...document.querySelectorAll('dialog.jp-Dialog, .jp-Dialog')];
        const out = ds.map(d => d.textContent.trim().slice(0, 300));
        ds.forEach(d => { const b = d.querySelector('.jp-mod-accept, .jp-Dialog-button');
                          if (b) b.click(); });
        return out;
    """)
    if texts:
        time.sleep(1)
    return texts


_COMMAND_JS = """
const [command, finish, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
const app = window.jupyterapp;
const panel = app.shell.currentWidget;
(async () => {
  await panel.context.ready;
  await panel.sessionContext.ready;
  const run = app.commands.execute(command);
  if (finish) { await run; }
  done(true);
})().catch(e => done(String(e)));
"""


def _busy(driver) -> bool:
    """True while any cell waits or runs (prompt ``[*]``) or the kernel is not idle."""
    return driver.execute_script("""
        const prompts = [...document.querySelectorAll('.jp-InputArea-prompt')]
            .map(p => p.textContent.trim());
        const pending = prompts.some(t => t.includes('*'));
        const status = document.querySelector('.jp-Notebook-ExecutionIndicator');
        const busy = status && status.getAttribute('data-status') === 'busy';
        return pending || busy;
    """)


def run_notebook(url: str, token: str, root_dir: Path, name: str, shots: Path,
                 timeout: float = 600, walk: bool = True) -> RunReport:
    """Open ``name`` (an .ipynb under ``root_dir``) in JupyterLab, Run All, check the page,
    step through the protocol players (:func:`step_players`) and (``walk``) move every
    widget, checking the page after each move (:func:`walk_widgets`), save, report."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    rep = RunReport(name)
    driver = _driver()
    t0 = time.monotonic()
    try:
        wait = WebDriverWait(driver, 90)
        driver.get(f"{url}/lab/tree/{name}?token={token}&reset")
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, ".jp-Notebook .jp-Cell")))
        wait.until(lambda d: d.execute_script("return !!window.jupyterapp"))
        # what Run > Run All Cells does, once the notebook's kernel is up (JupyterLab's own
        # command, so nothing is lost to a menu that is still opening)
        driver.set_script_timeout(120)
        ok = driver.execute_async_script(_COMMAND_JS, "notebook:run-all-cells", False)
        if ok is not True:
            raise RuntimeError(f"JupyterLab could not run the notebook: {ok}")
        time.sleep(2)
        deadline = time.monotonic() + timeout
        idle_since = None
        while time.monotonic() < deadline:
            if _busy(driver):
                idle_since = None
            elif idle_since is None:
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since > 3:  # idle for 3 s: done
                rep.finished = True
                break
            time.sleep(1)
        rep.seconds = time.monotonic() - t0
        time.sleep(2)  # let widget views and images finish rendering
        page = driver.execute_script("""
            // top-level output areas (outputs nested inside an Output widget are part of it)
            const outs = [...document.querySelectorAll('.jp-OutputArea-output')]
                .filter(o => !o.parentElement.closest('.jp-OutputArea-output'));
            const broken = t => t.includes('Error displaying widget')
                || t.includes('Loading widget') || t.includes('Failed to load model');
            const widgets = outs.filter(o => o.querySelector('.jupyter-widgets'));
            const drawn = widgets.filter(o => !broken(o.textContent));
            const failures = outs.map(o => o.textContent).filter(broken);
            const imgs = outs.filter(o => o.querySelector('img')
                                          && !o.querySelector('.jupyter-widgets'));
            return {drawn: drawn.length, failures: failures.map(t => t.slice(0, 200)),
                    images: imgs.length};
        """)
        shots.mkdir(parents=True, exist_ok=True)
        for old in shots.glob(f"{Path(name).stem}-walk-*.png"):
            old.unlink()  # a previous run's
        record = _recorder(driver, rep, shots)
        settle(driver)
        record(check_page(driver), "", "after Run All")
        rep.players, rep.player_failures = step_players(driver)
        settle(driver)
        record(check_page(driver), "", "after every protocol player stepped to its last step")
        rep.widgets_rendered = page["drawn"]
        rep.widget_failures = page["failures"]
        rep.images_shown = page["images"]
        rep.screenshot = shots / f"{Path(name).stem}.png"
        driver.save_screenshot(str(rep.screenshot))
        if walk:
            t1 = time.monotonic()
            rep.walk = walk_widgets(driver, record)
            rep.walk_seconds = time.monotonic() - t1
        rep.dialogs += _dialogs(driver)
        driver.execute_async_script(_COMMAND_JS, "docmanager:save", True)
        time.sleep(2)
        rep.dialogs += _dialogs(driver)
    finally:
        driver.quit()
    nb = nbformat.read(root_dir / name, as_version=4)
    for c in nb.cells:
        if c.cell_type == "code":
            rep.cells += 1
            rep.executed += bool(c.get("execution_count"))
        for o in c.get("outputs", []) if c.cell_type == "code" else []:
            if o.get("output_type") == "error":
                rep.errors.append(f"{o.get('ename')}: {o.get('evalue')}"[:300])
            data = o.get("data", {})
            if "application/vnd.jupyter.widget-view+json" in data:
                rep.widgets_expected += 1
            if any(k.startswith("image/") for k in data):
                rep.images_expected += 1
    return rep


def _recorder(driver, rep: RunReport, shots: Path, max_shots: int = 5):
    """``record(findings, widget, position)``: each finding of :func:`check_page` onto
    ``rep`` once (at the first position that shows it); a screenshot of the cell for the
    first ``max_shots`` failures (``<notebook>-walk-<n>.png``)."""
    seen: set = set()

    def record(found: list[dict], widget: str, position: str) -> None:
        for f in found:
            key = (f["cell"], f["kind"], f["problem"])
            if key in seen:
                continue
            seen.add(key)
            wf = WalkFinding(rep.notebook, f["cell"], widget, position, f["problem"])
            if f["kind"] != "fail":
                rep.walk_notes.append(wf)
                continue
            rep.walk_failures.append(wf)
            if len(rep.walk_failures) <= max_shots:
                for _ in range(2):  # twice: cells drawn on the way move the target
                    driver.execute_script("""
                        const w = window.jupyterapp.shell.currentWidget.content
                            .widgets[arguments[0]];
                        if (w) (w.outputArea || w).node.scrollIntoView({block: 'start'});
                    """, f["cell"])
                    time.sleep(0.3)
                driver.save_screenshot(
                    str(shots / f"{Path(rep.notebook).stem}-walk-{len(rep.walk_failures)}.png"))

    return record


_PLAYERS_JS = """
    return [...document.querySelectorAll('.ppnn-player')].map(p => ({
        line: (p.querySelector('.ppnn-current') || {}).textContent || '',
        table: (p.querySelector('.ppnn-views') || {}).textContent || '',
        red: [...p.querySelectorAll('svg text')].filter(
            t => (t.getAttribute('style') || '').includes('#c0392b')
                 || t.getAttribute('fill') === '#c0392b').map(t => t.textContent).join(' | ')}));
"""


_PLAYER_VIEW_JS = r"""
const [player, k] = arguments;
const line = player.querySelector('.ppnn-current');
const diagram = player.querySelector('.ppnn-diagram');
const out = {step: diagram ? +diagram.dataset.step : null, line: line ? line.textContent : '',
             seat: diagram ? diagram.dataset.seat : '',
             full: !!diagram && diagram.dataset.full === '1'};
if (!diagram || !line || k === null) return out;
// what a reader sees: the window, less what the notebook's scrolling area hides
let vis = {top: 0, left: 0, bottom: window.innerHeight, right: window.innerWidth};
for (let p = player.parentElement; p; p = p.parentElement) {
  const s = getComputedStyle(p);
  if (/(auto|scroll)/.test(s.overflowY + s.overflowX) && p.clientHeight > 200) {
    const r = p.getBoundingClientRect();
    vis = {top: Math.max(vis.top, r.top), left: Math.max(vis.left, r.left),
           bottom: Math.min(vis.bottom, r.bottom), right: Math.min(vis.right, r.right)};
  }
}
const inView = el => {
  if (!el) return false;
  const r = el.getBoundingClientRect();
  return r.height > 0 && r.top >= vis.top - 1 && r.bottom <= vis.bottom + 1
         && r.left >= vis.left - 1 && r.right <= vis.right + 1;
};
const byId = id => diagram.querySelector(`[id="${id}"]`);
out.seen = !out.line.includes('does not see');
out.has_value = out.seen && !!line.querySelector('.ppnn-value');
out.value_el = !!byId(`ppnn-step-${k}-value`);
out.line_in_view = inView(line);
out.row_in_view = inView(byId(`ppnn-step-${k}-value`) || byId(`ppnn-step-${k}-label`));
out.mark_in_view = inView(byId('ppnn-current-mark'));
out.title = ((byId('ppnn-title') || {}).textContent || '').replace(/\s+/g, '');
// texts cut with an ellipsis, and texts that cross a lane line
const texts = [...diagram.querySelectorAll('[id^="ppnn-step-"]')];
out.cut = texts.map(t => t.textContent).filter(t => t.includes('…'));
const lanes = [...diagram.querySelectorAll('[id^="ppnn-lane-"]')].map(l => {
  const r = l.getBoundingClientRect(); return (r.left + r.right) / 2; });
out.crossing = texts.filter(t => {
  const r = t.getBoundingClientRect();
  return lanes.some(x => r.left + 1 < x && x < r.right - 1);
}).map(t => t.id + ': ' + t.textContent.slice(0, 60));
return out;
"""


_TO_TOP_JS = """
const el = arguments[0];
let s = el.parentElement;
while (s && !(s.scrollHeight > s.clientHeight + 1
              && /(auto|scroll)/.test(getComputedStyle(s).overflowY))) s = s.parentElement;
if (!s) { el.scrollIntoView({block: 'start'}); return 0; }
const d = el.getBoundingClientRect().top - s.getBoundingClientRect().top - 4;
s.scrollTop += d;
return d;
"""


def _to_top(driver, el, tries: int = 12) -> None:
    """Scroll ``el`` to the top of the notebook's scrolling area, as a reader does, until it
    stays there (JupyterLab draws the cells around it as they come into view, which moves
    it)."""
    for _ in range(tries):
        d = driver.execute_script(_TO_TOP_JS, el)
        time.sleep(0.15)
        if abs(d) < 3:
            return


def _player_view(driver, player, step: int | None) -> dict:
    return driver.execute_script(_PLAYER_VIEW_JS, player, step)


def _view_problems(v: dict, k: int, seat: str) -> list[str]:
    """What is wrong with a player at step ``k`` (from :data:`_PLAYER_VIEW_JS`)."""
    out = []
    if "line_in_view" not in v:
        return [f"step {k} (seat {seat}): the player shows no current-step line or diagram"]
    if not v["line_in_view"]:
        out.append("the current-step line is out of view")
    if v["has_value"] and not v["value_el"]:
        out.append("the current step's value is not drawn in the diagram")
    if not v["row_in_view"]:
        out.append("the current step's row of the diagram is out of view")
    if not v["mark_in_view"]:
        out.append("the current step's mark is out of view")
    if v["cut"] and not v["full"]:
        out.append(f"a label is cut while the figure has room: {v['cut'][0]!r}")
    if v["crossing"]:
        out.append(f"a label crosses a lane line: {v['crossing'][0]}")
    return [f"step {k} (seat {seat}): {p}" for p in out]


def step_players(driver, timeout: float = 30) -> tuple[list[dict], list[str]]:
    """Every protocol player on the page (``.ppnn-player``) as a student reads it: scrolled to
    the top of the notebook's view, its opening step checked (one its seat sees), then
    stepped with the keyboard (Right arrow on the slider's handle) from there to the last
    step -- at each step the current-step line, the current row of the diagram (its value
    when the seat sees one) and the current mark must be in view, no label cut while the
    diagram has room, none across a lane line -- then every seat taken, the diagram's title
    naming it. Returns, per player, the current-step line, the highlighted text of the
    diagram and the views table at opening and at the last step (``moved`` when all three
    changed) and the steps checked, and the problems found."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    before = driver.execute_script(_PLAYERS_JS)
    players = driver.find_elements(By.CSS_SELECTOR, ".ppnn-player")
    out, problems = [], []
    for i, (p, b) in enumerate(zip(players, before)):
        name = f"player {i + 1}"
        entry = {"before": b["line"], "after": b["line"], "red_before": b["red"],
                 "red_after": b["red"], "moved": False, "steps": 0, "seats": 0}
        out.append(entry)
        if "does not see" in b["line"]:
            problems.append(f"{name} opens on a step its seat does not see: {b['line'][:80]!r}")
        handles = p.find_elements(By.CSS_SELECTOR, ".widget-slider .noUi-handle")
        if not handles:
            continue
        h = handles[0]
        lo, hi = (int(float(h.get_attribute(a))) for a in ("aria-valuenow", "aria-valuemax"))
        _to_top(driver, p)
        seat = _player_view(driver, p, None)["seat"]
        found: dict[str, str] = {}  # one finding of each kind per player
        for k in range(lo, hi + 1):
            if k > lo:
                driver.execute_script("arguments[0].focus({preventScroll: true})", h)
                h.send_keys(Keys.ARROW_RIGHT)
            deadline = time.monotonic() + timeout
            while True:  # the line is drawn last: once it shows step k, so does the rest
                v = _player_view(driver, p, k)
                if v["step"] == k and v["line"].startswith(f"step {k}/"):
                    break
                if time.monotonic() > deadline:
                    problems.append(f"{name}: step {k} was not drawn within {timeout:.0f} s")
                    break
                time.sleep(0.03)
            entry["steps"] += 1
            for f in _view_problems(v, k, seat):
                found.setdefault(f.split(": ", 1)[1], f)
        problems += [f"{name} {f}" for f in found.values()]
        after = driver.execute_script(_PLAYERS_JS)[i]
        entry.update(after=after["line"], red_after=after["red"],
                     moved=after["line"] != b["line"] and after["table"] != b["table"]
                     and after["red"] != b["red"])
        # every seat: the title follows it
        select = p.find_elements(By.CSS_SELECTOR, ".widget-dropdown select")
        if select:
            sel = Select(select[0])
            options = [o.text.replace("\u00a0", " ") for o in sel.options]
            first = next((j for j, o in enumerate(sel.options) if o.is_selected()), 0)
            for j, option in enumerate(options):
                sel.select_by_index(j)
                settle(driver)
                v = _player_view(driver, p, hi)
                entry["seats"] += 1
                if v["seat"] != option or f"(seat:{option})" not in v.get("title", ""):
                    problems.append(f"{name}: seat {option!r} taken, the title says "
                                    f"{v.get('title', '')[:80]!r} (diagram of seat "
                                    f"{v['seat']!r})")
            sel.select_by_index(first)
            settle(driver)
    return out, problems


def prepare_copy(src_dir: Path, names: list[str], dest: Path) -> Path:
    """Copy the notebooks (both halves of each jupytext pair) to ``dest``: JupyterLab saves
    there, never into the checkout."""
    dest.mkdir(parents=True, exist_ok=True)
    for n in names:
        for ext in (".ipynb", ".py"):
            p = (src_dir / n).with_suffix(ext)
            if p.exists():
                shutil.copy2(p, dest / p.name)
    return dest


def lab_env(root: Path) -> dict:
    """The environment a user's JupyterLab has: no PPNN_* variables (the notebooks find the
    checkout themselves), a non-interactive matplotlib is not forced."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PPNN_")}
    env.pop("MPLBACKEND", None)
    env["JUPYTER_CONFIG_DIR"] = str(root / ".jupyter-config")  # no user settings leak in
    settings = root / ".lab-settings"
    notify = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notify.parent.mkdir(parents=True, exist_ok=True)
    notify.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    env["JUPYTERLAB_SETTINGS_DIR"] = str(settings)  # no news pop-up over the screenshots
    return env


def summary(reports: list[RunReport]) -> str:
    return json.dumps([{"notebook": r.notebook, "seconds": round(r.seconds, 1),
                        "walk_seconds": round(r.walk_seconds, 1),
                        "controls_moved": walk_counts(r), "problems": r.problems(),
                        "notes": [str(n) for n in r.walk_notes],
                        "screenshot": str(r.screenshot)}
                       for r in reports], indent=1)


def walk_counts(rep: RunReport) -> dict:
    """How many controls of each kind the walk moved, and how many moves in all."""
    out: dict = {}
    for w in rep.walk:
        out[w["kind"]] = out.get(w["kind"], 0) + 1
    out["moves"] = sum(len(w["positions"]) for w in rep.walk)
    return out


# -- the widget walk ---------------------------------------------------------------------------
#: what the page check reads as an error in an output area (case-sensitive)
_ERROR_PATTERNS = [
    ("traceback", r"Traceback"),
    ("widget not displayed", r"Error displaying widget|Failed to load model|Loading widget\.\.\."),
    ("error text", r"\b[A-Za-z_]*(?:Error|Exception)\b"),
]
#: raw object reprs that must not reach an output area
_REPRS = ["PosixPath(", "WindowsPath(", "<ppnn.", " object at 0x", "<Figure size",
          "<matplotlib.", "<IPython.", "<interactive view>", "<protocol player"]
#: ppnn.widgets shows a setting its function refuses as this line (by design, no traceback):
#: a note, not a failure
_REFUSED = "This setting is outside what the function accepts"

_CHECK_JS = r"""
const [ERRS, REPRS, REFUSED] = arguments;
const panel = window.jupyterapp.shell.currentWidget;
const cellEls = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
const index = el => {
  const i = panel && panel.content ? panel.content.widgets.findIndex(w => w.node === el) : -1;
  return i >= 0 ? i : cellEls.indexOf(el);
};
const visible = el => !el.checkVisibility || el.checkVisibility({visibilityProperty: true});
const textOf = el => {  // the text a reader sees: no <style>/<script> bodies
  const parts = [], walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const p = walk.currentNode.parentElement;
    if (p && !p.closest('style, script')) parts.push(walk.currentNode.nodeValue);
  }
  return parts.join('');
};
const squash = t => t.replace(/\s+/g, ' ').trim();
const around = (t, i, n = 160) => squash(t.slice(Math.max(0, i - 60), i + n));
const hash = s => {  // FNV-1a, with the length: a fingerprint, not a proof
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
  return (h >>> 0).toString(16) + '/' + s.length;
};
const topLevel = (els, sel) => els.filter(e => !e.parentElement.closest(sel));
// figures: <img> with a source, and drawn <svg> (not icons: nested, in buttons, or small)
const figures = root => [
  ...[...root.querySelectorAll('img')].filter(i => i.getAttribute('src') && visible(i))
    .map(i => ({fp: 'img:' + hash(i.getAttribute('src')), what: 'image'})),
  ...topLevel([...root.querySelectorAll('svg')], 'svg')
    .filter(s => !s.closest('button, .widget-play') && visible(s))
    .map(s => s.outerHTML).filter(h => h.length > 2000)
    .map(h => ({fp: 'svg:' + hash(h), what: 'svg figure'}))];
const tables = root => topLevel([...root.querySelectorAll('table')], 'table').filter(visible)
  .map(t => squash(t.textContent)).filter(t => t);
const out = [], firstCell = new Map();
for (const cellEl of cellEls) {
  const area = cellEl.querySelector('.jp-Cell-outputArea');
  if (!area) continue;
  const cell = index(cellEl), add = (kind, problem) => out.push({cell, kind, problem});
  const text = textOf(area);
  const err = ERRS.map(([what, re]) => [what, new RegExp(re).exec(text)]).find(e => e[1]);
  if (err) add('fail', `${err[0]} in the output: '${around(text, err[1].index)}'`);
  else {  // a traceback is red too: one finding for it
    for (const e of area.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"]')) {
      const t = squash(e.textContent);
      if (t) add('fail', `stderr output (red): '${t.slice(0, 200)}'`);
    }
  }
  for (const r of REPRS) {
    const i = text.indexOf(r);
    if (i >= 0) add('fail', `raw object repr '${r}' in the output: '${around(text, i)}'`);
  }
  const r = text.indexOf(REFUSED);
  if (r >= 0) add('note', `refused setting: '${around(text, r, 300)}'`);
  // one cell: no table or figure twice (a widget's live output and a stale copy of it)
  const seen = new Map();
  for (const t of tables(area)) {
    if (seen.get('t:' + t) === 1)
      add('fail', `the same table twice in the cell's output: '${t.slice(0, 160)}'`);
    seen.set('t:' + t, (seen.get('t:' + t) || 0) + 1);
  }
  const figs = figures(area);
  for (const f of figs) {
    if (seen.get(f.fp) === 1) add('fail', `the same ${f.what} twice in the cell's output`);
    seen.set(f.fp, (seen.get(f.fp) || 0) + 1);
    if (firstCell.has(f.fp) && firstCell.get(f.fp) !== cell)
      add('fail', `the same ${f.what} as cell ${firstCell.get(f.fp)}`);
    else if (!firstCell.has(f.fp)) firstCell.set(f.fp, cell);
  }
  // a widget's cell: nothing static beside the widget (the static twin of a player or an
  // interactive view is in the output's data, never drawn next to the live widget)
  const OUT = '.jp-OutputArea-output', outs = topLevel([...area.querySelectorAll(OUT)], OUT);
  if (outs.some(o => o.querySelector('.jupyter-widgets'))) {
    outs.forEach((o, k) => {
      if (o.querySelector('.jupyter-widgets')) return;
      const t = tables(o), f = figures(o);
      if (t.length)
        add('fail', `a static table beside the widget (output ${k + 1}): '${t[0].slice(0, 160)}'`);
      if (f.length) add('fail', `a static ${f[0].what} beside the widget (output ${k + 1})`);
    });
  }
  if ([...area.querySelectorAll('.ppnn-player-static')].some(visible))
    add('fail', "a player's static twin is drawn in the live notebook");
}
return out;
"""

_SEL = (".widget-slider, .widget-dropdown, .widget-select, .widget-toggle-buttons, .widget-radio, "
        ".widget-checkbox, .widget-play, .widget-toggle-button")

_CONTROLS_JS = r"""
const SEL = arguments[0];
const panel = window.jupyterapp.shell.currentWidget;
const cellEls = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
const out = [];
for (const cellEl of cellEls) {
  let i = panel && panel.content ? panel.content.widgets.findIndex(w => w.node === cellEl) : -1;
  if (i < 0) i = cellEls.indexOf(cellEl);
  const area = cellEl.querySelector('.jp-Cell-outputArea');
  if (!area) continue;
  [...area.querySelectorAll(SEL)].filter(e => !e.parentElement.closest(SEL)).forEach((el, k) => {
    const label = [...el.querySelectorAll('.widget-label, .widget-label-basic')]
      .map(l => l.textContent.replace(/\u200b/g, '').trim()).find(t => t) || '';
    const c = {el, cell: i, nth: k + 1, label};
    const handle = el.querySelector('.noUi-handle');
    if (el.matches('.widget-play')) c.kind = 'play';
    else if (handle) {
      c.kind = 'slider';
      const hs = [...el.querySelectorAll('.noUi-handle')], api = el.querySelector('.noUi-target');
      c.min = +handle.getAttribute('aria-valuemin');
      c.max = +hs[hs.length - 1].getAttribute('aria-valuemax');
      c.now = +handle.getAttribute('aria-valuenow');  // a range slider's low and high ends
      c.last = +hs[hs.length - 1].getAttribute('aria-valuenow');
      c.step = (api && api.noUiSlider && +api.noUiSlider.options.step) || 1;
      c.shown = ((el.querySelector('.widget-readout') || {}).textContent || '').trim();
      c.disabled = handle.closest('[disabled]') !== null;
    } else if (el.querySelector('select')) {
      const s = el.querySelector('select');
      c.kind = 'dropdown';
      c.options = [...s.options].map(o => o.textContent.replace(/\u00a0/g, ' '));
      c.now = s.selectedIndex;
      c.disabled = s.disabled;
    } else if (el.matches('.widget-toggle-buttons, .widget-radio')) {
      const bs = [...el.querySelectorAll('button, input[type=radio]')];
      c.kind = el.matches('.widget-radio') ? 'radio buttons' : 'toggle buttons';
      c.options = bs.map(b => (b.textContent || (b.parentElement || {}).textContent || '').trim());
      c.now = bs.findIndex(b => b.classList.contains('mod-active') || b.checked);
      c.disabled = bs.some(b => b.disabled);
    } else {
      const box = el.querySelector('input[type=checkbox]');
      c.kind = box ? 'checkbox' : 'toggle button';
      c.now = box ? box.checked : el.classList.contains('mod-active');
      c.disabled = box ? box.disabled : el.disabled;
      if (!c.label) c.label = el.textContent.trim();
    }
    out.push(c);
  });
}
return out;
"""

_IDLE_JS = """
const panel = window.jupyterapp.shell.currentWidget;
const k = panel && panel.sessionContext.session && panel.sessionContext.session.kernel;
if (!k) return {idle: true, quiet: 1e9};
if (window.__ppnnKernel !== k) {  // time of the last message to or from the kernel
  window.__ppnnKernel = k;
  window.__ppnnLast = Date.now();
  k.anyMessage.connect(() => { window.__ppnnLast = Date.now(); });
}
return {idle: k.status === 'idle', quiet: Date.now() - window.__ppnnLast};
"""


def settle(driver, quiet: float = 0.25, timeout: float = 60) -> bool:
    """Wait until the kernel is idle and no message went to or came from it for ``quiet``
    seconds (a widget's change is a comm message; its redraw the kernel's answer)."""
    time.sleep(0.1)
    deadline = time.monotonic() + timeout
    while True:
        s = driver.execute_script(_IDLE_JS)
        if s["idle"] and s["quiet"] >= quiet * 1000:
            time.sleep(0.05)  # the page draws what arrived
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


def check_page(driver) -> list[dict]:
    """What is wrong in the notebook's output areas now, one dict per finding: ``cell``,
    ``kind`` ('fail', or 'note' for a refused setting) and ``problem``. Checked in every code
    cell's output area (outputs inside widgets included):

    * error text: 'Traceback', 'Error displaying widget', an ``...Error``/``...Exception``
      word, red stderr output;
    * a raw object repr: ``PosixPath(``, ``<ppnn.``, `` object at 0x``, ``<Figure size``, ...;
    * the same table (by its text) or figure (by its image data) twice in one cell;
    * in a cell with a widget, a table or figure in another output beside it (a stale copy),
      or a player's static twin (``.ppnn-player-static``) drawn at all;
    * the same figure in two cells.
    """
    return driver.execute_script(_CHECK_JS, [list(p) for p in _ERROR_PATTERNS], _REPRS,
                                 _REFUSED)


def _controls(driver) -> list[dict]:
    return driver.execute_script(_CONTROLS_JS, _SEL)


def _positions(c: dict) -> list:
    """Where to move a control: its ends and a middle."""
    if c["kind"] == "slider":
        # a middle only if there is a value between the ends
        return ["min", "max", "middle"] if c["max"] - c["min"] >= 2 * c["step"] else \
            ["min", "max"]
    if c["kind"] in ("dropdown", "toggle buttons", "radio buttons"):
        n = len(c["options"])
        return list(dict.fromkeys([0, n - 1, (n - 1) // 2])) if n else []
    if c["kind"] == "play":
        return ["play one step, pause", "stop"]
    return ["flip", "flip back"]  # checkbox, toggle button


def _move(driver, c: dict, pos) -> None:
    """Move control ``c`` (from :func:`_controls`) to ``pos`` (from :func:`_positions`) as a
    user does: keyboard, clicks, the dropdown's list."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    el = c["el"]
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", el)
    if c["kind"] == "slider":
        handles = el.find_elements(By.CSS_SELECTOR, ".noUi-handle")
        if pos == "middle":  # a click on the middle of the track moves the handle there
            track = el.find_element(By.CSS_SELECTOR, ".noUi-target")
            ActionChains(driver).move_to_element(track).click().perform()
        else:  # keyboard: Home / End on the handle (the last handle for a range's max)
            h = handles[0] if pos == "min" else handles[-1]
            driver.execute_script("arguments[0].focus()", h)
            h.send_keys(Keys.HOME if pos == "min" else Keys.END)
        return
    if c["kind"] == "dropdown":
        Select(el.find_element(By.TAG_NAME, "select")).select_by_index(pos)
    elif c["kind"] in ("toggle buttons", "radio buttons"):
        el.find_elements(By.CSS_SELECTOR, "button, input[type=radio]")[pos].click()
    elif c["kind"] == "play":
        buttons = el.find_elements(By.TAG_NAME, "button")  # play/pause, stop, repeat
        if pos == "stop":
            buttons[1].click()
        else:
            buttons[0].click()  # play: one step at once, the next after the interval
            time.sleep(0.3)
            buttons[0].click()  # pause
    else:
        (el.find_elements(By.CSS_SELECTOR, "input[type=checkbox]") or [el])[0].click()


def _reached(c: dict, pos, now: dict) -> tuple[str, bool]:
    """The position label for the report and whether the control is where it was sent."""
    if c["kind"] == "slider":
        ok = {"min": now["now"] == now["min"], "max": now["last"] == now["max"],
              "middle": now["min"] < now["now"] < now["max"]}[pos]
        return f"{pos} ({now['shown'] or format(now['now'], 'g')})", ok
    if c["kind"] in ("dropdown", "toggle buttons", "radio buttons"):
        return f"option {pos + 1}/{len(c['options'])} {c['options'][pos]!r}", now["now"] == pos
    return pos, True


def _describe(c: dict) -> str:
    label = f' "{c["label"]}"' if c["label"] else ""
    return f"{c['kind']}{label} (control {c['nth']} of the cell)"


def walk_widgets(driver, record, limit: int = 300) -> list[dict]:
    """Move every widget control on the page, in page order, to its ends and a middle
    (sliders: Home, End, a click mid-track; dropdowns and button groups: first, last and
    middle option; play: one step then stop; checkboxes: flip and back), wait until the
    kernel has answered, and ``record(findings, widget, position)`` what :func:`check_page`
    finds after each move. Controls that appear on the way (a player re-made by a
    dropdown) are walked too. Returns one entry per control moved."""
    walked = []
    k = 0
    while k < limit:
        controls = _controls(driver)
        if k >= len(controls):
            break
        c = controls[k]
        k += 1
        entry = {"cell": c["cell"], "widget": _describe(c), "kind": c["kind"], "positions": []}
        walked.append(entry)
        if c.get("disabled"):
            entry["positions"].append("disabled: not moved")
            continue
        for pos in _positions(c):
            now = _controls(driver)  # the page may have redrawn it
            if len(now) < k:
                break
            c = now[k - 1]
            _move(driver, c, pos)
            answered = settle(driver)
            now = next((x for x in _controls(driver) if x["cell"] == c["cell"]
                        and x["nth"] == c["nth"]), c)
            label, ok = _reached(c, pos, now)
            entry["positions"].append(label)
            found = check_page(driver)
            if not ok:
                found.append({"cell": c["cell"], "kind": "fail",
                              "problem": f"the {c['kind']} did not reach {label}"})
            if not answered:
                found.append({"cell": c["cell"], "kind": "fail",
                              "problem": "the kernel did not become idle within 60 s"})
            record(found, _describe(c), label)
    return walked

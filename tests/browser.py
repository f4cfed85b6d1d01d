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
* ``screenshot`` -- a PNG of the page after the run.

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
    #: each protocol player's (current-step line, views-table text) before and after its
    #: slider was moved to the last step (:func:`move_players`)
    players: list[dict] = field(default_factory=list)

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
        if self.images_shown < self.images_expected:
            out.append(f"{self.images_expected - self.images_shown} of "
                       f"{self.images_expected} figures not displayed")
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


def _driver(width: int = 1400, height: int = 1000):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
              f"--window-size={width},{height}"):
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
                 timeout: float = 600) -> RunReport:
    """Open ``name`` (an .ipynb under ``root_dir``) in JupyterLab, Run All, save, report."""
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
        rep.players = move_players(driver)
        rep.widgets_rendered = page["drawn"]
        rep.widget_failures = page["failures"]
        rep.images_shown = page["images"]
        shots.mkdir(parents=True, exist_ok=True)
        rep.screenshot = shots / f"{Path(name).stem}.png"
        driver.save_screenshot(str(rep.screenshot))
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


_PLAYERS_JS = """
    return [...document.querySelectorAll('.ppnn-player')].map(p => ({
        line: (p.querySelector('.ppnn-current') || {}).textContent || '',
        table: (p.querySelector('.ppnn-views') || {}).textContent || '',
        red: [...p.querySelectorAll('svg text')].filter(
            t => (t.getAttribute('style') || '').includes('#c0392b')
                 || t.getAttribute('fill') === '#c0392b').map(t => t.textContent).join(' | ')}));
"""


def move_players(driver, settle: float = 20) -> list[dict]:
    """Move the step slider of every protocol player on the page (``.ppnn-player``) to its
    last step, as a user does with the keyboard (focus the handle, End), and report for each
    the current-step line, the highlighted text of the diagram and the views table before and
    after; ``moved`` when the line and the table both changed."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    before = driver.execute_script(_PLAYERS_JS)
    players = driver.find_elements(By.CSS_SELECTOR, ".ppnn-player")
    for p in players:
        handles = p.find_elements(By.CSS_SELECTOR, ".widget-slider .noUi-handle")
        if not handles:
            continue
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", handles[0])
        handles[0].click()
        handles[0].send_keys(Keys.END)
    out = []
    deadline = time.monotonic() + settle
    while True:  # the kernel redraws each player (a round trip per slider)
        after = driver.execute_script(_PLAYERS_JS)
        out = [{"before": b["line"], "after": a["line"], "red_before": b["red"],
                "red_after": a["red"],
                "moved": a["line"] != b["line"] and a["table"] != b["table"]
                and a["red"] != b["red"]}
               for b, a in zip(before, after)]
        if all(o["moved"] for o in out) or time.monotonic() > deadline:
            return out
        time.sleep(1)


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
                        "problems": r.problems(), "screenshot": str(r.screenshot)}
                       for r in reports], indent=1)

"""Rich display in a real JupyterLab: a notebook run in headless Chromium shows what the kernel sent.

The kernel's MIME bundles are checked elsewhere (tests/kernel); this test proves JupyterLab turns
them into the intended DOM: the HTML table of ``api.print``, a PNG from an MCP image result,
JupyterLab's JSON viewer for a plain object result, ``api.html``, and a TypeScript cell that runs
and is highlighted as TypeScript.

A private ``jupyter lab`` serves a temporary root dir holding one notebook; its config, runtime,
data, settings and workspace dirs are temporary too, so nothing of the user's setup leaks in.
The kernelspec comes from ``JUPYTER_PATH``, which tests/conftest.py points at a fresh install.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

playwright_api = pytest.importorskip("playwright.sync_api")
Locator = playwright_api.Locator
Page = playwright_api.Page
PlaywrightError = playwright_api.Error
expect = playwright_api.expect
sync_playwright = playwright_api.sync_playwright

T = TypeVar("T")

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(170)]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
SCREENSHOT = ARTIFACTS / "jupyterlab-display.png"
FAILURE_SCREENSHOT = ARTIFACTS / "jupyterlab-failure.png"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

KERNELSPEC = {"name": "mcp2repl", "display_name": "JavaScript (mcp2repl)", "language": "javascript"}
TS_CELL = (
    "interface Hit { id: string; title: string }\n"
    "const hits: Hit[] = (await tools.search_books({ query: '', limit: 2 })).results;\n"
    "hits.map((h: Hit): string => h.id).join(',') satisfies string"
)
NOTEBOOK = "display.ipynb"
CELLS = (
    # 0: api.print of records -> display_data with text/plain, application/json and an HTML table
    "await api.print((await tools.search_books({ query: '', limit: 12 })).results,"
    " { projection: { $items: { id: true, title: true, year: true, rating: true } } })",
    # 1: an MCP image content -> execute_result with image/png
    "await tools.render_cover({ book_id: 'b07' })",
    # 2: a plain object -> execute_result with application/json, shown in JupyterLab's JSON viewer
    "({ nested: { list: [1, 2, 3], flag: true }, name: 'json viewer' })",
    # 3: raw HTML
    "api.html('<b id=\"mcp2repl-html-check\">bold from JS</b>')",
    # 4: TypeScript (every cell may be): runs with its types erased, highlighted as TypeScript
    TS_CELL,
)

SERVER_START_TIMEOUT = 60  # s until /api/status answers
KERNEL_IDLE_TIMEOUT = 60_000  # ms until the notebook's kernel is idle after opening
FIRST_OUTPUT_TIMEOUT = 60_000  # ms for the first cell (its demo MCP server starts on first use)
OUTPUT_TIMEOUT = 30_000  # ms for each later cell


def _skip_without_browser() -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Lab:
    url: str
    token: str
    root: Path
    log: Path
    proc: subprocess.Popen[bytes]

    def api(self, method: str, path: str, timeout: float = 10) -> object:
        req = urllib.request.Request(f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError as e:
            return f"(no server log: {e})"


def _wait_for_server(lab: Lab) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    last: object = None
    while time.monotonic() < deadline:
        if lab.proc.poll() is not None:
            pytest.fail(f"jupyter lab exited with code {lab.proc.returncode} before answering.\n--- server log ---\n{lab.log_tail()}")
        try:
            with urllib.request.urlopen(f"{lab.url}/api/status?token={lab.token}", timeout=5) as resp:
                if resp.status == 200:
                    return
        except (OSError, urllib.error.URLError) as e:
            last = e
        time.sleep(0.25)
    pytest.fail(
        f"jupyter lab did not answer /api/status within {SERVER_START_TIMEOUT} s (last error: {last}).\n--- server log ---\n{lab.log_tail()}"
    )


def _shutdown(lab: Lab) -> None:
    """Shut kernels down through the REST API, then stop the server: terminate, then kill."""
    if lab.proc.poll() is None:
        try:
            for session in lab.api("GET", "/api/sessions") or []:  # type: ignore[union-attr]
                lab.api("DELETE", f"/api/sessions/{session['id']}", timeout=20)
            for kernel in lab.api("GET", "/api/kernels") or []:  # type: ignore[union-attr]
                lab.api("DELETE", f"/api/kernels/{kernel['id']}", timeout=20)
        except (OSError, urllib.error.URLError, ValueError) as e:
            print(f"[jupyterlab test] kernel shutdown through the REST API failed: {e}", file=sys.stderr)
        lab.proc.terminate()
        try:
            lab.proc.wait(15)
        except subprocess.TimeoutExpired:
            lab.proc.kill()
            lab.proc.wait(10)
    # The server ran in its own session: end whatever of that group (ours alone) is left.
    try:
        os.killpg(lab.proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    _skip_without_browser()
    tmp_path = tmp_path_factory.mktemp("jupyterlab")
    dirs = {name: tmp_path / name for name in ("root", "config", "runtime", "data", "xdg", "settings", "workspaces")}
    for d in dirs.values():
        d.mkdir()
    # No news prompt, no update check: both would reach for the internet and add a toast.
    notification = dirs["settings"] / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True)
    notification.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))

    env = dict(os.environ)
    for var in ("MCP2REPL_CONFIG", "MCP2REPL_PROFILE", "MCP2REPL_SERVER", "JUPYTER_TOKEN", "JUPYTER_PORT"):
        env.pop(var, None)  # the kernel must pick the built-in demo server
    env |= {
        "XDG_CONFIG_HOME": str(dirs["xdg"]),
        "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        "JUPYTER_DATA_DIR": str(dirs["data"]),
        "PYTHONUNBUFFERED": "1",
    }
    token = secrets.token_hex(16)
    port = _free_port()
    log = tmp_path / "jupyterlab.log"
    argv = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.root_dir={dirs['root']}",
        "--ServerApp.open_browser=False",
        "--ServerApp.terminals_enabled=False",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
        "--LabApp.collaborative=False",
        f"--LabApp.user_settings_dir={dirs['settings']}",
        f"--LabApp.workspaces_dir={dirs['workspaces']}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--ServerApp.allow_root=True")  # CI containers run as root
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv, env=env, cwd=dirs["root"], stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    lab = Lab(url=f"http://127.0.0.1:{port}", token=token, root=dirs["root"], log=log, proc=proc)
    try:
        _wait_for_server(lab)
        yield lab
    finally:
        _shutdown(lab)


def _write_notebook(root: Path) -> None:
    nb = new_notebook(metadata={"kernelspec": dict(KERNELSPEC), "language_info": {"name": "javascript"}})
    nb.cells = [new_code_cell(source) for source in CELLS]
    nbformat.write(nb, root / NOTEBOOK)


class Run:
    """The notebook after Run All Cells, open in Chromium; `check` fails with a screenshot and the server log."""

    def __init__(self, lab: Lab, page: Page) -> None:
        self.lab = lab
        self.page = page
        self.started = time.monotonic()
        self.panel = page.locator(".jp-NotebookPanel").filter(has=page.locator(".jp-Notebook"))
        self.cells = self.panel.locator(".jp-Notebook .jp-Cell")

    def output(self, cell: int) -> Locator:
        """The rendered outputs of one cell (0-based)."""
        return self.cells.nth(cell).locator(".jp-OutputArea-output")

    def check(self, what: str, action: Callable[[], T]) -> T:
        try:
            return action()
        except (PlaywrightError, AssertionError) as e:
            try:
                self.page.screenshot(path=str(FAILURE_SCREENSHOT), full_page=True)
                shot = f"screenshot of the failure state: {FAILURE_SCREENSHOT}"
            except PlaywrightError as shot_error:
                shot = f"(no failure screenshot: {shot_error})"
            pytest.fail(
                f"JupyterLab display check failed {time.monotonic() - self.started:.1f} s after opening the notebook, while {what}:\n"
                f"{e}\n{shot}\n--- jupyter lab log (tail) ---\n{self.lab.log_tail()}"
            )


@pytest.fixture(scope="module")
def run(lab: Lab) -> Iterator[Run]:
    """Open the notebook, wait for an idle mcp2repl kernel, choose Run > Run All Cells, wait for all four cells."""
    _write_notebook(lab.root)
    ARTIFACTS.mkdir(exist_ok=True)
    FAILURE_SCREENSHOT.unlink(missing_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1300})
            page.on("pageerror", lambda e: print(f"[browser pageerror] {e}", file=sys.stderr))
            r = Run(lab, page)
            r.check(
                "loading JupyterLab",
                lambda: page.goto(f"{lab.url}/lab/tree/{NOTEBOOK}?token={lab.token}", wait_until="domcontentloaded", timeout=60_000),
            )
            r.check(
                f"waiting for the notebook with its {len(CELLS)} cells", lambda: expect(r.cells).to_have_count(len(CELLS), timeout=60_000)
            )
            # The toolbar's execution indicator says "idle" before the session has a kernel ("No Kernel |
            # Initializing" in the status bar); Run All then only clears the prompts. The status bar item
            # names the kernel and its state once the kernel is connected.
            ready = page.locator("#jp-main-statusbar").get_by_text(f"{KERNELSPEC['display_name']} | Idle", exact=True)
            r.check("waiting for the kernel to start and be idle", lambda: expect(ready).to_have_count(1, timeout=KERNEL_IDLE_TIMEOUT))
            idle = r.panel.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]')
            r.check("waiting for the execution indicator to be idle", lambda: expect(idle).to_have_count(1, timeout=OUTPUT_TIMEOUT))

            def run_all() -> None:
                page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
                page.get_by_role("menuitem", name="Run All Cells", exact=True).click()

            # A queued cell shows [*]: and a finished one its execution count; a fresh kernel counts 1, 2, 3, 4.
            prompts = r.cells.locator(".jp-InputArea-prompt")
            started = re.compile(r"^\[(\*|1)\]:$")
            r.check("choosing Run > Run All Cells", run_all)
            try:
                expect(prompts.first).to_have_text(started, timeout=15_000)
            except AssertionError:
                # Nothing was queued (still "[ ]:"): the kernel was not attached yet after all. Nothing ran, so try once more.
                print("[jupyterlab test] Run All Cells queued nothing; choosing it again", file=sys.stderr)
                r.check("choosing Run > Run All Cells a second time", run_all)
                r.check("waiting for the first cell to be queued", lambda: expect(prompts.first).to_have_text(started, timeout=15_000))
            done = [f"[{n}]:" for n in range(1, len(CELLS) + 1)]
            r.check(
                "waiting for the first cell to finish", lambda: expect(prompts.first).to_have_text(done[0], timeout=FIRST_OUTPUT_TIMEOUT)
            )
            r.check("waiting for all cells to finish", lambda: expect(prompts).to_have_text(done, timeout=OUTPUT_TIMEOUT))
            r.check("waiting for the kernel to be idle again", lambda: expect(idle).to_have_count(1, timeout=OUTPUT_TIMEOUT))
            r.check("waiting for the cover image to decode", lambda: page.wait_for_function(IMAGES_DECODED, timeout=OUTPUT_TIMEOUT))
            page.screenshot(path=str(SCREENSHOT), full_page=True)
            print(
                f"[jupyterlab test] all cells ran {time.monotonic() - r.started:.1f} s after opening the notebook; screenshot: {SCREENSHOT}"
            )
            yield r
        finally:
            browser.close()


IMAGES_DECODED = "[...document.querySelectorAll('.jp-OutputArea-output img')].every(img => img.complete && img.naturalWidth > 0)"


def test_kernel_name_shown(run: Run) -> None:
    name = KERNELSPEC["display_name"]
    for where, locator in (
        ("toolbar", run.panel.locator(".jp-Toolbar-kernelName")),
        ("status bar", run.page.locator("#jp-main-statusbar")),
    ):
        run.check(f"checking the kernel name in the {where}", lambda locator=locator: expect(locator).to_contain_text(name))


def test_no_cell_failed(run: Run) -> None:
    errors = run.cells.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    run.check("checking that no cell printed an error", lambda: expect(errors).to_have_count(0))


def test_records_render_as_table(run: Run) -> None:
    table = run.output(0).locator("table.mcp2repl-table")
    # The cell has finished (see `run`): no long wait here.
    expect(table).to_have_count(1, timeout=2_000)
    run.check("checking the table's rows", lambda: expect(table.locator("tbody tr")).to_have_count(12))
    run.check("checking the table's headers", lambda: expect(table.locator("thead th")).to_have_text(["id", "title", "year", "rating"]))


def test_mcp_image_renders_as_png(run: Run) -> None:
    img = run.output(1).locator("img")
    run.check("looking for the cover <img> in cell 2", lambda: expect(img).to_have_count(1, timeout=OUTPUT_TIMEOUT))
    src = run.check("reading the image's src", lambda: img.get_attribute("src")) or ""
    assert src.startswith("data:image/png;base64,"), f"cell 2's <img> src starts {src[:60]!r}"
    width, height = run.check("reading the image's natural size", lambda: img.evaluate("img => [img.naturalWidth, img.naturalHeight]"))
    assert width == 64, f"the cover PNG decoded to {width}x{height}, expected a width of 64"


def test_object_result_uses_json_viewer(run: Run) -> None:
    # The renderer widget is the output element itself: <div class="jp-RenderedJSON ... jp-OutputArea-output">.
    viewer = run.cells.nth(2).locator(".jp-OutputArea-output.jp-RenderedJSON")
    run.check("looking for JupyterLab's JSON viewer in cell 3", lambda: expect(viewer).to_have_count(1, timeout=OUTPUT_TIMEOUT))
    run.check("checking the JSON viewer's content", lambda: expect(viewer).to_contain_text("json viewer"))
    run.check("checking the JSON viewer shows the top-level keys", lambda: expect(viewer).to_contain_text("nested"))


def test_api_html_renders_element(run: Run) -> None:
    html = run.output(3).locator("#mcp2repl-html-check")
    run.check("looking for the api.html element in cell 4", lambda: expect(html).to_have_text("bold from JS", timeout=OUTPUT_TIMEOUT))
    tag = run.check("reading the element's tag", lambda: html.evaluate("el => el.tagName"))
    assert tag == "B", f"#mcp2repl-html-check is a <{tag.lower()}>, expected <b>"
    # The handle api.html returns is the cell's last value, and shows nothing: no "Out[4]" after the HTML.
    run.check("checking that cell 4 shows only the HTML", lambda: expect(run.output(3)).to_have_count(1))


def test_typescript_cell_runs_and_is_highlighted(run: Run) -> None:
    """Every cell may be TypeScript: it runs, and the editor highlights it with CodeMirror's
    TypeScript grammar (language_info.codemirror_mode), where the JavaScript one would read
    `interface` as a plain name."""
    result = run.output(4)
    run.check("checking the TypeScript cell's result", lambda: expect(result).to_have_text(re.compile(r"^'b\d\d,b\d\d'$")))
    editor = run.cells.nth(4).locator(".cm-content")
    language = run.check("reading the editor's language", lambda: editor.get_attribute("data-language"))
    assert language == "typescript", f"the TypeScript cell's editor has data-language={language!r}"

    def style(word: str) -> str:
        span = editor.locator("span", has_text=re.compile(rf"^{word}$")).first
        return run.check(f"reading the highlight class of {word!r}", lambda: span.get_attribute("class")) or ""

    assert style("interface") == style("const") != "", "`interface` is not highlighted as a keyword"
    assert style("Hit") == style("hits") != "", "the interface name is not highlighted as a definition"

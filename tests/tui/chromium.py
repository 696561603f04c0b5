"""Debian's headless Chromium driven over the DevTools protocol, for the `memscope serve` tests
(tests/tui/test_serve*.py): the server started as a user would (loopback, a free port), a browser on
its page, keys typed into the page as a user types them (Input.dispatchKeyEvent: trusted events,
which xterm.js sends down the app's websocket), the files the page downloads (Browser.setDownloadBehavior
with events), and what the page shows. xterm.js draws on a canvas, so what the page shows is rebuilt
from the terminal bytes its websocket received (Network.webSocketFrameReceived) by a real terminal
emulator (pyte) of the size the page told the app (its "resize" message). The page's JSON messages
(textual-serve's "deliver_file_start" and the like) are kept apart. The DevTools websocket is
aiohttp's client (textual-serve's own dependency).

Every wait has a limit and fails with a sentence naming what never came (and the screen shown); the
server and the browser run in their own process groups and are killed in `finally`."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Callable

import aiohttp
import pyte

from tests.paths import DEMO, REPO, RUNS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-port=0", "--window-size=1280,800"]
ITEM_SCREEN = "│ Item │"  # the status line of the Item screen
SESSION_SCREEN = "│ Session │"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, limit: float) -> None:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"{url} never answered within {limit:.0f} s")


def stop(proc: subprocess.Popen) -> None:
    """End a process started in its own session, and everything it started (the app under the server)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def start_serve(tmp_path: Path, *args: str, cwd: Path | None = None) -> tuple[subprocess.Popen, str]:
    """`memscope serve DEMO --runs RUNS ARGS --port FREE` as a user starts it; its URL. The app's
    relative paths (./memscope.db, exports/) land in `cwd` (default: tmp_path)."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "serve", str(DEMO), "--runs", str(RUNS), *args, "--port", str(port)],
        cwd=cwd or tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(REPO), "MEMSCOPE_AUDIO": "off",
             "MEMSCOPE_CRASH_DIR": str(tmp_path / "crash")})
    return server, f"http://127.0.0.1:{port}/"


# xterm.js reads `key` and `code`; `text` is what a printable key types
_KEYS = {"space": (" ", "Space", 32, " "), "escape": ("Escape", "Escape", 27, ""),
         "enter": ("Enter", "Enter", 13, "\r"), "slash": ("/", "Slash", 191, "/"),
         "backspace": ("Backspace", "Backspace", 8, "")}


def _key_event(key: str) -> dict:
    if key in _KEYS:
        k, code, vk, text = _KEYS[key]
        return {"key": k, "code": code, "windowsVirtualKeyCode": vk, "text": text, "modifiers": 0}
    if len(key) == 1 and key.isdigit():
        return {"key": key, "code": f"Digit{key}", "windowsVirtualKeyCode": ord(key), "text": key, "modifiers": 0}
    assert len(key) == 1 and key.isalpha(), key
    return {"key": key, "code": f"Key{key.upper()}", "windowsVirtualKeyCode": ord(key.upper()), "text": key,
            "unmodifiedText": key.lower(), "modifiers": 8 if key.isupper() else 0}  # 8: shift


class Browser:
    """One headless Chromium and one page, driven over its DevTools websocket (`async with`)."""

    def __init__(self, profile: Path) -> None:
        self.profile = profile
        self.messages: list = []  # the JSON text messages it received (textual-serve's, not the app's bytes)
        self._screen = None  # pyte.Screen of the page's terminal, once the page said its size
        self._stream = None
        self._pending_bytes: list[bytes] = []
        self.events: list[dict] = []  # every DevTools event (method, params)
        self._changed = asyncio.Event()
        self._ids = iter(range(1, 10**9))
        self._pending: dict[int, asyncio.Future] = {}
        self.session: str | None = None

    async def __aenter__(self) -> "Browser":
        self.profile.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            port_file = self.profile / "DevToolsActivePort"
            end = time.monotonic() + 30
            while not (port_file.is_file() and len(port_file.read_text().splitlines()) >= 2):
                if time.monotonic() > end or self.proc.poll() is not None:
                    raise AssertionError(f"chromium gave no DevTools port within 30 s (exit {self.proc.poll()})")
                await asyncio.sleep(0.1)
            port, path = port_file.read_text().splitlines()[:2]
            self._http = aiohttp.ClientSession()
            self._ws = await self._http.ws_connect(f"ws://127.0.0.1:{port}{path}", max_msg_size=0)
            self._reader = asyncio.create_task(self._read())
        except BaseException:
            await self._close()
            raise
        return self

    async def __aexit__(self, *exc) -> None:
        await self._close()

    async def _close(self) -> None:
        try:
            if getattr(self, "_reader", None) is not None:
                self._reader.cancel()
            if getattr(self, "_ws", None) is not None:
                await self._ws.close()
            if getattr(self, "_http", None) is not None:
                await self._http.close()
        finally:
            stop(self.proc)

    async def _read(self) -> None:
        async for msg in self._ws:
            data = json.loads(msg.data)
            if "id" in data and data["id"] in self._pending:
                self._pending.pop(data["id"]).set_result(data)
                continue
            if data.get("method") == "Network.webSocketFrameReceived":
                r = data["params"]["response"]
                if r["opcode"] == 2:  # binary: the app's terminal output, what xterm.js draws
                    self._feed(base64.b64decode(r["payloadData"]))
                else:
                    with contextlib.suppress(ValueError):
                        self.messages.append(json.loads(r["payloadData"]))
            elif data.get("method") == "Network.webSocketFrameSent":
                with contextlib.suppress(ValueError, TypeError, KeyError):
                    sent = json.loads(data["params"]["response"]["payloadData"])
                    if sent[0] == "resize":  # the page's terminal size, as it told the app
                        self._resize(sent[1]["width"], sent[1]["height"])
            elif "method" in data:
                self.events.append(data)
            self._changed.set()

    def _resize(self, width: int, height: int) -> None:
        if self._screen is None:
            self._screen = pyte.Screen(width, height)
            self._stream = pyte.ByteStream(self._screen)
            for raw in self._pending_bytes:
                self._stream.feed(raw)
            self._pending_bytes.clear()
        else:
            self._screen.resize(height, width)

    def _feed(self, raw: bytes) -> None:
        if self._stream is None:
            self._pending_bytes.append(raw)
        else:
            self._stream.feed(raw)

    def screen(self) -> list[str]:
        """The rows the page's terminal shows now (rebuilt by pyte from the bytes it received)."""
        return [] if self._screen is None else [row.rstrip() for row in self._screen.display]

    def screen_text(self) -> str:
        return "\n".join(self.screen())

    async def wait_screen(self, done: Callable[[str], bool], limit: float, what: str) -> str:
        """Wait until the page's screen satisfies done(text); fails with `what` and the screen shown."""
        try:
            await self.wait_until(lambda: done(self.screen_text()), limit, what)
        except AssertionError as err:
            raise AssertionError(f"{err}; the page shows:\n{self.screen_text()}") from None
        return self.screen_text()

    async def call(self, method: str, session: str | None = None, **params) -> dict:
        i = next(self._ids)
        self._pending[i] = asyncio.get_running_loop().create_future()
        msg = {"id": i, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        await self._ws.send_str(json.dumps(msg))
        reply = await asyncio.wait_for(self._pending[i], 30)
        if "error" in reply:
            raise AssertionError(f"DevTools {method}: {reply['error']}")
        return reply["result"]

    async def open(self, url: str) -> None:
        """A new page on `url`, its network watched (the websocket frames are the screen)."""
        target = (await self.call("Target.createTarget", url="about:blank"))["targetId"]
        self.session = (await self.call("Target.attachToTarget", targetId=target, flatten=True))["sessionId"]
        await self.call("Network.enable", self.session)
        await self.call("Page.enable", self.session)
        await self.call("Page.navigate", self.session, url=url)

    async def evaluate(self, expression: str):
        return (await self.call("Runtime.evaluate", self.session, expression=expression))["result"].get("value")

    async def wait_until(self, done: Callable[[], object], limit: float, what: str):
        """Wait (on every DevTools message) until done() is true; fails naming `what` after `limit` s."""
        end = time.monotonic() + limit
        while True:
            if self._reader.done():  # the DevTools connection closed, or reading it failed
                raise AssertionError(f"{what}: the browser's DevTools connection ended "
                                     f"({self._reader.exception() if not self._reader.cancelled() else 'cancelled'})")
            got = done()
            if got:
                return got
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{what}: not within {limit:.0f} s")
            self._changed.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(left, 0.5))

    async def focus_terminal(self) -> None:
        """Keyboard focus to xterm.js (its hidden textarea), where a user's click on the page puts it."""
        await self.evaluate("document.querySelector('.xterm-helper-textarea').focus()")
        focused = await self.evaluate("document.activeElement.classList.contains('xterm-helper-textarea')")
        assert focused, "the page has no xterm.js terminal to type into"

    async def press(self, key: str) -> None:
        """Type one key into the page as a user does (keyDown with its text, keyUp)."""
        ev = _key_event(key)
        await self.call("Input.dispatchKeyEvent", self.session, type="keyDown", **ev)
        up = {k: v for k, v in ev.items() if k not in ("text", "unmodifiedText")}
        await self.call("Input.dispatchKeyEvent", self.session, type="keyUp", **up)

    async def type(self, text: str) -> None:
        """Type letters and digits into the page, one key at a time."""
        for ch in text:
            await self.press(ch)

    async def allow_downloads(self, into: Path) -> None:
        """Downloads saved under `into` as their guid, with Browser.download* events."""
        into.mkdir(parents=True, exist_ok=True)
        await self.call("Browser.setDownloadBehavior", behavior="allowAndName", downloadPath=str(into),
                        eventsEnabled=True)

    def downloads(self) -> dict[str, dict]:
        """guid → {name, url, state} of every download the browser began."""
        out: dict[str, dict] = {}
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Browser.downloadWillBegin":
                out[p["guid"]] = {"name": p["suggestedFilename"], "url": p["url"], "state": "begun"}
            elif e["method"] == "Browser.downloadProgress" and p["guid"] in out:
                out[p["guid"]]["state"] = p["state"]
        return out


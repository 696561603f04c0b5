"""`memscope serve` in a real browser: the server started as a user would (loopback, a free port, the
deep link to one item), Debian's headless Chromium opening the page, driven over the DevTools protocol
(aiohttp's websocket client, textual-serve's own dependency). The test waits for the app's websocket
and checks the page receives and shows the item's question: xterm.js draws on a canvas, so what the
page shows is read from the terminal bytes the page's websocket received (Network.webSocketFrameReceived),
stripped of escape sequences."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.paths import DEMO, REPO, RUNS

pytest.importorskip("textual_serve")
aiohttp = pytest.importorskip("aiohttp")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.needs_demo,
              pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt install chromium)")]

ITEM = "Collectibles_Shelf_Assistant:3"
SCREEN = "│ Item │"  # the status line of the Item screen
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-port=0", "--window-size=1280,800"]
ANSI = re.compile(r"\x1b\[[0-9;?<=>]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b.")


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
    raise AssertionError(f"{url} never answered")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


async def page_text(app_url: str, profile: Path, question: str, limit: float = 90.0) -> str:
    browser = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        port_file = profile / "DevToolsActivePort"
        for _ in range(300):
            if port_file.is_file() and len(port_file.read_text().splitlines()) >= 2:
                break
            await asyncio.sleep(0.1)
        port, path = port_file.read_text().splitlines()[:2]
        async with aiohttp.ClientSession() as http, http.ws_connect(f"ws://127.0.0.1:{port}{path}", max_msg_size=0) as ws:
            ids = iter(range(1, 10**6))
            pending: dict[int, asyncio.Future] = {}
            received: list[str] = []

            async def reader() -> None:
                async for msg in ws:
                    data = json.loads(msg.data)
                    if "id" in data and data["id"] in pending:
                        pending.pop(data["id"]).set_result(data)
                    elif data.get("method") == "Network.webSocketFrameReceived":
                        r = data["params"]["response"]
                        raw = base64.b64decode(r["payloadData"]) if r["opcode"] == 2 else r["payloadData"].encode()
                        received.append(raw.decode("utf-8", "replace"))

            task = asyncio.create_task(reader())

            async def call(method: str, session: str | None = None, **params) -> dict:
                i = next(ids)
                pending[i] = asyncio.get_running_loop().create_future()
                msg = {"id": i, "method": method, "params": params}
                if session:
                    msg["sessionId"] = session
                await ws.send_str(json.dumps(msg))
                return await asyncio.wait_for(pending[i], 30)

            target = (await call("Target.createTarget", url="about:blank"))["result"]["targetId"]
            session = (await call("Target.attachToTarget", targetId=target, flatten=True))["result"]["sessionId"]
            await call("Network.enable", session)
            await call("Page.enable", session)
            await call("Page.navigate", session, url=app_url)
            end = time.monotonic() + limit
            text = ""
            while time.monotonic() < end:
                text = " ".join(ANSI.sub("", "".join(received)).split())
                if SCREEN in text and question in text.rpartition(SCREEN)[2]:  # drawn by the Item screen (the Items table lists it too)
                    break
                await asyncio.sleep(0.25)
            first_byte = await call("Runtime.evaluate", session,
                                    expression="document.body.classList.contains('-first-byte')")
            task.cancel()
            return text if first_byte["result"]["result"].get("value") else ""
    finally:
        stop(browser)


def test_serve_shows_the_item_question_in_chromium(tmp_path):
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "serve", str(DEMO), "--runs", str(RUNS), "--item", ITEM,
         "--mode", "mcq", "--port", str(port)],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        env={**os.environ, "MEMSCOPE_AUDIO": "off", "MEMSCOPE_CRASH_DIR": str(tmp_path / "crash")})
    try:
        wait_http(f"http://127.0.0.1:{port}/", 60)
        question = "What price was on the sticker"
        text = asyncio.run(page_text(f"http://127.0.0.1:{port}/", tmp_path / "profile", question))
        item_screen = text.rpartition(SCREEN)[2]
        assert question in item_screen, text[-2000:]
        assert ITEM in item_screen and "clue chain (time order)" in item_screen  # the linked item, opened
    finally:
        stop(server)
    err = server.stderr.read().decode("utf-8", "replace")
    assert f"http://127.0.0.1:{port}" in err  # it said where it serves, on loopback


def test_serve_refuses_a_bad_port_in_one_line(capsys):
    from tui.cli import main

    assert main(["serve", str(DEMO), "--port", "70000"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--port 70000" in err[0]

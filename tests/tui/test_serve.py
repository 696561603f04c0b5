"""`memscope serve` in a real browser: the server started as a user would (loopback, a free port, the
deep link to one item), Debian's headless Chromium opening the page, driven over the DevTools protocol
(tests/tui/chromium.py). The test waits for the app's websocket and checks the page shows the item's
question: xterm.js draws on a canvas, so what the page shows is rebuilt from the terminal bytes the
page's websocket received (Network.webSocketFrameReceived) by a terminal emulator (pyte)."""

from __future__ import annotations

import asyncio

import pytest

from tests.paths import DEMO

pytest.importorskip("textual_serve")
pytest.importorskip("aiohttp")

from tests.tui.chromium import CHROMIUM, ITEM_SCREEN, Browser, start_serve, stop, wait_http  # noqa: E402

pytestmark = [pytest.mark.needs_demo,
              pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt install chromium)")]

ITEM = "Collectibles_Shelf_Assistant:3"
QUESTION = "What price was on the sticker"


async def page_screen(app_url: str, tmp_path) -> tuple[str, bool]:
    """The screen the page shows once the Item screen has drawn the question; whether the page saw
    the app's first bytes (textual-serve's own mark on <body>)."""
    async with Browser(tmp_path / "profile") as b:
        await b.open(app_url)
        screen = await b.wait_screen(lambda t: ITEM_SCREEN in t and QUESTION in t, 60,
                                     "the Item screen with the linked item's question")
        return screen, bool(await b.evaluate("document.body.classList.contains('-first-byte')"))


def test_serve_shows_the_item_question_in_chromium(tmp_path):
    server, url = start_serve(tmp_path, "--item", ITEM, "--mode", "mcq")
    try:
        wait_http(url, 60)
        screen, first_byte = asyncio.run(page_screen(url, tmp_path))
    finally:
        stop(server)
    assert first_byte, "the page never marked the app's first bytes"
    assert screen.splitlines()[0].startswith(" memscope │ Item │"), screen  # the Item screen, not the table
    assert ITEM in screen and "clue chain (time order)" in screen  # the linked item, opened
    err = server.stderr.read().decode("utf-8", "replace")
    assert f"http://127.0.0.1:{url.rsplit(':', 1)[1].strip('/')}" in err  # it said where it serves, on loopback


def test_serve_refuses_a_bad_port_in_one_line(capsys):
    from tui.cli import main

    assert main(["serve", str(DEMO), "--port", "70000"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--port 70000" in err[0]

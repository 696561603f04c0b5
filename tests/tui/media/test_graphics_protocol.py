"""The terminal's graphics protocol in the viewer (issue 15): the real `memscope tui` on a real
pseudo-terminal, opened on the sticker item (`--item`), `z` pressed, and its output read.

The far end of the pty plays the terminal and answers the queries textual-image sends before the app
starts, as such a terminal does: a Sixel terminal lists 4 in its device attributes (DA1), Kitty answers
the graphics protocol's query with OK, a plain terminal answers neither. Nothing is forced
($MEMSCOPE_IMAGES is unset): the app detects the terminal itself. The picture must then go out as that
protocol's escape sequences (Sixel DCS data, Kitty APC transmissions and a placement), and as half-cells
(▀ in truecolour) on a plain terminal. And in a real tmux without passthrough (tmux answers DA1 itself,
without Sixel, and drops the Kitty query) the viewer keeps to half-cells.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from tests.paths import DEMO, REPO

pytestmark = pytest.mark.needs_demo

STICKER = "Collectibles_Shelf_Assistant:3"  # its clue: flea_cat_price.png, 320×240
ROWS, COLS, CELL = 40, 120, (10, 20)  # the pty reports 1200×800 pixels: cells of 10×20
DA1 = re.compile(rb"\x1b\[0?c")  # primary device attributes query
KITTY_QUERY = re.compile(rb"\x1b_Gi=(\d+),[^\x1b]*a=q[^\x1b]*\x1b\\")
SIXEL = re.compile(rb"\x1bP[0-9;]*q\"1;1;\d+;\d+#\d+;2;[^\x1b]{200,}\x1b\\")  # DCS … q, raster, palette, data, ST
KITTY_DATA = re.compile(rb"\x1b_Gi=(\d+),m=\d,f=100,q=2;[A-Za-z0-9+/=]{100,}\x1b\\")  # a PNG, base64
TRUECOLOUR = re.compile("\x1b\\[[0-9;]*38;2;\\d+;\\d+;\\d+[0-9;]*m(\x1b\\[[0-9;]*m)*▀")  # a ▀ run in 24-bit colour


def app_argv(tmp_path: Path) -> list[str]:
    return [sys.executable, "-m", "tui.cli", "tui", str(DEMO), "--runs", str(DEMO / "runs"), "--item", STICKER,
            "--db", str(tmp_path / "m.db"), "--annotator", "tester"]


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MEMSCOPE_IMAGES", "TMUX", "TEXTUAL")}
    return {**env, "PYTHONPATH": str(REPO), "TERM": "xterm-256color", "COLORTERM": "truecolor"}


class FakeTerminal:
    """The terminal end of a pty the app runs on: collects everything the app writes and answers
    the graphics queries as `persona` ("sixel", "kitty" or "plain") would."""

    def __init__(self, argv: list[str], persona: str) -> None:
        self.persona = persona
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, COLS * CELL[0], ROWS * CELL[1]))
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=child_env(), cwd=REPO,
                                     close_fds=True, start_new_session=True)
        os.close(slave)
        self.out = bytearray()
        self._scanned = 0

    def pump(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if not ready:
                if self.proc.poll() is not None:
                    return
                continue
            try:
                chunk = os.read(self.master, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            self.out += chunk
            self._answer()

    def _answer(self) -> None:
        # each query once, in order (a query may straddle two reads: scan from the last one answered)
        found = [(m.end(), "da1", m) for m in DA1.finditer(self.out, self._scanned)]
        if self.persona == "kitty":
            found += [(m.end(), "kitty", m) for m in KITTY_QUERY.finditer(self.out, self._scanned)]
        for end, what, m in sorted(found, key=lambda f: f[0]):
            if what == "da1":
                os.write(self.master, b"\x1b[?62;4;22c" if self.persona == "sixel" else b"\x1b[?62;22c")
            else:
                os.write(self.master, b"\x1b_Gi=" + m.group(1) + b";OK\x1b\\")
            self._scanned = max(self._scanned, end)

    def until(self, needle: bytes, seconds: float, after: int = 0) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if needle in self.out[after:]:
                return True
            self.pump(0.1)
            if self.proc.poll() is not None:
                return needle in self.out[after:]
        return False

    def send(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.send(b"q")
            self.pump(1.0)
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        os.close(self.master)


def viewer_output(tmp_path: Path, persona: str) -> tuple[bytes, bytes]:
    """What the app wrote before `z` (the Item screen) and after it (the viewer)."""
    term = FakeTerminal(app_argv(tmp_path), persona)
    try:
        assert term.until(b"flea_cat_price", 60), term.out[-2000:].decode(errors="replace")
        term.pump(1.5)  # the Item screen's thumbnails drawn
        before = len(term.out)
        term.send(b"z")
        assert term.until(b"zoom fit", 30, after=before), term.out[before:][-2000:].decode(errors="replace")
        term.pump(1.5)  # the picture itself
        return bytes(term.out[:before]), bytes(term.out[before:])
    finally:
        term.close()


def test_a_sixel_terminal_gets_the_picture_as_sixel(tmp_path):
    _, viewer = viewer_output(tmp_path, "sixel")
    sixels = SIXEL.findall(viewer)
    assert sixels, viewer[-3000:]
    header = re.search(rb"\x1bP[0-9;]*q\"1;1;(\d+);(\d+)", viewer)
    w, h = int(header.group(1)), int(header.group(2))
    # the 320×240 sticker fitted to the viewer's box in pixels (120 columns × ~37 rows of 10×20 px)
    assert w >= 600 and abs(w / h - 320 / 240) < 0.02, (w, h)
    assert viewer.decode(errors="replace").count("▀") < 50  # no half-cell picture besides


def test_a_kitty_terminal_gets_the_picture_by_the_kitty_protocol(tmp_path):
    _, viewer = viewer_output(tmp_path, "kitty")
    sent = KITTY_DATA.findall(viewer)
    assert sent, viewer[-3000:]
    image_id = sent[-1]
    assert re.search(rb"\x1b_Ga=p,i=" + image_id + rb",c=\d+,r=\d+,U=1,q=2\x1b\\", viewer)  # placed
    assert "\U0010eeee".encode() in viewer  # its placeholder cells on screen
    assert not SIXEL.search(viewer)


def test_a_plain_terminal_gets_half_cells(tmp_path):
    item, viewer = viewer_output(tmp_path, "plain")
    # no protocol at all (textual-image's query before the app starts is all there is of one)
    assert not KITTY_DATA.search(item + viewer) and b"a=p," not in item + viewer and not SIXEL.search(item + viewer)
    text = viewer.decode(errors="replace")
    assert text.count("▀") > 2000 and len(TRUECOLOUR.findall(text)) > 100  # the picture, as ▀ in truecolour


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_tmux_without_passthrough_keeps_half_cells(tmp_path):
    tmux = ["tmux", "-S", str(tmp_path / "t.sock"), "-f", "/dev/null"]  # a server of its own, gone with tmp_path
    cmd = " ".join(f"'{a}'" for a in app_argv(tmp_path))
    env = {**child_env(), "TERM": "xterm-256color"}
    subprocess.run([*tmux, "new-session", "-d", "-x", str(COLS), "-y", str(ROWS), "-s", "t",
                    f"env -u MEMSCOPE_IMAGES PYTHONPATH={REPO} {cmd}"], check=True, env=env, cwd=REPO, timeout=30)

    def pane() -> str:
        return subprocess.run([*tmux, "capture-pane", "-p", "-e", "-t", "t"], capture_output=True, text=True,
                              timeout=30).stdout

    def wait_for(text: str, seconds: float) -> str:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            shown = pane()
            if text in shown:
                return shown
            time.sleep(0.2)
        return pane()

    try:
        assert "flea_cat_price" in wait_for("flea_cat_price", 60)
        subprocess.run([*tmux, "send-keys", "-t", "t", "z"], check=True, timeout=30)
        shown = wait_for("zoom fit", 30)
        assert "zoom fit" in shown, shown[-2000:]
        time.sleep(1.5)
        text = pane()
        assert text.count("▀") > 2000 and len(TRUECOLOUR.findall(text)) > 100  # the picture drawn in half-cells
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True, timeout=30)

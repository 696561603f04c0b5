"""Files the app writes (case cards), sent to the browser when the app runs under `memscope serve`.

A card is several files (case.md, case.tex, img/*). textual-serve's page starts each delivery with
`window.open`, and a browser lets a page open one window per user gesture: the first file of a
card would arrive and the browser's popup blocker would drop the rest. So a card goes to the browser
as ONE download, a zip of its folder (`<folder>/case.md`, `<folder>/case.tex`, `<folder>/img/…`),
the files' bytes exactly as written on disk. It is built in memory (nothing more is written on the
server) and sent with Textual's `deliver_binary`.

The page's `window.open` must also come soon after a key press: a browser lets a page open a
window only within its user-activation window (Chromium and Firefox: 5 s after the key press, and
one window per press; measured with Debian's headless Chromium through textual-serve: a delivery
4.6 s after the key was downloaded, one 6.1 s after was silently dropped). A card written on its
key press is sent at once; work that may take longer (the Items screen's batch of cards, tui/casecards_batch.py) is an
`Offer`: sent at once if it is ready within `ACTIVATION_LEFT` of its key, else held until the user
presses a key to download it. Whether the browser took a download is known, not assumed: `send`
calls back once the browser has read the file to its end (the file object the app hands Textual
is read by the server chunk by chunk only when the page fetches /download/<key>).
"""

from __future__ import annotations

import io
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

ZIP_MIME = "application/zip"
# seconds after a key press within which a download is sent at once: the browsers' 5 s activation
# window, less the way from the app to the page's window.open on a loaded machine
ACTIVATION_LEFT = 3.0
FETCH_WAIT = 6.0  # seconds: a download the page has not fetched by then was not opened (popup blocker)


def card_zip(paths: Sequence[Path], folder: Path | None = None) -> tuple[str, bytes]:
    """The zip of files that live under one folder (default: the first path's folder): its name
    (`<folder>.zip`) and bytes; each file stored as `<folder>/<path under the folder>`."""
    folder = Path(paths[0]).parent if folder is None else Path(folder)
    top = folder.name or folder.resolve().name or "files"  # "." is named after the directory it is
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for p in paths:
            z.write(p, arcname=(Path(top) / Path(p).relative_to(folder)).as_posix())
    return f"{top}.zip", buf.getvalue()


def deliver(app, paths: Sequence[Path]) -> str | None:
    """In a browser (textual-serve): send the card's files to it as one zip download; the name sent.
    None in a terminal (the files are simply on disk) or when there is nothing to send."""
    if not getattr(app, "is_web", False) or not paths:
        return None
    name, data = card_zip(paths)
    app.deliver_binary(io.BytesIO(data), save_filename=name, mime_type=ZIP_MIME)
    return name


@dataclass
class Offer:
    """A file made for the browser: its name and bytes, when its key was pressed (time.monotonic),
    and whether the browser has fetched it (set on the app thread by `send`'s callback)."""

    name: str
    data: bytes
    pressed: float
    fetched: bool = False
    sends: int = 0  # how many times it was sent (a later send's wait supersedes an earlier one's)

    def in_window(self, now: float | None = None) -> bool:
        """Still soon enough after its key press for the browser to open the download."""
        return (time.monotonic() if now is None else now) - self.pressed <= ACTIVATION_LEFT


class _Fetched(io.BytesIO):
    """The bytes handed to deliver_binary; `done()` once read to the end (the page fetched it all)."""

    def __init__(self, data: bytes, done: Callable[[], None]) -> None:
        super().__init__(data)
        self._done: Callable[[], None] | None = done

    def read(self, size: int | None = -1) -> bytes:
        chunk = super().read(size)
        if not chunk and self._done is not None:
            done, self._done = self._done, None
            done()
        return chunk


def send(app, offer: Offer, fetched: Callable[[Offer], None]) -> None:
    """Send `offer` to the browser (deliver_binary, from the app thread); `fetched(offer)` on the app
    thread once the browser has read all of it (offer.fetched is then True)."""

    def done() -> None:  # in the thread of Textual's web driver that answers the server's chunk requests
        def on_app() -> None:
            offer.fetched = True
            fetched(offer)

        try:
            app.call_from_thread(on_app)
        except RuntimeError:  # already on the app thread (or the app has stopped)
            on_app()

    app.deliver_binary(_Fetched(offer.data, done), save_filename=offer.name, mime_type=ZIP_MIME)

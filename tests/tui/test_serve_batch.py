"""`memscope serve` delivers the Items screen's batch of case cards to the browser (issue 15, point 6),
end to end: the server as a user starts it, Debian's headless Chromium on its page (tests/tui/chromium.py).
Typed into the page: `2` (Items), `/sticker` enter (the list filtered to a few items), `E`, enter
(the folder asked on the first export). The browser must download ONE zip, `cards.zip`, holding
every file the export wrote, byte for byte as tui/casecards_batch.export_cards writes them (run here
with the same items and filter) and as the served app wrote them on its disk: each item's .md and
.tex, the images they link, index.md and index.tex. The notice must say the browser fetched it
(the app knows: the browser read the file to its end). Then `D` sends the same zip again on that
fresh key press (what a user presses when a long batch outlasted the browser's activation window).
Last, the whole list (backspace clears the filter, `E`): on this machine the demo's 108 items can
take longer than the browser's ~5 s window after the key; whichever way it went, the notice must be
true: sent (and fetched), or held with `D` to press, which then downloads all of it."""

from __future__ import annotations

import asyncio
import io
import zipfile

import pytest

from tests.paths import DEMO, RUNS

pytest.importorskip("textual_serve")
pytest.importorskip("aiohttp")

from tests.tui.chromium import CHROMIUM, Browser, start_serve, stop, wait_http  # noqa: E402
from tui.casecards_batch import _size  # noqa: E402  (how the notice writes a size)

pytestmark = [pytest.mark.needs_demo,
              pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt install chromium)")]

WORD = "sticker"  # the Items search: the two price-sticker items, each in MCQ and open mode
ITEMS_SCREEN = "│ Items │"


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_batch_case_cards_download_as_one_zip_in_chromium(tmp_path):
    from tui.casecards_batch import export_cards
    from tui.rows import Filter
    from tui.state import load_state

    st = load_state(DEMO, [RUNS], exports_dir=tmp_path / "ref")
    f = Filter(text=WORD)
    keys = [r.key for r in st.filtered(f)]  # the Items table's rows, in its order
    assert 2 <= len(keys) <= 6, keys
    server, url = start_serve(tmp_path)  # cwd tmp_path: the served app's exports/ is here
    try:
        wait_http(url, 30)
        first, served_first, again, whole = asyncio.run(_drive(tmp_path, url, len(keys), len(st.rows)))
    finally:
        stop(server)
    ref_paths = export_cards(st, keys, tmp_path / "ref" / "cards", f)  # the same batch, written here
    ref = {f"cards/{p.relative_to(tmp_path / 'ref' / 'cards').as_posix()}": p.read_bytes() for p in ref_paths}
    stems = [f"{item_id.replace(':', '_')}_{mode}" for item_id, mode in keys]
    cards = {f"cards/{s}.{ext}" for s in stems for ext in ("md", "tex")}
    assert cards | {"cards/index.md", "cards/index.tex"} < set(ref)  # < : the images as well
    assert any("/media/" in n and "/img/" in n for n in ref)  # the cards' images are in the batch too
    served = tmp_path / "exports"  # what the served app wrote on the server
    assert first == again  # D sent the same zip
    with zipfile.ZipFile(io.BytesIO(first)) as z:
        assert z.testzip() is None
        downloaded = {n: z.read(n) for n in z.namelist()}
    assert sorted(downloaded) == sorted(ref), (sorted(downloaded), sorted(ref))
    for n, body in downloaded.items():
        assert body == ref[n], f"{n}: the downloaded file differs from what export_cards writes"
        assert body == served_first[n], f"{n}: differs from the served app's file"
    index = downloaded["cards/index.md"].decode("utf-8")
    assert f"{len(keys)} item(s)." in index and f"search = {WORD}" in index.replace("\\", "")
    with zipfile.ZipFile(io.BytesIO(whole)) as z:  # the whole list: every card, as the served app wrote it
        assert z.testzip() is None
        every = {n: z.read(n) for n in z.namelist()}
    all_cards = {f"cards/{item_id.replace(':', '_')}_{mode}.{ext}" for item_id, mode in (r.key for r in st.rows)
                 for ext in ("md", "tex")}
    assert len(all_cards) == 2 * len(st.rows) and all_cards < set(every) and set(downloaded) < set(every)
    assert f"{len(st.rows)} item(s)." in every["cards/index.md"].decode("utf-8")
    for n, body in every.items():
        assert body == (served / n).read_bytes(), f"{n}: differs from the served app's file"


async def _drive(tmp_path, url: str, n: int, total: int) -> tuple[bytes, dict[str, bytes], bytes, bytes]:
    """The first zip, the files the served app had written then, the zip D sent, the whole list's zip."""
    async with Browser(tmp_path / "profile") as b:
        downloads = tmp_path / "downloads"
        await b.allow_downloads(downloads)
        await b.open(url)
        await b.wait_screen(lambda t: t.startswith(" memscope │"), 40, "the app's first screen")
        await b.focus_terminal()
        await b.press("2")  # Items
        await b.wait_screen(lambda t: ITEMS_SCREEN in t and f"of {total} items" in t, 15, "the Items screen")
        await b.press("slash")
        await b.type(WORD)
        await b.press("enter")
        await b.wait_screen(lambda t: f"{n} of {total} items" in t, 15, f"the Items list filtered to {n} items")
        await b.press("E")  # Export cards (tui/keymap.py items.export-cards)
        await b.wait_screen(lambda t: f"Case cards of {n} item(s)" in t, 15, "the folder question")
        await b.press("enter")  # the default folder, exports/cards
        completed = lambda: [g for g, d in b.downloads().items() if d["state"] == "completed"]  # noqa: E731
        done = await b.wait_until(completed, 20, "the browser never completed a download after the export")
        await b.wait_screen(lambda t: "cards.zip: downloaded by your browser" in _flat(t), 10,
                            "the notice that the browser fetched cards.zip")
        assert [d["name"] for d in b.downloads().values()] == ["cards.zip"], b.downloads()
        assert len(_offers(b)) == 1, _offers(b)
        first = (downloads / done[0]).read_bytes()
        served = tmp_path / "exports"  # the served app's disk, before the whole list rewrites it
        served_first = {p.relative_to(served).as_posix(): p.read_bytes() for p in served.rglob("*") if p.is_file()}
        await b.press("D")  # Download cards: the held zip, again, on a fresh key press
        more = await b.wait_until(lambda: [g for g in completed() if g != done[0]], 20,
                                  "the browser never completed a second download after D")
        assert [d["name"] for d in b.downloads().values()] == ["cards.zip", "cards.zip"], b.downloads()
        again = (downloads / more[0]).read_bytes()
        # the whole list: E (the folder is not asked again; E is the key the browser counts)
        await b.press("backspace")  # Clear every filter
        await b.wait_screen(lambda t: f"{total} of {total} items" in t, 15, "the whole Items list")
        await b.press("E")
        offers_before, seen = len(_offers(b)), set(completed())
        sent = lambda: len(_offers(b)) > offers_before  # noqa: E731
        held = lambda: "is ready: press D" in _flat(b.screen_text())  # noqa: E731
        await b.wait_until(lambda: sent() or held(), 60, "neither a download nor the notice to press D")
        print(f"the whole list ({total} items): {'sent at once' if sent() else 'held for D'}")
        if not sent():  # held: nothing was offered to the page; D sends it
            await b.press("D")
        new = await b.wait_until(lambda: [g for g in completed() if g not in seen], 20,
                                 "the whole list's zip never downloaded")
        whole = (downloads / new[0]).read_bytes()
        said = f"cards.zip: downloaded by your browser ({_size(whole)})"  # its size: not an earlier notice
        await b.wait_screen(lambda t: said in _flat(t), 10, f"the notice {said!r}")
        return first, served_first, again, whole


def _offers(b: Browser) -> list:
    return [m for m in b.messages if isinstance(m, list) and m and m[0] == "deliver_file_start"]

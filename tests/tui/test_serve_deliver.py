"""`memscope serve` delivers what the app makes to the browser (issue 15, point 6), end to end: the
server as a user starts it (loopback, a free port, the deep link to one item), Debian's headless
Chromium on its page (tests/tui/chromium.py). The case-card key typed into the page must make the
browser download the card, one zip of its folder, whose files are byte for byte the card memscope
writes for that item (the files the served app wrote, and export_case run here); and the audio play
key must say, in the page, that the sound plays on the server."""

from __future__ import annotations

import asyncio
import io
import re
import zipfile

import pytest

from tests.paths import DEMO, RUNS

pytest.importorskip("textual_serve")
pytest.importorskip("aiohttp")

from tests.tui.chromium import CHROMIUM, ITEM_SCREEN, SESSION_SCREEN, Browser, start_serve, stop, wait_http  # noqa: E402

pytestmark = [pytest.mark.needs_demo,
              pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt install chromium)")]

ITEM = "Omni_Family_Moments:1"  # an image clue (the card copies it) in a task whose rounds hold audio
QUESTION = "What colour is the stripe on the mug Theo painted?"
CARD = "Omni_Family_Moments_1_mcq"  # the card's folder, and the zip's name
AUDIO_ROUND = "D1:4"  # Mia's voice note, two rounds after the item's clues
ROUND = re.compile(r"· round (D\d+:\d+) \(")  # the Session screen's header: which round it shows


def _round(screen: str) -> str | None:
    m = ROUND.search(screen)
    return m.group(1) if m else None


def test_case_card_downloads_in_chromium_and_audio_says_it_plays_on_the_server(tmp_path):
    from tui.casecard import export_case
    from tui.state import load_state
    from tui.widgets.media_audio import SERVER_AUDIO

    server, url = start_serve(tmp_path, "--item", ITEM, "--mode", "mcq")  # cwd tmp_path: exports/ here
    try:
        wait_http(url, 30)
        got = asyncio.run(_drive(tmp_path, url, SERVER_AUDIO))
    finally:
        stop(server)
    header, name, data, since_play = got
    assert name == f"{CARD}.zip"
    served = tmp_path / "exports" / CARD  # what the served app wrote on the server
    st = load_state(DEMO, [RUNS], exports_dir=tmp_path / "ref")
    item = st.bench.item(ITEM, "mcq")
    backbone = sorted({ref.backbone for ref, _ in st.predictions(item)})[0]  # the Item screen's first
    assert f"backbone {backbone} " in header  # the page showed that backbone's runs when E was pressed
    ref_paths = export_case(st, item, backbone)  # the same card, written here
    ref = {f"{CARD}/{p.relative_to(tmp_path / 'ref' / CARD).as_posix()}": p.read_bytes() for p in ref_paths}
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert z.testzip() is None
        downloaded = {n: z.read(n) for n in z.namelist()}
    assert sorted(downloaded) == sorted(ref), (sorted(downloaded), sorted(ref))
    assert {f"{CARD}/case.md", f"{CARD}/case.tex"} < set(ref) and any("/img/" in n for n in ref)
    for n, body in downloaded.items():
        assert body == ref[n], f"{n}: the downloaded file differs from the card export_case writes"
        assert body == (served / n.partition("/")[2]).read_bytes(), f"{n}: differs from the served app's file"
    md = downloaded[f"{CARD}/case.md"].decode("utf-8").replace("\\", "")  # Markdown escapes undone
    assert QUESTION in md and ITEM in md
    assert SERVER_AUDIO in since_play


async def _drive(tmp_path, url: str, server_audio: str) -> tuple[str, str, bytes, str]:
    async with Browser(tmp_path / "profile") as b:
        downloads = tmp_path / "downloads"
        await b.allow_downloads(downloads)
        await b.open(url)
        header = await b.wait_screen(lambda t: ITEM_SCREEN in t and QUESTION in t and "backbone " in t, 40,
                                     "the Item screen of the linked item")
        await b.focus_terminal()
        await b.press("E")  # Export card (tui/keymap.py item.export)
        done = await b.wait_until(lambda: [(g, d) for g, d in b.downloads().items() if d["state"] == "completed"],
                                  20, "the browser never completed a download after the export key")
        await b.wait_screen(lambda t: f"sent to your browser as {CARD}.zip" in " ".join(t.split()), 10,
                            "the export notice naming the download")
        await asyncio.sleep(0.5)  # a second delivery (one the popup blocker would drop) would have come by now
        offers = [m for m in b.messages if isinstance(m, list) and m and m[0] == "deliver_file_start"]
        assert len(offers) == 1 and len(b.downloads()) == 1, (offers, b.downloads())
        guid, d = done[0]
        data = (downloads / guid).read_bytes()
        # audio: the Session screen at the item's clue round, on to Mia's voice note, space
        await b.press("g")  # Go to round
        await b.wait_screen(lambda t: SESSION_SCREEN in t, 15, "the Session screen after g")
        for _ in range(6):  # n, one round at a time (each press waited for: its round in the header)
            at = _round(b.screen_text())
            if at == AUDIO_ROUND:
                break
            await b.press("n")
            await b.wait_screen(lambda t: _round(t) not in (at, None), 10, f"the round after {at} (n)")
        await b.wait_screen(lambda t: f"round {AUDIO_ROUND} " in t and "mia_swim_before.wav" in t, 10,
                            f"Session on round {AUDIO_ROUND}, the voice note")
        assert server_audio not in b.screen_text()  # said when play is pressed, not before
        await b.press("space")  # Play/stop
        text = await b.wait_screen(lambda t: server_audio in " ".join(t.split()), 10,
                                   "the line that audio plays on the server, after space")
        return " ".join(header.split()), d["name"], data, " ".join(text.split())

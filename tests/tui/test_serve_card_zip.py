"""The zip a case card reaches a browser as (tui/serve_deliver.py), without a browser: one archive of
the card's folder holding the files export_case wrote, byte for byte; in a terminal nothing is sent
(the files are on disk; Textual's terminal delivery would also copy them to ~/Downloads). The batch
of the Items screen: its zip holds every file export_cards wrote (the images too); an offer is sent
at once only within the browser's activation window, and reports its fetch once read to the end;
in a terminal `D` sends nothing and says where the cards are.
The browser end to end is tests/tui/test_serve_deliver.py and tests/tui/test_serve_batch.py."""

from __future__ import annotations

import io
import zipfile

import pytest

from tests.paths import DEMO, RUNS
from tests.tui.apphelpers import SIZE, demo_app, settle
from tui.casecard import export_case
from tui.casecards_batch import export_cards
from tui.rows import Filter
from tui.screens.items import ItemsScreen
from tui.serve_deliver import ACTIVATION_LEFT, Offer, _Fetched, card_zip, deliver
from tui.state import load_state

pytestmark = pytest.mark.needs_demo


def test_card_zip_holds_the_card_folder_byte_for_byte(tmp_path):
    st = load_state(DEMO, [RUNS], exports_dir=tmp_path / "exports")
    paths = export_case(st, st.bench.item("Collectibles_Shelf_Assistant:6", "mcq"))
    name, data = card_zip(paths)
    assert name == "Collectibles_Shelf_Assistant_6_mcq.zip"
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        got = {n: z.read(n) for n in z.namelist()}
    folder = tmp_path / "exports" / "Collectibles_Shelf_Assistant_6_mcq"
    assert got == {f"{folder.name}/{p.relative_to(folder).as_posix()}": p.read_bytes() for p in paths}
    assert sum("/img/" in n for n in got) == 2  # the clue images, under img/ as case.md links them


async def test_a_terminal_app_sends_nothing(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not app.is_web
        assert deliver(app, [tmp_path / "nothing-read.md"]) is None  # not even opened


def test_a_batch_zip_holds_every_file_the_batch_wrote(tmp_path):
    st = load_state(DEMO, [RUNS], exports_dir=tmp_path / "exports")
    f = Filter(text="sticker")
    keys = [r.key for r in st.filtered(f)]
    folder = tmp_path / "cards"
    paths = export_cards(st, keys, folder, f)
    on_disk = sorted(p for p in folder.rglob("*") if p.is_file())
    assert sorted(paths) == on_disk  # every file written is listed (the cards' images too), nothing else
    assert [p.name for p in paths[-2:]] == ["index.md", "index.tex"]
    name, data = card_zip(paths, folder)
    assert name == "cards.zip"
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        got = {n: z.read(n) for n in z.namelist()}
    assert got == {f"cards/{p.relative_to(folder).as_posix()}": p.read_bytes() for p in on_disk}
    assert any(n.startswith("cards/media/") and "/img/" in n for n in got)


def test_an_offer_is_sent_at_once_only_within_the_activation_window():
    offer = Offer("cards.zip", b"x", pressed=100.0)
    assert offer.in_window(now=100.0) and offer.in_window(now=100.0 + ACTIVATION_LEFT)
    assert not offer.in_window(now=100.0 + ACTIVATION_LEFT + 0.01)
    assert ACTIVATION_LEFT < 5.0  # below the browsers' 5 s user-activation window


def test_a_sent_file_reports_its_fetch_once_read_to_the_end():
    data = bytes(range(256)) * 1000  # 256 kB: several of textual-serve's 64 kB chunk requests
    calls = []
    f = _Fetched(data, lambda: calls.append(1))
    got = b""
    while chunk := f.read(64 * 1024):
        assert calls == []  # not before the browser has it all
        got += chunk
    assert got == data and calls == [1]
    assert f.read(64 * 1024) == b"" and calls == [1]  # once


async def test_download_key_in_a_terminal_sends_nothing_and_says_where(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        assert isinstance(app.screen, ItemsScreen)
        app.state.cards_dir = tmp_path / "cards"
        await pilot.press("D")
        await settle(pilot)
        said = [n.message for n in app._notifications]
        assert any("memscope serve" in m and str(tmp_path / "cards") in m for m in said), said
        assert app.state.cards_offer is None

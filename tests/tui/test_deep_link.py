"""Deep links and case cards that carry them: `memscope tui … --item ID [--mode] [--run]` opens the
Item screen on that item and run (Pilot, the real app on the demo); bad ids are one line; the case
card prints that command (which parses back to the same item and run), names the backbone, and gets
a still frame for a video clue (the clip's middle frame, pixel for pixel)."""

from __future__ import annotations

import shlex

import numpy as np
import pytest
from PIL import Image

from scorer.errors import UserError
from tests.paths import DEMO, RUNS
from tests.tui.apphelpers import SIZE, settle
from tui.app import deep_link, make_app
from tui.casecard import export_case
from tui.cli import main as cli_main
from tui.media.frames import open_frames
from tui.screens.item import ItemScreen
from tui.screens.items import ItemsScreen
from tui.state import load_state

pytestmark = [pytest.mark.usefixtures("halfcell"), pytest.mark.needs_demo]

ITEM = "Collectibles_Shelf_Assistant:3"
RUN = "qwen3-vl-8b/semantic_rag__multimodal"
VIDEO_ITEM = ("Omni_Family_Moments:2", "mcq")  # its clue: ball_trick.gif (pre-extracted frames)


async def test_item_and_run_open_the_item_screen_on_that_tab():
    app = make_app(DEMO, [RUNS], annotator="t", item=ITEM, mode="open", run=RUN)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ItemScreen) and screen.key == (ITEM, "open")
        panel = screen.active_panel()
        assert panel is not None and panel.ref.key == RUN and panel.ref.mode == "open"
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, ItemsScreen)  # back to the Items table, as from a row


def test_bad_deep_links_are_one_line(demo, capsys):
    with pytest.raises(UserError, match="no such item"):
        deep_link(demo, "Nope:1", None, None)
    with pytest.raises(UserError, match="no mcq run with that key"):
        deep_link(demo, ITEM, "mcq", "nobody/nothing")
    with pytest.raises(UserError, match="go with --item"):
        deep_link(demo, None, "mcq", None)
    assert deep_link(demo, ITEM, None, None) == ((ITEM, "mcq"), None)  # mcq first when there is one
    assert cli_main(["tui", str(DEMO), "--item", "Nope:1"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--item Nope:1: no such item" in err[0]


def test_case_card_prints_the_link_names_the_backbone_and_stills_the_video(tmp_path):
    st = load_state(DEMO, [RUNS], exports_dir=tmp_path / "exports")
    item = st.bench.item(*VIDEO_ITEM)
    backbone = "qwen3-vl-8b"
    md_path, tex_path, *images = export_case(st, item, backbone=backbone)
    md_text, tex_text = md_path.read_text(), tex_path.read_text()
    assert f"**Backbone:** {backbone}" in md_text and f"\\textit{{Backbone:}} {backbone}" in tex_text
    # the printed command parses back to this item (the card shows several runs: no --run)
    line = next(ln.strip() for ln in md_text.splitlines() if ln.strip().startswith("memscope tui "))
    argv = shlex.split(line)
    assert argv[argv.index("--item") + 1] == item.item_id and argv[argv.index("--mode") + 1] == "mcq"
    assert deep_link(st, argv[argv.index("--item") + 1], argv[argv.index("--mode") + 1], None)[0] == VIDEO_ITEM
    assert "memscope tui" in tex_text and "\\texttt{" in tex_text
    # the video clue's still: its middle frame, as PNG, linked from both cards
    still = next(p for p in images if p.name.endswith("_still.png"))
    video = next(m for r in st.task(item).clue_chain(item) for m in r.media if m.kind == "video")
    src = open_frames(video, st.bench.root)
    want = np.asarray(src.frame(src.count // 2))
    src.close()
    assert (np.asarray(Image.open(still).convert("RGB")) == want).all()
    rel = still.relative_to(md_path.parent).as_posix()
    assert f"({rel})" in md_text and "(still frame)" in md_text and f"{{{rel}}}" in tex_text
    assert "width=\\linewidth,height=2in" in tex_text  # thumbnails no longer capped at 0.8 in
    assert "0.48\\linewidth" in tex_text or "0.60\\linewidth" in tex_text  # half the column each


def test_case_card_with_one_run_links_that_run(tmp_path):
    st = load_state(DEMO, [RUNS], exports_dir=tmp_path / "exports")
    item = st.bench.item(ITEM, "mcq")
    one = [(ref, p) for ref, p in st.predictions(item) if ref.key == RUN]
    from tui.casecard import deep_link as card_link

    argv = shlex.split(card_link(st, item, one))
    assert argv[:3] == ["memscope", "tui", str(st.bench.root)]
    assert deep_link(st, argv[argv.index("--item") + 1], argv[argv.index("--mode") + 1],
                     argv[argv.index("--run") + 1]) == ((ITEM, "mcq"), one[0][0].index)

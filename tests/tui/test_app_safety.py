"""Text from data is shown literally: Rich markup ("[bold red]x[/]", "[link=…]") and ANSI / OSC escapes
in every text field appear as typed (ESC made visible), never obeyed; broken media show a placeholder
with the reason. Drives the real app on a tiny benchmark written to a temp folder."""

from __future__ import annotations

import pytest

from tests.builders.benchmarks import ESC_SHOWN, INJECTION_TASK, LINK, MARKUP, inj, write_injection_bench
from tests.tui.apphelpers import pictures_done, screen_lines, screen_text, settle
from tui.app import make_app
from tui.messages import OpenRound

WIDE = (260, 70)


def shown(field: str) -> str:
    """How inj(field) must appear on screen: every character literal, escapes visible."""
    return f"{field} {MARKUP} {LINK} {ESC_SHOWN}red\\x1b]8;;https://evil.example\\x07"


@pytest.fixture
def bench(tmp_path):
    return write_injection_bench(tmp_path / "bench")


def no_raw_escape(app) -> None:
    for line in screen_lines(app):
        assert "\x1b" not in line and "\x07" not in line, line


async def test_items_table_shows_question_literally(bench):
    app = make_app(bench, [bench / "runs"], annotator=inj("annotator"))
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        text = screen_text(app)
        assert shown("question")[:60] in text
        assert shown("annotator") in text  # the status line
        no_raw_escape(app)


@pytest.mark.parametrize("mode_key", ["mcq", "open"])
async def test_item_screen_shows_every_field_literally(bench, mode_key):
    app = make_app(bench, [bench / "runs"])
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        if mode_key == "open":
            await pilot.press("down")
        await pilot.press("enter")
        await settle(pilot)
        text = screen_text(app)
        fields = ["question", "answer", "explanation", "user", "assistant", "caption", "prediction", "backbone"]
        fields += ["optionA"] if mode_key == "mcq" else ["reasoning"]
        for field in fields:
            assert shown(field) in text, f"{field} not shown literally"
        if mode_key == "mcq":  # a rotation's raw output is cut to one short line
            assert shown("rotation")[:58] in text
        assert "[bold]pic.png" in text  # a media file name that looks like markup
        no_raw_escape(app)


async def test_compare_screen_shows_predictions_literally(bench):
    app = make_app(bench, [bench / "runs"])
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("2", "enter")
        await settle(pilot)
        # one run only: side by side needs two, and says so instead of failing
        await pilot.press("S")
        await settle(pilot)
        assert type(app.screen).__name__ == "ItemScreen"
        no_raw_escape(app)


async def test_missing_and_corrupt_images_show_a_placeholder_with_the_reason(bench):
    app = make_app(bench, [bench / "runs"])
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("2", "enter")
        await settle(pilot)
        # D1:2 is not a clue: open it in the Session screen, where every round's media show
        item = app.screen.item
        app.screen.post_message(OpenRound(app.state.task(item).name, "D1:2", item))
        await settle(pilot)
        text = screen_text(app)
        assert "media file not found" in text and "missing.png" in text
        assert "corrupt.png" in text and ("corrupt" in text.split("corrupt.png", 1)[1] or "not a readable image" in text)
        no_raw_escape(app)


async def test_corrupt_clue_image_placeholder_in_the_item_screen(tmp_path):
    """A clue whose PNG is corrupt: the Item screen's thumbnail says why, and the app keeps working."""
    import json

    root = write_injection_bench(tmp_path / "b")
    for name in (f"{INJECTION_TASK}.json", f"{INJECTION_TASK}_Open.json"):
        p = root / "dialog" / name
        d = json.loads(p.read_text())
        d["multi_session_dialogues"][1]["dialogues"][0]["input_image"] = [f"image/{INJECTION_TASK}/corrupt.png"]
        p.write_text(json.dumps(d))
    app = make_app(root, [root / "runs"])
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("2", "enter")
        await settle(pilot)
        from tui.widgets.media_image import MediaImage

        thumbs = list(app.screen.query(MediaImage))
        await pictures_done(pilot, thumbs)
        broken = [t for t in thumbs if t.media.name == "corrupt.png"]
        assert broken and "corrupt" in broken[0].error and "corrupt.png" in broken[0].error
        placeholder = broken[0].query_one(".picture-placeholder")
        assert placeholder.display and "corrupt image" in screen_text(app)
        assert any(t.picture is not None for t in thumbs if t.media.name == "fine.png" or t.media.name == "[bold]pic.png")
        await pilot.press("n")  # still responsive
        await settle(pilot)
        assert type(app.screen).__name__ == "ItemScreen"


BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"


def test_bidi_and_zero_width_characters_are_made_visible_by_the_one_safe_text_function():
    from tui.text import cell, safe, shown
    from tui.widgets.literal import label

    raw = "pay " + BIDI + ZERO_WIDTH + " \x1b[2Jnow"
    expected = "pay " + "".join(f"⟨U+{ord(c):04X}⟩" for c in BIDI + ZERO_WIDTH) + " \\x1b[2Jnow"
    assert shown(raw) == expected
    assert safe(raw).plain == cell(raw).plain == label(raw).plain == expected


async def test_a_question_with_a_bidi_override_is_shown_visibly(tmp_path):
    from tests.builders.benchmarks import MINI_TASK, write_mini_bench

    def trojan(d: dict) -> None:
        d["human-annotated QAs"][0]["question"] = "Is it \u202eneerG\u202c or\u200bnot?"
        d["human-annotated QAs"][0]["answer"] = "\ufeffGreen"

    root = write_mini_bench(tmp_path / "b", mutate=trojan)
    app = make_app(root, [])
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("2")
        await settle(pilot)
        assert "Is it ⟨U+202E⟩neerG⟨U+202C⟩ or⟨U+200B⟩not?" in screen_text(app)  # the Items table
        await pilot.press("enter")
        await settle(pilot)
        text = screen_text(app)
        assert "Is it ⟨U+202E⟩neerG⟨U+202C⟩ or⟨U+200B⟩not?" in text and "⟨U+FEFF⟩Green" in text
        assert not any(c in text for c in BIDI + ZERO_WIDTH)

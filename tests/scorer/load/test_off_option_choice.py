"""A rotation `choice` that is text but none of its rotation's option letters ("Z", "AB", a letter
wrapped in terminal escapes, "E" on a four-option item) is read as no answer and that rotation counts
as wrong — as upstream's runner would have logged INVALID. `validate` had said nothing of it; it now
warns, once per run, with the first such choice shown escaped. Upstream's INVALID, a missing choice
and a lower-case or padded letter are not flagged."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import DEMO, REPO

pytestmark = pytest.mark.needs_demo


def _demo_with_first_row(tmp_path: Path, choices: list) -> tuple[Path, Path]:
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("runs-mosaic", "*.db"))
    pred = next(p for p in sorted((root / "runs").rglob("predictions.jsonl")) if '"rotations"' in p.read_text())
    lines = pred.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[0])
    assert row["mode"] == "mcq" and len(row["rotations"]) >= len(choices)
    for r, c in zip(row["rotations"], choices):
        r["choice"] = c
    lines[0] = json.dumps(row)
    pred.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root, pred


def _validate(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scorer", "validate", str(root), "--runs", str(root / "runs"),
                           "--no-decode"], capture_output=True, text=True, cwd=REPO)


@pytest.mark.parametrize("choice, shown", [("Z", '"Z"'), ("AB", '"AB"'), ("\x1b[31mB\x1b[0m", '"\\u001b[31mB\\u001b[0m"'),
                                           ("E", '"E"')])
def test_a_choice_that_is_no_option_letter_is_a_warning(tmp_path: Path, choice: str, shown: str) -> None:
    root, pred = _demo_with_first_row(tmp_path, ["A", choice])
    proc = _validate(root)
    assert proc.returncode == 0, proc.stdout  # a warning: the reading (a wrong answer) is upstream's
    assert "\x1b" not in proc.stdout
    assert proc.stdout.splitlines() == [
        f"{pred}:1: warning: 1 rotation MCQ row(s) log a rotation `choice` that is none of its rotation's option "
        f"letters (first: rotation 1 {shown}): it is read as no answer, and that rotation counts as wrong "
        "(upstream's runner logs a letter, or INVALID when it could not read one)"]


def test_invalid_missing_and_padded_letters_are_not_flagged(tmp_path: Path) -> None:
    root, _ = _demo_with_first_row(tmp_path, ["INVALID", None, " b "])
    proc = _validate(root)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout


def _item_and_check():
    from scorer.load.run_checks import _off_option_choice
    from scorer.model import Rotation

    class Item:  # the two fields the check reads
        rotations = (Rotation({"A": "x", "B": "y"}, "A"), Rotation({"A": "x", "B": "y"}, "B"))

    return Item, _off_option_choice


def test_choices_are_placed_as_scoring_places_them() -> None:
    """A repeated rotation_idx means the choices are scored in the order logged: the third entry is
    past the item's two rotations and is not scored, so its "Z" is not this warning's (misplaced and
    extra rotations are said by their own warnings); a non-object entry keeps its place."""
    item, check = _item_and_check()
    rots = [{"rotation_idx": 0, "choice": "A"}, {"rotation_idx": 1, "choice": "B"}, {"rotation_idx": 1, "choice": "Z"}]
    assert check(rots, item) is None
    assert check([{"rotation_idx": 5, "choice": "Z"}], item) is None  # placed at 5: not scored
    assert check(["junk", {"choice": "Z"}], item) == 'rotation 1 "Z"'
    assert check([{"rotation_idx": 1, "choice": "Z"}, {"rotation_idx": 0, "choice": "B"}], item) == 'rotation 1 "Z"'


def test_a_choice_equal_to_an_unkeyed_answer_is_not_flagged() -> None:
    """A rotation whose answer letter is not among its options (its own error): the choice of that
    letter scores as right, so it is not called wrong here; a long choice is cut before quoting."""
    from scorer.model import Rotation

    item, check = _item_and_check()
    item.rotations = (Rotation({"A": "x", "B": "y"}, "E"),)
    assert check([{"rotation_idx": 0, "choice": "E"}], item) is None
    shown = check([{"rotation_idx": 0, "choice": "\x1b" * 40}], item)
    assert shown == "rotation 0 " + json.dumps("\x1b" * 32)

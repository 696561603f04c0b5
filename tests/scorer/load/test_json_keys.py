"""A key written twice in one JSON object is named by `memscope validate` (every reader keeps the last
one silently): in a dialog file (a QA list repeated empty had read as "no QA items", a warning, exit
0), in a prediction row (a second `judge` is the score), in a run's config; and the quick per-line
test never passes a line the full check would flag."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer.load.json_keys import _may_repeat, repeated_keys, repeated_keys_by_line
from tests.paths import DEMO, REPO

TASK = "Home_Renovation_Journal"


def test_repeated_keys_names_each_object_by_its_path() -> None:
    text = b'{"a": 1, "qa": [{"q": 1}, {"q": 1, "answer": "x", "answer": "y"}], "a": 2, "m": {"n": {"k": 1, "k": 2}}}'
    assert repeated_keys(text) == [("", "a"), ("qa[1]", "answer"), ("m.n", "k")]
    assert repeated_keys(b'{"a": 1, "b": {"a": 2}}') == []  # the same key in two objects is fine
    assert repeated_keys(b"not json") == [] and repeated_keys(b"[1, 2]") == []


def test_repeated_keys_by_line_counts_lines_as_the_readers_do() -> None:
    text = b'{"judge": 1.0, "idx": 1}\n\n{"judge": 1.0, "idx": 2, "judge": 0.0}\n{"rotations": [{"choice": "A", "choice": "B"}]}\n'
    assert repeated_keys_by_line(text) == [(3, "", "judge"), (4, "rotations[0]", "choice")]


# JSON values with keys drawn from a small set (so repeats are common), written with spaced colons,
# escaped quotes and colons in strings, non-ASCII text, NaN: whatever the quick test says "clean"
# the full check must find clean too.
_KEYS = st.sampled_from(["a", "b", "judge", 'q"', "x:y", "é", ' "', '":'])
_TEXT = st.text(alphabet=st.sampled_from(list('ab":\\ é\n\t{}[],')), max_size=6)
_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-10, 10**20), st.floats(allow_nan=True), _TEXT)


def _value(depth: int):
    if depth == 0:
        return _LEAF
    return st.one_of(_LEAF, st.lists(_value(depth - 1), max_size=3),
                     st.lists(st.tuples(_KEYS, _value(depth - 1)), max_size=4))


def _write(v, style) -> str:
    """v as JSON text, objects as their pairs in order (repeats kept), in one of several styles (a
    quote and a colon in text written as \\u0022 and \\u003a, for one)."""
    colon, comma, ascii_, escape_u = style

    def token(x) -> str:
        t = json.dumps(x, ensure_ascii=ascii_)
        if escape_u and isinstance(x, str):
            t = '"' + t[1:-1].replace('\\"', "\\u0022").replace(":", "\\u003a") + '"'
        return t

    if isinstance(v, list) and v and all(isinstance(p, tuple) for p in v):
        return "{" + comma.join(token(k) + colon + _write(x, style) for k, x in v) + "}"
    if isinstance(v, list):
        return "[" + comma.join(_write(x, style) for x in v) + "]"
    if isinstance(v, tuple):
        return "{}"
    return token(v)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_KEYS, _value(2)), max_size=5),
       st.tuples(st.sampled_from([":", ": ", " : ", "\t:"]), st.sampled_from([",", ", "]), st.booleans(),
                 st.booleans()))
def test_the_quick_test_passes_no_line_the_full_check_flags(pairs, style) -> None:
    line = _write(pairs, style).encode()
    json.loads(line)  # the text is JSON (the generator writes it by hand)
    if repeated_keys(line):
        assert _may_repeat(line), line


@pytest.fixture
def demo_copy(tmp_path: Path) -> Path:
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("runs-mosaic", "*.db"))
    return root


def _validate(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scorer", "validate", str(root), "--runs", str(root / "runs"),
                           "--no-decode"], capture_output=True, text=True, cwd=REPO)


@pytest.mark.needs_demo
def test_a_qa_list_written_twice_is_an_error_naming_the_key(demo_copy: Path) -> None:
    f = demo_copy / "dialog" / f"{TASK}.json"
    text = f.read_text(encoding="utf-8").rstrip()
    assert text.endswith("}")
    f.write_text(text[:-1] + ', "human-annotated QAs": []}', encoding="utf-8")
    proc = _validate(demo_copy)
    assert proc.returncode == 1, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if "appears more than once" in ln]
    assert lines == [f"{f}: error: key 'human-annotated QAs' appears more than once in the file's "
                     "outermost object: every JSON reader keeps the last one and drops the others without a word "
                     "— keep one"], proc.stdout


@pytest.mark.needs_demo
def test_a_row_with_two_judge_keys_is_an_error_on_its_line(demo_copy: Path) -> None:
    run = next(p.parent for p in sorted((demo_copy / "runs").rglob("predictions.jsonl")))
    pred = run / "predictions.jsonl"
    lines = pred.read_text(encoding="utf-8").splitlines()
    lines[1] = '{"judge": 1.0, ' + lines[1][1:]
    pred.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (run / "config.json").write_text('{"method": "a", "method": "b"}', encoding="utf-8")
    proc = _validate(demo_copy)
    assert proc.returncode == 1, proc.stderr
    found = [ln for ln in proc.stdout.splitlines() if "appears more than once" in ln]
    assert found == [f"{run / 'config.json'}: error: key 'method' appears more than once in the file's outermost "
                     "object: every JSON reader keeps the last one and drops the others without a word — keep one",
                     f"{pred}:2: error: key 'judge' appears more than once in the row: every JSON reader keeps the "
                     "last one and drops the others without a word — keep one"], proc.stdout


def test_keys_the_readers_hold_as_one_are_a_repeat() -> None:
    """Two keys that differ only in a lone surrogate are one key to the readers (orjson refuses the
    line; the fallback parser reads each as U+FFFD and keeps the second value)."""
    line = b'{"idx": 1, "judge\\ud800": 1.0, "judge\\udc00": 0.0}'
    assert repeated_keys_by_line(line) == [(1, "", "judge\ufffd")]
    assert repeated_keys(b'{"a\\ud800": 1, "b\\ud800": 2}') == []


def test_lines_are_numbered_as_the_run_reader_numbers_them() -> None:
    """A file whose lines end in a bare carriage return is read as several rows: so are its repeats."""
    text = b'{"idx": 1, "judge": 1.0}\r{"idx": 2, "judge": 1.0, "judge": 0.0}\r'
    assert repeated_keys_by_line(text) == [(2, "", "judge")]

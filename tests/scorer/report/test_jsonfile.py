"""report.json values: rounded, NaN/inf as null, never -0.0, numpy and tuples made plain."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from scorer.report.jsonfile import dumps, plain


def test_plain_values_in_rows_and_nested():
    row = {"a": 0.1234567891, "b": float("nan"), "c": -1e-9, "d": float("inf"), "e": True, "f": 3,
           "g": "x", "h": None, 7: np.float64(2.0000004), "i": np.int64(5), "j": (1, 2.5), "k": pd.NA,
           "l": np.bool_(False), "m": [float("-inf"), {"n": -0.0}]}
    want = {"a": 0.123457, "b": None, "c": 0.0, "d": None, "e": True, "f": 3, "g": "x", "h": None,
            "7": 2.0, "i": 5, "j": [1, 2.5], "k": None, "l": False, "m": [None, {"n": 0.0}]}
    got = plain([row, {"rows": [row]}])
    assert got == [want, {"rows": [want]}]
    assert all(type(got[0][k]) is type(want[k]) for k in want)
    text = dumps({"z": row})
    assert "-0.0" not in text and json.loads(text) == {"z": want}


def test_sections_encoded_where_built_give_the_same_file_byte_for_byte():
    """dumps with `texts` (each section's data encoded by section_text, as a forked worker encodes
    the sections it builds) writes exactly what dumps writes from the values: line breaks and
    indent inside strings, empty containers, scalars, numpy values, and text that is not UTF-8."""
    from scorer.report.jsonfile import encoded, section_text

    data = {
        "inputs": {"runs": ["a\nb", "c"], "x": 1.23456789},
        "matrix": [{"backbone": "b\n  \"q\"", "em": np.float64(0.5), "n": np.int64(3), "ci": (0.1, None)}],
        "empty_list": [], "empty_dict": {}, "scalar": 0.30000000000000004, "none": None,
        "nested": {"z": {"y": [[], {}, [1, {"a": float("nan")}]]}, "text": "line\r\nbreak\ttab"},
        "odd": {"name": "bad \udcff byte"},
        "warnings": ["w\n1"],
    }
    want = encoded(data)
    assert want.decode() == dumps(data)
    for names in (["matrix"], ["matrix", "empty_list", "empty_dict", "scalar", "none", "nested", "odd"]):
        texts = {k: section_text(data[k]) for k in names}
        assert encoded(data, texts=texts) == want, names
    assert json.loads(want) == json.loads(dumps(data))


def test_the_score_command_writes_the_same_report_json_with_sections_encoded_in_workers(tmp_path, monkeypatch):
    """`memscope score` encodes each section where it is built; the file is the one written from
    the values by the writer alone (the demo in one process, so every section is encoded here)."""
    from scorer.cli import main
    from scorer.report.jsonfile import write
    from scorer.scoring import score
    from tests.paths import DEMO

    assert main(["score", str(DEMO), "--runs", str(DEMO / "runs"), "--format", "json", "--out",
                 str(tmp_path / "cli")]) == 0
    report = score(DEMO, [DEMO / "runs"])
    assert not report.texts  # nothing encoded unless asked
    write(report.json_data(), tmp_path / "plain.json")
    assert (tmp_path / "cli" / "report.json").read_bytes() == (tmp_path / "plain.json").read_bytes()

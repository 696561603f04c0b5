"""Best / second marks as the MemEye paper marks them (issue 12, point 9): among memory methods only
— reference baselines (clue-only oracle, question-only, no_visual, the names file's `reference`)
are shown, never marked, and take no rank from a memory method — unless --mark-all; with exactly
two methods to rank in a row, the best only; ties share a mark and second is the next distinct
value (the paper's Y1 X4 and Y2 X2 LLM-Judge rows). Hand-computed cases through the metric
function, through `memscope score` on a small benchmark (every renderer and the app's Scores
table agree with report.json), and the published main table with baselines added."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scorer.cli import main
from scorer.metrics.matrix import evaluation_matrix, mark_best
from scorer.names import load_names
from scorer.sections.base import ScoreOptions
from scorer.sections.methods import reference_methods, unmarked_methods
from tests.builders import memeye_table as paper
from tests.builders.benchmarks import write_labelled_bench
from tests.builders.runs import mcq_row, open_row, write_labelled_run

TASK = "Marks_Task"
ORACLE, QONLY = "clue_only_context__multimodal", "question_only"


# ---------------------------------------------------------------------------------------------
# The metric function, by hand


def one_cell(values: dict[str, float]) -> pd.DataFrame:
    """One MCQ item in X1/Y1 per method, scored `values[method]`."""
    return pd.DataFrame([("bb", m, "mcq", "T:1", ("X1",), ("Y1",), v, np.nan, np.nan) for m, v in values.items()],
                        columns=["backbone", "method", "mode", "item_id", "x", "y", "em", "judge", "bleu_1"])


def cell_marks(values: dict[str, float], unmarked=()) -> dict[str, str]:
    rows = evaluation_matrix(one_cell(values), unmarked=unmarked)
    cell = rows[(rows["agg"] == "cell") & (rows["metric"] == "em")]
    assert len(cell) == len(values)
    return dict(zip(cell["method"], cell["mark"]))


def test_oracle_highest_takes_no_rank_from_memory_methods():
    values = {"a": 0.5, "b": 0.3, "c": 0.2, ORACLE: 0.9}
    assert cell_marks(values, {ORACLE}) == {"a": "best", "b": "second", "c": "", ORACLE: ""}
    # Marked among all (--mark-all): the oracle is best and pushes every memory method down a rank.
    assert cell_marks(values) == {"a": "second", "b": "", "c": "", ORACLE: "best"}


def test_ties_share_the_mark_and_second_is_the_next_distinct_value():
    values = {"a": 0.5, "b": 0.5, "c": 0.3, "d": 0.1, ORACLE: 0.9}
    assert cell_marks(values, {ORACLE}) == {"a": "best", "b": "best", "c": "second", "d": "", ORACLE: ""}
    # Equal at the displayed precision is a tie; a baseline tying the best memory method is still unmarked.
    values = {"a": 0.214285714, "b": 0.21428571, "c": 0.19, QONLY: 0.2142857}
    assert cell_marks(values, {QONLY}) == {"a": "best", "b": "best", "c": "second", QONLY: ""}


def test_two_methods_to_rank_mark_the_best_only():
    values = {"a": 0.5, "b": 0.3, ORACLE: 0.9, QONLY: 0.1}
    assert cell_marks(values, {ORACLE, QONLY}) == {"a": "best", "b": "", ORACLE: "", QONLY: ""}
    assert cell_marks({"a": 0.4, "b": 0.4, ORACLE: 0.9}, {ORACLE}) == {"a": "best", "b": "best", ORACLE: ""}
    # One method left to rank: nothing to compare it with.
    assert cell_marks({"a": 0.3, ORACLE: 0.9}, {ORACLE}) == {"a": "", ORACLE: ""}
    # mark_best itself, with the mask given directly.
    rows = pd.DataFrame({"g": ["r"] * 4, "value": [0.9, 0.5, 0.3, 0.1]})
    assert list(mark_best(rows, ["g"], ranked=[False, True, True, False])) == ["", "best", "", ""]
    assert list(mark_best(rows, ["g"], ranked=[False, True, True, True])) == ["", "best", "second", ""]


def _meta(methods: dict[str, tuple[str, str]]) -> pd.DataFrame:
    return pd.DataFrame([(m, d, f) for m, (d, f) in methods.items()], columns=["method", "display", "family"])


def test_which_methods_are_unmarked_default_mark_all_and_a_names_file(tmp_path):
    meta = _meta({"full_context_text_only": ("FC(T)", "text"), "semantic_rag_multimodal": ("SRAG(V)", "multimodal"),
                  ORACLE: ("Oracle(V)", "multimodal"), QONLY: ("Q-only", "no_visual"),
                  "fc_blind": ("fc_blind", "no_visual"), "my_rag": ("MyRAG", "text")})
    # the oracle and question-only by name, fc_blind by its family (no_visual)
    assert unmarked_methods(meta, ScoreOptions()) == {ORACLE, QONLY, "fc_blind"}
    assert unmarked_methods(meta, ScoreOptions(mark_all=True)) == frozenset()
    names = tmp_path / "names.json"
    names.write_text(json.dumps({"display": {"my_rag": "MyRAG"}, "reference": ["MyRAG"]}))  # by display name
    refs = load_names(names).references
    assert unmarked_methods(meta, ScoreOptions(references=refs)) == {ORACLE, QONLY, "fc_blind", "my_rag"}
    assert reference_methods(meta, refs) == {ORACLE, QONLY, "fc_blind", "my_rag"}
    assert unmarked_methods(meta, ScoreOptions(references=refs, mark_all=True)) == frozenset()


# ---------------------------------------------------------------------------------------------
# The published main table: its marks are among the 13 memory methods; adding baselines that beat
# every one of them changes none of the marks


def paper_frame_with_baselines() -> pd.DataFrame:
    scores = paper.scores()
    rows = []
    for m, d, mod in zip(paper.METHODS, paper.DISPLAY, paper.MODALITY):
        for item_id, x, y in paper.items():
            rows.append((m, d, mod, "mcq", item_id, x, y, scores[(m, "em", item_id)], np.nan))
            rows.append((m, d, mod, "open", item_id, x, y, np.nan, scores[(m, "judge", item_id)]))
    baselines = ((ORACLE, "Oracle(V)", "multimodal", 1.0, 1.0), ("full_context_no_visual", "FC(NV)", "no_visual", 1.0, 1.0),
                 (QONLY, "Q-only", "no_visual", 0.25, 0.0))
    for m, d, fam, em, judge in baselines:
        for item_id, x, y in paper.items():
            rows.append((m, d, fam, "mcq", item_id, x, y, em, np.nan))
            rows.append((m, d, fam, "open", item_id, x, y, np.nan, judge))
    f = pd.DataFrame(rows, columns=["method", "display", "family", "mode", "item_id", "x", "y", "em", "judge"])
    f["x"], f["y"] = [(v,) for v in f["x"]], [(v,) for v in f["y"]]
    f.insert(0, "backbone", "gpt-5.4-mini")
    return f


def test_the_papers_marks_hold_with_reference_baselines_in_the_table():
    frame = paper_frame_with_baselines()
    unmarked = unmarked_methods(frame, ScoreOptions())
    assert unmarked == {ORACLE, "full_context_no_visual", QONLY}
    rows = evaluation_matrix(frame, (("em", "mcq"), ("judge", "open")), unmarked=unmarked)
    got = {(r.method, r.metric, r.agg, r.x, r.y): r.mark for r in rows.itertuples()}
    for (y, x, metric), vals in paper.cells().items():
        for m, (_, mark) in zip(paper.METHODS, vals):
            assert got[(m, metric, "cell", x, y)] == mark, (y, x, metric, m)
        for m in unmarked:
            assert got[(m, metric, "cell", x, y)] == ""
    for metric, vals in paper.averages().items():
        for m, (_, mark) in zip(paper.METHODS, vals):
            assert got[(m, metric, "macro", "all", "all")] == mark
    assert not any(mark for (m, *_), mark in got.items() if m in unmarked)


def test_the_papers_marks_through_memscope_score_with_baselines(tmp_path):
    labels = [(x, y) for (y, x), n in paper.CELL_N.items() for _ in range(n)]
    bench = write_labelled_bench(tmp_path / "bench", "Paper_Task", labels)
    scores = paper.scores()
    runs = tmp_path / "runs"
    items = list(enumerate(paper.items(), 1))
    for j, method in enumerate(paper.METHODS):
        write_labelled_run(runs, "Paper_Task", "gpt-5.4-mini", method, paper.MODALITY[j], "mcq",
                  [mcq_row(i, int(scores[(method, "em", item_id)] * 4)) for i, (item_id, _, _) in items])
        write_labelled_run(runs, "Paper_Task", "gpt-5.4-mini", method, paper.MODALITY[j], "open",
                  [open_row(i, scores[(method, "judge", item_id)]) for i, (item_id, _, _) in items])
    for method, modality in ((ORACLE, "multimodal"), ("full_context_no_visual", "no_visual")):  # above everyone
        write_labelled_run(runs, "Paper_Task", "gpt-5.4-mini", method, modality, "mcq", [mcq_row(i, 4) for i, _ in items])
        write_labelled_run(runs, "Paper_Task", "gpt-5.4-mini", method, modality, "open", [open_row(i, 1.0) for i, _ in items])
    out = tmp_path / "out"
    assert main(["score", str(bench), "--runs", str(runs), "--out", str(out), "--format", "json",
                 "--sections", "matrix"]) == 0
    data = json.loads((out / "report.json").read_text())
    got = {(r["method"], r["metric"], r["agg"], r["x"], r["y"]): r["mark"] for r in data["matrix"]}
    for (y, x, metric), vals in paper.cells().items():
        for m, (_, mark) in zip(paper.METHODS, vals):
            assert got[(m, metric, "cell", x, y)] == mark, (y, x, metric, m)
    for metric, vals in paper.averages().items():
        for m, (_, mark) in zip(paper.METHODS, vals):
            assert got[(m, metric, "macro", "all", "all")] == mark, (m, metric)
    refs = [r for r in data["matrix"] if r["method"] in (ORACLE, "full_context_no_visual")]
    assert refs and all(r["reference"] and not r["ranked"] and r["mark"] == "" for r in refs)
    assert data["inputs"]["options"]["mark_all"] is False


# ---------------------------------------------------------------------------------------------
# `memscope score` on a small benchmark: report.json, md, tex, terminal and the app agree

# method: (modality, MCQ rotations right for items 1 and 2, open judge scores or None)
METHODS = {
    "full_context_text_only": ("text", (2, 2), (0.0, 0.0)),   # FC(T)    EM 0.5   judge 0.0
    "semantic_rag_multimodal": ("multimodal", (3, 3), (0.5, 0.5)),  # SRAG(V)  EM 0.75  judge 0.5
    "mma": ("multimodal", (2, 2), None),                       # MMA      EM 0.5
    "simplemem__multimodal": ("multimodal", (1, 2), None),     # SM(V)    EM 0.375
    ORACLE: ("multimodal", (4, 4), (1.0, 1.0)),                # Oracle(V) EM 1.0  judge 1.0: reference by name
    QONLY: ("text_only", (1, 1), None),                        # Q-only   EM 0.25: reference by name
    "fc_blind": ("no_visual", (3, 4), None),                   # fc_blind EM 0.875: reference by family
}


def small(tmp_path: Path) -> tuple[Path, Path]:
    bench = write_labelled_bench(tmp_path / "bench", TASK, [("X1", "Y1"), ("X1", "Y1")])
    runs = tmp_path / "runs"
    for method, (modality, mcq, opn) in METHODS.items():
        write_labelled_run(runs, TASK, "bb", method, modality, "mcq", [mcq_row(i, k) for i, k in enumerate(mcq, 1)])
        if opn:
            write_labelled_run(runs, TASK, "bb", method, modality, "open", [open_row(i, s) for i, s in enumerate(opn, 1)])
    return bench, runs


def score_small(tmp_path: Path, *extra: str) -> tuple[dict, Path]:
    bench, runs = small(tmp_path)
    out = tmp_path / "out"
    assert main(["score", str(bench), "--runs", str(runs), "--out", str(out), "--format", "json,md,tex",
                 "--sections", "matrix", *extra]) == 0
    return json.loads((out / "report.json").read_text()), out


def marks_of(data: dict, metric: str, agg: str = "cell") -> dict[str, str]:
    return {r["display"]: r["mark"] for r in data["matrix"] if r["metric"] == metric and r["agg"] == agg}


def test_score_marks_memory_methods_only_by_default(tmp_path):
    data, out = score_small(tmp_path)
    em = {"FC(T)": "second", "SRAG(V)": "best", "MMA": "second", "SM(V)": "", "Oracle(V)": "", "Q-only": "",
          "fc_blind": ""}
    for agg in ("cell", "macro", "micro"):
        assert marks_of(data, "em", agg) == em, agg
    # Open: two memory methods to rank (FC(T), SRAG(V)) → the best only; the oracle above both unmarked.
    assert marks_of(data, "judge") == {"FC(T)": "", "SRAG(V)": "best", "Oracle(V)": ""}
    assert {r["display"] for r in data["matrix"] if r["reference"]} == {"Oracle(V)", "Q-only", "fc_blind"}
    assert all(r["ranked"] != r["reference"] for r in data["matrix"])
    assert data["inputs"]["options"]["mark_all"] is False
    md = (out / "report.md").read_text()
    assert "| Y1 | X1 | EM | 2 | *0.5000* | **0.7500** | *0.5000* | 0.3750 | 1.0000 | 0.2500 | 0.8750 |" in md
    assert "| Y1 | X1 | LLM-Judge | 2 | 0.0000 | **0.5000** |  |  | 1.0000 |  |  |" in md
    note = ("Best / second per row marked among memory methods (ties share a mark); reference baselines, shown but "
            "not marked: Oracle(V), Q-only, fc\\_blind. A row with only two methods to rank marks the best only.")
    assert note in md
    tex = (out / "tables" / "matrix__main_bb.tex").read_text()
    assert r"\bestcell{0.750}" in tex and r"\secondcell{0.500}" in tex and r"\bestcell{1.000}" not in tex  # --decimals 3
    assert r"\secondcell{0.875}" not in tex and r"\secondcell{0.000}" not in tex
    caption = tex.splitlines()[2]
    assert caption.startswith(r"\caption{") and (r"reference baselines, shown but not marked: Oracle(V), Q-only, "
                                                 r"fc\_blind. A row with only two methods to rank marks the best only.}"
                                                 ) in caption


def test_score_mark_all_marks_among_every_method(tmp_path):
    data, out = score_small(tmp_path, "--mark-all")
    assert marks_of(data, "em") == {"FC(T)": "", "SRAG(V)": "", "MMA": "", "SM(V)": "", "Oracle(V)": "best",
                                    "Q-only": "", "fc_blind": "second"}
    assert marks_of(data, "judge") == {"FC(T)": "", "SRAG(V)": "second", "Oracle(V)": "best"}
    assert all(r["ranked"] for r in data["matrix"])
    assert data["inputs"]["options"]["mark_all"] is True
    md = (out / "report.md").read_text()
    assert ("Best / second per row marked among all methods (ties share a mark), reference baselines included "
            "(--mark-all): Oracle(V), Q-only, fc\\_blind.") in md
    assert "only two methods" not in md
    assert "mark_all = True" in md  # the Inputs list records the option
    tex = (out / "tables" / "matrix__main_bb.tex").read_text()
    assert r"\bestcell{1.000}" in tex and r"\secondcell{0.875}" in tex
    assert r"included (\texttt{-{}-mark-all}): Oracle(V)" in tex


def test_score_with_a_names_file_reference(tmp_path):
    names = tmp_path / "names.json"
    names.write_text(json.dumps({"display": {"fc_blind": "FC(blind)"}, "reference": ["SRAG(V)"]}))
    data, out = score_small(tmp_path, "--names", str(names))
    # SRAG(V) is now a baseline: FC(T) and MMA tie for best, SM(V) is second.
    assert marks_of(data, "em") == {"FC(T)": "best", "SRAG(V)": "", "MMA": "best", "SM(V)": "second",
                                    "Oracle(V)": "", "Q-only": "", "FC(blind)": ""}
    # Open: FC(T) alone is left to rank: no mark at all.
    assert marks_of(data, "judge") == {"FC(T)": "", "SRAG(V)": "", "Oracle(V)": ""}
    md = (out / "report.md").read_text()
    assert "reference baselines, shown but not marked: SRAG(V), Oracle(V), FC(blind), Q-only." in md


@pytest.mark.parametrize("extra", [(), ("--mark-all",)])
def test_every_consumer_shows_the_marks_report_json_has(tmp_path, extra):
    """report.json's `mark`, the section tables' `_marks` (md, csv, terminal), the terminal's and the
    app's Scores screen's cell styles, and the LaTeX main matrix, cell by cell."""
    from scorer.report import terminal
    from scorer.report.latex import main_matrix
    from scorer.scoring import score
    from tui.screens.scores import MARKS, cell, value_style

    bench, runs = small(tmp_path)
    opts = ScoreOptions(mark_all=bool(extra))
    report = score(bench, [runs], options=opts, sections=["matrix"])
    section = report.section("matrix")
    by = {(r["metric"], r["agg"], r["x"], r["y"], r["display"]): r["mark"] for r in section.data}
    assert "best" in by.values() and "second" in by.values()
    titles = {"EM": "em", "LLM-Judge": "judge", "BLEU-1": "bleu_1"}
    aggs = {"Avg.": "macro", "Item-weighted mean": "micro"}
    checked = 0
    for table in section.tables:
        labels = [c for c in table.columns if c not in ("Y", "X", "Metric", "n", "Axis", "Level")]
        term = terminal.table(table)
        for i, row in enumerate(table.rows):
            metric = titles[row["Metric"]]
            if "Axis" in row:
                key = (metric, "marginal", *((row["Level"], "all") if row["Axis"] == "X" else ("all", row["Level"])))
            elif row["Y"] in aggs:
                key = (metric, aggs[row["Y"]], "all", "all")
            else:
                key = (metric, "cell", row["X"], row["Y"])
            for c in labels:
                want = by.get((*key, c), "")
                assert (row.get("_marks") or {}).get(c, "") == want, (table.name, key, c)
                col = list(table.columns).index(c)
                style = str(term.columns[col]._cells[i].style)
                assert (style == terminal.MARK_STYLES[want]) if want else (style == ""), (table.name, key, c, style)
                if isinstance(row.get(c), float):  # the app: value colour, plus the mark's style
                    expected = f"{value_style(row[c])} {MARKS[want]}" if want else value_style(row[c])
                    assert str(cell(table, row, c).style) == expected, (table.name, key, c)
                checked += 1
    assert checked > 50
    # LaTeX: every \bestcell / \secondcell in the main matrix is a value report.json marks so.
    tex = main_matrix("bb", [r for r in section.data if r["backbone"] == "bb"])
    for kind, macro in (("best", r"\bestcell{"), ("second", r"\secondcell{")):
        shown = sorted(part.split("}")[0] for part in tex.split(macro)[1:])
        want = sorted(f"{r['value']:.3f}" for r in section.data  # the LaTeX's default --decimals 3
                      if r["mark"] == kind and r["metric"] in ("em", "judge") and r["agg"] != "marginal")
        assert shown == want, kind

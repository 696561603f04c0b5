"""tui.state, tui.evidence and tui.casecard without a running app: the joined index, the Items
filters, the retrieved/delivered marks and the case-card export, each checked against the data
computed another way."""

from __future__ import annotations

import re

import pytest

from scorer.load.runs import load_runs
from scorer.model import X_LABELS, Y_LABELS
from tests.builders.benchmarks import ESC, INJECTION_TASK, MARKUP, write_injection_bench
from tests.paths import DEMO
from tui.casecard import export_case, latex, md, tex
from tui.evidence import latest_round, run_evidence, stale_clues
from tui.rows import RIGHT, Filter, matches, score_of
from tui.state import load_state


def test_index_joins_every_row_once(demo):
    assert len(demo.rows) == sum(1 for _ in demo.bench.items())
    assert demo.join_problems == 0
    n_rows = sum(len(r.predictions) for r in demo.runs)
    assert sum(len(demo.predictions(r.item)) for r in demo.rows) == n_rows
    # every run ref is one (backbone, method, mode) and answers items of its own mode only
    assert len({(r.backbone, r.method, r.mode) for r in demo.run_refs}) == len(demo.run_refs)
    for row in demo.rows[:20]:
        assert all(ref.mode == row.item.mode for ref, _ in demo.predictions(row.item))


@pytest.mark.parametrize("f", [Filter(y="Y3"), Filter(x="X4", mode="open"), Filter(answerable=False),
                               Filter(task="Travel_Photo_Diary", y="Y1"), Filter(text="bookcase shelf")])
def test_filters_select_what_the_benchmark_says(demo, f):
    expected = []
    for it in demo.bench.items():
        if f.y and f.y not in it.y or f.x and f.x not in it.x or f.mode and it.mode != f.mode:
            continue
        if f.answerable is not None and it.answerable != f.answerable or f.task and it.task != f.task:
            continue
        blob = " ".join([it.item_id, it.task, it.question, it.answer, it.explanation,
                         *(it.rotations[0].options.values() if it.rotations else ())]).lower()
        if f.text and not all(w in blob for w in f.text.split()):
            continue
        expected.append((it.item_id, it.mode))
    got = [r.key for r in demo.filtered(f)]
    assert got == expected and got  # every case selects something in the demo


def test_wrong_by_run_matches_the_run_files(demo):
    ref = next(r for r in demo.run_refs if r.display == "SRAG(V)" and r.mode == "mcq")
    # straight from the run folders, without the app's index
    wrong = set()
    for run in load_runs([DEMO / "runs"]):
        if (run.backbone, run.method, run.mode) == (ref.backbone, ref.method, ref.mode):
            for p in run.predictions:
                if p.em is not None and p.em < RIGHT:
                    wrong.add((f"{p.task}:{p.idx}", "mcq"))
    got = {r.key for r in demo.filtered(Filter(wrong_run=ref.index))}
    assert got == wrong and wrong


def test_score_of_is_em_for_mcq_and_judge_for_open(demo):
    row = demo.rows[0]
    ref, p = demo.predictions(row.item)[0]
    assert score_of(p, "mcq") == p.em
    open_item = next(i for i in demo.bench.items("open"))
    _, po = demo.predictions(open_item)[0]
    assert score_of(po, "open") == po.judge


def test_every_filter_field_is_checked():
    """A row that fails exactly one condition is rejected by it (no filter field is ignored)."""
    from tui.rows import ItemRow

    st = load_state(DEMO, [DEMO / "runs"])
    row = st.rows[0]
    it = row.item
    other_x = next(x for x in X_LABELS if x not in it.x)
    other_y = next(y for y in Y_LABELS if y not in it.y)
    for f in (Filter(task="nope"), Filter(x=other_x), Filter(y=other_y), Filter(mode="open"),
              Filter(answerable=not it.answerable), Filter(disagree=True), Filter(annotated=True),
              Filter(text="zzzz-not-there")):
        assert not matches(row, f), f
    wrong_row = ItemRow(it, row.search, {0: 0.0})
    assert matches(wrong_row, Filter(wrong_run=0)) and not matches(row.__class__(it, row.search, {0: 1.0}),
                                                                    Filter(wrong_run=0))


def test_run_evidence_marks_latest_stale_and_dropped(tmp_path):
    root = write_injection_bench(tmp_path / "b")
    st = load_state(root, [root / "runs"])
    item = st.bench.item(f"{INJECTION_TASK}:1", "mcq")
    task = st.task(item)
    assert latest_round(task, item) == "D2:1"
    assert stale_clues(task, item) == {"D1:1"}
    (_, p), = st.predictions(item)
    ev = run_evidence(task, item, p)
    by_round = {m.round_id: m for m in ev.rounds}
    assert by_round["D1:1"].stale and by_round["D1:1"].gold and by_round["D1:1"].delivered is False
    assert by_round["D2:1"].latest and by_round["D2:1"].delivered is True
    assert [d.round_id for d in ev.dropped] == ["D1:1"]
    assert [d.round_id for d in ev.delivered] == ["D2:1"] and ev.delivered[0].retrieved_rank == 2
    assert ev.marks.chain_retrieved is True and ev.marks.chain_delivered is False


def test_case_card_escapes_text_and_copies_images(tmp_path):
    root = write_injection_bench(tmp_path / "b")
    st = load_state(root, [root / "runs"], exports_dir=tmp_path / "exports")
    item = st.bench.item(f"{INJECTION_TASK}:1", "open")
    paths = export_case(st, item)
    md_path, tex_path, *images = paths
    assert md_path.parent == (tmp_path / "exports" / "Inj_Task_1_open").resolve()
    assert len(images) == 2 and all(p.is_file() and p.suffix == ".png" for p in images)  # the two clue images
    text = md_path.read_text()
    assert ESC not in text and md(ESC) == "\\\\x1b\\[31m" and md(ESC) in text  # shows as \x1b[31m
    assert md(MARKUP) in text and MARKUP not in text  # markdown brackets escaped
    for rel in re.findall(r"\]\((img/[^)]+)\)", text):
        assert (md_path.parent / rel).is_file()
    t = tex_path.read_text()
    assert ESC not in t and "\\begin{figure*}" in t and "\\end{figure*}" in t
    body = t.replace("\\\\", "").replace("\\{", "").replace("\\}", "")  # line breaks, then escaped braces
    assert body.count("{") == body.count("}")  # data braces escaped: the figure stays balanced
    assert tex("a_b%c&{d}") == "a\\_b\\%c\\&\\{d\\}"
    assert t.count("\\includegraphics") == 2
    assert "\\includegraphics" not in latex(st, item, st.predictions(item), {})  # nothing copied, nothing linked

"""Failure review (issue 17), on the demo through Pilot: a Scores cell → Items with that cell's filter
and the scorer's n; each failure filter's count = the scorer's own count; sorting (keys and a header
click); the run and task pickers and the palette's runs, tasks, items and studies; an item opened
from a run filter on that run's tab, showing the prediction of the rotation shown; the case cards of
a filter. The scorer's numbers come from `scorer.scoring.score` on the demo's files (its report), not
from the app."""

from __future__ import annotations

import math
import re

import pytest
from textual.widgets import DataTable, Input

from scorer.metrics.abstention import prediction_abstention
from scorer.metrics.bootstrap import mean_ci
from scorer.metrics.constants import DEFAULT_K
from scorer.metrics.evidence import item_evidence
from scorer.scoring import score
from tests.paths import DEMO, RUNS
from tests.tui.apphelpers import SIZE, demo_app, demo_db, new_study, screen_text, settle
from tui.casecard import md
from tui.failures import KINDS
from tui.modals.folder import FolderDialog
from tui.modals.picker import Picker
from tui.screens.item import ItemScreen
from tui.screens.items import ItemsScreen
from tui.screens.scores import ScoresScreen, ScoreTable
from tui.rows import SORT_COLUMNS, Filter

pytestmark = pytest.mark.needs_demo
RESAMPLES = 300  # the CIs are checked against mean_ci with the same resamples and seed


@pytest.fixture(scope="module")
def report():
    return score(DEMO, [RUNS], sections=["matrix", "evidence", "delivery", "abstention"])


async def scores_ready(pilot) -> ScoresScreen:
    await pilot.press("3")
    for _ in range(200):
        await settle(pilot)
        if isinstance(pilot.app.screen, ScoresScreen) and pilot.app.screen.final:
            return pilot.app.screen
    raise AssertionError("the Scores screen never finished")


async def items_screen(pilot) -> ItemsScreen:
    await pilot.press("2")
    await settle(pilot)
    assert isinstance(pilot.app.screen, ItemsScreen)
    return pilot.app.screen


# ---------------------------------------------------------------- 1. Scores cells lead to their items


async def test_scores_cell_opens_its_items_with_the_scorers_n_and_ci(tmp_path, report):
    app = demo_app(tmp_path)
    app.state.score_resamples = RESAMPLES
    matrix = {(r["backbone"], r["display"], r["mode"], r["agg"], r["x"], r["y"]): r
              for r in report.section("matrix").data if r["metric"] in ("em", "judge")}
    async with app.run_test(size=SIZE) as pilot:
        scores = await scores_ready(pilot)
        main = next(t for t in scores.query(ScoreTable) if t.table.name == "main_gpt-5.4-mini")
        assert " [" in str(main.get_cell_at((0, 4))) and "n=" in str(main.get_cell_at((0, 4)))  # CI and n
        for w in scores.query(".score-absent"):  # no command-line flag named on this screen
            assert "--" not in str(w.content)
        assert not re.search(r"--[a-z]", screen_text(app))
        cols = list(main.table.columns)
        checked = 0
        for row_i in (1, 7, 22):  # cells of both metrics, several (X, Y)
            for col in ("FC(T)", "SRAG(V)", "Oracle(V)"):
                trow = main.table.rows[row_i]
                mode = "mcq" if trow["Metric"] == "EM" else "open"
                want = matrix[("gpt-5.4-mini", col, mode, "cell", trow["X"], trow["Y"])]
                main.focus()
                main.move_cursor(row=row_i, column=cols.index(col), animate=False)
                await pilot.press("enter")
                await settle(pilot)
                items = app.screen
                assert isinstance(items, ItemsScreen)
                ref = app.state.run_refs[items.filter.run]
                assert (ref.backbone, ref.display, ref.mode) == ("gpt-5.4-mini", col, mode)
                assert (items.filter.x, items.filter.y, items.filter.answerable) == (trow["X"], trow["Y"], True)
                assert len(items.keys) == want["n"]  # the scorer's n for the cell
                assert f"{want['n']} of {len(app.state.rows)} items" in screen_text(app)
                shown = [app.state.row(k).scores[ref.index] for k in items.keys]
                assert shown == sorted(shown)  # worst first
                assert math.isclose(sum(shown) / len(shown), want["value"])
                by_id = [app.state.row(k).scores[ref.index] for k in sorted(items.keys)]  # item-id order
                ci = mean_ci(by_id, resamples=RESAMPLES, seed=report.inputs["options"]["seed"])
                cell_text = str(main.get_cell_at((row_i, cols.index(col))))
                assert f"[{ci.ci_low:.2f}, {ci.ci_high:.2f}] n={want['n']}" in cell_text
                checked += 1
                await pilot.press("3")
                await settle(pilot)
        assert checked == 9


async def test_scores_sections_when_a_database_is_open(tmp_path):
    app = demo_app(tmp_path, db=demo_db(tmp_path))
    app.state.score_resamples = 50
    async with app.run_test(size=SIZE) as pilot:
        scores = await scores_ready(pilot)
        sections = {t.section for t in scores.query(ScoreTable)}
        assert {"matrix", "agreement", "oracle", "evidence", "abstention"} <= sections
        # a wide table scrolls sideways inside itself: its virtual width exceeds the screen
        main = next(t for t in scores.query(ScoreTable) if t.table.name.startswith("main_"))
        assert main.virtual_size.width > SIZE[0]
        main.focus()
        main.move_cursor(column=len(main.table.columns) - 1, animate=False)
        await settle(pilot)
        assert main.scroll_x > 0


# ---------------------------------------------------------------- 2. failure filters = the scorer's counts


def _group_rows(report, section: str, part: str | None = None):
    data = report.section(section).data
    return data[part] if part else data


def _count(value, n) -> int:
    return round(value * n) if value is not None else 0


async def test_each_failure_filters_count_is_the_scorers(tmp_path, report):
    evidence = _group_rows(report, "evidence")
    delivery = _group_rows(report, "delivery", "runs")
    abstention = _group_rows(report, "abstention")
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        items = await items_screen(pilot)
        st = app.state
        nonzero = set()
        for ref in st.run_refs:
            group = (ref.backbone, ref.method, ref.mode)

            def ev(metric, y):
                return next((r for r in evidence if (r["backbone"], r["method"], r["mode"]) == group
                             and r["metric"] == metric and r["y"] == y and r["x"] == "all" and r["task"] == "all"
                             and r.get("category", "all") == "all"), None)

            async def shown(kind):
                items.filter = Filter(run=ref.index, failures=(kind,))
                await pilot.pause()
                return list(items.keys)

            for kind in ("stale_dominance", "rank_inversion", "latest_miss"):
                r = ev(kind, "Y3")
                keys = await shown(kind)
                assert len(keys) == (_count(r["value"], r["n"]) if r else 0), (ref, kind)
                nonzero |= {kind} if keys else set()
            r = ev("chain_retrieved", "all")
            keys = await shown("chain_incomplete")
            assert len(keys) == (r["n"] - _count(r["value"], r["n"]) if r else 0), ref
            nonzero |= {"chain_incomplete"} if keys else set()
            # retrieved but not delivered: the required facts left out of these items add up to the
            # delivery table's "Req. facts not deliv."
            d = next((r for r in delivery if (r["backbone"], r["method"], r["mode"]) == group), None)
            keys = await shown("not_delivered")
            facts = 0
            for key in keys:
                item = st.bench.item(*key)
                e = item_evidence(st.bench.task_of(item), item, dict(st.predictions(item))[ref], DEFAULT_K)
                facts += sum(1 for f in e.facts if f.round_id in set(e.not_delivered))
            assert facts == ((d["facts_not_delivered"] or 0) if d else 0), ref
            nonzero |= {"not_delivered"} if keys else set()
            # abstention: the rows' abstention values over the filtered items add up to rate × n
            rates = {r["metric"]: r for r in abstention if (r["backbone"], r["method"], r["mode"]) == group}
            for kind, metric, flip in (("abstained_answerable", "false_abstention", False),
                                       ("answered_unanswerable", "correct_abstention", True)):
                keys = await shown(kind)
                total = 0.0
                for key in keys:
                    item = st.bench.item(*key)
                    v, _ = prediction_abstention(item, dict(st.predictions(item))[ref])
                    total += (1 - v) if flip else v
                r = rates[metric]
                want = ((1 - r["value"]) if flip else r["value"]) * r["n"] if r["value"] is not None else 0
                assert math.isclose(total, want, abs_tol=1e-9), (ref, kind)
                nonzero |= {kind} if keys else set()
        # the demo exercises every kind but "abstained on an answerable item" (no run abstains there)
        assert nonzero == {k.name for k in KINDS} - {"abstained_answerable"}


async def test_failure_picker_counts_combine_and_header(tmp_path):
    app = demo_app(tmp_path, db=demo_db(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        items = await items_screen(pilot)
        st = app.state
        srag = next(r for r in st.run_refs if r.display == "SRAG(V) budget" and r.mode == "mcq")
        await pilot.press("exclamation_mark")
        await settle(pilot)
        assert isinstance(app.screen, Picker)
        await pilot.press(*f"{srag.display} {srag.backbone} mcq", "enter")
        await settle(pilot)
        picker = app.screen
        assert isinstance(picker, Picker) and items.filter.run == srag.index
        counts = {c.value: c.count for c in picker.choices}
        found = st.failures(srag.index)
        for kind in KINDS:  # each kind's count, with nothing else filtered, is its set's size
            assert counts[("kind", kind.name)] == len(found[kind.name])
        await pilot.press(*"stale dominates", "enter")
        await settle(pilot)
        assert items.filter.failures == ("stale_dominance",)
        assert len(items.keys) == len(found["stale_dominance"]) > 0
        # combine: and Y3 ∩ chain incomplete; the picker's counts are what each choice would leave
        await pilot.press("exclamation_mark")
        await settle(pilot)
        want = len(found["stale_dominance"] & found["chain_incomplete"])
        assert {c.value: c.count for c in app.screen.choices}[("kind", "chain_incomplete")] == want
        await pilot.press(*"chain incomplete", "enter")
        await settle(pilot)
        assert items.filter.failures == ("stale_dominance", "chain_incomplete") and len(items.keys) == want
        header = str(items.query_one("#filter-bar").content)
        assert f"{want} of {len(st.rows)} items" in header
        assert "failed=stale dominates" in header and "failed=chain incomplete in the top K" in header
        assert "run=SRAG(V) budget" in header
        # A right / B wrong: SRAG(V) budget right, FC(T) of the same backbone and mode wrong
        fct = next(r for r in st.run_refs if (r.display, r.backbone, r.mode) == ("FC(T)", srag.backbone, "mcq"))
        items.filter = Filter(run=srag.index)
        await pilot.press("exclamation_mark")
        await settle(pilot)
        await pilot.press(*"right another run wrong", "enter")
        await settle(pilot)
        await pilot.press(*f"FC(T) {fct.backbone} mcq", "enter")
        await settle(pilot)
        assert (items.filter.right_run, items.filter.wrong_run) == (srag.index, fct.index)
        want = [r.key for r in st.rows if r.right(srag.index) and r.wrong(fct.index)]
        assert items.keys == want and want
        # flagged by kind, and with notes (the demo store: one bad_media flag, two notes)
        flags, notes = st.flags()
        items.filter = Filter(flag="bad_media")
        await pilot.pause()
        assert {k[0] for k in items.keys} == set(flags["bad_media"]) and items.keys
        items.filter = Filter(noted=True)
        await pilot.pause()
        assert {k[0] for k in items.keys} == set(notes) and len(notes) == 2
        items.filter = Filter(run=srag.index, disagree=True)
        await pilot.pause()
        assert all(st.row(k).disagree for k in items.keys)


# ---------------------------------------------------------------- 3. sorting


async def test_items_sort_by_key_and_header_stable_and_reversible(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        items = await items_screen(pilot)
        st = app.state
        bench_order = [r.key for r in st.rows]
        await pilot.press("O")  # task
        await settle(pilot)
        assert items.filter.sort == SORT_COLUMNS[0] == "task"
        by_task = sorted(st.rows, key=lambda r: r.item.task)  # Python's sort is stable: ties in bench order
        assert items.keys == [r.key for r in by_task]
        await pilot.press("I")
        await settle(pilot)
        assert items.keys == [r.key for r in sorted(st.rows, key=lambda r: r.item.task, reverse=True)]
        # the selected run's score, by a click on the "score" header
        ref = st.run_refs[3]
        items.filter = Filter(run=ref.index)
        await pilot.pause()
        table = items.query_one(DataTable)
        x = sum(c.get_render_width(table) for k, c in table.columns.items()
                if list(table.columns).index(k) < list(table.columns).index("score")) + 2
        await pilot.click("#items-table", offset=(x, 0))
        await settle(pilot)
        assert items.filter.sort == "score" and not items.filter.descending
        scores = [st.row(k).scores[ref.index] for k in items.keys]
        assert scores == sorted(scores)
        ties = [k for k in items.keys if st.row(k).scores[ref.index] == scores[0]]
        assert ties == [k for k in bench_order if k in set(ties)]  # stable
        await pilot.click("#items-table", offset=(x, 0))  # again: reversed
        await settle(pilot)
        assert items.filter.descending
        assert [st.row(k).scores[ref.index] for k in items.keys] == sorted(scores, reverse=True)
        for column in SORT_COLUMNS:  # every column sorts without error, and keeps every row
            items.filter = Filter(sort=column)
            await pilot.pause()
            assert sorted(items.keys) == sorted(bench_order)


# ---------------------------------------------------------------- 4. pickers and the palette


async def test_run_and_task_pickers_narrow_as_you_type(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        items = await items_screen(pilot)
        st = app.state
        await pilot.press("w")
        await settle(pilot)
        picker = app.screen
        assert isinstance(picker, Picker) and len(picker.shown) == len(st.run_refs) + 1
        await pilot.press(*"srag v budget qwen op")
        await settle(pilot)
        top = picker.shown[0].value
        ref = st.run_refs[top]
        assert (ref.display, ref.backbone, ref.mode) == ("SRAG(V) budget", "qwen3-vl-8b", "open")
        await pilot.press("enter")
        await settle(pilot)
        assert items.filter.wrong_run == ref.index == items.filter.run
        assert all(st.row(k).wrong(ref.index) for k in items.keys) and items.keys
        await pilot.press("t", *"travel", "enter")
        await settle(pilot)
        assert items.filter.task == "Travel_Photo_Diary"
        await pilot.press("t", "escape")
        await settle(pilot)
        assert items.filter.task == "Travel_Photo_Diary" and app.screen is items  # esc changes nothing


async def test_palette_offers_runs_tasks_items_and_studies(tmp_path):
    db = demo_db(tmp_path)
    new_study(db, "agreement", "blind-1", "1", "--backbone", "gpt-5.4-mini", runs=True)
    app = demo_app(tmp_path, db=db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)

        async def palette(query: str) -> str:
            await pilot.press("ctrl+p")
            await settle(pilot)
            await pilot.press(*query)
            await settle(pilot, 40)
            return screen_text(app)

        text = await palette("srag")
        assert "run SRAG(V)" in text and "run SRAG(T)" in text
        await pilot.press("escape")
        text = await palette("srag budget qwen open")  # Textual's matcher: letters in order
        await pilot.press("enter")
        await settle(pilot)
        items = app.screen
        assert isinstance(items, ItemsScreen)
        ref = app.state.run_refs[items.filter.run]
        assert (ref.display, ref.backbone, ref.mode) == ("SRAG(V) budget", "qwen3-vl-8b", "open")
        text = await palette("task home reno")
        assert "task Home_Renovation_Journal" in text
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen.filter == Filter(task="Home_Renovation_Journal")
        text = await palette("cat figurine")  # question words
        assert "item Collectibles_Shelf_Assistant:6" in text
        await pilot.press("escape")
        text = await palette("study blind")
        assert "study blind-1 (agreement)" in text
        await pilot.press("enter")
        await settle(pilot)
        assert type(app.screen).__name__ == "AgreementStudyScreen"


# ---------------------------------------------------------------- 5. open where you came from


async def test_item_opens_on_the_run_of_the_filter_and_shows_the_rotations_prediction(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        items = await items_screen(pilot)
        st = app.state
        ref = next(r for r in st.run_refs if (r.display, r.backbone, r.mode) == ("SRAG(V)", "qwen3-vl-8b", "mcq"))
        items.filter = Filter(run=ref.index, failures=("stale_dominance",))
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        item = app.screen
        assert isinstance(item, ItemScreen)
        assert item.active_panel().ref == ref  # that run's tab, on its backbone
        await pilot.press("n")
        await settle(pilot)
        assert item.active_panel().ref.display == "SRAG(V)" and item.backbone == "qwen3-vl-8b"
        # the prediction beside a rotation is that rotation's (FC(T) chose A on rotation 1, D on 4)
        await pilot.press("escape")
        key = ("Collectibles_Shelf_Assistant:1", "mcq")
        fct = next(r for r in st.run_refs if (r.display, r.backbone, r.mode) == ("FC(T)", "gpt-5.4-mini", "mcq"))
        items.filter = Filter(run=fct.index)
        await pilot.pause()
        items.query_one(DataTable).move_cursor(row=items.keys.index(key), animate=False)
        await pilot.press("enter")
        await settle(pilot)
        item = app.screen
        p = dict(st.predictions(st.bench.item(*key)))[fct]
        rot = {r.rotation_idx: r for r in p.rotations}
        assert rot[0].choice != p.pred  # the row's last answer differs from rotation 1's
        text = screen_text(app)
        assert f"prediction (rotation 1): {rot[0].pred}" in text
        await pilot.press("o", "o", "o")
        await settle(pilot)
        assert f"prediction (rotation 4): {rot[3].pred}" in screen_text(app)


# ---------------------------------------------------------------- 6. batch case cards


async def test_batch_case_cards_of_a_filter(tmp_path):
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        items = await items_screen(pilot)
        st = app.state
        ref = next(r for r in st.run_refs if (r.display, r.backbone, r.mode) == ("SRAG(V)", "qwen3-vl-8b", "mcq"))
        items.filter = Filter(run=ref.index, failures=("rank_inversion",))
        await pilot.pause()
        keys = list(items.keys)
        assert keys
        await pilot.press("E")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, FolderDialog)
        out = tmp_path / "cards"
        dialog.query_one(Input).value = str(out)
        await pilot.press("enter")
        await settle(pilot)
        md_files = sorted(p for p in out.glob("*.md") if p.name != "index.md")
        tex_files = sorted(p for p in out.glob("*.tex") if p.name != "index.tex")
        assert len(md_files) == len(tex_files) == len(keys)
        index = (out / "index.md").read_text(encoding="utf-8")
        assert f"{len(keys)} item(s)." in index and "rank inversion" in index
        for key in keys:
            assert key[0].replace("_", "\\_") in index
        card = md_files[0].read_text(encoding="utf-8")
        assert f"| {md('SRAG(V)')} | qwen3-vl-8b |" in card and f"| {md('FC(T)')} |" not in card  # its run only
        assert all(f"\\input{{{p.name}}}" in (out / "index.tex").read_text() for p in tex_files)
        # the folder is asked once: the second export writes again without a dialog
        for p in md_files:
            p.unlink()
        await pilot.press("E")
        await settle(pilot)
        assert app.screen is items
        assert len([p for p in out.glob("*.md") if p.name != "index.md"]) == len(keys)


async def test_scores_show_mosaics_ladder_and_strata_with_a_conditions_file(tmp_path):
    """Issue 20, point 4: `memscope tui … --conditions FILE` scores with the runs' conditions, so the
    Scores screen shows the ladder and the strata, with the scorer's own values."""
    from scorer.load.conditions import score_extra
    from scorer.sections.base import ScoreOptions
    from tui.app import make_app

    runs = [RUNS / "Omni_Family_Moments", DEMO / "runs-mosaic"]
    extra = score_extra(DEMO / "conditions-mosaic.json")
    want = score(DEMO, runs, options=ScoreOptions(extra=extra, resamples=50), sections=["mosaic_ladder"])
    app = make_app(DEMO, runs, annotator="t", exports_dir=tmp_path, score_extra=extra)
    app.state.score_resamples = 50
    async with app.run_test(size=SIZE) as pilot:
        scores = await scores_ready(pilot)
        tables = {t.section: t for t in scores.query(ScoreTable)}
        assert {"mosaic_ladder", "mosaic_strata"} <= set(tables), sorted(tables)
        ladder = tables["mosaic_ladder"].table
        expected = next(t for t in want.section("mosaic_ladder").tables if t.name == ladder.name)
        assert ladder.rows == expected.rows  # the scorer's table, as computed by `memscope score`
    bare = make_app(DEMO, runs, annotator="t", exports_dir=tmp_path)
    bare.state.score_resamples = 50
    async with bare.run_test(size=SIZE) as pilot:  # without the file the demo's runs declare nothing
        scores = await scores_ready(pilot)
        assert "mosaic_ladder" not in {t.section for t in scores.query(ScoreTable)}

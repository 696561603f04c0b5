"""One evidence truth (issue 12, point 11): every evidence mark the Item screen and the case card show
for a run on an item — the chain's retrieved / delivered completeness and its n/m counts, each chain
fact's ✓/✗, the clue coverage at K, the gold ✓ / ★ latest / ⟲ stale marks of the top-K rounds, the
Y3 latest rank, stale dominance and rank inversion, what packing dropped — equals the per-item value
the score report's evidence and delivery tables are built from, at the same K (the scorer's default).

The scorer side is read through the report's own code: the records the sections join
(scorer.sections.evidence_records.collect), the per-item diagnoses the evidence tables average
(scorer.sections.evidence.diagnosed), the per-item chain statuses the delivery tables count
(scorer.sections.delivery._statuses) and the per-item rows report.json publishes (delivery.items).
The app side is the text the screen renders: for every demo item × run the run panel's body (the very
Text its Static shows, both views) and the case card's Markdown and LaTeX; for a sample including
Collectibles_Shelf_Assistant:6 SRAG(V) (rank 11 of a top-10 run) the screen itself, read off the
terminal with Pilot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from scorer.metrics.delivery import not_delivered
from scorer.scoring import build_context
from scorer.sections import delivery as delivery_section
from scorer.sections import evidence as evidence_section
from scorer.sections.base import DEFAULT_K
from scorer.sections.evidence_records import collect
from tests.paths import DEMO
from tests.tui.apphelpers import settle
from tui.casecard import latex, markdown, tex
from tui.widgets.run_panel import PANELS, body_text

pytestmark = pytest.mark.needs_demo
Y3_ITEM = ("Collectibles_Shelf_Assistant:6", "mcq")  # SRAG(V) gpt-5.4-mini: clue D2:1 at rank 11 of 15 logged


# ------------------------------------------------------------------------------------ the scorer's values


@dataclass
class Truth:
    k: int
    chain: dict  # (backbone, method, mode, item_id) → (top-K ids | None, delivered | None, facts, ChainStatus)
    diagnosis: dict  # same key → Diagnosis (answerable items with valid provenance)
    published: dict  # same key → the delivery section's per-item row in report.json
    report_evidence: list  # the evidence section's rows (what its tables show)
    records: dict  # same key → the joined Record


@pytest.fixture(scope="module")
def truth() -> Truth:
    ctx, _, _ = build_context(DEMO, [DEMO / "runs"])
    k = ctx.options.k
    assert k == DEFAULT_K
    records, _ = collect(ctx)

    def key(r):
        return (r.backbone, r.method, r.mode, r.item.item_id)

    chain = {}
    for r, ret, dlv, facts, s, *dropped in delivery_section._statuses(records, k):
        chain[key(r)] = (ret, dlv, facts, s)
        if dropped:  # what the modality table counts as retrieved but not delivered
            assert dropped[0] == (None if ret is None or dlv is None else tuple(not_delivered(ret, dlv)))
    diagnosis = {key(r): d for r, d in evidence_section.diagnosed(records, k)}
    delivery = delivery_section.build(ctx)
    published = {(row["backbone"], row["method"], row["mode"], row["item_id"]): row
                 for row in delivery.data["items"]}
    evidence = evidence_section.build(ctx)
    assert chain and diagnosis and published  # the demo's SRAG runs log retrieval: these tests test something
    return Truth(k, chain, diagnosis, published, list(evidence.data), {key(r): r for r in records})


def pairs(demo):
    """Every (item, run, prediction) the Item screen can show on the demo."""
    for row in demo.rows:
        for ref, p in demo.predictions(row.item):
            yield row.item, ref, p


# ------------------------------------------------------------------------------------ reading the panel

MARK = {"✓": True, "✗": False, "?": None}


@dataclass
class Panel:
    """The marks one run panel shows (read from its plain text)."""

    k: int | None
    retrieved: tuple | None  # (mark, got, of) or None when "not logged"
    delivered: tuple | None
    clues: tuple | None  # (got, of) in the top K, or None when not shown
    y3: dict | None
    top: list  # rows of the retrieved list within the top K: (rank, round, marks, delivered cell)
    pool: list  # rows beyond the top K
    chain: list  # (round, retrieved mark, delivered mark, note)
    dropped: list | None  # round ids "retrieved but dropped by packing" (delivered view)
    unretrieved: list  # "delivered without being retrieved"
    abstention_note: bool
    text: str


def split_cols(line: str) -> list[str]:
    return [c for c in re.split(r" {2,}", line.strip()) if c]


def read_panel(retrieved_view: str, delivered_view: str) -> Panel:
    lines = retrieved_view.splitlines()
    summary = next(line for line in lines if line.startswith("full chain"))
    k = re.search(r"retrieved@(\d+)", summary)

    def completeness(word: str):
        if re.search(rf"{word}(@\d+)? \? \(not logged\)", summary):
            return None
        m = re.search(rf"{word}(?:@\d+)? ([✓✗]) (\d+)/(\d+)", summary)
        assert m, f"no {word} mark in {summary!r}"
        return MARK[m.group(1)], int(m.group(2)), int(m.group(3))

    clues = next((re.search(r"^clues in top-\d+\s+(\d+)/(\d+)", line) for line in lines
                  if line.startswith("clues in top-")), None)
    y3 = None
    at = next((i for i, line in enumerate(lines) if line.startswith("Y3 @")), None)
    if at is not None:
        y3_line = lines[at]
        if at + 1 < len(lines) and lines[at + 1].startswith(" ") and lines[at + 1].strip():
            y3_line += lines[at + 1]  # the stale-dominance / rank-inversion flags, on a line of their own
        m = re.search(r"latest ([✓✗])(?: \(rank (\d+)\))?", y3_line)
        stale = re.search(r"stale in top-\d+: (\d+)", y3_line)
        y3 = {"k": int(re.match(r"Y3 @(\d+)", y3_line).group(1)), "latest": MARK[m.group(1)],
              "latest_rank": int(m.group(2)) if m.group(2) else None,
              "n_stale": int(stale.group(1)) if stale else None,
              "dominance": "stale dominates" in y3_line, "inversion": "rank inversion" in y3_line}
    top, pool, chain = [], [], []
    section = None
    for line in lines:
        s = line.strip()
        if s.startswith("rank") and "round" in s and "marks" in s:
            section = "top"
            continue
        if s.startswith("round") and "role" in s and "modality" in s:
            section = "chain"
            continue
        if not s:
            section = None
            continue
        if section in ("top", "pool"):
            if s.startswith("┄"):
                section = "pool"
                continue
            cols = split_cols(line)
            rank, score, rid, *rest = cols
            marks, cell = (rest[0], rest[1]) if len(rest) == 2 else ("", rest[0])
            (top if section == "top" else pool).append((int(rank), rid, marks, cell))
        elif section == "chain":
            cols = split_cols(line)
            note = ""
            if cols[-1].startswith("("):
                note = cols.pop()
            chain.append((cols[0], MARK[cols[-2]] if cols[-2] in MARK else cols[-2],
                          MARK[cols[-1]] if cols[-1] in MARK else cols[-1], note))
    dropped = None
    unretrieved: list = []
    joined: list[str] = []  # a long line the terminal wrapped is one line again
    for line in delivered_view.splitlines():
        if joined and line.strip() and joined[-1].startswith(("retrieved", "delivered without")) \
                and not re.match(r"(nothing|delivered without|gold chain|round )", line.strip()):
            joined[-1] += " " + line.strip()
        else:
            joined.append(line)
    for line in joined:
        if re.match(r"retrieved (\(top-\d+\) )?but dropped by packing: ", line):
            dropped = re.findall(r"(\S+) \(rank \d+[^)]*\)", line.split(": ", 1)[1])
        elif re.match(r"nothing retrieved (\(top-\d+\) )?was dropped by packing", line):
            dropped = []
        elif re.match(r"delivered without being retrieved (\(top-\d+\))?: ", line):
            unretrieved = line.split(": ", 1)[1].split(", ")
    return Panel(int(k.group(1)) if k else None, completeness("retrieved"), completeness("delivered"),
                 (int(clues.group(1)), int(clues.group(2))) if clues else None, y3, top, pool, chain,
                 dropped, unretrieved, "abstention control" in retrieved_view, retrieved_view)


def panel_of(ref, task, item, p) -> Panel:
    ev, answer = PANELS.get(ref, task, item, p, 0)
    return read_panel(body_text(ev, answer, "retrieved").plain, body_text(ev, answer, "delivered").plain)


# ------------------------------------------------------------------------------------ comparing


def mismatches(panel: Panel, truth: Truth, key: tuple, task, item, p) -> list[str]:
    """Every way the panel's marks differ from the scorer's per-item values (empty: they agree)."""
    out = []

    def check(what: str, shown, want) -> None:
        if shown != want:
            out.append(f"{what}: the app shows {shown!r}, the scorer has {want!r}")

    k = truth.k
    check("K shown", panel.k, k if p.retrieved is not None else None)  # K matters where a ranking is logged
    if not item.answerable:
        # the report's evidence and delivery tables leave abstention controls out: the panel says so
        check("abstention control noted", panel.abstention_note, True)
        check("scorer has no value", (key in truth.chain, key in truth.diagnosis), (False, False))
        return out
    check("no abstention note on an answerable item", panel.abstention_note, False)
    status = truth.chain.get(key)
    ret, dlv, facts, s = status if status else (None, None, [], None)
    published = truth.published.get(key)
    if s is None:
        check("chain retrieved", panel.retrieved, None)
        check("chain delivered", panel.delivered, None)
        check("published per-item row", published, None)
    else:
        check("chain retrieved", panel.retrieved,
              None if s.n_retrieved is None else (s.chain_retrieved, s.n_retrieved, s.n_facts))
        check("chain delivered", panel.delivered,
              None if s.n_delivered is None else (s.chain_delivered, s.n_delivered, s.n_facts))
        # and report.json's per-item row publishes what the panel shows
        check("chain retrieved vs report.json", None if panel.retrieved is None else panel.retrieved[0],
              published["chain_retrieved"])
        check("chain delivered vs report.json", None if panel.delivered is None else panel.delivered[0],
              published["chain_delivered"])
        check("required-fact recall vs report.json",
              None if panel.retrieved is None else panel.retrieved[1] / panel.retrieved[2],
              published["required_fact_recall"])
    # each chain fact the table lists, against the top-K list and the delivered list the scorer counted
    counted = {f.round_id for f in facts}
    for rid, r_mark, d_mark, note in panel.chain:
        if rid not in counted and s is not None:
            check(f"chain fact {rid} not counted", (r_mark, d_mark, bool(note)), ("—", "—", True))
            continue
        check(f"chain fact {rid} retrieved", r_mark, None if ret is None else rid in ret)
        check(f"chain fact {rid} delivered", d_mark, None if dlv is None else rid in dlv)
    if s is not None:
        check("chain facts listed", {rid for rid, *_ in panel.chain} >= counted, True)
        got_r = {rid for rid, r_mark, _, _ in panel.chain if r_mark is True and rid in counted}
        if s.n_retrieved is not None:
            check("chain facts ✓ retrieved", len(got_r), s.n_retrieved)
    # the ranked list: the top K as the scorer reads it, and its marks
    d = truth.diagnosis.get(key)
    if ret is not None:
        check("top-K rounds", [rid for _, rid, _, _ in panel.top], list(ret))
    else:
        check("no ranked list", (panel.top, panel.pool), ([], []))
    if d is None:
        check("clue coverage shown", panel.clues, None)
        check("Y3 line", panel.y3, None)
    else:
        check("clues in top-K", panel.clues, (d.n_hit, d.n_clues))
        check("gold ✓ in top-K", sum("✓ gold" in marks for _, _, marks, _ in panel.top), d.n_hit)
        if d.temporal:
            y3 = panel.y3 or {}
            check("Y3 K", y3.get("k"), d.k)
            check("latest", y3.get("latest"), d.latest_hit)
            check("latest rank", y3.get("latest_rank"), d.latest_rank)
            check("stale in top-K (count)", y3.get("n_stale"), d.n_stale)
            check("stale in top-K (marks)", sum("⟲ stale" in marks for _, _, marks, _ in panel.top), d.n_stale)
            check("latest rank (marks)", next((rk for rk, _, marks, _ in panel.top if "★ latest" in marks), None),
                  d.latest_rank)
            check("best stale rank (marks)",
                  min((rk for rk, _, marks, _ in panel.top if "⟲ stale" in marks), default=None), d.best_stale_rank)
            check("stale dominance", y3.get("dominance"), d.stale_dominance)
            check("rank inversion", y3.get("inversion"), d.rank_inversion)
        else:
            check("Y3 line", panel.y3, None)
            check("no latest/stale marks",
                  [m for _, _, m, _ in panel.top + panel.pool if "latest" in m or "stale" in m], [])
    # packing: what the delivery tables count as retrieved but not delivered
    if ret is not None and dlv is not None:
        want = not_delivered(ret, dlv)
        check("dropped by packing", panel.dropped, want)
        check("✗ dropped marks", [rid for _, rid, _, cell in panel.top + panel.pool if "dropped" in cell], want)
        check("delivered without being retrieved", panel.unretrieved, [r for r in dict.fromkeys(dlv) if r not in ret])
    return out


def test_every_demo_panel_shows_the_scorers_values(demo, truth):
    problems, checked, hit = [], 0, set()
    for item, ref, p in pairs(demo):
        task = demo.task(item)
        key = (ref.backbone, ref.method, ref.mode, item.item_id)
        assert key in truth.records  # the app and the scorer join the same rows
        assert truth.records[key].prediction.raw == p.raw
        found = mismatches(panel_of(ref, task, item, p), truth, key, task, item, p)
        problems += [f"{item.item_id} ({item.mode}) {ref.display} [{ref.backbone}]: {m}" for m in found]
        checked += 1
        hit.add(key)
    assert checked > 1000
    assert set(truth.chain) <= hit and set(truth.diagnosis) <= hit  # every value the scorer has was compared
    assert not problems, f"{len(problems)} mismatches, e.g.\n" + "\n".join(problems[:20])


def test_panel_marks_average_to_the_published_tables(demo, truth):
    """The report's evidence rows (all items, per run group) are the means of the marks the panels show."""
    shown: dict[tuple, list[Panel]] = {}
    for item, ref, p in pairs(demo):
        if item.answerable:
            shown.setdefault((ref.backbone, ref.method, ref.mode), []).append(panel_of(ref, demo.task(item), item, p))
    rows = {(r["backbone"], r["method"], r["mode"], r["metric"]): r for r in truth.report_evidence
            if r["y"] == "all" and r["x"] == "all" and r["task"] == "all" and r.get("category", "all") == "all"}
    compared = 0
    for group, panels in shown.items():
        cov = [pn.clues[0] / pn.clues[1] for pn in panels if pn.clues]
        full = [float(pn.clues[0] == pn.clues[1]) for pn in panels if pn.clues]
        chain = [float(pn.retrieved[0]) for pn in panels if pn.retrieved]
        recall = [pn.retrieved[1] / pn.retrieved[2] for pn in panels if pn.retrieved]
        delivered = [float(pn.delivered[0]) for pn in panels if pn.delivered]
        for metric, vals in (("coverage", cov), ("full_clue_recall", full), ("chain_retrieved", chain),
                             ("required_fact_recall", recall), ("chain_delivered", delivered)):
            row = rows.get((*group, metric))
            if not vals:
                assert row is None or row["n"] == 0, (group, metric)
                continue
            assert row is not None and row["n"] == len(vals), (group, metric)
            assert row["value"] == pytest.approx(sum(vals) / len(vals), abs=1e-12), (group, metric)
            compared += 1
    assert compared > 20


def test_the_reported_case_is_one_of_two(demo, truth):
    """The issue's case: SRAG(V) on Collectibles_Shelf_Assistant:6 logs 15 rounds, clue D2:1 at 11."""
    item = demo.bench.item(*Y3_ITEM)
    ref, p = next((ref, p) for ref, p in demo.predictions(item)
                  if ref.display == "SRAG(V)" and ref.backbone == "gpt-5.4-mini")
    assert [e.round_id for e in p.retrieved].index("D2:1") == 10 and len(p.retrieved) > truth.k
    _, _, _, s = truth.chain[(ref.backbone, ref.method, ref.mode, item.item_id)]
    assert (s.n_retrieved, s.n_facts, s.chain_retrieved) == (1, 2, False)
    panel = panel_of(ref, demo.task(item), item, p)
    assert panel.retrieved == (False, 1, 2) and panel.k == truth.k
    assert [rid for _, rid, _, _ in panel.pool][0] == "D2:1"  # shown, below the top-K line


# ------------------------------------------------------------------------------------ the case card

CARD_ROW = re.compile(r"^\| (?P<run>.+?) \| (?P<backbone>.+?) \| [^|]+ \| (?P<ret>[^|]+) \| (?P<dlv>[^|]+) \|$")


def card_cell(text: str):
    """'no (1/2)' → (False, 1, 2); 'not logged' → None."""
    text = text.strip()
    if text == "not logged":
        return None
    m = re.fullmatch(r"(yes|no)(?: \((\d+)/(\d+)\))?", text)
    assert m, text
    return (m.group(1) == "yes", int(m.group(2)), int(m.group(3))) if m.group(2) else (m.group(1) == "yes",)


def test_case_cards_show_the_scorers_values(demo, truth):
    problems = []
    for row in demo.rows:
        item = row.item
        runs = demo.predictions(item)
        if not runs:
            continue
        md = markdown(demo, item, runs, {})
        if not item.answerable:  # left out of the report's evidence tables: the card says so
            if "abstention control" not in md.lower():
                problems.append(f"{item.item_id}: the card does not say it is an abstention control")
            continue
        lines = [m for m in (CARD_ROW.match(line) for line in md.splitlines()) if m][1:]  # past the head
        assert len(lines) == len(runs)
        head = next(line for line in md.splitlines() if line.startswith("| run |"))
        if f"top-{truth.k}" not in head:
            problems.append(f"{item.item_id}: the card's table does not say K ({head})")
        figure = latex(demo, item, runs, {}).splitlines()
        rounds = [r.round_id for r in demo.task(item).clue_chain(item)]
        assert rounds  # every answerable demo item has clue rounds: its figure has the per-clue table
        start = next(i for i, line in enumerate(figure) if line.startswith("run & "))
        figure_rows = figure[start + 1:start + 1 + len(runs)]  # one row per run, in the runs' order
        for (ref, p), m, figure_row in zip(runs, lines, figure_rows):
            key = (ref.backbone, ref.method, ref.mode, item.item_id)
            ret, dlv, facts, s = truth.chain.get(key, (None, None, [], None))
            want_r = None if s is None or s.n_retrieved is None else (s.chain_retrieved, s.n_retrieved, s.n_facts)
            want_d = None if s is None or s.n_delivered is None else (s.chain_delivered, s.n_delivered, s.n_facts)
            for what, cell, want in (("retrieved", m["ret"], want_r), ("delivered", m["dlv"], want_d)):
                if card_cell(cell) != want:
                    problems.append(f"{item.item_id} {ref.display} [{ref.backbone}] card chain {what}: "
                                    f"{cell.strip()!r}, the scorer has {want!r}")
            # the LaTeX figure's per-clue cells
            first, *cells = figure_row.removesuffix(" \\\\").split(" & ")
            assert first == tex(ref.display)
            for rid, cell in zip(rounds, cells):
                want = ("delivered" if dlv is not None and rid in dlv else "retrieved" if ret is not None and rid in ret
                        else "?" if ret is None and dlv is None else "missing")
                if cell != want:
                    problems.append(f"{item.item_id} {ref.display} [{ref.backbone}] figure {rid}: {cell!r}, "
                                    f"the scorer has {want!r}")
    assert not problems, f"{len(problems)} mismatches, e.g.\n" + "\n".join(problems[:20])


# ------------------------------------------------------------------------------------ the screen itself


def panel_lines(app) -> list[str]:
    """The run panel's rows as the terminal shows them (cropped out of the whole screen)."""
    from tui.widgets.run_panel import RunPanel

    panel = app.screen.query_one(RunPanel)
    assert panel.max_scroll_y == 0  # the whole body is on screen (nothing scrolled out of sight)
    region = panel.content_region
    strips = app.screen._compositor.render_strips()
    return ["".join(seg.text for seg in strip.crop(region.x, region.right)).rstrip()
            for strip in strips[region.y:region.bottom]]


# (item, backbones walked): the case with every run of both backbones, then a Y3 open item, an
# item whose chain facts differ from its clue rounds and an abstention control (first backbone)
SAMPLE = [(Y3_ITEM, 2), (("Collectibles_Shelf_Assistant:6", "open"), 1), (("Omni_Family_Moments:7", "mcq"), 1),
          (("Omni_Family_Moments:13", "open"), 1)]


async def test_the_rendered_item_screen_shows_the_scorers_values(demo, truth):
    """Drive the Item screen: every run tab, both evidence views, for the sample; what is on the
    terminal is compared with the scorer's per-item values."""
    from tui.app import make_app
    from tui.media import image as img
    from tui.screens.item import ItemScreen

    img.prepare("halfcell")
    app = make_app(DEMO, [DEMO / "runs"], annotator="t")
    app.animation_level = "none"  # the tab bar's underline would animate on every run switch
    problems, seen = [], set()
    keys = [key for key, _ in SAMPLE]
    async with app.run_test(size=(150, 64)) as pilot:
        await settle(pilot)
        for key, n_backbones in SAMPLE:
            screen = ItemScreen(keys, key)
            await app.push_screen(screen)
            await settle(pilot)
            item = screen.item
            task = app.state.task(item)
            for _ in range(n_backbones):
                for _ in list(screen._tab_ids):
                    panel = screen.active_panel()
                    ref = panel.ref
                    p = dict(app.state.predictions(item))[ref]
                    views = {panel.view: "\n".join(panel_lines(app))}
                    await pilot.press("e")  # the other view (the next run keeps it: one press per run)
                    await pilot.pause()
                    views[panel.view] = "\n".join(panel_lines(app))
                    shown = read_panel(views["retrieved"], views["delivered"])
                    run_key = (ref.backbone, ref.method, ref.mode, item.item_id)
                    problems += [f"{item.item_id} ({item.mode}) {ref.display} [{ref.backbone}] on screen: {m}"
                                 for m in mismatches(shown, truth, run_key, task, item, p)]
                    seen.add((key, ref.backbone, ref.display))
                    await pilot.press("right_square_bracket")
                    await pilot.pause()
                await pilot.press("B")  # the next backbone
                await pilot.pause()
            app.pop_screen()
            await settle(pilot)
    assert (Y3_ITEM, "gpt-5.4-mini", "SRAG(V)") in seen and len(seen) >= 30
    assert not problems, f"{len(problems)} mismatches, e.g.\n" + "\n".join(problems[:20])

"""What the app has loaded and knows: the benchmark, the runs, a joined index of predictions per item,
the annotator, the annotation store and its save state. Widgets read it; they keep no copy.

No Textual here: this module is plain Python so it can be tested and timed on its own.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from scorer.errors import DataError
from scorer.load.hashes import file_hashes
from scorer.load.join import Joiner
from scorer.load.memeye import load_benchmark
from scorer.load.runs import load_runs
from scorer.metrics.constants import DECIDED_VERDICTS
from scorer.model import Benchmark, Item, Prediction, Run, Task
from scorer.names import CAPTION_PROOF_PAIRS, DEFAULT_DISPLAY_NAMES, display_name
from scorer.store import Store
from tui.rows import RIGHT, Filter, ItemRow, RunRef, Sets, matches, score_of, search_text, sort_key

@dataclass
class AppState:
    bench: Benchmark
    runs: list[Run]
    annotator: str
    db_path: Path | None = None
    store: Store | None = None  # when a database is open
    names: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_DISPLAY_NAMES))
    exports_dir: Path = Path("exports")
    allow_outside_root: bool = False
    bench_path: Path = Path(".")
    run_paths: list[str] = field(default_factory=list)
    score_resamples: int | None = None  # Scores screen bootstrap resamples (None: the scorer's default)
    score_extra: Mapping[str, Any] = field(default_factory=dict)  # ScoreOptions.extra (e.g. --conditions)
    # str(path) → sha256 of the dialog and run files, taken at load (scorer.load.hashes.file_hashes):
    # the Scores screen's inputs record, without re-reading a file per recompute
    input_hashes: Mapping[str, str] = field(default_factory=dict)
    run_refs: list[RunRef] = field(default_factory=list)
    rows: list[ItemRow] = field(default_factory=list)
    join_problems: int = 0
    # run files that could not be read (cut short mid-row, …), one line each: their folders were left
    # out so that the app still opens (said on screen and in the Overview)
    unreadable_runs: list[str] = field(default_factory=list)
    unshowable_media: list[tuple[str, str, str]] | None = None  # check_media's result, once computed
    save_state: str = "no database"
    _preds: dict[tuple[str, str], dict[int, Prediction]] = field(default_factory=dict)
    _annotations: tuple[int, dict] | None = None  # (the store's event count, item id → kind → rows)
    _row_of: dict[tuple[str, str], int] = field(default_factory=dict)
    _slots: dict[tuple[str, str], int] = field(default_factory=dict)
    cards_dir: Path | None = None  # where batch case cards go (asked on the first export)
    cards_offer: Any = None  # the last batch's zip for the browser (tui.serve_deliver.Offer; memscope serve)
    _failures: dict[int, dict[str, frozenset[tuple[str, str]]]] = field(default_factory=dict)
    _flags: tuple[int, tuple] | None = None

    # -- building ----------------------------------------------------------------------------------
    def index(self) -> None:
        """Join every prediction row to its item and precompute the Items table rows."""
        refs: dict[tuple[str, str, str], RunRef] = {}
        order = sorted({(r.backbone, display_name(r.method, self.names), r.method, r.mode, r.modality)
                        for r in self.runs})
        for b, disp, m, mode, modality in order:
            if (b, m, mode) not in refs:
                refs[(b, m, mode)] = RunRef(len(refs), b, m, mode, disp, modality)
        self.run_refs = list(refs.values())
        self._slots = {}
        preds: dict[tuple[str, str], dict[int, Prediction]] = {}
        joiner = Joiner(self.bench)
        for run, p, item in joiner.pairs(self.runs):
            ref = refs[(run.backbone, run.method, run.mode)]
            preds.setdefault((item.item_id, item.mode), {})[ref.index] = p
        self._preds = preds
        matched = sum(len(v) for v in preds.values())
        self.join_problems = sum(len(r.predictions) for r in self.runs) - matched
        self.refresh_rows()

    def refresh_rows(self) -> None:
        """(Re)build the rows, e.g. after the annotation store changed."""
        annotated, disagree = self._annotation_marks()
        rows = []
        for it in self.bench.items():
            key = (it.item_id, it.mode)
            preds = self._preds.get(key, {})
            judges = [p.judge for p in preds.values() if p.judge is not None]
            rows.append(ItemRow(
                item=it,
                search=search_text(it),
                scores={i: score_of(p, it.mode) for i, p in preds.items()},
                annotated=it.item_id in annotated,
                disagree=key in disagree,
                judge=sum(judges) / len(judges) if judges else None,
            ))
        self.rows = rows
        self._row_of = {r.key: i for i, r in enumerate(rows)}

    def _annotation_marks(self) -> tuple[set[str], set[tuple[str, str]]]:
        if self.store is None:
            return set(), set()
        annotated = {ev.item_id for ev in self.store.events(live_only=True)}
        disagree: set[tuple[str, str]] = set()
        for v in self.store.verdicts():
            if v.get("verdict") not in DECIDED_VERDICTS or not v.get("run_key") or not v.get("mode"):
                continue
            for ref in (r for r in self.run_refs if r.key == v["run_key"] and r.mode == v["mode"]):
                p = self._preds.get((v["item_id"], v["mode"]), {}).get(ref.index)
                if p is not None and p.judge is not None and (p.judge >= RIGHT) != (v["verdict"] == "accept"):
                    disagree.add((v["item_id"], v["mode"]))
        return annotated, disagree

    # -- reading -----------------------------------------------------------------------------------
    def task(self, item: Item) -> Task:
        return self.bench.task_of(item)

    def predictions(self, item: Item) -> list[tuple[RunRef, Prediction]]:
        """The runs that answered this item (in run order)."""
        preds = self._preds.get((item.item_id, item.mode), {})
        return [(self.run_refs[i], preds[i]) for i in sorted(preds)]

    def item_annotations(self, item_id: str) -> dict[str, list[dict]]:
        """The store's current label, verdict, note and flag rows on one item, by kind ({} without a
        database). Indexed once per change of the store (its event count: events are only appended;
        an undo is one), not scanned on every keystroke of the Item screen."""
        if self.store is None:
            return {}
        count = self.store.count()
        if self._annotations is None or self._annotations[0] != count:
            index: dict[str, dict[str, list[dict]]] = {}
            for kind in ("label", "verdict", "note", "flag"):
                for r in self.store.current(kind):
                    index.setdefault(r["item_id"], {}).setdefault(kind, []).append(r)
            self._annotations = (count, index)
        return self._annotations[1].get(item_id, {})

    def row(self, key: tuple[str, str]) -> ItemRow | None:
        i = self._row_of.get(key)
        return None if i is None else self.rows[i]

    def filtered(self, f: Filter) -> list[ItemRow]:
        """The rows `f` lets through, in its order (benchmark order unless it sorts)."""
        sets = self.sets_of(f)
        rows = [r for r in self.rows if matches(r, f, sets)]
        if f.sort:
            key = sort_key(f.sort, f.about)
            known = [r for r in rows if key(r)[0] is not None]
            unknown = [r for r in rows if key(r)[0] is None]
            known.sort(key=key, reverse=f.descending)  # stable either way round
            rows = known + unknown
        return rows

    def sets_of(self, f: Filter) -> Sets | None:
        """The failure and flag filters of `f` as sets (None when it has none)."""
        keys: list[frozenset] = []
        ids: list[frozenset] = []
        if f.failures:
            if f.run is None:
                raise ValueError("failure filters need the run they are about (Filter.run)")
            found = self.failures(f.run)
            keys += [found[k] for k in f.failures]
        if f.flag is not None or f.noted:
            flags, notes = self.flags()
            if f.flag is not None:
                ids.append(flags.get(f.flag, frozenset()) if f.flag else frozenset().union(*flags.values()))
            if f.noted:
                ids.append(notes)
        return Sets(tuple(keys), tuple(ids)) if keys or ids else None

    def failures(self, run: int) -> dict[str, frozenset[tuple[str, str]]]:
        """tui.failures kind → the keys of the items run `run` failed that way (computed once per run,
        by the scorer's per-item functions)."""
        from tui.failures import run_failures  # lazy: numpy and the evidence metrics, off the start-up path

        hit = self._failures.get(run)
        if hit is None:
            pairs = []
            for key, preds in self._preds.items():
                p = preds.get(run)
                if p is not None:
                    item = self.bench.item(*key)
                    pairs.append((self.bench.task_of(item), item, p))
            hit = self._failures[run] = run_failures(pairs)
        return hit

    def has_failures(self, run: int) -> bool:
        """Whether `failures(run)` is computed already (it takes a while at MOSAIC scale)."""
        return run in self._failures

    def flags(self) -> tuple[dict[str, frozenset[str]], frozenset[str]]:
        """(flag kind → flagged item ids, item ids with a note), from the store ({} without one);
        indexed again when the store has changed (its event count)."""
        from tui.failures import flag_index  # lazy: as above

        if self.store is None:
            return {}, frozenset()
        count = self.store.count()
        if self._flags is None or self._flags[0] != count:
            self._flags = (count, flag_index(self.store.current("flag"), self.store.current("note")))
        return self._flags[1]

    def keys_where(self, f: Filter) -> set[tuple[str, str]]:
        return {r.key for r in self.filtered(f.with_(sort=None))}

    @property
    def tasks(self) -> list[str]:
        return [t.name for t in self.bench.tasks]

    def slot_of(self, ref: RunRef) -> int:
        """A stable number for the ref's (backbone, method), shared by its MCQ and open runs."""
        slots = self._slots
        if not slots:
            for r in self.run_refs:
                slots.setdefault((r.backbone, r.method), len(slots))
        return slots[(ref.backbone, ref.method)]

    def refs_for_mode(self, mode: str | None) -> list[RunRef]:
        return [r for r in self.run_refs if mode is None or r.mode == mode]

    def annotation_progress(self) -> dict[str, object] | None:
        """Counts from the store: items with any act, per kind, per annotator. None without a db."""
        if self.store is None:
            return None
        kinds: dict[str, int] = {}
        items: set[str] = set()
        mine: set[str] = set()
        annotators: set[str] = set()
        for ev in self.store.events(live_only=True):
            kinds[ev.kind] = kinds.get(ev.kind, 0) + 1
            items.add(ev.item_id)
            annotators.add(ev.annotator)
            if ev.annotator == self.annotator:
                mine.add(ev.item_id)
        ids = set(self.bench.item_ids())
        return {"items_total": len(ids), "items_annotated": len(items & ids), "mine": len(mine & ids),
                "kinds": kinds, "annotators": sorted(annotators)}

    def check_media(self, cancelled: Callable[[], bool] = lambda: False) -> list[tuple[str, str, str]] | None:
        """(task, where, why) of every local media reference that cannot be shown, counted as `memscope
        validate` counts them (round media and question images; each file decoded once however often
        it is referenced). Computed once (by the app's preload worker: tui.app), then kept; None,
        and nothing kept, when `cancelled()` turns true meanwhile (the app is quitting)."""
        if self.unshowable_media is None:
            from scorer.load.validate import media_problem, media_references

            seen: dict[tuple, str | None] = {}
            out = []
            for task in self.bench.tasks:
                for where, m in media_references(task):
                    if cancelled():
                        return None
                    key = (m.path, m.frames, m.kind, m.problem, m.is_remote)
                    if key not in seen:
                        seen[key] = media_problem(m, decode=True)
                    if seen[key]:
                        out.append((task.name, where, seen[key]))
            self.unshowable_media = out
        return self.unshowable_media

    def mark_saved(self) -> None:
        """After a committed write (the app calls it on tui.messages.AnnotationSaved): the status line
        says so."""
        self.save_state = f"saved {time.strftime('%H:%M:%S')}" if self.store is not None else "no database"


def default_pair(state: AppState, item: Item, backbone: str | None, active: str | None) -> tuple[int, int] | None:
    """The two runs (RunRef indices, left and right) that side by side starts with on `item`: the first
    caption-proof pair (visual left, text right) of the backbone shown; otherwise the active run and
    the next one. None when fewer than two runs answered the item."""
    preds = [ref for ref, _ in state.predictions(item)]
    if len(preds) < 2:
        return None
    mine = [r for r in preds if r.backbone == backbone] or preds
    by_display = {r.display: r for r in mine}
    if active:
        for text, visual in CAPTION_PROOF_PAIRS:
            if active in (text, visual) and text in by_display and visual in by_display:
                return by_display[visual].index, by_display[text].index
    for text, visual in CAPTION_PROOF_PAIRS:
        if text in by_display and visual in by_display:
            return by_display[visual].index, by_display[text].index
    first = next((r for r in mine if r.display == active), mine[0])
    second = next((r for r in preds if r.index != first.index), None)
    return (first.index, second.index) if second else None


def load_state(bench: str | Path, runs: Sequence[str | Path] = (), db: str | Path | None = None,
               annotator: str = "annotator", allow_outside_root: bool = False,
               exports_dir: str | Path | None = None, names: Mapping[str, str] | None = None) -> AppState:
    """Read everything the app shows. Raises UserError (one line) on bad input."""
    benchmark = load_benchmark(bench, allow_outside_root=allow_outside_root)
    unreadable: list[DataError] = []
    loaded_runs = load_runs(list(runs), benchmark=benchmark, problems=unreadable) if runs else []
    store = None
    db_path = Path(db) if db is not None else None
    if db_path is not None:
        store = Store(db_path)
    state = AppState(
        bench=benchmark, runs=loaded_runs, annotator=annotator, db_path=db_path, store=store,
        names=dict(names or DEFAULT_DISPLAY_NAMES),
        exports_dir=Path(exports_dir) if exports_dir is not None else Path("exports"),
        allow_outside_root=allow_outside_root,
        bench_path=Path(bench), run_paths=[str(p) for p in runs],
        save_state="saved" if store is not None else "no database",
        unreadable_runs=[f"{err}; its run folder was left out" for err in unreadable],
    )
    state.input_hashes = file_hashes(benchmark, loaded_runs)
    state.index()
    return state

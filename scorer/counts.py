"""The counts `memscope info` reports (DESIGN.md §6), as one plain dict."""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

from scorer.model import MEDIA_KINDS, X_LABELS, Y_LABELS, Benchmark, Run


def benchmark_counts(bench: Benchmark, runs: Sequence[Run] = ()) -> dict[str, Any]:
    sessions = sum(len(t.sessions) for t in bench.tasks)
    rounds = sum(len(s.rounds) for t in bench.tasks for s in t.sessions)
    items = Counter(i.mode for i in bench.items())
    cells_ids: dict[str, set[str]] = {f"{x}_{y}": set() for y in Y_LABELS for x in X_LABELS}
    unanswerable: set[str] = set()
    for it in bench.items():
        for x, y in it.cells:
            cells_ids.setdefault(f"{x}_{y}", set()).add(it.item_id)
        if not it.answerable:
            unanswerable.add(it.item_id)
    unlabelled = {i.item_id for i in bench.items() if not i.cells}
    media: Counter[str] = Counter({k: 0 for k in MEDIA_KINDS})
    remote = 0
    for t in bench.tasks:
        for s in t.sessions:
            for r in s.rounds:
                for m in r.media:
                    media[m.kind] += 1
                    remote += m.is_remote
    question_images = 0
    for it in bench.items():
        question_images += len(it.question_images)
    run_rows: dict[tuple[str, str, str, str], int] = {}
    for r in runs:
        key = (r.backbone, r.method, r.mode, r.task)
        run_rows[key] = run_rows.get(key, 0) + len(r.predictions)
    return {
        "benchmark": str(bench.root),
        "tasks": len(bench.tasks),
        "sessions": sessions,
        "rounds": rounds,
        "items": {"mcq": items.get("mcq", 0), "open": items.get("open", 0)},
        "distinct_items": len(bench.item_ids()),
        "unanswerable": len(unanswerable),
        "unlabelled": len(unlabelled),
        "cells": {k: len(v) for k, v in cells_ids.items()},
        "media": dict(media),
        "remote_media": remote,
        "question_images": question_images,
        "runs": [
            {"backbone": b, "method": m, "mode": mode, "task": t, "rows": n}
            for (b, m, mode, t), n in sorted(run_rows.items())
        ],
        "per_task": [
            {
                "task": t.name,
                "sessions": len(t.sessions),
                "rounds": sum(len(s.rounds) for s in t.sessions),
                "items_mcq": sum(i.mode == "mcq" for i in t.items),
                "items_open": sum(i.mode == "open" for i in t.items),
            }
            for t in bench.tasks
        ],
    }

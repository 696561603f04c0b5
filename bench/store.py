"""Annotation-store figures: write latency per event (each its own committed transaction, WAL,
synchronous=FULL), JSONL export / import throughput, and the cost of opening a large store for
writing (its `PRAGMA quick_check`) as a ratio to reading every event row once. Prints one JSON object.

    python bench/store.py [--events 1000] [--open-events 200000] [--dir FOLDER]

`--dir` chooses the file system measured (default: a temporary folder); fsync cost is the
file system's, so measure where annotators' databases will live.
"""

from __future__ import annotations

import argparse
import json
import platform
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from scorer.store import Store, import_jsonl, write_jsonl

KINDS = [
    ("verdict", {"verdict": "accept"}, "open", "gpt-5.4-mini/semantic_rag_multimodal"),
    ("label", {"x": ["X3"], "y": ["Y2"]}, "mcq", None),
    ("oracle", {"choice": "B", "rotation": 1, "seconds": 8.25}, "mcq", None),
    ("note", {"text": "the clue image is cropped"}, None, None),
]


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1000)
    ap.add_argument("--open-events", type=int, default=200_000, help="events in the store whose opening is timed")
    ap.add_argument("--dir", type=Path, default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        folder = Path(tmp)
        src = folder / "bench.db"
        with Store(src) as store:
            lat = []
            for i in range(args.events):
                kind, payload, mode, run = KINDS[i % len(KINDS)]
                t0 = time.perf_counter()
                store.add(kind, f"ann{i % 3}", f"Task:{i}", payload, mode=mode, run_key=run, study="bench")
                lat.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            with (folder / "events.jsonl").open("w", encoding="utf-8") as fh:
                n = write_jsonl(store, fh)
            export_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            derived = len(store.verdicts()) + len(store.labels()) + len(store.oracle_answers())
            derive_s = time.perf_counter() - t0
        with Store(folder / "fresh.db") as fresh:
            t0 = time.perf_counter()
            res = import_jsonl(fresh, folder / "events.jsonl")
            import_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            again = import_jsonl(fresh, folder / "events.jsonl")
            reimport_s = time.perf_counter() - t0
        size = src.stat().st_size
        opening = open_cost(folder, args.open_events)
    ms = [x * 1000 for x in lat]
    print(json.dumps({
        "events": args.events,
        "settings": {"journal_mode": "wal", "synchronous": "FULL", "one_transaction_per_event": True},
        "write_latency_ms": {"median": round(statistics.median(ms), 3), "p95": round(percentile(ms, 0.95), 3),
                             "max": round(max(ms), 3), "n": len(ms)},
        "export_jsonl": {"events": n, "seconds": round(export_s, 4), "events_per_s": round(n / export_s)},
        "import_jsonl": {"events": res.lines, "added": res.added, "seconds": round(import_s, 4),
                         "events_per_s": round(res.lines / import_s)},
        "reimport_jsonl": {"added": again.added, "skipped": again.skipped, "seconds": round(reimport_s, 4)},
        "derive_current_state": {"rows": derived, "seconds": round(derive_s, 4)},
        "db_bytes": size,
        "open_for_writing": opening,
        "python": platform.python_version(), "sqlite": sqlite3.sqlite_version,
    }, indent=2))


def open_cost(folder: Path, n: int, repeats: int = 5) -> dict:
    """Open a store of `n` events for writing (integrity check included) against the floor of
    reading its event rows once with sqlite3 alone; medians of `repeats` warm runs."""
    import os
    from datetime import datetime, timedelta

    path, start = folder / "large.db", datetime(2026, 1, 1)
    with (folder / "large.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(n):
            kind, payload, mode, run = KINDS[i % len(KINDS)]
            rec = {"ts": (start + timedelta(milliseconds=i)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "annotator": f"ann{i % 3}", "kind": kind,
                   "item_id": f"Task:{i}", "mode": mode, "run": run, "study": "bench", "payload": payload}
            fh.write(json.dumps(rec) + "\n")
    with Store(path) as store:
        import_jsonl(store, folder / "large.jsonl")
    opens, reads = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        Store(path).close()
        opens.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        conn = sqlite3.connect(path)
        conn.execute("SELECT * FROM events").fetchall()
        conn.close()
        reads.append(time.perf_counter() - t0)
    o, r = statistics.median(opens), statistics.median(reads)
    return {"events": n, "db_bytes": path.stat().st_size, "open_ms": round(o * 1000, 2),
            "read_all_rows_ms": round(r * 1000, 2), "ratio_open_to_read": round(o / r, 3), "n": repeats,
            "load_average": [round(x, 2) for x in os.getloadavg()]}


if __name__ == "__main__":
    main()

"""Benchmark `memscope score` (issue 3, point 8). Prints one JSON object of figures.

    python bench/score.py [--resamples 10000] [--repeat 3] [--skip-million] [--workdir DIR] [--data DIR]

1. MemEye scale (fixtures/synth.py --scale memeye: 371 items × 2 modes × 13 methods × 4 backbones,
   four rotations per MCQ row) plus a synthetic annotation store (a 72-pair judge study, two
   labellers on 120 items, three oracle annotators on 60 items): the whole `memscope score` as a
   subprocess (start-up included) with matrices, position bias, agreement, oracle, the caption-proof
   CIs and ten `--compare` pairs, 10,000 resamples each. Target < 3 s. Also the default run with
   every section (evidence diagnostics included, which read the raw rows), for reference.
2. One paired bootstrap (SRAG(V) − FC(V), LLM-Judge, 371 items) against scipy.stats.bootstrap on the
   same data: same CI to ±0.005; ours no slower.
3. A 1,000,000-row run set (the MemEye runs under 26 backbone names; predictions files hard-linked):
   `memscope score` (matrices and position bias by default, --million-sections to change; lean
   reader) wall time, CPU time, peak RSS of the largest process, and the peaks of Σ RSS and Σ PSS
   over the process tree (the scorer forks workers; PSS counts shared pages once, so Σ PSS is the
   physical memory held). Targets < 30 s and < 2 GB.

4. `--only-floor` (issue 19): the default `memscope score` against the bare `import pandas, numpy,
   rich` and that import + an orjson parse of every row; the same report on one core (no worker
   forked; it must be byte-identical) and the machine's capacity for two such processes at once,
   which give the least this much work can take here (`ceiling`).

The project's bytecode is compiled first (as an install does; this machine sets
PYTHONDONTWRITEBYTECODE). Machine load is recorded next to the figures: other work on a shared
machine slows every number.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

COMPARE = ("SRAG(V):FC(V)", "SRAG(V):M2A", "FC(V):FC(T)", "SRAG(V):SRAG(T)", "SM(V):SM(T)", "MMA:M2A",
           "MIRIX:MMA", "A-Mem:MemOS", "Refl.:Gen.Ag.", "SRAG(T):FC(T)")
LEAN_SECTIONS = "matrix,position_bias,agreement,oracle,bootstrap,caption_proof"
MILLION_COPIES = 26  # × 38,584 rows = 1,003,184


def run_timed(cmd: list[str], sample_tree: bool = False) -> tuple[float, int, float, tuple[int, int]]:
    """(wall seconds, peak RSS in MB of the largest process, CPU seconds of it and its workers,
    with `sample_tree` the peaks of Σ RSS and Σ PSS in MB over the whole process tree at once —
    the command and its forked workers, sampled every 50 ms (which costs some CPU: not for the
    timed report runs). See tree_memory_kb)."""
    wrapper = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
               "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode; "
               "dt = time.perf_counter() - t; u = resource.getrusage(resource.RUSAGE_CHILDREN); "
               "print(dt, u.ru_maxrss, u.ru_utime + u.ru_stime, rc)")
    proc = subprocess.Popen([sys.executable, "-c", wrapper, *cmd], stdout=subprocess.PIPE, text=True)
    tree_peak = (0, 0)
    while sample_tree and proc.poll() is None:
        rss, pss = tree_memory_kb(proc.pid)
        tree_peak = (max(tree_peak[0], rss), max(tree_peak[1], pss))
        time.sleep(0.05)
    proc.wait()
    out = proc.stdout.read() if proc.stdout else ""
    wall, rss_kb, cpu, rc = out.strip().splitlines()[-1].split()
    if rc != "0" or proc.returncode:
        raise SystemExit(f"failed ({rc}): {' '.join(cmd)}")
    return float(wall), int(rss_kb) // 1024, float(cpu), (tree_peak[0] // 1024, tree_peak[1] // 1024)


def tree_memory_kb(root: int) -> tuple[int, int]:
    """(Σ RSS, Σ PSS) in kB over `root` and every process below it (from /proc). RSS counts a page
    shared by forked processes once in each; PSS splits it between them, so Σ PSS is the physical
    memory the tree holds."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    parent[int(entry)] = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    tree, frontier = {root}, [root]
    while frontier:
        p = frontier.pop()
        for child, ppid in parent.items():
            if ppid == p and child not in tree:
                tree.add(child)
                frontier.append(child)
    rss = pss = 0
    for p in tree:
        try:
            with open(f"/proc/{p}/smaps_rollup") as fh:
                fields = {k: v for k, _, v in (line.partition(":") for line in fh) if k.replace("_", "").isalpha()}
        except OSError:
            continue
        rss += int(fields.get("Rss", "0 kB").split()[0])
        pss += int(fields.get("Pss", "0 kB").split()[0])
    return rss, pss


def compile_sources() -> None:
    """Write the project's bytecode once, as any normal install or first run does (this machine
    sets PYTHONDONTWRITEBYTECODE, which would otherwise make every timed run compile ~80 modules)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "scorer"), str(REPO / "tui")],
                   check=True, capture_output=True)


def load() -> list[float]:
    return [round(v, 2) for v in os.getloadavg()]


def steal_seconds() -> float | None:
    """CPU seconds the hypervisor gave to other guests, summed over this machine's CPUs since boot
    (/proc/stat's `steal`; None where there is none). Read before and after a timed run, it says
    whether the cores the scorer forks onto were really there: a 2-vCPU VM whose second core is
    taken away runs the report's parallel parts one after the other, while the single-core
    references do not notice (issue 19)."""
    try:
        with open("/proc/stat") as fh:
            fields = fh.readline().split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def steal_during(before: float | None) -> float | None:
    """Steal seconds since `before` (a steal_seconds reading); None where either is unknown."""
    after = steal_seconds()
    return None if before is None or after is None else round(after - before, 2)


def annotations(bench: Path, runs: Path, out: Path) -> Path:
    """A synthetic but realistic annotation file for the MemEye-scale set (JSONL events)."""
    from scorer.load.lean import read_frame
    from scorer.load.memeye import load_benchmark

    b = load_benchmark(bench)
    frame = read_frame(b, runs).frame
    events, t = [], 0

    def ev(who, kind, item_id, payload, mode=None, run=None, study=None):
        nonlocal t
        t += 1
        events.append({"ts": f"2026-11-29T{10 + t // 3600:02d}:{t // 60 % 60:02d}:{t % 60:02d}Z", "annotator": who,
                       "kind": kind, "item_id": item_id, "mode": mode, "run": run, "study": study, "payload": payload})

    open_rows = frame[(frame["mode"] == "open") & (frame["backbone"] == "gpt-5.4-mini")
                      & frame["display"].isin(["FC(V)", "SRAG(V)"])]
    per_cell: dict[tuple, int] = {}
    for r in open_rows.itertuples(index=False):
        cell = (r.x[:1], r.y[:1])
        if per_cell.get((cell, r.display), 0) >= 3:
            continue
        per_cell[(cell, r.display)] = per_cell.get((cell, r.display), 0) + 1
        verdict = "accept" if r.judge >= 0.5 else "reject"
        if len(events) % 35 == 17:
            verdict = "borderline"
        elif len(events) % 29 == 5:
            verdict = "reject" if verdict == "accept" else "accept"
        for who in ("ann1", "ann2") if len(events) % 2 else ("ann1",):
            ev(who, "verdict", r.item_id, {"verdict": verdict}, "open", r.run_key, "judge-72")
    items = [it for it in b.items("mcq")]
    for k, it in enumerate(items[:120]):
        for who in ("ann1", "ann2"):
            x = sorted(it.x)
            if who == "ann2" and k % 5 == 0:
                x = ["X3" if v == "X2" else "X2" if v == "X3" else v for v in x]
            ev(who, "label", it.item_id, {"x": x, "y": sorted(it.y)}, "mcq", None, "labels")
    for k, it in enumerate(items[::6][:60]):
        for a, who in enumerate(("ann1", "ann2", "ann3")):
            right = it.rotations[0].answer
            choice = right if (k + a) % 7 else ("A" if right != "A" else "B")
            ev(who, "oracle", it.item_id, {"choice": choice, "rotation": 0}, "mcq", None, "oracle")
    out.write_text("".join(json.dumps(e) + "\n" for e in events))
    return out


def bootstrap_vs_scipy(bench: Path, runs: Path, resamples: int, repeat: int) -> dict:
    import numpy as np
    from scipy import stats

    from scorer.load.lean import read_frame
    from scorer.load.memeye import load_benchmark
    from scorer.metrics.bootstrap import DEFAULT_SEED, paired_diff_ci

    f = read_frame(load_benchmark(bench), runs).frame
    f = f[(f["backbone"] == "gpt-5.4-mini") & (f["mode"] == "open")]
    a = f[f["display"] == "SRAG(V)"].set_index("item_id")["judge"]
    b = f[f["display"] == "FC(V)"].set_index("item_id")["judge"]
    common = a.index.intersection(b.index).sort_values()
    xa, xb = a.loc[common].to_numpy(float), b.loc[common].to_numpy(float)

    def ours():
        return paired_diff_ci(xa, xb, resamples=resamples, seed=DEFAULT_SEED)

    def theirs():
        return stats.bootstrap((xa, xb), lambda x, y, axis=-1: np.mean(x - y, axis=axis), paired=True,
                               vectorized=True, n_resamples=resamples, method="percentile",
                               confidence_level=0.95, random_state=np.random.default_rng(DEFAULT_SEED))

    t_ours, t_scipy = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        r1 = ours()
        t_ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        r2 = theirs()
        t_scipy.append(time.perf_counter() - t)
    lo2, hi2 = float(r2.confidence_interval.low), float(r2.confidence_interval.high)
    return {
        "n_items": int(xa.size), "resamples": resamples, "diff": round(r1.estimate, 4),
        "ci_ours": [round(r1.ci_low, 4), round(r1.ci_high, 4)], "ci_scipy": [round(lo2, 4), round(hi2, 4)],
        "max_ci_gap": round(max(abs(r1.ci_low - lo2), abs(r1.ci_high - hi2)), 4),
        "seconds_ours_median": round(statistics.median(t_ours), 4),
        "seconds_scipy_median": round(statistics.median(t_scipy), 4),
    }


def million(src_runs: Path, dst: Path) -> int:
    """The MemEye runs under MILLION_COPIES backbone names; predictions hard-linked (same bytes)."""
    rows = 0
    for folder in sorted(p.parent for p in src_runs.rglob("predictions.jsonl")):
        metrics = json.loads((folder / "metrics.json").read_text())
        config = json.loads((folder / "config.json").read_text())
        n = sum(1 for line in (folder / "predictions.jsonl").open("rb") if line.strip())
        for k in range(MILLION_COPIES):
            name = f"{metrics['model_name']}-copy{k:02d}"
            out = dst / folder.parent.name / f"{folder.name}-copy{k:02d}"
            out.mkdir(parents=True)
            (out / "metrics.json").write_text(json.dumps({**metrics, "model_name": name}))
            if isinstance(config.get("model"), dict):
                config = {**config, "model": {**config["model"], "name": name}}
            (out / "config.json").write_text(json.dumps(config))
            os.link(folder / "predictions.jsonl", out / "predictions.jsonl")
            rows += n
    return rows


PARSE = """
import sys, time
from pathlib import Path
import orjson
files = sorted(str(p) for p in Path(sys.argv[1]).rglob("predictions.jsonl"))
t = time.perf_counter()
n = 0
for path in files:
    with open(path, "rb") as fh:
        for line in fh.read().split(b"\\n"):
            if line.strip():
                orjson.loads(line)
                n += 1
print(time.perf_counter() - t, n)
"""


def orjson_parse(runs: Path) -> tuple[float, int]:
    """(seconds, rows): one process, one core, reading every predictions.jsonl under `runs` and
    parsing each row with orjson (interpreter start-up, the import and the folder walk left out)."""
    proc = subprocess.run([sys.executable, "-c", PARSE, str(runs)], check=True, capture_output=True, text=True)
    secs, n = proc.stdout.split()
    return float(secs), int(n)


def warm_files(*roots: Path) -> None:
    """Read every file under `roots` once, untimed, so that the timed parse and score both find
    them in the page cache (this VM reclaims cold pages: a first parse read from disk took 5.1 s
    against 0.28 s warm, which made that repetition's ratio meaningless, issue 19)."""
    for root in roots:
        for dirpath, _, names in os.walk(root):
            for name in names:
                with open(os.path.join(dirpath, name), "rb") as fh:
                    while fh.read(1 << 20):
                        continue


def bare_import() -> float:
    """Wall seconds of `python -c "import pandas, numpy, rich"` (interpreter start-up included, as
    for `memscope score`)."""
    return run_timed([sys.executable, "-c", "import pandas, numpy, rich"])[0]


OLD_SECTIONS = ("matrix,position_bias,agreement,oracle,bootstrap,caption_proof,evidence,evidence_curve,recency,"
                "delivery,abstention,oracle_evidence,gates")  # every section but MOSAIC's (issue 20)


def floor_ratios(bench: Path, runs: Path, work: Path, repeat: int) -> dict:
    """Issue 19: the default `memscope score` (every section, json) at MemEye scale against the bare
    `import pandas, numpy, rich` (target ≤ 4×) and against that import + an orjson parse of every row
    (≤ 2×), each repetition measuring the references and the score back to back. Also with the
    sections before MOSAIC's (OLD_SECTIONS), which read the runs once with the lean reader."""
    out = []
    for i in range(repeat):
        warm_files(bench)
        la = load()[0]
        imp = bare_import()
        parse, n = orjson_parse(runs)
        base = [sys.executable, "-m", "scorer", "score", str(bench), "--runs", str(runs), "--format", "json"]
        steal_before = steal_seconds()
        t_def, _, cpu_def, _ = run_timed([*base, "--out", str(work / f"default{i}")])
        stolen = steal_during(steal_before)
        t_old = run_timed([*base, "--sections", OLD_SECTIONS, "--out", str(work / f"old{i}")])[0]
        t_one, _, cpu_one, _ = run_timed([*ONE_CORE, *base, "--out", str(work / f"one_core{i}")])
        reader = json.loads((work / f"default{i}" / "report.json").read_text())["inputs"]["runs"]["reader"]
        out.append({"load_average": la, "import_s": round(imp, 3), "orjson_parse_s": round(parse, 3), "rows": n,
                    "default_s": round(t_def, 3), "default_cpu_s": round(cpu_def, 3), "default_steal_s": stolen,
                    "default_reader": reader,
                    "default_vs_import": round(t_def / imp, 2), "default_vs_import_parse": round(t_def / (imp + parse), 2),
                    "pre_mosaic_sections_s": round(t_old, 3),
                    "pre_mosaic_vs_import": round(t_old / imp, 2),
                    "pre_mosaic_vs_import_parse": round(t_old / (imp + parse), 2),
                    "one_core_s": round(t_one, 3), "one_core_cpu_s": round(cpu_one, 3),
                    "speedup_of_workers": round(t_one / t_def, 2),
                    "one_core_report_identical": filecmp.cmp(work / f"one_core{i}" / "report.json",
                                                             work / f"default{i}" / "report.json", shallow=False)})
    med = {k: round(statistics.median(r[k] for r in out), 2) for k in out[0]
           if k.endswith(("_s", "_import", "_parse", "_workers")) and all(r[k] is not None for r in out)}
    capacity = two_process_capacity([*ONE_CORE, *base, "--out"], work)
    reference = med["import_s"] + med["orjson_parse_s"]
    start = statistics.median(run_timed([sys.executable, "-c", "pass"])[0] for _ in range(5))
    best = start + (med["one_core_s"] - start) / capacity["capacity"]
    ceiling = {**capacity, "interpreter_start_s": round(start, 3), "best_s": round(best, 3),
               "best_vs_import_parse": round(best / reference, 2),
               "note": "best_s: the interpreter's start-up, then all the rest of the default report's one-core "
                       "work spread over the cores at the capacity measured here, with no other part serial "
                       "and no cost of splitting it: the least this much work can take on this machine"}
    return {"runs": out, "median": med, "ceiling": ceiling, "targets": {"vs_import": 4.0, "vs_import_parse": 2.0}}


# The default report on one core: the reader and the sections in this process, no worker forked.
ONE_CORE = ["env", "MEMSCOPE_READ_WORKERS=1", "MEMSCOPE_SECTION_WORKERS=1"]


def two_process_capacity(cmd_before_out: list[str], work: Path, trials: int = 3) -> dict:
    """How many cores' worth of this work the machine gives two processes at once: the one-core
    report alone, then two copies started together (each writing its own report), `trials` times;
    capacity = 2 × alone / together (2.0 when the cores do not slow each other; on VMs whose
    virtual CPUs share a physical core, or share its cache and memory bandwidth, less)."""
    alone, together = [], []
    for t in range(trials):
        alone.append(run_timed([*cmd_before_out, str(work / f"alone{t}")])[0])
        walls: list[float] = []
        pair = [threading.Thread(target=lambda j=j: walls.append(run_timed([*cmd_before_out, str(work / f"pair{t}_{j}")])[0]))
                for j in range(2)]
        for th in pair:
            th.start()
        for th in pair:
            th.join()
        together.append(statistics.mean(walls))
    a, b = statistics.median(alone), statistics.median(together)
    return {"one_core_alone_s": round(a, 3), "one_core_two_at_once_s": round(b, 3), "capacity": round(2 * a / b, 2)}


def million_floor(runs: Path, work: Path, bench: Path, args: argparse.Namespace, data: Path | None = None) -> dict:
    """Issue 19: 1M rows (--million-sections) against the single-core orjson parse of the same files
    (target ≤ 3×), each repetition back to back. The run set is kept in `data` (default `work`)."""
    big = (data or work) / "million"
    if not big.is_dir():
        million(runs, big)
    cmd = [sys.executable, "-m", "scorer", "score", str(bench), "--runs", str(big), "--resamples", str(args.resamples),
           "--sections", args.million_sections, "--out", str(work / "out_million_floor"), "--format", "json"]
    out = []
    for _ in range(args.floor_repeat):
        warm_files(bench, big)
        la = load()[0]
        parse, n = orjson_parse(big)
        steal_before = steal_seconds()
        t, _, cpu, _ = run_timed(cmd)
        stolen = steal_during(steal_before)
        out.append({"load_average": la, "rows": n, "orjson_parse_s": round(parse, 2), "score_s": round(t, 2),
                    "score_cpu_s": round(cpu, 2), "score_steal_s": stolen,
                    "score_vs_parse": round(t / parse, 2)})
    return {"runs": out, "median_score_vs_parse": round(statistics.median(r["score_vs_parse"] for r in out), 2),
            "target": 3.0}


def main(argv: list[str] | None = None) -> int:
    from scorer.metrics.constants import DEFAULT_RESAMPLES

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-million", action="store_true")
    ap.add_argument("--million-sections", default="matrix,position_bias",
                    help="sections for the 1M-row run (caption_proof adds ~15,800 CIs over 104 backbones)")
    ap.add_argument("--workdir", type=Path, help="keep the generated data here (default: a temp folder)")
    ap.add_argument("--data", type=Path,
                    help="read the generated inputs from here and generate those missing here (memeye/, "
                         "memeye.db, million/; default --workdir): reports are still written to --workdir")
    ap.add_argument("--floor-repeat", type=int, default=5,
                    help="repetitions of the floor ratios (issue 19: default score vs import / parse; 1M rows vs parse)")
    ap.add_argument("--only-floor", action="store_true", help="only the issue-19 floor ratios")
    ap.add_argument("--floor-parts", default="memeye,million", help="which floor ratios: memeye, million or both")
    args = ap.parse_args(argv)
    tmp = tempfile.TemporaryDirectory(prefix="memscope-bench-")
    work = args.workdir or Path(tmp.name)
    work.mkdir(parents=True, exist_ok=True)
    compile_sources()
    figures: dict = {"cpus": os.cpu_count(), "load_before": load()}
    data = args.data or work
    data.mkdir(parents=True, exist_ok=True)
    bench = data / "memeye"
    if not (bench / "runs").is_dir():
        subprocess.run([sys.executable, str(REPO / "fixtures" / "synth.py"), "--scale", "memeye", "--out", str(bench)],
                       check=True, capture_output=True)
    runs = bench / "runs"
    db = data / "memeye.db"
    if not db.exists() and not args.only_floor:  # the floor ratios read no annotations
        events = annotations(bench, runs, data / "annotations.jsonl")
        subprocess.run([sys.executable, "-m", "scorer", "annotations", "import", str(events), "--db", str(db)],
                       check=True, capture_output=True, cwd=REPO)
    if "memeye" in args.floor_parts:
        figures["floor"] = floor_ratios(bench, runs, work, args.floor_repeat)
    if args.only_floor:
        if not args.skip_million and "million" in args.floor_parts:
            figures["million_floor"] = million_floor(runs, work, bench, args, data)
        figures["load_after"] = load()
        print(json.dumps(figures, indent=1))
        tmp.cleanup()
        return 0
    cli = [sys.executable, "-m", "scorer", "score", str(bench), "--runs", str(runs), "--db", str(db),
           "--resamples", str(args.resamples), "--compare", *COMPARE]
    times = []
    for i in range(args.repeat):
        out = work / f"out{i}"
        times.append(run_timed([*cli, "--sections", LEAN_SECTIONS, "--out", str(out), "--format", "json"]))
    report = json.loads((work / "out0" / "report.json").read_text())
    walls = [t for t, *_ in times]
    figures["memeye_scale"] = {
        "rows": report["inputs"]["rows"]["scored"], "run_folders": report["inputs"]["runs"]["folders"],
        "sections": LEAN_SECTIONS, "compare_pairs": len(COMPARE), "resamples": args.resamples,
        "bootstrap_cis": {"compare": len(report["bootstrap"]), "caption_proof": len(report["caption_proof"])},
        "seconds": [round(t, 2) for t in walls], "seconds_median": round(statistics.median(walls), 2),
        "seconds_min": round(min(walls), 2), "cpu_seconds_median": round(statistics.median(c for _, _, c, _ in times), 2),
        "peak_rss_mb": max(m for _, m, _, _ in times),
        "target_seconds": 3.0,
    }
    t_all, m_all, c_all, _ = run_timed([*cli, "--out", str(work / "out_all"), "--format", "json"])
    figures["memeye_scale_all_sections"] = {"seconds": round(t_all, 2), "cpu_seconds": round(c_all, 2),
                                            "peak_rss_mb": m_all,
                                            "note": "every section, incl. evidence diagnostics (full reader)"}
    figures["paired_bootstrap_vs_scipy"] = bootstrap_vs_scipy(bench, runs, args.resamples, max(args.repeat, 5))
    if not args.skip_million:
        big = data / "million"
        if not big.is_dir():
            figures_rows = million(runs, big)
        else:
            figures_rows = None
        big_cmd = [sys.executable, "-m", "scorer", "score", str(bench), "--runs", str(big), "--resamples",
                   str(args.resamples), "--sections", args.million_sections, "--out", str(work / "out_million"),
                   "--format", "json"]
        t_big, m_big, c_big, _ = run_timed(big_cmd)
        # Memory from a second run: reading every process's smaps_rollup costs CPU, kept out of the timing.
        _, _, _, tree_big = run_timed(big_cmd, sample_tree=True)
        figures["million_floor"] = million_floor(runs, work, bench, args, data)
        rep = json.loads((work / "out_million" / "report.json").read_text())
        figures["million_rows"] = {"rows": rep["inputs"]["rows"]["scored"], "built_rows": figures_rows,
                                   "sections": args.million_sections, "reader": rep["inputs"]["runs"]["reader"],
                                   "seconds": round(t_big, 2), "cpu_seconds": round(c_big, 2), "peak_rss_mb": m_big,
                                   "peak_tree_rss_mb": tree_big[0], "peak_tree_pss_mb": tree_big[1],
                                   "target_seconds": 30, "target_peak_mb": 2048}
    figures["load_after"] = load()
    print(json.dumps(figures, indent=1))
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

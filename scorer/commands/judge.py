"""`memscope judge --runs DIR… --model NAME [--model NAME2 …] …`: re-score open-ended rows with an
LLM judge over any OpenAI-compatible endpoint, cached, concurrent and resumable.

Writes new run folders under --out mirroring the input (OUT/<model>/… per judge for a panel, plus
OUT/panel-median/… and OUT/panel.json), or rewrites the input with --in-place. Exit 0 when every
selected row was judged, 1 when some rows failed (listed at the end), 2 for bad input.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from scorer import __version__
from scorer.commands import check_writable
from scorer.commands import check_bounds, check_seconds
from scorer.errors import UserError
from scorer.judge import write
from scorer.judge.cache import JudgeCache, default_cache_path
from scorer.judge.client import (
    DEFAULT_KEY_ENV,
    DEFAULT_TEMPERATURE,
    FATAL_STATUS,
    RetryPolicy,
    Sampling,
    is_loopback,
    list_models,
    resolve_endpoint,
)
from scorer.judge.prompt import load_prompt
from scorer.judge.runner import (
    ModelRun,
    build_jobs,
    estimate_tokens,
    judge_missing,
    load_with_roots,
    plan_model,
    select_rows,
)
from scorer.model.run import CONFIG, PREDICTIONS
from scorer.safe_text import plain

MAX_LISTED_FAILURES = 10


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("judge", help="re-score open-ended predictions with an LLM judge (cached, resumable)")
    p.add_argument("--runs", nargs="+", required=True, metavar="DIR", help="run folders or trees of them")
    p.add_argument("--model", action="append", required=True, metavar="NAME",
                   help="judge model; repeat for a panel (one output tree per model)")
    p.add_argument("--base-url", metavar="URL",
                   help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL or https://api.openai.com/v1)")
    p.add_argument("--api-key-env", metavar="NAME", default=DEFAULT_KEY_ENV,
                   help="environment variable holding the API key (default: OPENAI_API_KEY; "
                        "not needed for a loopback URL)")
    p.add_argument("--concurrency", type=int, default=8, metavar="N", help="requests in flight (default 8)")
    p.add_argument("--cache", metavar="FILE", help=f"judgment cache (default: {default_cache_path()})")
    p.add_argument("--prompt", metavar="FILE",
                   help="prompt template using {{question}}, {{ground_truth}}, {{model_output}} "
                        "(default: memscope's rubric)")
    p.add_argument("--levels", type=int, choices=(5, 3), default=5,
                   help="score levels: 5 = {0, .25, .5, .75, 1} (default), 3 = {0, .5, 1}")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--out", metavar="DIR", help="write judged runs here, mirroring the input tree")
    where.add_argument("--in-place", action="store_true", help="rewrite the input run folders")
    p.add_argument("--limit", type=int, metavar="N", help="judge at most N rows")
    p.add_argument("--force", action="store_true", help="re-judge rows that already have a score")
    p.add_argument("--dry-run", action="store_true", help="count the calls and tokens a run would need, and check the model names "
                        "against the server's /v1/models where it has one; judge nothing")
    p.add_argument("--temperature", type=float, default=DEFAULT_TEMPERATURE, metavar="T",
                   help="sampling temperature (default 0); dropped, with a note, for a model that refuses it")
    p.add_argument("--max-tokens", type=int, metavar="N",
                   help="cap on each reply's tokens (default: the server's); sent as max_tokens, or "
                        "max_completion_tokens where a server asks for that")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S", help="bound on each whole request, and on any Retry-After wait (default 60)")
    p.add_argument("--max-retries", type=int, default=4, metavar="N", help="retries per prompt (default 4)")
    p.add_argument("--backoff", type=float, default=1.0, metavar="S",
                   help="first retry wait, doubled each retry, unless the server sends Retry-After (default 1)")
    p.set_defaults(func=run)


def _check(args: argparse.Namespace) -> None:
    check_bounds(args, "concurrency", "limit", "max_retries", "max_tokens")
    check_seconds(args, "timeout", "backoff")
    if not math.isfinite(args.temperature):
        raise UserError(f"--temperature must be a finite number, got {args.temperature}")
    check_bounds(args, "temperature")
    if args.concurrency < 1:
        raise UserError("--concurrency must be at least 1")
    if args.limit is not None and args.limit < 0:
        raise UserError("--limit must be 0 or more")
    if args.timeout <= 0:
        raise UserError("--timeout must be more than 0 seconds")
    if args.max_retries < 0 or args.backoff < 0:
        raise UserError("--max-retries and --backoff must not be negative")
    if len(set(args.model)) != len(args.model):
        raise UserError("the same --model is given twice")
    if not args.dry_run and not args.out and not args.in_place:
        raise UserError("say where to write the judged runs: --out DIR (or --in-place to rewrite the input)")
    if args.in_place and len(args.model) > 1:
        raise UserError("--in-place takes one --model; a panel needs --out DIR (one tree per judge)")


def run(args: argparse.Namespace) -> int:
    _check(args)
    if args.out and not args.dry_run:
        check_writable(args.out, folder=True)  # before any request is paid for
    if args.cache and not args.dry_run:  # a mistyped folder is not made (only the default cache's is)
        check_writable(args.cache, folder=False, option="--cache")
    # soft_wrap: one summary line stays one line in a log or a pipe
    out, err = Console(highlight=False, soft_wrap=True), Console(stderr=True, highlight=False)
    prompt = load_prompt(args.prompt, args.levels)
    endpoint = resolve_endpoint(args.base_url, args.api_key_env, need_key=not args.dry_run)
    url = endpoint.public_url
    runs = load_with_roots(args.runs)
    if not runs:
        raise UserError(f"no run folders (with predictions.jsonl) under {' '.join(args.runs)}")
    sel = select_rows(runs, force=args.force, limit=args.limit, models=args.model)
    cache_path = Path(args.cache) if args.cache else default_cache_path()
    if sel.unjudgeable:
        ref, why = sel.unjudgeable[0]
        first = f"{runs[ref.run].run.folder / 'predictions.jsonl'}:{runs[ref.run].run.predictions[ref.row].line}"
        Console(stderr=True, highlight=False, soft_wrap=True).print(Text(plain(f"memscope: {len(sel.unjudgeable)} row(s) cannot be judged and stay unscored "
                             f"(first {first}: {why}); `memscope validate` lists each")))
    if not sel.rows:
        scored = sel.open_rows - len(sel.unjudgeable)
        why = (f"{sel.open_rows} open row(s), every one already scored"
               + (" (use --force to re-judge them)" if sel.open_rows and not args.force else "")
               if not sel.unjudgeable else
               f"{sel.open_rows} open row(s): {len(sel.unjudgeable)} cannot be judged, {scored} already scored")
        Console(stderr=True, highlight=False, soft_wrap=True).print(Text(f"memscope: nothing to judge: {why}"))

    if args.dry_run:
        return _dry_run(args, out, err, endpoint, runs, sel, prompt, url, cache_path) or int(bool(sel.unjudgeable))

    rel = write.relative_folders(runs)
    if args.in_place:
        for lr in runs:  # every folder rewritten, checked before any request is paid for
            check_writable(lr.run.folder, folder=True, option="--in-place")
            for name in (PREDICTIONS, CONFIG):
                if (lr.run.folder / name).exists():
                    check_writable(lr.run.folder / name, folder=False, option="--in-place")
        trees = {args.model[0]: None}
        targets = {args.model[0]: [lr.run.folder for lr in runs]}
    else:
        base = Path(args.out)
        trees = write.model_dirs(base, args.model)
        targets = {m: [d / r for r in rel] for m, d in trees.items()}
        every = [t for ts in targets.values() for t in ts]
        if len(args.model) > 1:
            every += [base / write.PANEL_MEDIAN / r for r in rel]
        write.check_targets(runs, base, every)

    policy = RetryPolicy(max_retries=args.max_retries, backoff=args.backoff, timeout=args.timeout,
                         max_wait=args.timeout)
    sampling = Sampling(args.temperature, args.max_tokens)
    done: list[ModelRun] = []
    with JudgeCache(cache_path) as cache:
        try:
            for model in args.model:
                done.append(plan_model(runs, sel, model, url, prompt, cache, args.temperature))
                _judge(done[-1], endpoint, prompt, policy, cache, args.concurrency, err, sampling)
        except KeyboardInterrupt:
            saved = sum(sum(r.error is None for r in m.results.values()) for m in done)
            err.print(Text(plain(f"memscope: {saved} new judgments are saved in {cache_path}; rerun to resume")))
            raise

    meta = dict(base_url=url, prompt_sha256=prompt.sha256, prompt=prompt.source, levels=list(prompt.levels),
                temperature=args.temperature, max_tokens=args.max_tokens, tool=f"memscope {__version__}",
                judged_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    selected: dict[int, list[int]] = {}
    for ref in sel.rows:
        selected.setdefault(ref.run, []).append(ref.row)
    scores: dict[str, list[float | None]] = {}
    for mr in done:
        by_row = {(ref.run, ref.row): mr.result_of(k) for k, j in mr.jobs.items() for ref in j.rows}
        mr_meta = _model_meta(meta, mr)
        _write_model_tree(runs, targets[mr.model], mr.model, by_row, selected, mr_meta)
        scores[mr.model] = [(by_row[(r.run, r.row)].score if by_row.get((r.run, r.row)) else None) for r in sel.rows]
        if trees[mr.model] is not None:
            write.write_json(trees[mr.model] / "judge_summary.json", _summary(mr, sel, runs, rel, mr_meta))
        _report(out, mr, sel, runs, cache_path)
    if len(done) > 1:
        from scorer.judge.panel_out import write_panel  # a panel of judges only (numpy, its metrics)

        write_panel(out, Path(args.out), runs, rel, sel, selected, scores, prompt.levels, meta)
    if not args.in_place:
        out.print(Text(plain(f"wrote {len(runs)} run folder(s) per judge under {args.out}")))
    failed = sum(len(mr.failures) for mr in done)
    return 1 if failed or sel.unjudgeable else 0


def _model_meta(meta: dict[str, Any], mr: ModelRun) -> dict[str, Any]:
    """The run's settings as this judge was really asked: a temperature the server refused is
    recorded as not sent (the server's default was used), with the note that said so."""
    out = dict(meta)
    if not mr.temperature_sent:
        out["temperature_sent"] = False
    if mr.notes:
        out["notes"] = list(mr.notes)
    return out


def _check_models(args, out: Console, endpoint) -> None:
    """--dry-run: is each --model among those the server lists? Refused (exit 2) when the server
    lists models and one is missing; said, not refused, when it offers no list."""
    if not is_loopback(endpoint.base_url) and not os.environ.get(endpoint.key_env):
        out.print(Text(plain(f"model names not checked: no API key in ${endpoint.key_env} to ask "
                             f"{endpoint.public_url}/models with")))
        return
    listed = list_models(endpoint, min(args.timeout, 15.0))  # a dry run is a quick check
    if listed.status in (401, 403):
        raise UserError(f"{endpoint.public_url}/models answered {listed.status}: {FATAL_STATUS[listed.status]}"
                        f" (key from ${endpoint.key_env})")
    if listed.ids is None:
        out.print(Text(plain(f"model names not checked: {listed.why}")))
        return
    absent = [m for m in args.model if m not in listed.ids]
    if absent:
        some = ", ".join(sorted(listed.ids)[:8]) + (" …" if len(listed.ids) > 8 else "")
        raise UserError(f"{endpoint.public_url}/models does not list "
                        + ", ".join(repr(m) for m in absent)
                        + f" (it lists {len(listed.ids)}: {some or 'none'}); check --model")
    out.print(Text(plain(f"{endpoint.public_url}/models lists " + ", ".join(args.model))))


def _dry_run(args, out: Console, err: Console, endpoint, runs, sel, prompt, url: str, cache_path: Path) -> int:
    _check_models(args, out, endpoint)
    cache = JudgeCache(cache_path) if cache_path.is_file() else None  # a dry run creates nothing
    try:
        for model in args.model:
            if cache is not None:
                mr = plan_model(runs, sel, model, url, prompt, cache, args.temperature)
            else:
                mr = ModelRun(model, build_jobs(runs, sel, model, url, prompt, args.temperature), {})
            missing = mr.missing
            pt, ct = estimate_tokens(missing, prompt)
            out.print(Text(
                f"{plain(model)}: {sel.open_rows} open rows, {len(sel.rows)} to judge ({sel.kept} keep their score), "
                f"{len(mr.jobs)} distinct prompts: {len(mr.cached)} in the cache, {len(missing)} calls to make, "
                f"≈ {pt:,} prompt tokens + ≈ {ct:,} completion tokens"))
        out.print(Text("token figures are estimates: 4 characters per prompt token, 60 tokens per reply"))
    finally:
        if cache is not None:
            cache.close()
    return 0


def _judge(mr: ModelRun, endpoint, prompt, policy, cache, concurrency: int, err: Console,
           sampling: Sampling = Sampling()) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    missing = mr.missing
    if not missing:
        return
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[failed]} failed"), TimeElapsedColumn(), TimeRemainingColumn(),
                        console=err, transient=True, disable=not err.is_terminal)
    with progress:
        task = progress.add_task(f"judging with {escape(plain(mr.model))}", total=len(missing), failed=0)
        failed = 0

        def on_result(job, result) -> None:
            nonlocal failed
            failed += result.error is not None
            progress.update(task, advance=1, failed=failed)

        def on_note(note: str) -> None:
            progress.console.print(Text(plain(f"memscope: {note}")))

        asyncio.run(judge_missing(mr, endpoint, prompt, policy, cache, concurrency, on_result, sampling, on_note))


def _write_model_tree(runs, targets, model: str, by_row, selected, meta) -> None:
    for ri, (lr, target) in enumerate(zip(runs, targets)):
        rows = {pi: write.judged_row(lr.run.predictions[pi].raw, model, by_row.get((ri, pi))) for pi in selected.get(ri, ())}
        judged = sum(1 for r in rows.values() if r.get("judge") is not None)
        run_meta = dict(model=model, **meta, rows=dict(judged=judged, failed=len(rows) - judged,
                                                       kept=sum(p.mode == "open" for p in lr.run.predictions) - len(rows)))
        write.write_run_folder(lr, target, rows, run_meta)


def _summary(mr: ModelRun, sel, runs, rel, meta) -> dict[str, Any]:
    failures = []
    for job, res in mr.failures:
        for ref in job.rows:
            p = runs[ref.run].run.predictions[ref.row]
            failures.append({"run": str(rel[ref.run]), "line": p.line, "task": p.task, "idx": p.idx, "reason": res.error})
    return {
        "model": mr.model, **meta,
        "rows": {"open": sel.open_rows, "selected": len(sel.rows), "kept": sel.kept},
        "prompts": {"distinct": len(mr.jobs), "from_cache": len(mr.cached), "requested": len(mr.results),
                    "failed": len(mr.failures)},
        "usage": mr.stats.as_dict(),
        "cached_tokens": {"prompt_tokens": mr.cached_tokens[0], "completion_tokens": mr.cached_tokens[1]},
        "failures": failures,
    }


def _report(out: Console, mr: ModelRun, sel, runs, cache_path: Path) -> None:
    s = mr.stats
    failures = mr.failures
    ok = len(mr.results) - len(failures)
    out.print(Text(
        f"{plain(mr.model)}: {len(sel.rows)} rows to judge ({sel.kept} of {sel.open_rows} open rows keep their score), "
        f"{len(mr.jobs)} distinct prompts: {len(mr.cached)} from the cache, {ok} judged now, {len(failures)} failed"))
    out.print(Text(
        f"  requests {s.requests} (retries {s.retries}), tokens {s.prompt_tokens:,} prompt + "
        f"{s.completion_tokens:,} completion; outcomes "
        + (", ".join(f"{k} {v}" for k, v in sorted(s.outcomes.items())) or "none")
        + f"; cache {plain(str(cache_path))}"))
    if failures:
        n_rows = sum(len(j.rows) for j, _ in failures)
        print(f"{plain(mr.model)}: {len(failures)} prompt(s) ({n_rows} rows) could not be judged; "
              "they are marked judge_failed and will be asked again on the next run:", file=sys.stderr)
        for job, res in failures[:MAX_LISTED_FAILURES]:
            ref = job.rows[0]
            p = runs[ref.run].run.predictions[ref.row]
            where = runs[ref.run].run.folder / PREDICTIONS
            more = f" (+{len(job.rows) - 1} rows with the same prompt)" if len(job.rows) > 1 else ""
            print(plain(f"  {where}:{p.line}{more}: {res.error or ''}"), file=sys.stderr)
        if len(failures) > MAX_LISTED_FAILURES:
            print(f"  … and {len(failures) - MAX_LISTED_FAILURES} more (see judge_summary.json)", file=sys.stderr)

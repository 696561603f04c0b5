"""Which rows to judge, and judging them: cache first, then the endpoint with bounded concurrency.

A row is judged when it is an open-ended row without a score from the judge model(s) asked for
(every open row with `force`), up to `limit` rows in load order. A score recorded by another judge —
or by an unknown one, as in upstream rows, which do not name their judge — is not this judge's
score: changing the judge model is exactly when a benchmark author re-judges. Rows with the same (question, gold, prediction) share one prompt
and so one request. Results are committed to the cache one by one as they arrive.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from scorer.judge.cache import JudgeCache, KeyMaker
from scorer.judge.client import Endpoint, EndpointRefused, JudgeClient, RetryPolicy, RowFailed, Sampling, Stats
from scorer.judge.prompt import Prompt
from scorer.load.runs import find_run_folders, gc_paused, read_run_folder
from scorer.model.rows import unjudgeable
from scorer.model import Prediction, Run

ASSUMED_COMPLETION_TOKENS = 60  # for --dry-run: a score and one or two sentences of reasoning


@dataclass(frozen=True)
class LoadedRun:
    run: Run
    root: Path  # the --runs argument it was found under


@dataclass(frozen=True)
class RowRef:
    run: int  # index into the loaded runs
    row: int  # index into that run's predictions


@dataclass(frozen=True)
class Selection:
    rows: tuple[RowRef, ...]  # to judge
    open_rows: int
    kept: int  # open rows that keep their existing score (not forced, or past --limit)
    unjudgeable: tuple[tuple[RowRef, str], ...] = ()  # would be judged, but cannot be (and why)


@dataclass
class Job:
    key: str
    question: str
    gold: str
    prediction: str
    rows: list[RowRef] = field(default_factory=list)


@dataclass(frozen=True)
class Result:
    score: float | None
    reasoning: str | None
    error: str | None
    source: str  # "cache" | "request"
    attempts: int = 0


@dataclass
class ModelRun:
    """One judge model over the selection: the jobs, what the cache had, and what came back."""

    model: str
    jobs: dict[str, Job]
    cached: dict[str, Result]
    results: dict[str, Result] = field(default_factory=dict)
    stats: Stats = field(default_factory=Stats)
    cached_tokens: tuple[int, int] = (0, 0)  # tokens the cached judgments cost when first made
    notes: list[str] = field(default_factory=list)  # settings the server refused and were changed (once each)
    temperature_sent: bool = True  # False once the server refused it and it was dropped

    @property
    def missing(self) -> list[Job]:
        return [j for k, j in self.jobs.items() if k not in self.cached]

    def result_of(self, key: str) -> Result | None:
        return self.results.get(key) or self.cached.get(key)

    @property
    def failures(self) -> list[tuple[Job, Result]]:
        found = [(self.jobs[k], r) for k, r in self.results.items() if r.error is not None]
        return sorted(found, key=lambda f: (f[0].rows[0].run, f[0].rows[0].row))  # in file order


def load_with_roots(paths: Sequence[str | Path]) -> list[LoadedRun]:
    seen: set[Path] = set()
    out: list[LoadedRun] = []
    with gc_paused():
        for p in paths:
            root = Path(p)
            for folder in find_run_folders(root):
                key = folder.resolve()
                if key in seen:
                    continue
                seen.add(key)
                out.append(LoadedRun(read_run_folder(folder), root))
    return out


def is_open(p: Prediction) -> bool:
    return p.mode == "open"


def scored_by(p: Prediction, models: Sequence[str]) -> bool:
    """The row already holds a score from one of `models` (memscope records `judge_model`)."""
    return p.judge is not None and (not models or p.raw.get("judge_model") in models)


def select_rows(runs: Sequence[LoadedRun], force: bool = False, limit: int | None = None,
                models: Sequence[str] = ()) -> Selection:
    rows: list[RowRef] = []
    bad: list[tuple[RowRef, str]] = []
    open_rows = 0
    for ri, lr in enumerate(runs):
        for pi, p in enumerate(lr.run.predictions):
            if not is_open(p):
                continue
            open_rows += 1
            if (force or not scored_by(p, models)) and (limit is None or len(rows) < limit):
                why = unjudgeable(p.raw)
                if why:  # never sent: a judge shown no gold answer says anything (a null gt was judged 1.0)
                    bad.append((RowRef(ri, pi), why))
                else:
                    rows.append(RowRef(ri, pi))
    return Selection(tuple(rows), open_rows, open_rows - len(rows) - len(bad), tuple(bad))


def build_jobs(runs: Sequence[LoadedRun], selection: Selection, model: str, endpoint_url: str,
               prompt: Prompt, temperature: float | None = 0.0) -> dict[str, Job]:
    jobs: dict[str, Job] = {}
    key_of = KeyMaker(model, endpoint_url, prompt.sha256, prompt.levels, temperature)
    for ref in selection.rows:
        p = runs[ref.run].run.predictions[ref.row]
        key = key_of(p.question, p.gt, p.pred)
        job = jobs.get(key)
        if job is None:
            job = jobs[key] = Job(key, p.question, p.gt, p.pred)
        job.rows.append(ref)
    return jobs


def plan_model(runs: Sequence[LoadedRun], selection: Selection, model: str, endpoint_url: str,
               prompt: Prompt, cache: JudgeCache, temperature: float | None = 0.0) -> ModelRun:
    jobs = build_jobs(runs, selection, model, endpoint_url, prompt, temperature)
    hits = cache.get_many(jobs, judge=(model, endpoint_url, prompt.sha256))
    cached = {k: Result(c.score, c.reasoning, None, "cache") for k, c in hits.items()}
    tokens = (sum(c.prompt_tokens for c in hits.values()), sum(c.completion_tokens for c in hits.values()))
    return ModelRun(model, jobs, cached, cached_tokens=tokens)


def estimate_tokens(jobs: Sequence[Job], prompt: Prompt) -> tuple[int, int]:
    """(prompt tokens, completion tokens) by the rough rule of 4 characters per token."""
    chars = sum(len(prompt.render(j.question, j.gold, j.prediction)) for j in jobs)
    return (chars + 3) // 4, ASSUMED_COMPLETION_TOKENS * len(jobs)


async def judge_missing(mr: ModelRun, endpoint: Endpoint, prompt: Prompt, policy: RetryPolicy,
                        cache: JudgeCache, concurrency: int,
                        on_result: Callable[[Job, Result], None] | None = None,
                        sampling: Sampling = Sampling(),
                        on_note: Callable[[str], None] | None = None) -> None:
    """Ask the endpoint for every job the cache did not have; at most `concurrency` at a time.

    Each success is committed to the cache before the next is reported. An EndpointRefused (bad
    key, URL or model) cancels everything still running and propagates."""
    jobs = mr.missing
    if not jobs:
        return
    sem = asyncio.Semaphore(max(1, concurrency))
    sha, url = prompt.sha256, endpoint.public_url
    async with JudgeClient(endpoint, mr.model, policy, mr.stats, sampling) as client:

        def told() -> None:  # each setting the server refused, said once, as soon as it happens
            for note in client.notes[len(mr.notes):]:
                mr.notes.append(note)
                if on_note is not None:
                    on_note(note)
            mr.temperature_sent = client.send_temperature or sampling.temperature is None

        async def one(job: Job) -> None:
            async with sem:
                text = prompt.render(job.question, job.gold, job.prediction)
                try:
                    ans = await client.judge(text, prompt.levels)
                except RowFailed as f:
                    result = Result(None, None, f.reason, "request", f.attempts)
                except EndpointRefused:
                    raise
                except Exception as err:  # noqa: BLE001 - one odd answer must not sink the whole run
                    reason = endpoint.scrub(f"unexpected error: {type(err).__name__}: {err}")[:300]
                    result = Result(None, None, reason, "request", 0)
                else:
                    cache.put(job.key, mr.model, url, sha, ans.verdict.score, ans.verdict.reasoning,
                              ans.prompt_tokens, ans.completion_tokens)
                    result = Result(ans.verdict.score, ans.verdict.reasoning, None, "request", ans.attempts)
                mr.results[job.key] = result
                told()
                if on_result is not None:
                    on_result(job, result)

        tasks = [asyncio.ensure_future(one(j)) for j in jobs]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for t in done:
                if t.exception() is not None:
                    raise t.exception()
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            told()

"""Issue 14, class 6: the judge's time bounds hold against a real loopback server that drips its
answer one byte at a time (each read is quick, the request never ends)."""

from __future__ import annotations

import time

import pytest

from scorer.cli import main
from tests.judge_server import JudgeServer
from tests.scorer.judge.test_judge import out_rows, row, runs_tree


@pytest.fixture
def server():
    with JudgeServer(drip_seconds=0.2) as s:
        yield s


def test_dripping_server_is_bounded_by_timeout(server, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-bounds")
    runs = runs_tree(tmp_path, [row(1, "a [[script:drip]]"), row(2, "b [[script:ok]] [[score:0.5]]")])
    t0 = time.monotonic()
    rc = main(["judge", "--runs", str(runs), "--model", "judge-a", "--base-url", server.url,
               "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "c.sqlite"),
               "--timeout", "0.6", "--backoff", "0.01", "--max-retries", "1"])
    elapsed = time.monotonic() - t0
    # two attempts of 0.6 s each (the body alone would take about a minute at 0.2 s a byte)
    assert elapsed < 8, elapsed
    assert rc == 1
    assert len(server.requests_for("[[script:drip]]")) == 2
    got = out_rows(tmp_path / "out")
    assert got[2]["judge"] == 0.5
    assert got[1]["judge"] is None and "no answer within 0.6 s" in got[1]["judge_failed"]
    err = capsys.readouterr().err.strip().splitlines()
    assert "Traceback" not in "\n".join(err)
    assert len(err) == 2, err  # the summary line, and one line for the failed row
    assert "1 prompt(s) (1 rows) could not be judged" in err[0]
    assert "predictions.jsonl:1:" in err[1] and "no answer within 0.6 s" in err[1]


def test_retry_after_not_a_number_is_ignored():
    from scorer.judge.client import retry_after

    assert retry_after({"retry-after": "nan"}) is None
    assert retry_after({"retry-after-ms": "nan"}) is None
    assert retry_after({"retry-after": "inf"}) == float("inf")  # then capped by max_wait


def test_very_long_retry_after_is_capped(server, tmp_path):
    """Retry-After: 100000 waits at most the policy's max_wait (the CLI: --timeout)."""
    import asyncio

    from scorer.judge.client import JudgeClient, RetryPolicy, resolve_endpoint

    server.queue[:] = ["429@100000", "ok"]
    endpoint = resolve_endpoint(server.url, None)
    policy = RetryPolicy(max_retries=2, backoff=0.01, timeout=0.5, max_wait=0.3)

    async def ask():
        async with JudgeClient(endpoint, "judge-a", policy) as client:
            return await client.judge("q [[score:0.5]]", (0.0, 0.25, 0.5, 0.75, 1.0))

    t0 = time.monotonic()
    answer = asyncio.run(ask())
    assert answer.verdict.score == 0.5 and answer.attempts == 2
    assert time.monotonic() - t0 < 5


def test_cli_caps_retry_after_at_the_timeout(server, tmp_path):
    """`judge --timeout 0.5` against a server asking for Retry-After: 100000 waits 0.5 s, not a day."""
    from tests.scorer.judge.test_judge import judge, row, runs_tree

    runs = runs_tree(tmp_path, [row(1, "a [[script:429@100000,ok]]")])
    t0 = time.monotonic()
    assert judge(server, runs, tmp_path / "out", tmp_path / "c.sqlite") == 0
    took = time.monotonic() - t0
    t = [r.at for r in server.requests_for("[[script:429@100000,ok]]")]
    assert len(t) == 2 and 0.45 <= t[1] - t[0] < 2 and took < 10

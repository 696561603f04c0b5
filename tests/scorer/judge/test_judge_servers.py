"""`memscope judge` with servers that are not gpt-4o: a reasoning model that refuses temperature 0
(and max_tokens), replies cut by the token limit, a dry run that asks /v1/models, and a loopback
server without a key. All against the real HTTP server of tests/judge_server.py on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scorer.cli import main
from scorer.judge.client import LOCAL_DUMMY_KEY
from tests.judge_server import JudgeServer
from tests.scorer.judge.test_judge import FAST, KEY, out_rows, row, runs_tree


@pytest.fixture
def server():
    with JudgeServer() as s:
        yield s


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def judge(server, tmp_path: Path, runs: Path, *extra, out="out", cache="c.sqlite") -> int:
    return main(["judge", "--runs", str(runs), "--model", "judge-a", "--base-url", server.url,
                 "--out", str(tmp_path / out), "--cache", str(tmp_path / cache), *FAST, *extra])


def config_of(out: Path) -> dict:
    return json.loads(next(out.rglob("config.json")).read_text())["judge"]


def test_reasoning_model_refusing_temperature_is_asked_without_it(server, tmp_path, capsys):
    server.reject_temperature = True
    runs = runs_tree(tmp_path, [row(i, f"answer {i}") for i in range(1, 13)])
    rc = judge(server, tmp_path, runs, "--concurrency", "4")
    err = capsys.readouterr().err
    assert rc == 0, err
    got = out_rows(tmp_path / "out")
    assert len(got) == 12 and all(r["judge"] is not None and "judge_failed" not in r for r in got.values())
    # said once, however many requests were refused while it was being learnt
    assert err.count("refused temperature 0") == 1 and "server's default temperature" in err
    refused = [r for r in server.log if r.step == "refused"]
    answered = [r for r in server.log if r.step != "refused"]
    assert 1 <= len(refused) <= 4 and len(answered) == 12  # at most one per request in flight, then none
    assert all("temperature" in r.sent for r in refused) and all("temperature" not in r.sent for r in answered)
    cfg = config_of(tmp_path / "out")
    assert cfg["temperature"] == 0 and cfg["temperature_sent"] is False and "refused temperature" in cfg["notes"][0]
    summary = json.loads((tmp_path / "out" / "judge_summary.json").read_text())
    assert summary["usage"]["requests"] == len(server.log) and summary["failures"] == []
    # the cache serves the rerun: the same request (temperature 0 asked for) is the same judgment
    server.reset()
    assert judge(server, tmp_path, runs, out="out2") == 0 and server.requests == 0


def test_temperature_and_max_tokens_are_sent_and_keyed(server, tmp_path):
    runs = runs_tree(tmp_path, [row(1, "a"), row(2, "b")])
    assert judge(server, tmp_path, runs) == 0
    assert all(r.temperature == 0 and "max_tokens" not in r.sent for r in server.log)
    server.reset()
    # another temperature is another judgment: asked again, not served from the temperature-0 cache
    assert judge(server, tmp_path, runs, "--temperature", "0.7", "--max-tokens", "64", out="hot") == 0
    assert server.requests == 2
    assert all(r.temperature == 0.7 and r.max_tokens == 64 and "max_tokens" in r.sent for r in server.log)
    assert config_of(tmp_path / "hot")["temperature"] == 0.7 and config_of(tmp_path / "hot")["max_tokens"] == 64
    server.reset()
    assert judge(server, tmp_path, runs, "--temperature", "0.7", out="hot2") == 0 and server.requests == 0


def test_max_tokens_refused_becomes_max_completion_tokens(server, tmp_path, capsys):
    server.reject_max_tokens = True
    runs = runs_tree(tmp_path, [row(i, f"x {i}") for i in range(1, 6)])
    assert judge(server, tmp_path, runs, "--max-tokens", "200", "--concurrency", "1") == 0
    assert capsys.readouterr().err.count("sending max_completion_tokens instead") == 1
    assert [r.step for r in server.log].count("refused") == 1
    answered = [r for r in server.log if r.step != "refused"]
    assert len(answered) == 5 and all("max_completion_tokens" in r.sent and r.max_tokens == 200 for r in answered)


def test_reply_cut_by_length_is_reported_as_truncated(server, tmp_path, capsys):
    runs = runs_tree(tmp_path, [row(1, "a [[script:length]]"), row(2, "b [[script:cut]] [[score:0.75]]"), row(3, "c")])
    assert judge(server, tmp_path, runs) == 1
    got = out_rows(tmp_path / "out")
    for idx in (1, 2):
        why = got[idx]["judge_failed"]
        assert "truncated (finish_reason: length)" in why and "--max-tokens" in why, why
        assert "empty" not in why
    assert got[3]["judge"] is not None
    # not asked again: the same limit would cut the same reply
    assert len(server.requests_for("[[script:length]]")) == 1 and len(server.requests_for("[[script:cut]]")) == 1
    assert "truncated" in capsys.readouterr().err
    summary = json.loads((tmp_path / "out" / "judge_summary.json").read_text())
    assert summary["usage"]["outcomes"]["truncated"] == 2
    assert judge(server, tmp_path, runs, "--max-tokens", "32", out="o2") == 1
    assert "raise --max-tokens (now 32)" in out_rows(tmp_path / "o2")[1]["judge_failed"]


def dry(server, tmp_path, runs, *models) -> int:
    args = ["judge", "--runs", str(runs), "--base-url", server.url, "--cache", str(tmp_path / "none.sqlite"),
            "--dry-run", "--timeout", "5"]
    for m in models or ("judge-a",):
        args += ["--model", m]
    return main(args)


def test_dry_run_checks_the_model_list(server, tmp_path, capsys):
    runs = runs_tree(tmp_path, [row(1, "a")])
    server.models = ["judge-a", "judge-b"]
    assert dry(server, tmp_path, runs, "judge-a", "judge-b") == 0
    assert "/models lists judge-a, judge-b" in capsys.readouterr().out
    assert [g[0] for g in server.gets] == ["/v1/models"] and server.gets[0][1] == f"Bearer {KEY}"
    # a model the server does not list: one line, exit 2, no chat request
    server.models = ["gpt-5.4-mini", "o3"]
    assert dry(server, tmp_path, runs, "judge-a") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "does not list 'judge-a'" in err[0] and "o3" in err[0], err
    # a server without /v1/models: said, and the dry run goes on
    server.models = None
    assert dry(server, tmp_path, runs, "judge-a") == 0
    out = capsys.readouterr().out
    assert "model names not checked" in out and "answered 404" in out and "1 to judge" in out
    assert server.requests == 0 and not (tmp_path / "none.sqlite").exists()


def test_loopback_server_needs_no_key(server, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY")
    runs = runs_tree(tmp_path, [row(1, "a"), row(2, "b")])
    assert judge(server, tmp_path, runs) == 0, capsys.readouterr().err
    assert server.requests == 2 and all(r.authorization == f"Bearer {LOCAL_DUMMY_KEY}" for r in server.log)
    server.models = ["judge-a"]
    assert dry(server, tmp_path, runs) == 0 and "/models lists judge-a" in capsys.readouterr().out
    # a remote server without a key: a dry run counts, and says it could not check the name
    rc = main(["judge", "--runs", str(runs), "--model", "judge-a", "--base-url", "https://judge.invalid/v1",
               "--cache", str(tmp_path / "none.sqlite"), "--dry-run"])
    assert rc == 0 and "no API key in $OPENAI_API_KEY" in capsys.readouterr().out


@pytest.mark.parametrize("flag, value, says", [("--temperature", "nan", "finite"), ("--temperature", "3", "between"),
                                               ("--max-tokens", "0", "between")])
def test_bad_sampling_options(server, tmp_path, capsys, flag, value, says):
    runs = runs_tree(tmp_path, [row(1, "a")])
    assert judge(server, tmp_path, runs, flag, value) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and flag in err[0] and says in err[0] and server.requests == 0

"""`memscope judge` against a real OpenAI-compatible server on 127.0.0.1 (tests/judge_server.py):
scores written, failures recorded, retries counted server-side, the cache, resume after SIGKILL,
panels, and the API key never written anywhere."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scorer.cli import main
from scorer.errors import DataError, UserError
from scorer.judge.cache import JudgeCache, make_key
from scorer.judge.client import public_url, is_loopback, resolve_endpoint, retry_after
from scorer.judge.parse import ReplyError, parse_reply
from scorer.judge.prompt import LEVELS, load_prompt
from scorer.load.runs import load_runs
from scorer.metrics.panel import panel_agreement
from tests.builders.runs import write_mini_run
from tests.judge_server import JudgeServer
from tests.paths import REPO

KEY = "sk-memscope-TEST-7f3a9c1e-do-not-leak"
FAST = ["--timeout", "0.5", "--backoff", "0.01", "--max-retries", "2"]
L5 = LEVELS[5]


@pytest.fixture
def server():
    with JudgeServer(hang_seconds=2.0) as s:
        yield s


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def row(idx: int, pred: str, judge=None, question=None, gt=None, mode="open", **extra) -> dict:
    r = {"idx": idx, "mode": mode, "question": question or f"What is thing {idx}?", "gt": gt or f"gold {idx}",
         "pred": pred, "judge": judge, "judge_reasoning": None if judge is None else "upstream reason"}
    r.update(extra)
    return r


def runs_tree(root: Path, rows: list[dict], mcq_rows: list[dict] | None = None) -> Path:
    write_mini_run(root / "runs" / "Mini_Task" / "20240101_000000_gpt-5.4-mini_semantic_rag__multimodal", "open", rows)
    if mcq_rows:
        write_mini_run(root / "runs" / "Mini_Task" / "20240101_000001_gpt-5.4-mini_semantic_rag__multimodal", "mcq", mcq_rows)
    return root / "runs"


def judge(server, runs, out, cache, *extra) -> int:
    return main(["judge", "--runs", str(runs), "--model", "judge-a", "--base-url", server.url,
                 "--out", str(out), "--cache", str(cache), *FAST, *extra])


def out_rows(out: Path) -> dict[int, dict]:
    rows = {}
    for f in sorted(out.rglob("predictions.jsonl")):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            if r["mode"] == "open":
                rows[r["idx"]] = r
    return rows


# --------------------------------------------------------------------------------------------
# Units: reply parsing, prompt, endpoint, cache


@pytest.mark.parametrize("text, score", [
    ('{"score": 0.75, "reasoning": "close"}', 0.75),
    ('Sure. Here it is: {"reasoning": "ok", "score": 1} -- done', 1.0),
    ('```json\n{"score": "0.25", "reasoning": "vague"}\n```', 0.25),
    ('{"result": {"score": 0.5, "reasoning": "half"}}', 0.5),
    ('{"note": "no score here"} then {"Score": 0, "reasoning": "wrong"}', 0.0),
    ("Reasoning: the colour is wrong.\nScore: 0", 0.0),
    ('"score": 0.75 and the JSON was cut', 0.75),
])
def test_parse_accepts_tolerable_replies(text, score):
    assert parse_reply(text, L5).score == score


def test_parse_keeps_reasoning():
    assert parse_reply('x {"score": 1, "reasoning": "same entity"} y', L5).reasoning == "same entity"


@pytest.mark.parametrize("text, why", [
    ('{"score": 0.3, "reasoning": "between"}', "not one of the levels"),
    ('{"score": 7, "reasoning": "out of ten"}', "not one of the levels"),
    ('{"score": "high"}', "not a number"),
    ('{"score": true}', "not a number"),
    ("I think it is mostly right.", "no JSON object"),
    ("", "empty"),
    ("score: 0.6", "not one of the levels"),
])
def test_parse_rejects(text, why):
    with pytest.raises(ReplyError, match=why):
        parse_reply(text, L5)


def test_parse_three_levels_rejects_quarter():
    with pytest.raises(ReplyError):
        parse_reply('{"score": 0.25}', LEVELS[3])
    assert parse_reply('{"score": 0.5}', LEVELS[3]).score == 0.5


def test_prompt_fills_once_and_hashes(tmp_path):
    p = load_prompt(None, 5)
    text = p.render("Q?", "blue", "it says {{ground_truth}} here")
    assert "Assistant Answer: it says {{ground_truth}} here" in text  # not expanded
    assert "Reference Answer: blue" in text and "{0, 0.25, 0.5, 0.75, 1}" in text
    assert "{0, 0.5, 1}" in load_prompt(None, 3).template and load_prompt(None, 3).sha256 != p.sha256
    f = tmp_path / "t.txt"
    f.write_text("Q={{question}} G={{ ground_truth }} A={{model_output}}")
    user = load_prompt(f, 5)
    assert user.render("q", "g", "a") == "Q=q G=g A=a"
    assert user.source == str(f) and len(user.sha256) == 64
    f.write_text("G={{ground_truth}} A={{model_output}} X={{answer}}")
    with pytest.raises(DataError, match="unknown placeholder"):
        load_prompt(f, 5)
    f.write_text("G={{ground_truth}}")
    with pytest.raises(DataError, match="model_output"):
        load_prompt(f, 5)


def test_endpoint_url_key_and_loopback(monkeypatch):
    assert public_url("https://user:pw@API.example.com:8443/v1/?key=abc#x") == "https://api.example.com:8443/v1"
    assert is_loopback("http://127.0.0.1:9/v1") and is_loopback("http://localhost/v1") and is_loopback("http://[::1]:8/v1")
    assert not is_loopback("https://api.openai.com/v1")
    monkeypatch.delenv("OPENAI_API_KEY")
    assert resolve_endpoint("http://127.0.0.1:1/v1", None).api_key  # a dummy key for a local server
    with pytest.raises(UserError, match=r"\$OPENAI_API_KEY"):
        resolve_endpoint("https://judge.example.com/v1", None)
    monkeypatch.setenv("MY_JUDGE_KEY", KEY)
    ep = resolve_endpoint("https://judge.example.com/v1", "MY_JUDGE_KEY")
    assert ep.api_key == KEY and KEY not in repr(ep)


def test_retry_after_forms():
    assert retry_after({"retry-after": "2"}) == 2.0
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    assert 25 < retry_after({"retry-after": date}) <= 31
    assert retry_after({"retry-after": "soon"}) is None and retry_after({}) is None


def test_cache_key_and_roundtrip(tmp_path):
    base = ("m", "http://h/v1", "sha", L5, "q", "g", "p")
    keys = {make_key(*base)}
    for i in range(len(base)):
        changed = list(base)
        changed[i] = LEVELS[3] if i == 3 else base[i] + "x"
        keys.add(make_key(*changed))
    assert len(keys) == len(base) + 1  # every component changes the key
    with JudgeCache(tmp_path / "c.sqlite") as c:
        c.put(make_key(*base), "m", "http://h/v1", "sha", 0.75, "why", 10, 2)
        got = c.get_many([make_key(*base), "absent"])
        assert list(got) == [make_key(*base)] and got[make_key(*base)].score == 0.75
    db = sqlite3.connect(tmp_path / "c.sqlite")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_cache_bulk_lookup_paths_agree(tmp_path):
    """A big lookup takes one filtered pass over the table; it must find what key probes find."""
    with JudgeCache(tmp_path / "c.sqlite") as c:
        mine = [make_key("m", "u", "s", L5, "q", "g", str(i)) for i in range(1500)]
        other = [make_key("other", "u", "s", L5, "q", "g", str(i)) for i in range(300)]
        c.put_many([(k, "m", "u", "s", (i % 5) / 4, f"r{i}", 1, 1) for i, k in enumerate(mine)])
        c.put_many([(k, "other", "u", "s", 0.0, "x", 1, 1) for k in other])
        wanted = mine[:1200] + other[:10] + ["absent"]
        probed = c.get_many(wanted)
        scanned = c.get_many(wanted, judge=("m", "u", "s"))
        assert len(probed) == 1210 and probed == {**scanned, **{k: probed[k] for k in other[:10]}}
        assert set(scanned) == set(mine[:1200])  # the pass is limited to this judge's rows


# --------------------------------------------------------------------------------------------
# Against the server


SCRIPTED = [  # idx, script, scripted score, expected judge (None = failed), expected requests
    (1, "ok", 0.75, 0.75, 1),
    (2, "prose", 0.25, 0.25, 1),
    (3, "fenced", 1, 1.0, 1),
    (4, "malformed", 1, None, 3),
    (5, "badscore", 1, None, 3),
    (6, "429@1,ok", 0.5, 0.5, 2),
    (7, "500,500,ok", 0, 0.0, 3),
    (8, "hang,ok", 0.75, 0.75, 2),
    (9, "drop,ok", 0.5, 0.5, 2),
    (10, "500", 1, None, 3),
    (11, "hang", 1, None, 3),
    (12, "garbage,ok", 0.25, 0.25, 2),
]


def scripted_rows() -> list[dict]:
    rows = [row(i, f"answer {i} [[script:{s}]] [[score:{sc}]]") for i, s, sc, _, _ in SCRIPTED]
    rows.append(row(20, "already judged [[script:500]]", judge=0.5, judge_model="judge-a"))  # this judge's: never asked
    rows.append(row(21, "answer 1 [[script:ok]] [[score:0.75]]", question="What is thing 1?", gt="gold 1"))  # = row 1
    return rows


def test_failure_injection_scores_retries_and_failures(server, tmp_path, capsys):
    runs = runs_tree(tmp_path, scripted_rows(), mcq_rows=[row(1, "B", mode="mcq", choice="B")])
    rc = judge(server, runs, tmp_path / "out", tmp_path / "cache.sqlite", "--concurrency", "4")
    assert rc == 1  # some rows failed
    got = out_rows(tmp_path / "out")
    for idx, script, _, expected, n_requests in SCRIPTED:
        r = got[idx]
        assert r["judge"] == expected, (idx, r)
        assert len(server.requests_for(f"[[script:{script}]]")) == n_requests, script
        if expected is None:
            assert r["judge_failed"] and r["judge_reasoning"] is None
        else:
            assert "judge_failed" not in r and r["judge_model"] == "judge-a" and r["judge_reasoning"]
    assert "unusable reply" in got[4]["judge_failed"] and "not one of the levels" in got[5]["judge_failed"]
    assert "HTTP 500" in got[10]["judge_failed"] and "no answer within" in got[11]["judge_failed"]
    # row 20 kept its upstream score untouched; row 21 shares row 1's prompt: one request for both
    assert got[20]["judge"] == 0.5 and "judge_previous" not in got[20] and not server.requests_for("already judged")
    assert got[21]["judge"] == 0.75
    # Retry-After: 1 was honoured up to --timeout 0.5, although the backoff is 10 ms
    t = [r.at for r in server.requests_for("[[script:429@1,ok]]")]
    assert 0.45 <= t[1] - t[0] < 0.95
    assert all(r.temperature == 0 for r in server.log)
    assert all(r.authorization == f"Bearer {KEY}" for r in server.log)
    summary = json.loads((tmp_path / "out" / "judge_summary.json").read_text())
    assert summary["usage"]["requests"] == server.requests == sum(n for *_, n in SCRIPTED)
    assert summary["usage"]["retries"] == sum(n - 1 for *_, n in SCRIPTED)
    assert sorted(f["idx"] for f in summary["failures"]) == [4, 5, 10, 11]
    err = capsys.readouterr().err
    assert "4 prompt(s) (4 rows) could not be judged" in err and "predictions.jsonl:4:" in err
    # the MCQ run is copied unchanged
    mcq = next(f for f in (tmp_path / "out").rglob("predictions.jsonl") if "000001" in str(f))
    assert json.loads(mcq.read_text()) == row(1, "B", mode="mcq", choice="B")
    cfg = json.loads((mcq.parent / "config.json").read_text())
    assert cfg["judge"]["model"] == "judge-a" and cfg["judge"]["base_url"] == server.url


def test_retries_count_matches_server(server, tmp_path):
    """Only retryable outcomes are retried: total requests = prompts + retries, per the server."""
    runs = runs_tree(tmp_path, [row(1, "a [[script:500,429,ok]]"), row(2, "b [[script:drop,drop,drop]]")])
    assert judge(server, runs, tmp_path / "out", tmp_path / "c.sqlite") == 1
    summary = json.loads((tmp_path / "out" / "judge_summary.json").read_text())
    assert server.requests == 6 == summary["usage"]["requests"]
    assert summary["usage"]["retries"] == 4
    assert summary["usage"]["outcomes"] == {"429": 1, "500": 1, "connection": 3, "ok": 1}


def test_second_run_is_all_cache(server, tmp_path, capsys):
    runs = runs_tree(tmp_path, [row(i, f"answer {i}") for i in range(1, 21)])
    assert judge(server, runs, tmp_path / "out", tmp_path / "c.sqlite") == 0
    first = out_rows(tmp_path / "out")
    assert server.requests == 20 and all(r["judge"] in L5 for r in first.values())
    server.reset()
    capsys.readouterr()
    assert judge(server, runs, tmp_path / "out", tmp_path / "c.sqlite") == 0
    assert server.requests == 0
    assert out_rows(tmp_path / "out") == first
    assert "20 from the cache, 0 judged now" in capsys.readouterr().out
    # another model is another judgment
    rc = main(["judge", "--runs", str(runs), "--model", "judge-z", "--base-url", server.url,
               "--out", str(tmp_path / "z"), "--cache", str(tmp_path / "c.sqlite"), *FAST])
    assert rc == 0 and server.requests == 20


def test_key_never_written_or_printed(server, tmp_path, capsys):
    rows = [row(1, "fine"), row(2, "x [[script:500]]"), row(3, "y [[script:malformed]]"), row(4, "z [[script:prose]]")]
    runs = runs_tree(tmp_path, rows)
    judge(server, runs, tmp_path / "out", tmp_path / "c.sqlite")
    main(["judge", "--runs", str(runs), "--model", "judge-a", "--model", "judge-b", "--base-url", server.url,
          "--out", str(tmp_path / "panel"), "--cache", str(tmp_path / "c.sqlite"), *FAST])
    assert server.log and all(KEY in r.authorization for r in server.log)  # the key was really used
    files = [f for f in tmp_path.rglob("*") if f.is_file() and "runs" not in f.parts]
    assert any(f.name.startswith("c.sqlite") for f in files) and len(files) > 6
    for f in files:
        assert KEY.encode() not in f.read_bytes(), f
    captured = capsys.readouterr()
    assert KEY not in captured.out and KEY not in captured.err


def test_dry_run_counts_without_asking(server, tmp_path, capsys):
    runs = runs_tree(tmp_path, [row(i, f"answer {i}") for i in range(1, 11)] + [row(11, "answer 1", question="What is thing 1?", gt="gold 1")])
    cache = tmp_path / "c.sqlite"
    assert judge(server, runs, tmp_path / "out", cache, "--limit", "4") == 0  # 4 prompts now cached
    server.reset()
    capsys.readouterr()
    rc = main(["judge", "--runs", str(runs), "--model", "judge-a", "--base-url", server.url, "--cache", str(cache),
               "--dry-run"])
    text = capsys.readouterr().out
    assert rc == 0 and server.requests == 0
    assert "11 to judge" in text and "10 distinct prompts: 4 in the cache, 6 calls to make" in text
    assert "4 characters per prompt token" in text
    assert not (tmp_path / "none.sqlite").exists()
    main(["judge", "--runs", str(runs), "--model", "judge-a", "--base-url", server.url,
          "--cache", str(tmp_path / "none.sqlite"), "--dry-run"])
    assert not (tmp_path / "none.sqlite").exists()  # a dry run creates nothing


def test_limit_force_and_previous_values(server, tmp_path):
    rows = [row(1, "a [[score:1]]", judge=0.0, judge_model="judge-a"), row(2, "b [[score:1]]"),
            row(3, "c [[score:1]]"), row(4, "d [[score:1]]")]
    runs = runs_tree(tmp_path, rows)
    assert judge(server, runs, tmp_path / "o1", tmp_path / "c.sqlite", "--limit", "2") == 0
    got = out_rows(tmp_path / "o1")
    assert [got[i]["judge"] for i in (1, 2, 3, 4)] == [0.0, 1.0, 1.0, None]  # 1 kept, 2–3 judged, 4 past the limit
    assert judge(server, runs, tmp_path / "o2", tmp_path / "c.sqlite", "--force") == 0
    got = out_rows(tmp_path / "o2")
    assert [got[i]["judge"] for i in (1, 2, 3, 4)] == [1.0] * 4
    assert got[1]["judge_previous"] == 0.0 and got[1]["judge_reasoning_previous"] == "upstream reason"
    assert "judge_previous" not in got[2]
    cfg = json.loads(next((tmp_path / "o2").rglob("config.json")).read_text())
    assert cfg["judge"]["rows"] == {"judged": 4, "failed": 0, "kept": 0}
    assert cfg["judge"]["prompt_sha256"] == load_prompt(None, 5).sha256


def test_scores_from_another_or_unknown_judge_are_rejudged(server, tmp_path):
    rows = [row(1, "a [[score:1]]", judge=0.0),  # upstream: its judge is not named
            row(2, "b [[score:1]]", judge=0.5, judge_model="judge-b"),
            row(3, "c [[score:1]]", judge=0.25, judge_model="judge-a")]
    runs = runs_tree(tmp_path, rows)
    assert judge(server, runs, tmp_path / "o", tmp_path / "c.sqlite") == 0
    got = out_rows(tmp_path / "o")
    assert [got[i]["judge"] for i in (1, 2, 3)] == [1.0, 1.0, 0.25]
    assert got[1]["judge_previous"] == 0.0 and got[2]["judge_previous"] == 0.5
    assert not server.requests_for("c [[score:1]]")


def test_in_place_and_refusals(server, tmp_path, capsys):
    runs = runs_tree(tmp_path, [row(1, "a [[score:0.25]]")])
    folder = next(runs.rglob("predictions.jsonl")).parent
    for out in (runs, runs / "Mini_Task", folder):
        assert judge(server, runs, out, tmp_path / "c.sqlite") == 2
        assert "--in-place" in capsys.readouterr().err
    solo = write_mini_run(tmp_path / "solo", "open", [row(1, "a")])
    assert judge(server, solo, tmp_path, tmp_path / "c.sqlite") == 2  # OUT/solo is the input folder
    assert "would overwrite the input run folder" in capsys.readouterr().err
    assert server.requests == 0
    rc = main(["judge", "--runs", str(runs), "--model", "judge-a", "--base-url", server.url, "--in-place",
               "--cache", str(tmp_path / "c.sqlite"), *FAST])
    assert rc == 0 and out_rows(runs)[1]["judge"] == 0.25
    assert json.loads((folder / "config.json").read_text())["judge"]["model"] == "judge-a"
    assert not list(folder.glob("*.tmp"))
    rc = main(["judge", "--runs", str(runs), "--model", "a", "--model", "b", "--base-url", server.url, "--in-place"])
    assert rc == 2 and "panel" in capsys.readouterr().err


def test_refused_key_stops_with_one_line(server, tmp_path, capsys):
    runs = runs_tree(tmp_path, [row(i, f"a{i} [[script:401]]") for i in range(1, 30)])
    rc = judge(server, runs, tmp_path / "out", tmp_path / "c.sqlite", "--concurrency", "2")
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "401" in err[0] and "OPENAI_API_KEY" in err[0] and KEY not in err[0]
    assert server.requests < 10  # stopped (a few in flight may land), not 29 rows × retries


def test_missing_key_for_remote_url(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY")
    runs = runs_tree(tmp_path, [row(1, "a")])
    rc = main(["judge", "--runs", str(runs), "--model", "m", "--base-url", "https://judge.example.com/v1",
               "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "OPENAI_API_KEY" in err[0]


def test_custom_prompt_three_levels(server, tmp_path):
    tpl = tmp_path / "rubric.txt"
    tpl.write_text("MY RUBRIC\nQ: {{question}}\nGOLD: {{ground_truth}}\nANSWER: {{model_output}}\n")
    runs = runs_tree(tmp_path, [row(1, "a [[score:0.5]]"), row(2, "b [[score:0.25]]")])
    rc = judge(server, runs, tmp_path / "out", tmp_path / "c.sqlite", "--prompt", str(tpl), "--levels", "3")
    assert rc == 1
    got = out_rows(tmp_path / "out")
    assert got[1]["judge"] == 0.5 and "not one of the levels (0, 0.5, 1)" in got[2]["judge_failed"]
    assert "MY RUBRIC\nQ: What is thing 1?\nGOLD: gold 1\nANSWER: a [[score:0.5]]\n" in [r.prompt for r in server.log]
    cfg = json.loads(next((tmp_path / "out").rglob("config.json")).read_text())["judge"]
    assert cfg["levels"] == [0.0, 0.5, 1.0] and cfg["prompt"] == str(tpl)


def test_panel_trees_agreement_and_median(tmp_path):
    def score_fn(model, prompt):  # judge-b one level up now and then, judge-c a copy of judge-a
        h = hashlib.sha256(prompt.encode()).digest()
        base = L5[h[0] % 5]
        return min(1.0, base + 0.25) if model == "judge-b" and h[1] % 3 == 0 else base

    runs = runs_tree(tmp_path, [row(i, f"answer {i}") for i in range(1, 31)])
    with JudgeServer(score_fn=score_fn) as srv:
        rc = main(["judge", "--runs", str(runs), "--model", "judge-a", "--model", "judge-b", "--model", "judge-c",
                   "--base-url", srv.url, "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "c.sqlite"), *FAST])
        assert rc == 0 and srv.requests == 90
    scores = {}
    for m in ("judge-a", "judge-b", "judge-c"):
        (run,) = load_runs(tmp_path / "out" / m)  # each judge's tree is an ordinary run
        assert run.backbone == "gpt-5.4-mini" and run.config["judge"]["model"] == m
        scores[m] = [p.judge for p in run.predictions]
    assert scores["judge-a"] == scores["judge-c"] != scores["judge-b"]
    panel = json.loads((tmp_path / "out" / "panel.json").read_text())
    ref = panel_agreement(scores)
    by_pair = {(p["judge_a"], p["judge_b"]): p for p in panel["pairs"]}
    assert by_pair[("judge-a", "judge-c")]["kappa_quadratic"] == 1.0 and by_pair[("judge-a", "judge-c")]["exact"] == 1.0
    ab = by_pair[("judge-a", "judge-b")]
    assert ab["kappa_quadratic"] == pytest.approx(ref.pairs[0].kappa.kappa, abs=1e-6) and ab["n"] == 30
    assert ab["exact"] == pytest.approx(ref.pairs[0].exact.value, abs=1e-6)
    assert 0 < ab["exact"] < 1 and ab["same_band"] == pytest.approx(ref.pairs[0].same_band.value, abs=1e-6)
    assert ab["spearman"] == pytest.approx(ref.pairs[0].spearman.rho, abs=1e-6)
    assert panel["alpha_ordinal"]["value"] == pytest.approx(ref.alpha.alpha, abs=1e-6)
    (med,) = load_runs(tmp_path / "out" / "panel-median")
    for i, p in enumerate(med.predictions):  # median of three = judge-a here (a = c)
        assert p.judge == scores["judge-a"][i] and p.raw["judge_panel"]["judge-b"] == scores["judge-b"][i]


def _cached_keys(cache: Path) -> set[str]:
    db = sqlite3.connect(cache)
    try:
        return {k for (k,) in db.execute("SELECT key FROM judgments")}
    except sqlite3.OperationalError:  # the judge has not created its table yet
        return set()
    finally:
        db.close()


def test_resume_after_sigkill(tmp_path, capsys):
    n = 40
    runs = runs_tree(tmp_path, [row(i, f"answer {i}") for i in range(1, n + 1)])
    cache = tmp_path / "c.sqlite"
    env = {**os.environ, "OPENAI_API_KEY": KEY, "PYTHONPATH": str(REPO)}
    with JudgeServer(latency=0.05) as srv:
        args = [sys.executable, "-m", "scorer.cli", "judge", "--runs", str(runs), "--model", "judge-a",
                "--base-url", srv.url, "--out", str(tmp_path / "out"), "--cache", str(cache), "--concurrency", "2"]
        proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.time() + 20
            while time.time() < deadline and proc.poll() is None:
                if cache.exists() and len(_cached_keys(cache)) >= 8:
                    break
                time.sleep(0.02)
            proc.send_signal(signal.SIGKILL)
            out, err = proc.communicate(timeout=10)
        finally:
            if proc.poll() is None:  # a failed assertion above must not leave it running
                proc.kill()
                proc.wait()
        cached = _cached_keys(cache)
        assert 8 <= len(cached) < n, "killed too late to test resuming"
        assert not (tmp_path / "out").exists()  # killed before writing
        cached_preds = {p for p in (f"answer {i}" for i in range(1, n + 1))
                        if make_key("judge-a", srv.url, load_prompt(None).sha256, L5,
                                    f"What is thing {p.split()[1]}?", f"gold {p.split()[1]}", p) in cached}
        assert len(cached_preds) == len(cached)
        srv.reset()
        assert main(args[3:]) == 0  # the rerun, in this process (the key comes from the env fixture)
        asked = {r.prompt.split("Assistant Answer: ")[1].split("\n")[0] for r in srv.log}
        assert not asked & cached_preds  # nothing already judged was asked again
        assert len(asked) == srv.requests == n - len(cached)
        captured = capsys.readouterr()
        for text in (out.decode(), err.decode(), captured.out, captured.err):
            assert KEY not in text
    assert len(out_rows(tmp_path / "out")) == n and all(r["judge"] is not None for r in out_rows(tmp_path / "out").values())


def test_a_server_nobody_listens_on_stops_the_run_at_once(tmp_path, capsys):
    """A --base-url where nothing listens (a real closed port on loopback): the run stops after the
    attempts one row may make, with one line, instead of every row spending its retries and
    backoff (minutes for a few hundred rows); nothing is written as judged."""
    import socket
    import time

    with socket.socket() as s:  # a port that was free a moment ago, with nothing listening now
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    runs = runs_tree(tmp_path, [row(i, f"a{i}") for i in range(1, 120)])
    t0 = time.monotonic()
    rc = main(["judge", "--runs", str(runs), "--model", "judge-a", "--base-url", f"http://127.0.0.1:{port}/v1",
               "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "c.sqlite"), "--timeout", "2",
               "--backoff", "1", "--max-retries", "4", "--concurrency", "4"])
    took = time.monotonic() - t0
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and f"cannot reach http://127.0.0.1:{port}/v1" in err[0], err
    assert KEY not in err[0]
    assert took < 10, took  # 119 rows × 4 retries with backoff 1, 2, 4, 8 s would take minutes
    assert not any(r.get("judge") is not None for r in out_rows(tmp_path / "out").values())


def test_a_server_that_drops_connections_is_still_retried(server, tmp_path):
    """Only a server that was never reached stops the run: connections it closes are retried."""
    runs = runs_tree(tmp_path, [row(i, f"a{i} [[script:drop,drop,ok]]") for i in range(1, 6)])
    assert judge(server, runs, tmp_path / "out", tmp_path / "c.sqlite") == 0
    assert all(r["judge"] is not None for r in out_rows(tmp_path / "out").values())

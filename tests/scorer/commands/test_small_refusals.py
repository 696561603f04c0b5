"""Options that named nothing or something unsafe went through with exit 0: a study that does not
exist, a `--media-url` that is not a path or an http(s) URL, the same method twice, a judge cache in
a folder that does not exist (it was made). Each is one line and a non-zero exit now."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorer.cli import main
from scorer.store import Store
from tests.builders.benchmarks import write_mini_bench
from tests.scorer.judge.test_judge import row, runs_tree


def _one_line(capsys, rc: int, *needles: str) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert rc in (1, 2), (rc, err)
    assert len(err) == 1 and all(n in err[0] for n in needles), err
    return err[0]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "a.db"
    with Store(path) as store:
        store.note("ann1", "Mini_Task:1", "a note", study="real")
    return path


def test_annotations_export_of_a_study_that_is_not_there(db, capsys):
    _one_line(capsys, main(["annotations", "export", "--db", str(db), "--study", "nope"]), "nope", "no study")
    assert main(["annotations", "export", "--db", str(db), "--study", "real"]) == 0  # events of it: exported


@pytest.mark.parametrize("prefix", ["javascript:alert(1)//", "data:text/html,x", "file:///etc/", "data/local",
                                    "/data/local-files/?d=\x1b[2J", "/data/ x", "//evil.example/"])
def test_media_url_must_be_a_path_or_http(db, capsys, prefix):
    rc = main(["annotations", "export", "--db", str(db), "--format", "labelstudio", "--media-url", prefix])
    line = _one_line(capsys, rc, "--media-url")
    assert "\x1b" not in line


@pytest.mark.parametrize("prefix", ["/data/local-files/?d=", "https://example.org/media/", "HTTP://host/m/",
                                    "s3://bucket/memeye/", "gs://bucket/m/", "azure-blob://container/m/"])
def test_media_url_good_prefixes_pass(db, capsys, prefix):
    assert main(["annotations", "export", "--db", str(db), "--format", "labelstudio", "--media-url", prefix]) == 0


def test_study_new_refuses_a_method_twice(tmp_path, capsys):
    bench = write_mini_bench(tmp_path / "bench")
    runs = runs_tree(tmp_path, [row(1, "a", judge=0.5)])
    rc = main(["study", "new", str(bench), "--db", str(tmp_path / "s.db"), "--kind", "agreement", "--name", "ag",
               "--runs", str(runs), "--per-cell", "1", "--methods", "semantic_rag,semantic_rag"])
    _one_line(capsys, rc, "--methods", "'semantic_rag'", "more than once")
    assert not (tmp_path / "s.db").exists()  # a study that could not be made leaves no empty database


def test_a_failed_study_new_keeps_an_existing_database(tmp_path, capsys):
    bench = write_mini_bench(tmp_path / "bench")
    runs = runs_tree(tmp_path, [row(1, "a", judge=0.5)])
    db = tmp_path / "s.db"
    with Store(db) as store:
        store.note("ann1", "Mini_Task:1", "keep")
    rc = main(["study", "new", str(bench), "--db", str(db), "--kind", "agreement", "--name", "ag",
               "--runs", str(runs), "--per-cell", "1", "--methods", "semantic_rag,semantic_rag"])
    assert rc in (1, 2)
    with Store(db, create=False) as store:
        assert store.count() == 1


def test_judge_cache_in_a_missing_folder_is_not_made(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cache")
    runs = runs_tree(tmp_path, [row(1, "a")])
    cache = tmp_path / "nowhere" / "deeper" / "c.sqlite"
    rc = main(["judge", "--runs", str(runs), "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
               "--out", str(tmp_path / "out"), "--cache", str(cache)])
    _one_line(capsys, rc, "--cache", "does not exist")
    assert not (tmp_path / "nowhere").exists()

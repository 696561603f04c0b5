"""Retrieval replay with the real all-MiniLM-L6-v2 model (the embed extra), its cache and its run files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scorer.cli import main
from scorer.embed.cache import EmbeddingCache
from scorer.load.memeye import load_benchmark
from scorer.load.runs import load_runs
from scorer.retrieve import RetrievalConfig, rank, run_retrieval
from scorer.search import TextSearch, documents, make_searcher
from tests.paths import LOCOMO

pytest.importorskip("sentence_transformers", reason="the embed extra is not installed")
from scorer.embed.model import embed_texts, load_encoder  # noqa: E402
from tests.builders.benchmarks import MINI_TASK, write_mini_bench


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> EmbeddingCache:
    return EmbeddingCache(tmp_path_factory.mktemp("emb") / "cache.sqlite")


def test_paraphrase_ranks_above_unrelated(cache: EmbeddingCache) -> None:
    vecs, counts = embed_texts([
        "Where did I leave my car keys?",
        "I put the car keys on the kitchen counter.",
        "The stock market closed higher on Friday.",
        "My keys for the car are lying by the fridge.",
    ], cache)
    assert counts["computed"] == 4
    order, scores = rank(vecs[0], vecs[1:])
    assert set(order[:2].tolist()) == {0, 2}  # both paraphrases above the unrelated sentence
    assert scores[1] < 0.3 < min(scores[0], scores[2])
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)


def test_ties_rank_earlier_round_first() -> None:
    rounds = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]], dtype=np.float32)
    order, scores = rank(np.array([1.0, 0.0], dtype=np.float32), rounds)
    assert order.tolist() == [1, 3, 0, 2]
    assert scores.tolist() == [0.0, 1.0, 0.0, 1.0]


def test_cache_hit_needs_no_model(cache: EmbeddingCache) -> None:
    texts = ["a sentence only this test embeds", "and another one"]
    embed_texts(texts, cache)
    load_encoder.cache_clear()
    again, counts = embed_texts(texts, cache)
    assert counts == {"hits": 2, "computed": 0}
    assert load_encoder.cache_info().misses == 0  # the model was never loaded
    first, _ = embed_texts(texts[:1], cache)
    assert np.array_equal(first[0], again[0])


def test_retrieval_run_on_benchmark(tmp_path: Path, cache: EmbeddingCache) -> None:
    def mutate(d: dict) -> None:
        # an empty round (no text at all is no document) and an item whose clue does not exist
        d["multi_session_dialogues"][1]["dialogues"].append({"round": "D2:3", "user": "", "assistant": ""})
        d["human-annotated QAs"][1]["clue"] = ["D9:9"]

    root = write_mini_bench(tmp_path / "b", mutate=mutate)
    bench = load_benchmark(root)
    totals = run_retrieval(bench, tmp_path / "runs", cache, RetrievalConfig(top_k=2, pool=10), stamp="20260101_000000")
    assert totals["items"] == 4 and totals["folders"] == 2 and totals["rounds"] == 5
    runs = load_runs(tmp_path / "runs")
    assert {r.mode for r in runs} == {"mcq", "open"}
    assert all(r.key == "retrieval-only/semantic_rag_minilm" and r.modality == "text" for r in runs)
    opn = next(r for r in runs if r.mode == "open")
    by_idx = {p.idx: p for p in opn.predictions}
    wall = by_idx[1]
    ids = [r.round_id for r in wall.retrieved]
    assert "D2:3" not in ids and len(ids) == 4  # the empty round is not a candidate
    assert set(ids[:2]) == {"D1:1", "D2:2"}  # the two wall rounds come first
    assert wall.delivered == tuple(ids[:2])
    assert [r.rank for r in wall.retrieved] == [1, 2, 3, 4]
    scores = [r.score for r in wall.retrieved]
    assert scores == sorted(scores, reverse=True)
    ages = {r.round_id: r.recency_age for r in wall.retrieved}
    assert ages == {"D1:1": 5, "D1:2": 4, "D2:1": 3, "D2:2": 2}  # 5 rounds; the question comes after them
    assert wall.pred == "" and wall.raw["retrieval_only"] is True
    mcq = next(r for r in runs if r.mode == "mcq")
    missing_clue = next(p for p in mcq.predictions if p.idx == 2)
    assert missing_clue.raw["clue_rounds"] == ["D9:9"] and len(missing_clue.retrieved) == 4


def test_cli_second_run_is_all_cache(tmp_path: Path, capsys) -> None:
    root = write_mini_bench(tmp_path / "b")
    args = ["retrieve", str(root), "--cache", str(tmp_path / "c.sqlite"), "--stamp", "20260101_000000"]
    assert main(args + ["--out", str(tmp_path / "r1")]) == 0
    assert "from cache 0" in capsys.readouterr().out
    assert main(args + ["--out", str(tmp_path / "r2")]) == 0
    assert "texts embedded 0," in capsys.readouterr().out
    a = sorted(p.relative_to(tmp_path / "r1") for p in (tmp_path / "r1").rglob("*.jsonl"))
    assert a == sorted(p.relative_to(tmp_path / "r2") for p in (tmp_path / "r2").rglob("*.jsonl"))
    for rel in a:
        assert (tmp_path / "r1" / rel).read_bytes() == (tmp_path / "r2" / rel).read_bytes()


def test_cli_errors_are_one_line(tmp_path: Path, capsys) -> None:
    root = write_mini_bench(tmp_path / "b")
    assert main(["retrieve", str(root), "--out", str(tmp_path / "o"), "--model", "no-such-model",
                 "--cache", str(tmp_path / "c.sqlite")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no-such-model" in err[0]
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    assert main(["retrieve", str(root), "--out", str(tmp_path / "o"), "--cache", str(bad)]) == 2
    assert "bad.sqlite" in capsys.readouterr().err


def test_semantic_search_finds_by_meaning(tmp_path: Path, cache: EmbeddingCache) -> None:
    bench = load_benchmark(write_mini_bench(tmp_path / "b"))
    s = make_searcher(bench, semantic=True, cache_path=cache.path)
    assert s.semantic
    top = s.search("doorbell ringing sound", limit=3, kind="round")
    assert top[0].ref == "D2:1"
    t = TextSearch(documents(bench))
    assert [h.ref for h in t.search("hall green")] == ["D2:2", f"{MINI_TASK}:1"]
    assert t.search("doorbell ringing sound") == []  # plain text needs every word


def test_semantic_search_built_in_one_thread_answers_in_others(tmp_path: Path) -> None:
    """The app builds its search index in one worker thread and runs each query in another (Textual's
    thread pool): the index's embedding cache must answer there, and several queries at once."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    bench = load_benchmark(write_mini_bench(tmp_path / "b"))
    built: list = []
    t = threading.Thread(target=lambda: built.append(make_searcher(bench, semantic=True,
                                                                   cache_path=tmp_path / "c.sqlite")))
    t.start()
    t.join()
    searcher = built[0]
    with ThreadPoolExecutor(4) as pool:  # new threads, none of them the one that built the index
        tops = list(pool.map(lambda q: searcher.search(q, limit=3, kind="round")[0].ref,
                             ["doorbell ringing sound"] * 8 + ["a bell rang at the door"] * 8))
    assert tops == ["D2:1"] * 16
    assert searcher.cache.count() >= len(documents(bench)) + 2  # both queries' vectors cached too


# Texts the lean encoder (scorer/embed/bert.py) must embed as sentence-transformers does: accents,
# CJK, emoji, an empty string, and texts longer than the tokenizer file's own 128-token cut and
# than the model's 256 (sentence_bert_config.json).
AWKWARD = [
    "", "ok", "Café, naïve façade — déjà vu?", "東京で会いましょう", "party 🎉🎉 tonight!!",
    "  leading and trailing spaces  ", "word " * 150, "The hallway was painted green. " * 60,
]


def _sentence_transformers(texts: list[str]) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    from scorer.embed.model import model_dir

    st = SentenceTransformer(str(model_dir("all-MiniLM-L6-v2")), device="cpu")
    return st.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)


def test_lean_encoder_matches_sentence_transformers(tmp_path: Path) -> None:
    from scorer.embed.bert import LeanBert

    assert isinstance(load_encoder("all-MiniLM-L6-v2"), LeanBert)  # the packaged model takes the lean path
    texts = AWKWARD + [d.text for d in documents(load_benchmark(write_mini_bench(tmp_path / "b")))]
    vecs, _ = embed_texts(texts, EmbeddingCache(tmp_path / "c.sqlite"))
    ref = _sentence_transformers(texts)
    assert np.abs(vecs - ref).max() < 1e-6
    assert np.abs(vecs[6] - vecs[7]).max() > 0.1  # the long texts are not cut to the same few tokens


def test_cache_written_in_chunks_reads_back_identical(tmp_path: Path, monkeypatch) -> None:
    import scorer.embed.model as model

    monkeypatch.setattr(model, "WRITE_ROWS", 3)  # several transactions and a partial last one
    texts = [f"sentence number {i} about {'cats' if i % 2 else 'the weather'}" for i in range(10)] + ["sentence number 0 about the weather"]
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    vecs, counts = embed_texts(texts, cache, batch_size=2)  # flushed at 4 and 8 rows, then the last 2
    assert counts == {"hits": 0, "computed": 10} and cache.count() == 10
    stored = cache.get_many(model.DEFAULT_MODEL, [model.text_key(t) for t in texts])
    raw = np.zeros((10, 384), np.float32)  # what the model gives, before embed_texts re-normalises
    load_encoder().encode_into(texts[:10], raw, 2)  # the same batches, so the same bits
    assert all(np.array_equal(stored[model.text_key(t)], raw[i]) for i, t in enumerate(texts[:10]))
    load_encoder.cache_clear()
    again, counts = embed_texts(texts, EmbeddingCache(tmp_path / "c.sqlite"))
    assert counts == {"hits": 10, "computed": 0} and load_encoder.cache_info().misses == 0
    assert np.array_equal(again, vecs)


@pytest.mark.skipif(not LOCOMO.is_file(), reason="../shared/peer-data/locomo10.json is absent")
def test_locomo_cold_equals_warm_and_sentence_transformers(tmp_path: Path) -> None:
    """One real LoCoMo conversation: a cold run (every text encoded) writes the same run files as a
    warm one (every vector from the cache), and each question's top-10 is the one sentence-
    transformers' own encode gives."""
    from scorer.retrieve import _questions, task_texts

    assert main(["import", "locomo", str(LOCOMO), "--out", str(tmp_path / "bench")]) == 0
    one = tmp_path / "one"
    (one / "dialog").mkdir(parents=True)
    src = sorted((tmp_path / "bench" / "dialog").glob("*.json"))[0]  # the first conversation alone
    (one / "dialog" / src.name).write_bytes(src.read_bytes())
    bench = load_benchmark(one)
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    cold = run_retrieval(bench, tmp_path / "cold", cache, RetrievalConfig(), stamp="20260101_000000")
    warm = run_retrieval(bench, tmp_path / "warm", cache, RetrievalConfig(), stamp="20260101_000000")
    assert cold["computed"] > 500 and warm["computed"] == 0 and warm["hits"] == cold["computed"]
    files = sorted(p.relative_to(tmp_path / "cold") for p in (tmp_path / "cold").rglob("*.jsonl"))
    assert files and all((tmp_path / "cold" / f).read_bytes() == (tmp_path / "warm" / f).read_bytes() for f in files)
    ids, texts, _ = task_texts(bench.tasks[0])
    _, questions = _questions(bench.tasks[0])
    ref = _sentence_transformers(texts + questions)
    ours, _ = embed_texts(texts + questions, cache)
    for i in range(len(questions)):
        q = len(texts) + i
        assert rank(ours[q], ours[:len(texts)])[0][:10].tolist() == rank(ref[q], ref[:len(texts)])[0][:10].tolist()


def test_lean_path_only_for_folders_it_reproduces(tmp_path: Path) -> None:
    """Another pooling, a default prompt or another architecture goes to sentence-transformers."""
    import json
    import shutil

    from scorer.embed.bert import lean_config
    from scorer.embed.model import model_dir

    src = model_dir("all-MiniLM-L6-v2")
    assert lean_config(src) == {"layers": 6, "heads": 12, "eps": 1e-12, "max_len": 256, "normalize": True, "dim": 384}
    changes = {
        "1_Pooling/config.json": {"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False},
        "config_sentence_transformers.json": {"default_prompt_name": "query"},
        "config.json": {"model_type": "roberta"},
    }
    for rel, change in changes.items():
        d = tmp_path / rel.replace("/", "_")
        shutil.copytree(src, d, ignore=shutil.ignore_patterns("*.safetensors"))
        (d / "model.safetensors").symlink_to(src / "model.safetensors")
        cfg = json.loads((d / rel).read_text())
        (d / rel).write_text(json.dumps({**cfg, **change}))
        assert lean_config(d) is None, rel

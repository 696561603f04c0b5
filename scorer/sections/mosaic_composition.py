"""Report section `mosaic_composition`: what the benchmark is made of, as MOSAIC's composition
tables count it — required facts and distinct items per challenge (answerable items; overlapping,
not a partition), media references per modality × role (required / evidence, not required /
filler; scorer.metrics.mosaic), and the share of answerable items that need ≥ 2 facts and ≥ 2
modalities. An item's MCQ and open forms count once (they share the item id)."""

from __future__ import annotations

from collections.abc import Mapping

from scorer.metrics.evidence import fact_modality
from scorer.metrics.mosaic import ItemFacts, chain_shares, challenge_counts, media_counts, media_role
from scorer.model import CHAIN_CHALLENGES
from scorer.sections.base import ScoreContext, SectionResult
from scorer.sections.evidence_tables import titled
from scorer.sections.registry import name_of

NAME = name_of(__name__)
MODALITIES = ("image", "video", "audio")
TITLES = {"challenge": "Challenge", "facts": "Required facts", "items": "Distinct items", "modality": "Modality",
          "required": "Required", "evidence": "Evidence, not required", "filler": "Filler", "total": "Total",
          "measure": "Measure", "value": "Value", "count": "Items", "n": "n"}


def item_facts(ctx: ScoreContext) -> list[tuple]:
    """(task, ItemFacts) once per item id."""
    seen: set[str] = set()
    out = []
    for task in ctx.bench.tasks:
        for item in task.items:
            if item.item_id in seen:
                continue
            seen.add(item.item_id)
            facts = tuple((f.round_id, f.modality or fact_modality(task, f.round_id), f.challenge)
                          for f in item.chain if task.has_round(f.round_id))
            out.append((task, ItemFacts(item.item_id, item.answerable, facts)))
    return out


def media_refs(ctx: ScoreContext, items: list[tuple]):
    for task in ctx.bench.tasks:
        required = {r for t, it in items if t is task and it.answerable for r, _, _ in it.facts}
        sessions = {task.round(r).session_id for r in required if task.round(r) is not None}
        for s in task.sessions:
            for rd in s.rounds:
                role = media_role(rd.round_id, s.session_id, required, sessions)
                for m in rd.media:
                    yield m.kind, role


def build(ctx: ScoreContext) -> SectionResult:
    if not any(isinstance(it.raw, Mapping) and it.raw.get("chain") for t in ctx.bench.tasks for it in t.items):
        return SectionResult.absent(NAME, "no item gives a gold `chain` (the default one fact per clue round is "
                                          "not a MOSAIC composition)")
    items = item_facts(ctx)
    if not any(it.facts for _, it in items if it.answerable):
        return SectionResult.absent(NAME, "no answerable item has required facts")
    facts = [it for _, it in items]
    challenges = challenge_counts(facts, CHAIN_CHALLENGES)
    media = media_counts(media_refs(ctx, items), MODALITIES)
    shares = chain_shares(facts)
    n_unans = sum(1 for it in facts if not it.answerable)
    summary = [
        {"measure": "items", "count": len(facts), "value": None, "n": len(facts)},
        {"measure": "answerable items", "count": shares["n"], "value": None, "n": len(facts)},
        {"measure": "abstention controls (unanswerable)", "count": n_unans, "value": None, "n": len(facts)},
        {"measure": "answerable items needing ≥ 2 facts", "count": shares["two_facts"],
         "value": shares["share_two_facts"], "n": shares["n"]},
        {"measure": "answerable items needing ≥ 2 modalities", "count": shares["two_modalities"],
         "value": shares["share_two_modalities"], "n": shares["n"]},
    ]
    tables = [
        titled("challenges", "Required facts and items per challenge", challenges, ("challenge", "facts", "items"),
               f"Answerable items (n = {shares['n']}). Overlapping: an item counts under each challenge its facts "
               "carry, so the items column does not sum to the item count.", TITLES),
        titled("media", "Media references per modality and role", media,
               ("modality", "required", "evidence", "filler", "total"),
               "References (a file referenced twice counts twice). Required: in a round that is a required fact "
               "of an answerable item; evidence: another round of a session holding one; filler: the rest.",
               TITLES),
        titled("chains", "Chain composition", summary, ("measure", "count", "n", "value"),
               "Value = count / n. Facts = distinct required rounds; modalities include text.", TITLES,
               {"count": None, "value": "n"}),
    ]
    data = {"challenges": challenges, "media": media, "chains": [shares | {"unanswerable": n_unans}]}
    return SectionResult(NAME, data, tables)

"""MOSAIC's paired-diagnosis vocabulary, defined once (imports nothing: the conditions file is
checked before numpy is imported).

- CONDITIONS: the seven ladder conditions in ladder order, each with its title and the stage it
  varies against its upper neighbour (DESIGN §5 stages: write, retrieval, delivery, read).
- DROPS: the paired drops between ladder rungs, (name, title, upper condition, lower condition);
  drop = mean(score_upper − score_lower) over the answerable items both scored. The MOSAIC summary
  names perception cost, avoidable write compression, retrieval loss and delivery loss; the two
  others (text-ification, controller) close the ladder between neighbours.
- CARRIERS: the within-item carrier interventions by modality, `native` first (the pairing base).
- SMALL_STRATUM: a stratum with fewer answerable items than this is flagged as small (MOSAIC's
  video strata hold about 55 items each, and the summary puts the minimum detectable effect at
  8.9–11.2 points there).
"""

CONDITIONS: tuple[tuple[str, str, str], ...] = (
    ("gold_symbolic", "Gold symbolic facts", "read"),
    ("gold_native", "Gold native evidence", "write"),
    ("gold_generic_text", "Gold generic text", "write"),
    ("gold_structured_text", "Gold structured text", "write"),
    ("retrieved_full", "Retrieved native, full delivery", "retrieval"),
    ("retrieved_budget", "Retrieved native, production budget", "delivery"),
    ("end_to_end", "End-to-end", "read"),
)
CONDITION_NAMES: tuple[str, ...] = tuple(c for c, _, _ in CONDITIONS)
CONDITION_TITLES: dict[str, str] = {c: t for c, t, _ in CONDITIONS}
CONDITION_STAGE: dict[str, str] = {c: s for c, _, s in CONDITIONS}
STAGES: tuple[str, ...] = ("write", "retrieval", "delivery", "read")

DROPS: tuple[tuple[str, str, str, str], ...] = (
    ("perception_cost", "Perception cost", "gold_symbolic", "gold_native"),
    ("textification_cost", "Generic text-ification", "gold_native", "gold_generic_text"),
    ("avoidable_write_compression", "Avoidable write compression (structured − generic)",
     "gold_structured_text", "gold_generic_text"),
    ("retrieval_loss", "Retrieval loss", "gold_native", "retrieved_full"),
    ("delivery_loss", "Delivery loss", "retrieved_full", "retrieved_budget"),
    ("controller_loss", "End-to-end controller", "retrieved_budget", "end_to_end"),
)

CARRIERS: dict[str, tuple[str, ...]] = {
    "image": ("native", "ocr_text", "object_text", "spatial_description"),
    "video": ("native", "ordered_frames", "shuffled_frames", "event_description"),
    "audio": ("native", "transcript", "transcript_gold_tag", "transcript_reversed_tag"),
}
CARRIER_MODALITIES: tuple[str, ...] = tuple(CARRIERS)
# the challenges a modality's carrier can carry (scorer.model.labels.CHAIN_CHALLENGES, by modality)
MODALITY_CHALLENGES: dict[str, tuple[str, ...]] = {
    "image": ("fine_attribute", "background", "spatial"),
    "video": ("video_order", "video_count", "video_state"),
    "audio": ("prosody",),
}
NATIVE = "native"
FULL_BUDGET = "full"  # the budget of a sweep run that packs everything it retrieved

SMALL_STRATUM = 100

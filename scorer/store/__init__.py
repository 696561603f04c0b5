"""The annotation store (DESIGN §4): one SQLite file of append-only events, the studies kept in it,
and their exchange with other tools. What the commands, the scorer and the app use is here:

    from scorer.store import Store, import_jsonl, plan_agreement

The modules, each one job (lowest first; each imports only those before it):
    schema       opening the file safely: tables, `user_version` migrations, WAL, write transactions
    payload      the event kinds and their payloads (VERDICTS, FLAGS, …), validation, timestamps, uids
    queues       studies: named, seeded, blind queues per annotator, and their answers for export
    db           `Store`: writing events, derived state, studies through `queues`
    sampling     study plans: seeded, stratified samples of a benchmark's items and runs
    jsonl        JSONL export and idempotent import of events
    labelstudio  Label Studio task-JSON export and labeling config
    labelstudio_import  a Label Studio JSON export read back into events
"""

from scorer.metrics.constants import DECIDED_VERDICTS, DEFAULT_SEED
from scorer.store.db import DEFAULT_DB, Event, Store
from scorer.store.jsonl import ImportResult, import_jsonl, parse_jsonl, write_jsonl
from scorer.store.labelstudio import LABEL_CONFIG, labelstudio_tasks
from scorer.store.payload import ACT_KINDS, DECISION_KINDS, FLAGS, KINDS, VERDICTS
from scorer.store.queues import (
    EXPORT_FIELDS,
    REVEAL_FIELDS,
    STUDY_EVENT,
    STUDY_KINDS,
    QueueEntry,
    Study,
    StudyItem,
    oracle_rotation,
)
from scorer.store.sampling import (
    DEFAULT_METHODS,
    DEFAULT_MODE,
    StudyPlan,
    parse_per_cell,
    plan_agreement,
    plan_labels,
    plan_oracle,
)

__all__ = [
    # db
    "DEFAULT_DB", "Event", "Store",
    # payload (and the metrics' vocabulary it validates against)
    "ACT_KINDS", "DECIDED_VERDICTS", "DECISION_KINDS", "FLAGS", "KINDS", "VERDICTS",
    # queues
    "EXPORT_FIELDS", "REVEAL_FIELDS", "STUDY_EVENT", "STUDY_KINDS", "QueueEntry", "Study", "StudyItem",
    "oracle_rotation",
    # sampling
    "DEFAULT_METHODS", "DEFAULT_MODE", "DEFAULT_SEED", "StudyPlan", "parse_per_cell", "plan_agreement",
    "plan_labels", "plan_oracle",
    # jsonl, labelstudio
    "ImportResult", "import_jsonl", "parse_jsonl", "write_jsonl", "LABEL_CONFIG", "labelstudio_tasks",
]

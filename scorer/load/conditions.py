"""MOSAIC conditions of runs: which rung of the write→retrieve→deliver→read ladder a run is, the
stage it varies, its delivery budget and its carrier variant.

Two places may say it (the conditions file wins, then metrics.json, then config.json):
- a run's `metrics.json` or `config.json`, top level: `condition`, `stage`, `budget`, `carrier`,
  `ranking` (all optional; a file with none of them declares nothing);
- `memscope score --conditions FILE`: a JSON object `{"<backbone>/<method>": {the same keys}}`,
  run key as in DESIGN §3 (it applies to that run in every task folder and mode).

Fields: `condition` one of scorer.metrics.mosaic_labels.CONDITION_NAMES; `stage` one of STAGES
(default: the condition's); `budget` a positive number or a text label ("full" = everything the
ranking returned), which puts the run on the delivery-budget sweep of its `ranking` (default
"default": the runs of one sweep must share one frozen ranking); `carrier` `<modality>:<variant>`
from CARRIERS (e.g. `image:ocr_text`; `image:native` is the pairing base, else the gold_native
run). Anything else is refused with one line naming the file and the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from scorer.errors import DataError
from scorer.load.jsonio import read_json
from scorer.metrics.mosaic_labels import CARRIERS, CONDITION_NAMES, CONDITION_STAGE, STAGES
from scorer.model.run import CONFIG, METRICS

FIELDS = ("condition", "stage", "budget", "carrier", "ranking")


@dataclass(frozen=True)
class Condition:
    condition: str | None = None
    stage: str | None = None
    budget: float | str | None = None  # a number of units/tokens, or a label ("full")
    carrier: str | None = None  # "<modality>:<variant>"
    ranking: str = "default"
    source: str = ""  # where it was declared (file, or file and key)

    @property
    def carrier_modality(self) -> str | None:
        return None if self.carrier is None else self.carrier.split(":", 1)[0]

    @property
    def carrier_variant(self) -> str | None:
        return None if self.carrier is None else self.carrier.split(":", 1)[1]


def parse(value: Any, file: str, key: str) -> Condition:
    """One declaration (a mapping with FIELDS) → Condition; a DataError naming file and key."""
    def bad(message: str) -> DataError:
        return DataError(file, key, message)

    if not isinstance(value, Mapping):
        raise bad(f"expected an object with {', '.join(FIELDS)}, got {type(value).__name__}")
    unknown = sorted(str(k) for k in value if k not in FIELDS)
    if unknown:
        raise bad(f"unknown field(s) {', '.join(map(repr, unknown))} (known: {', '.join(FIELDS)})")
    cond = value.get("condition")
    if cond is not None and cond not in CONDITION_NAMES:
        raise bad(f"condition {cond!r} is not one of {', '.join(CONDITION_NAMES)}")
    stage = value.get("stage")
    if stage is not None and stage not in STAGES:
        raise bad(f"stage {stage!r} is not one of {', '.join(STAGES)}")
    if stage is None and cond is not None:
        stage = CONDITION_STAGE[cond]
    budget = value.get("budget")
    if budget is not None:
        if isinstance(budget, bool) or not isinstance(budget, (int, float, str)):
            raise bad(f"budget must be a number or a text label, got {type(budget).__name__}")
        if isinstance(budget, (int, float)) and not (budget > 0 and budget != float("inf")):
            raise bad(f"budget must be a positive finite number, got {budget!r}")
        if isinstance(budget, str) and not budget.strip():
            raise bad("budget must not be empty")
    carrier = value.get("carrier")
    if carrier is not None:
        modality, sep, variant = str(carrier).partition(":") if isinstance(carrier, str) else ("", "", "")
        if not sep or modality not in CARRIERS:
            raise bad(f"carrier {carrier!r} must be <modality>:<variant>, modality one of {', '.join(CARRIERS)}")
        if variant not in CARRIERS[modality]:
            raise bad(f"carrier {carrier!r}: {modality} variant must be one of {', '.join(CARRIERS[modality])}")
    ranking = value.get("ranking", "default")
    if not isinstance(ranking, str) or not ranking.strip():
        raise bad("ranking must be a non-empty text")
    if cond is None and budget is None and carrier is None:
        raise bad("declares nothing: give a condition, a budget or a carrier")
    return Condition(cond, stage, budget, carrier, ranking, f"{file}:{key}")


def score_extra(path: str | Path) -> dict:
    """The ScoreOptions.extra entries that `--conditions FILE` gives (`memscope score` and the app)."""
    from dataclasses import asdict

    conds = load_file(path)
    return {"conditions_file": str(path),
            "conditions": {k: {f: v for f, v in asdict(c).items() if f in FIELDS and v is not None}
                           for k, c in conds.items()}}


def load_file(path: str | Path) -> dict[str, Condition]:
    """`--conditions FILE` → {run key: Condition}. One line naming the file and key on bad input."""
    data = read_json(Path(path))
    if not isinstance(data, Mapping):
        raise DataError(path, "", "expected a JSON object {\"<backbone>/<method>\": {\"condition\": …}}")
    out = {}
    for key, value in data.items():
        if not isinstance(key, str) or key.count("/") < 1 or not all(key.split("/", 1)):
            raise DataError(path, repr(key), "a key must be a run key <backbone>/<method>")
        out[key] = parse(value, str(path), repr(key))
    return out


def declared(folder: Path, config: Mapping[str, Any], metrics: Mapping[str, Any]) -> Condition | None:
    """What a run folder's metrics.json (else config.json) declares at its top level, or None."""
    for name, doc in ((METRICS, metrics), (CONFIG, config)):
        if isinstance(doc, Mapping) and any(k in doc for k in FIELDS[:4]):
            return parse({k: doc[k] for k in FIELDS if k in doc}, str(Path(folder) / name), "condition")
    return None

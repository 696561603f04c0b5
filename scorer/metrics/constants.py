"""Constants the metrics share with the layers above them (the annotation store, the study commands,
the app), defined once and kept in a module that imports nothing: reading or writing annotations
never pays for numpy's import.

- DEFAULT_SEED: the project's default seed (DESIGN §5) — of every bootstrap, and of a study built
  without --seed, so both are reproducible.
- VERDICTS: a human's verdict on a prediction (DESIGN §4 `verdict` payload); DECIDED_VERDICTS are
  the two that take a side (κ is computed over them; a borderline verdict is counted apart).
- DEFAULT_RESAMPLES, DEFAULT_K: bootstrap resamples and the K of the evidence diagnostics (DESIGN
  §5): the defaults of `memscope score`, of the metric functions and of the app's evidence marks.
- JUDGE_LEVELS: the five levels a judge score is recorded on (DESIGN §5), ordinal for weighted κ.
- JUDGE_THRESHOLD: a judge score ≥ this is an accept (DESIGN §5 judge vs human; the app's study
  screens and its "right" counts read it too).
- OPTION_BOUNDS: the inclusive (low, high) range of every numeric command-line option, beside its
  default; a value outside is refused with one line before any file is read (`check_bounds` in
  scorer.commands). The highs bound the cost: 1,000,000 resamples keep a distribution at 8 MB (a
  hundred million took gigabytes), a seed fits numpy's generator, a K or a quota fits any benchmark.
- OPTION_LETTERS: re-exported from scorer.model.labels, where the loader's option keys are defined.
"""

from scorer.model.labels import OPTION_LETTERS  # noqa: F401 (re-exported)

DEFAULT_SEED = 20260430
VERDICTS = ("accept", "reject", "borderline")
DECIDED_VERDICTS = ("accept", "reject")
DEFAULT_RESAMPLES = 10_000
DEFAULT_K = 10
JUDGE_THRESHOLD = 0.5  # MemEye App. "LLM-as-a-Judge Validation"
JUDGE_LEVELS = (0.0, 0.25, 0.5, 0.75, 1.0)  # the judge's scale (DESIGN §5); `score` warns on a score between them
DEFAULT_PREVALENCE = 0.5  # the share of accepts a κ study plan assumes unless told (`study plan --prevalence`)
DEFAULT_RATERS = 2  # `study plan --raters`: every pair of raters rates the same items

# Inclusive bounds of the numeric options, by argparse dest (DESIGN §6 options; see the docstring).
MAX_RESAMPLES = 1_000_000
OPTION_BOUNDS: dict[str, tuple[int, int]] = {
    "seed": (0, 2**63 - 1),
    "resamples": (1, MAX_RESAMPLES),
    "k": (1, 100_000),
    "per_cell": (1, 100_000),
    "concurrency": (1, 256),
    "limit": (0, 10**12),
    "max_retries": (0, 100),
    "top_k": (1, 100_000),
    "pool": (1, 100_000),
    "batch": (1, 65_536),
    "temperature": (0, 2),  # OpenAI's range; a server with another one says so itself
    "max_tokens": (1, 10_000_000),
    "decimals": (0, 6),
}

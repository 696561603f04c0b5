"""Constants the metrics share with the layers above them (the annotation store, the study commands,
the app), defined once and kept in a module that imports nothing: reading or writing annotations
never pays for numpy's import.

- DEFAULT_SEED: the project's default seed (DESIGN §5) — of every bootstrap, and of a study built
  without --seed, so both are reproducible.
- VERDICTS: a human's verdict on a prediction (DESIGN §4 `verdict` payload); DECIDED_VERDICTS are
  the two that take a side (κ is computed over them; a borderline verdict is counted apart).
- DEFAULT_RESAMPLES, DEFAULT_K: bootstrap resamples and the K of the evidence diagnostics (DESIGN
  §5): the defaults of `memscope score`, of the metric functions and of the app's evidence marks.
- JUDGE_THRESHOLD: a judge score ≥ this is an accept (DESIGN §5 judge vs human; the app's study
  screens and its "right" counts read it too).
- OPTION_LETTERS: re-exported from scorer.model.labels, where the loader's option keys are defined.
"""

from scorer.model.labels import OPTION_LETTERS  # noqa: F401 (re-exported)

DEFAULT_SEED = 20260430
VERDICTS = ("accept", "reject", "borderline")
DECIDED_VERDICTS = ("accept", "reject")
DEFAULT_RESAMPLES = 10_000
DEFAULT_K = 10
JUDGE_THRESHOLD = 0.5  # MemEye App. "LLM-as-a-Judge Validation"

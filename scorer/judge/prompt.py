"""The judge prompt: memscope's own rubric (after MemEye's, App. "Prompt Examples") or a user's
template with `{{question}}`, `{{ground_truth}}` and `{{model_output}}`.

A template is filled in one pass, so a prediction that happens to contain `{{ground_truth}}` is
sent as written, never expanded. The template's sha256 (of its UTF-8 text) names it in config.json
and in the cache key.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from scorer.errors import DataError, UserError

FIELDS = ("question", "ground_truth", "model_output")
REQUIRED = ("ground_truth", "model_output")  # a template without these cannot judge anything
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")

LEVELS = {5: (0.0, 0.25, 0.5, 0.75, 1.0), 3: (0.0, 0.5, 1.0)}

_PRINCIPLES = """\
You are grading one answer from an AI assistant whose memory of earlier conversations is being \
tested. Decide how well the Assistant Answer matches the Reference Answer for the Question, and \
give it exactly one score from {levels}.

How to judge:
- Meaning matters, wording does not: a paraphrase that says the same thing is fully correct.
- Numbers and counts are all or nothing: the right number gets 1, any other number gets 0.
- When the reference both denies something and corrects it ("no, it was X"), the answer must get \
the denial and the corrected fact to be fully correct.
- A question about who or what is answered correctly when the same unique person, object or event \
is picked out, however it is described.
- The answer must supply the kind of information asked for (a colour for a colour, a place for a \
place).
- Naming the wrong person, object or value is wrong even if the answer stays on topic.
- Questions asking for several items need the same set; questions about order or time need the \
right item in the right position. Reversed relations or orderings score 0.
- Length, confidence and fluent explanation earn nothing by themselves.
"""

_RUBRIC_5 = """\
Scores:
- 0: contradicts the reference, flips a yes/no, gives a wrong number, the wrong type of answer, a \
reversed relation or order, invents facts, or says nothing relevant.
- 0.25: on topic but misses the key entity or value, makes a serious wrong association, is too \
vague to use, or gets most of a required set wrong.
- 0.5: gets the main entity or idea but leaves out an important qualifier, or gets a good part of \
a required set right.
- 0.75: essentially correct, missing only a minor detail or padded with unneeded text.
- 1: correct and precise, with every core fact and nothing invented.
"""

_RUBRIC_3 = """\
Scores:
- 0: contradicts the reference, flips a yes/no, gives a wrong number, the wrong type of answer, a \
reversed relation or order, invents facts, says nothing relevant, or misses the key entity or value.
- 0.5: gets the main entity or idea but leaves out an important qualifier or part of a required \
set.
- 1: correct, with every core fact and nothing invented (minor padding is fine).
"""

_INPUTS = """\
Question: {{question}}
Reference Answer: {{ground_truth}}
Assistant Answer: {{model_output}}

Reply with a JSON object and nothing else: {"score": <one of {levels}>, "reasoning": "<one or two \
short sentences>"}
"""


def _levels_text(levels: tuple[float, ...]) -> str:
    return "{" + ", ".join(format_level(v) for v in levels) + "}"


def format_level(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


def builtin_template(n_levels: int) -> str:
    levels = _levels_text(LEVELS[n_levels])
    rubric = _RUBRIC_5 if n_levels == 5 else _RUBRIC_3
    return "\n".join([_PRINCIPLES, rubric, _INPUTS]).replace("{levels}", levels)


@dataclass(frozen=True)
class Prompt:
    template: str
    source: str  # "builtin:memscope-rubric-5" or the user's file path
    levels: tuple[float, ...]

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.template.encode("utf-8")).hexdigest()

    def render(self, question: str, ground_truth: str, model_output: str) -> str:
        values = {"question": question, "ground_truth": ground_truth, "model_output": model_output}
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], self.template)


def check_template(text: str, where: str) -> None:
    names = _PLACEHOLDER.findall(text)
    unknown = sorted({n for n in names if n not in FIELDS})
    if unknown:
        raise DataError(where, "", f"unknown placeholder {{{{{unknown[0]}}}}}: a template may use "
                        + ", ".join(f"{{{{{f}}}}}" for f in FIELDS))
    missing = [f for f in REQUIRED if f not in names]
    if missing:
        raise DataError(where, "", f"the template never uses {{{{{missing[0]}}}}}: the judge would not see it")


def load_prompt(path: str | Path | None, n_levels: int = 5) -> Prompt:
    if n_levels not in LEVELS:
        raise UserError(f"--levels must be 5 or 3, not {n_levels}")
    levels = LEVELS[n_levels]
    if path is None:
        return Prompt(builtin_template(n_levels), f"builtin:memscope-rubric-{n_levels}", levels)
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(p, "", "no such prompt file") from None
    except UnicodeDecodeError as err:
        raise DataError(p, f"byte {err.start}", "not UTF-8 text") from None
    except OSError as err:
        raise DataError(p, "", f"cannot read: {err.strerror or err}") from None
    check_template(text, str(p))
    return Prompt(text, str(p), levels)

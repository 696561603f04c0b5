"""The report as Markdown: every section's tables, best values in bold and second-best in italics,
n beside every number, absent sections with their reason, then warnings and inputs."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from scorer.report.fmt import cell_text, is_number, mark_of
from scorer.sections.base import Table
from scorer.sections.registry import title_of


# Every character that can open Markdown (CommonMark and GitHub's: tables, strikethrough, math)
# markup inline; each is backslash-escaped, which CommonMark allows for any ASCII punctuation.
_INLINE = "\\`*_[]<>!|~$&"
_BLOCK_START = re.compile(r"^(\s*\d*)([-+*=#>.)])")  # a list, heading, quote or rule where a line begins


def _esc(text: str, line_start: bool = False) -> str:
    """Data text as Markdown that shows exactly that text: line breaks and controls flattened, every
    inline markup character escaped (no link, image, entity, HTML, emphasis, math or cell break);
    with `line_start`, a leading list / heading / quote marker escaped too."""
    out = "".join(ch if ch.isprintable() else " " for ch in str(text))
    out = "".join("\\" + ch if ch in _INLINE else ch for ch in out)
    return _BLOCK_START.sub(lambda m: m.group(1) + "\\" + m.group(2), out, count=1) if line_start else out


def _code(text: str) -> str:
    """Data text (a path) as a code span: shown as is, with no escapes (none work inside one); the
    fence is one backtick longer than any run of them in the text."""
    out = "".join(ch if ch.isprintable() else " " for ch in str(text))
    fence = "`" * (max((len(m) for m in re.findall(r"`+", out)), default=0) + 1)
    pad = " " if out.startswith("`") or out.endswith("`") or not out.strip() else ""
    return f"{fence}{pad}{out}{pad}{fence}"


def table(t: Table) -> str:
    cols = list(t.columns)
    lines = [f"### {_esc(t.title)}", ""]
    if not t.rows:
        return "\n".join(lines + ["_No rows._", ""])
    numeric = {c for c in cols if any(is_number(r.get(c)) or isinstance(r.get(c), tuple) for r in t.rows)}
    lines.append("| " + " | ".join(_esc(c) for c in cols) + " |")
    lines.append("|" + "|".join("---:" if c in numeric else "---" for c in cols) + "|")
    for r in t.rows:
        cells = []
        for c in cols:
            text = _esc(cell_text(c, r.get(c), r)) if not is_number(r.get(c)) else cell_text(c, r.get(c), r)
            mark = mark_of(r, c)
            if text and mark == "best":
                text = f"**{text}**"
            elif text and mark == "second":
                text = f"*{text}*"
            cells.append(text)
        lines.append("| " + " | ".join(cells) + " |")
    if t.note:
        lines += ["", _esc(t.note, line_start=True)]
    return "\n".join(lines + [""])


def render(data: dict, sections: Sequence[Any], warnings: Sequence[str]) -> str:
    """`data` is report.json's content; `sections` the SectionResults in order."""
    inputs = data.get("inputs", {})
    opts = inputs.get("options", {})
    rows = inputs.get("rows", {})
    out = ["# memscope score report", ""]
    bench = inputs.get("benchmark", {}).get("path", "")
    runs = inputs.get("runs", {})
    out.append(f"Benchmark {_code(bench)} · {runs.get('folders', 0)} run folder(s) · {rows.get('scored', 0)} scored "
               f"prediction(s) · seed {opts.get('seed')} · {opts.get('resamples')} bootstrap resamples · "
               f"judge levels {opts.get('judge_levels')} · K = {opts.get('k')}")
    out += ["", ("Best value per row in **bold**, second-best in *italics* (ties share the mark). "
                 "n = items (or pairs) behind each number."), ""]
    for s in sections:
        out += [f"## {_esc(title_of(s.name))}", ""]
        if s.reason:
            out += [f"_Not available: {_esc(s.reason)}_", ""]
            continue
        for t in s.tables:
            out.append(table(t))
        if isinstance(s.data, dict):
            for key, part in sorted(s.data.items()):
                if isinstance(part, dict) and part.get("value", 0) is None:
                    out += [f"_{_esc(key)}: not available: {_esc(part.get('reason', ''))}_", ""]
    all_warnings = list(warnings)
    if all_warnings:
        out += ["## Warnings", ""] + [f"- {_esc(w, line_start=True)}" for w in all_warnings] + [""]
    out += ["## Inputs", ""]
    out.append(f"- benchmark: {_code(bench)}, {len(inputs.get('benchmark', {}).get('files', []))} file(s), "
               f"sha256 of hashes `{inputs.get('benchmark', {}).get('digest', '')}`")
    out.append(f"- runs: {', '.join(_code(p) for p in runs.get('paths', []))} — "
               f"{len(runs.get('files', []))} file(s), sha256 of hashes `{runs.get('digest', '')}`, "
               f"{runs.get('reader', '')} reader")
    ann = inputs.get("annotations")
    if ann:
        acts = ", ".join(f"{k} {v}" for k, v in sorted(ann.get("acts", {}).items()))
        out.append(f"- annotations: {_code(ann.get('db', ''))} (study {_esc(str(ann.get('study')))}): {acts}; "
                   f"sha256 `{ann.get('sha256', '')}`")
    else:
        out.append("- annotations: none (no --db)")
    out.append("- options: " + ", ".join(f"{k} = {_esc(str(v))}" for k, v in sorted(opts.items())))
    out.append("- versions: " + ", ".join(f"{k} {v}" for k, v in sorted(inputs.get("versions", {}).items())))
    out.append("- every file's path and sha256 is in report.json `inputs`")
    return "\n".join(out) + "\n"

"""LaTeX tables (booktabs) and figure floats, sized for a paper. Writes `memscope-preamble.tex`
(packages and the \\bestcell / \\secondcell / \\memscopefit macros), one `tables/<section>__<table>.tex`
per table (per table and backbone where a table holds several backbones), one `figures/<name>.tex`
per figure (the PDF, with its caption), and `report.tex`, a document that inputs them all.

Every table is set in \\footnotesize and may shrink to the line, but never below 6 pt: tables are
split (by backbone, by column groups, by rows) and stripped of columns holding one value
(scorer.report.latex_layout) so that each fits a column of a two-column 10 pt article, or the 5.5 in
block of a one-column one, at 6 pt or more. Best and second are told apart without colour (bold /
underlined, on the fill), and each caption says so. Numbers are shown with `decimals` places
(`memscope score --decimals`, default 3). The evaluation matrix is laid out like the MemEye main
table: rows Y / X / Metric (with n), columns methods grouped under Textual / Multimodal memory,
`Avg.` rows last."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scorer.metrics.matrix import ALL
from scorer.model import X_LABELS, Y_LABELS
from scorer.report import latex_layout as lay
from scorer.report.fmt import LATEX_DECIMALS, cell_text, file_stem, is_number, mark_of, number
from scorer.report.latex_figures import write_figures
from scorer.report.latex_text import esc
from scorer.sections.base import Table
from scorer.sections.matrix import marks_note
from scorer.sections.methods import (
    FAMILY_ORDER,
    FAMILY_TITLES,
    METRIC_TITLES,
    PAPER_ORDER,
)
from scorer.sections.registry import title_of

DEFAULT_DECIMALS = LATEX_DECIMALS
MARKS_CAPTION = "Best in bold (orange fill), second underlined (blue fill)."

PREAMBLE = r"""% memscope: packages and macros the generated tables use. \input{memscope-preamble} in your preamble.
\usepackage{array}
\usepackage{booktabs}
\usepackage{multirow}
\usepackage{graphicx}
\usepackage{xcolor}
\usepackage{colortbl}
% best / second: told apart without colour (bold / underline), the fill as well
\providecommand{\bestcell}[1]{\cellcolor{orange!30}\textbf{#1}}
\providecommand{\secondcell}[1]{\cellcolor{cyan!15}\underline{#1}}
% A table wider than the line, or taller than 80% of the page, is scaled down to fit, but never
% below \memscopeminscale (0.75 of \footnotesize: 6 pt); the generated tables are split so that
% they fit at that scale. A smaller table is left as it is.
\providecommand{\memscopeminscale}{0.75}
\newsavebox{\memscopebox}
\newlength{\memscopewidth}
\newlength{\memscopeheight}
\newlength{\memscoperoom}
\providecommand{\memscopefit}[1]{\sbox{\memscopebox}{#1}%
  \setlength{\memscopewidth}{\wd\memscopebox}%
  \setlength{\memscopeheight}{\ht\memscopebox}\addtolength{\memscopeheight}{\dp\memscopebox}%
  \setlength{\memscoperoom}{0.8\textheight}%
  \ifdim\memscopewidth>\linewidth
    \setlength{\memscopeheight}{\dimexpr\memscopeheight*\linewidth/\memscopewidth\relax}%
    \setlength{\memscopewidth}{\linewidth}\fi
  \ifdim\memscopeheight>\memscoperoom
    \setlength{\memscopewidth}{\dimexpr\memscopewidth*\memscoperoom/\memscopeheight\relax}\fi
  \ifdim\memscopewidth<\memscopeminscale\wd\memscopebox
    \setlength{\memscopewidth}{\memscopeminscale\wd\memscopebox}%
    \PackageWarningNoLine{memscope}{A table does not fit at \memscopeminscale\space scale}\fi
  \ifdim\memscopewidth<\wd\memscopebox \resizebox{\memscopewidth}{!}{\usebox{\memscopebox}}%
  \else\usebox{\memscopebox}\fi}
"""

def _marked(text: str, mark: str) -> str:
    if not text:
        return text
    return {"best": rf"\bestcell{{{text}}}", "second": rf"\secondcell{{{text}}}"}.get(mark, text)


def _head(text: str, align: str) -> str:
    """A header cell, wrapped onto lines (a nested tabular) when long."""
    lines = lay.header_lines(text)
    if len(lines) == 1:
        return esc(text)
    return rf"\begin{{tabular}}[b]{{@{{}}{align}@{{}}}}" + r"\\".join(esc(ln) for ln in lines) + r"\end{tabular}"


def _width_text(text: str, mark: str) -> str:
    """What the width estimate measures: a bold (best) cell is ~15% wider."""
    return text + " " * math.ceil(len(text) / 5) if mark == "best" else text


def _float(wide: bool) -> tuple[str, str]:
    return (r"\begin{table*}[!htbp]", r"\end{table*}") if wide else (r"\begin{table}[!htbp]", r"\end{table}")


def _caption_extra(part: lay.Part, marked: bool) -> str:
    bits = []
    if part.column_part[1] > 1:
        bits.append(f"Columns, part {part.column_part[0]} of {part.column_part[1]}.")
    if part.row_part[3]:
        bits.append(f"Rows {part.row_part[0]}–{part.row_part[1]} of {part.row_part[2]}.")
    if part.dropped:
        bits.append("The same in every row (column not shown): "
                    + "; ".join(f"{c} = {v}" if v else f"{c} empty" for c, v in part.dropped) + ".")
    if marked:
        bits.append(MARKS_CAPTION)
    return " ".join(bits)


def generic_parts(t: Table, decimals: int = DEFAULT_DECIMALS) -> list[tuple[str, str]]:
    """The floats of one report table, as (group, LaTeX): one group per backbone when the table
    holds several ("" otherwise), each group one or more floats (column / row parts)."""
    cols = list(t.columns)
    numeric = {c for c in cols if any(is_number(r.get(c)) or isinstance(r.get(c), tuple) for r in t.rows)}

    def text(c: str, r: Mapping) -> str:
        return cell_text(c, r.get(c), r, decimals)

    def measured(c: str, r: Mapping) -> str:
        return _width_text(text(c, r), mark_of(r, c))

    out = []
    for group, rows in lay.split_by(t.rows, cols):
        parts = lay.plan(cols, rows, measured, numeric)  # widths with bold cells widened
        floats = [_generic_float(t, part, group, k, len(parts), numeric, text) for k, part in enumerate(parts)]
        out.append((group, "".join(floats)))
    return out


def _generic_float(t: Table, part: lay.Part, group: str, k: int, n_parts: int, numeric: set[str], text) -> str:
    cols = part.columns
    spec = "".join(rf">{{\raggedright\arraybackslash}}p{{{part.wrap[c]:.0f}pt}}" if c in part.wrap
                   else "r" if c in numeric else "l" for c in cols)
    marked = any(mark_of(r, c) for r in part.rows for c in cols)
    title = esc(t.title) + (rf" --- \texttt{{{esc(group)}}}" if group else "")
    extra = _caption_extra(part, marked)
    label = file_stem(t.name, *([group] if group else [])) + (f"-{k + 1}" if n_parts > 1 else "")
    begin, end = _float(part.wide)
    lines = [begin, r"\centering", r"\footnotesize", r"\setlength{\tabcolsep}{3pt}",
             rf"\caption{{{title}{('. ' + esc(extra)) if extra else ''}}}", rf"\label{{tab:memscope-{label}}}",
             r"\memscopefit{%", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
             " & ".join(_head(c, "r" if c in numeric else "l") for c in cols) + r" \\", r"\midrule"]
    for r in part.rows:
        if r.get("_rule"):
            lines.append(r"\midrule")
        lines.append(" & ".join(_marked(esc(text(c, r)), mark_of(r, c)) for c in cols) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}%", "}"]
    if t.note:
        lines.append(rf"\par\smallskip\footnotesize {_flags(esc(t.note))}")
    lines.append(end)
    return "\n".join(lines) + "\n"


def generic(t: Table, decimals: int = DEFAULT_DECIMALS) -> str:
    """Every float of a report table, in one text (all its groups)."""
    return "".join(tex for _, tex in generic_parts(t, decimals))


def _methods(rows: list[dict]) -> list[tuple[str, str, str]]:
    seen: dict[str, tuple[str, str]] = {}
    for r in rows:
        seen.setdefault(r["method"], (r.get("display") or r["method"], r.get("family") or "other"))
    counts: dict[str, int] = {}
    for d, _ in seen.values():
        counts[d] = counts.get(d, 0) + 1
    out = [(m, d if counts[d] == 1 else f"{d} [{m}]", f) for m, (d, f) in seen.items()]
    rank = {d: i for i, d in enumerate(PAPER_ORDER)}
    return sorted(out, key=lambda t: (FAMILY_ORDER.index(t[2]) if t[2] in FAMILY_ORDER else 9,
                                      rank.get(t[1], len(rank)), t[1], t[0]))


def _method_sets(methods: list[tuple[str, str, str]], width: Mapping[str, float], fixed: float) -> list[list]:
    """The methods of one matrix float each: all of them when they fit at the smallest scale in the
    5.5 in block, else one float per family (and a family cut further if it alone is too wide)."""
    limit = lay.WIDE_PT * lay.SAFETY / lay.MIN_SCALE - fixed
    if sum(width[m] for m, _, _ in methods) <= limit:
        return [methods]
    sets: list[list] = []
    for fam in dict.fromkeys(f for _, _, f in methods):
        current, used = [], 0.0
        for m in (t for t in methods if t[2] == fam):
            if current and used + width[m[0]] > limit:
                sets.append(current)
                current, used = [], 0.0
            current.append(m)
            used += width[m[0]]
        sets.append(current)
    return sets


def main_matrix(backbone: str, rows: list[dict], decimals: int = DEFAULT_DECIMALS) -> str:
    """The paper-layout table of one backbone from its `matrix` rows (EM and LLM-Judge); split by
    method family when all methods would not fit the 5.5 in block at 6 pt."""
    rows = [r for r in rows if r["metric"] in ("em", "judge")]
    methods = _methods(rows)
    idx = {(r["metric"], r["agg"], r["y"], r["x"], r["method"]): r for r in rows}
    metrics = [m for m in ("em", "judge") if any(r["metric"] == m for r in rows)]
    ys = [y for y in Y_LABELS if any(r["y"] == y for r in rows)]
    xs = [x for x in X_LABELS if any(r["x"] == x for r in rows)]
    keys = [(m, "cell", y, x) for y in ys for x in xs for m in metrics] + \
           [(m, agg, ALL, ALL) for agg in ("macro", "micro") for m in metrics]

    def cell(metric: str, agg: str, y: str, x: str, method: str) -> tuple[str, str]:
        r = idx.get((metric, agg, y, x, method))
        if r is None:
            return "--", ""
        found = [idx.get((metric, agg, y, x, m)) for m, _, _ in methods]
        ns = {f["n"] for f in found if f}
        text = number(r["value"], decimals=decimals)
        if len(ns) > 1:
            text += f" ({r['n']})"
        return text, r.get("mark") or ""

    width = {m: lay.column_pt(label, [_width_text(*cell(*k, m)) for k in keys]) for m, label, _ in methods}
    fixed = lay.column_pt("Y", ["Item-weighted"]) + lay.column_pt("X", ys + xs) + \
        lay.column_pt("Metric", [METRIC_TITLES[m] for m in metrics]) + lay.column_pt("n", ["000--000"])
    sets = _method_sets(methods, width, fixed)
    caption_note = _flags(esc(marks_note([r for r in rows if r["agg"] != "marginal"], {m: lb for m, lb, _ in methods})))
    out = []
    for k, subset in enumerate(sets):
        part = f" Methods, part {k + 1} of {len(sets)}." if len(sets) > 1 else ""
        label = file_stem(backbone) + (f"-{k + 1}" if len(sets) > 1 else "")
        out.append(_matrix_float(backbone, subset, metrics, ys, xs, idx, methods, decimals, part, label,
                                 caption_note, wide=(fixed + sum(width[m] for m, _, _ in subset)) * lay.MIN_SCALE
                                 > lay.NARROW_PT * lay.SAFETY))
    return "".join(out)


def _matrix_float(backbone, methods, metrics, ys, xs, idx, all_methods, decimals, part, label, caption_note,
                  wide: bool) -> str:
    ncol = 4 + len(methods)
    groups: list[tuple[str, int]] = []
    for _, _, f in methods:
        if groups and groups[-1][0] == f:
            groups[-1] = (f, groups[-1][1] + 1)
        else:
            groups.append((f, 1))
    head1 = [r"\multirow{2}{*}{Y}", r"\multirow{2}{*}{X}", r"\multirow{2}{*}{Metric}", r"\multirow{2}{*}{$n$}"]
    rules, start = [], 5
    for f, k in groups:
        head1.append(rf"\multicolumn{{{k}}}{{c}}{{{esc(FAMILY_TITLES.get(f, f))}}}")
        rules.append(rf"\cmidrule(lr){{{start}-{start + k - 1}}}")
        start += k
    begin, end = _float(wide)
    lines = [begin, r"\centering",
             (rf"\caption{{Evaluation matrix on \texttt{{{esc(backbone)}}}. EM (multiple choice, mean over rotations) "
              r"and LLM-Judge (open); $n$ = items. Avg.\ = mean of the non-empty cells." + esc(part) + " "
              + esc(MARKS_CAPTION) + " " + caption_note + "}"),
             rf"\label{{tab:memscope-matrix-{label}}}", r"\footnotesize", r"\setlength{\tabcolsep}{3pt}",
             r"\memscopefit{%", rf"\begin{{tabular}}{{lllr{'c' * len(methods)}}}", r"\toprule",
             " & ".join(head1) + r" \\", "".join(rules),
             " & & & & " + " & ".join(_head(label, "c") for _, label, _ in methods) + r" \\", r"\midrule"]

    def line(first: str, second: str, metric: str, agg: str, y: str, x: str) -> str | None:
        found = [idx.get((metric, agg, y, x, m)) for m, _, _ in methods]
        if not any(found):
            return None
        every = [r for r in (idx.get((metric, agg, y, x, m)) for m, _, _ in all_methods) if r]
        ns = sorted({r["n"] for r in every})
        n = str(ns[0]) if len(ns) == 1 else f"{ns[0]}--{ns[-1]}"
        cells = []
        for r in found:
            if r is None:
                cells.append("--")
                continue
            text = number(r["value"], decimals=decimals)
            if len(ns) > 1:
                text += f" ({r['n']})"
            cells.append(_marked(text, r.get("mark") or ""))
        return " & ".join([first, second, METRIC_TITLES[metric], n, *cells]) + r" \\"

    for y in ys:
        block = []
        for x in xs:
            sub = [ln for m in metrics if (ln := line("", "", m, "cell", y, x)) is not None]
            if sub:
                block.append((x, sub))
        if not block:
            continue
        total = sum(len(s) for _, s in block)
        for bi, (x, sub) in enumerate(block):
            for li, ln in enumerate(sub):
                first = rf"\multirow{{{total}}}{{*}}{{{esc(y)}}}" if bi == 0 and li == 0 else ""
                second = rf"\multirow{{{len(sub)}}}{{*}}{{{esc(x)}}}" if li == 0 else ""
                lines.append(_swap(ln, first, second))
            if bi < len(block) - 1:
                lines.append(rf"\cmidrule(lr){{2-{ncol}}}")
        lines.append(r"\midrule")
    for agg, label in (("macro", "Avg."), ("micro", "Item-weighted")):
        sub = [ln for m in metrics if (ln := line("", "", m, agg, ALL, ALL)) is not None]
        for li, ln in enumerate(sub):
            first = rf"\multirow{{{len(sub)}}}{{*}}{{{label}}}" if li == 0 else ""
            second = rf"\multirow{{{len(sub)}}}{{*}}{{--}}" if li == 0 else ""
            lines.append(_swap(ln, first, second))
        if agg == "macro" and sub:
            lines.append(r"\midrule")
    if lines[-1] == r"\midrule":
        lines.pop()
    lines += [r"\bottomrule", r"\end{tabular}%", "}", end]
    return "\n".join(lines) + "\n"


def _flags(text: str) -> str:
    """A command-line flag in escaped text as typewriter text (TeX would set "--" as an en dash)."""
    return text.replace("--mark-all", r"\texttt{-{}-mark-all}")


def _swap(line: str, first: str, second: str) -> str:
    """Replace the two leading (empty) cells of a built row."""
    return f"{first} & {second} & " + line[len(" &  & "):]


# -- figures

def write(sections: Sequence[Any], folder: Path, figures: Sequence[Path] = (),
          decimals: int = DEFAULT_DECIMALS) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    tables_dir = folder / "tables"
    tables_dir.mkdir(exist_ok=True)
    written = []
    pre = folder / "memscope-preamble.tex"
    pre.write_text(PREAMBLE, encoding="utf-8", newline="")
    written.append(pre)
    body = []
    for s in sections:
        body.append(rf"\section*{{{esc(title_of(s.name))}}}")
        if s.reason:
            body.append(rf"\emph{{Not available: {esc(s.reason)}}}")
            continue
        parts: list[tuple[str, str]] = []
        tables = list(s.tables)
        if s.name == "matrix" and isinstance(s.data, list):
            for backbone in sorted({r["backbone"] for r in s.data}):
                parts.append((f"matrix__main_{backbone}", main_matrix(
                    backbone, [r for r in s.data if r["backbone"] == backbone], decimals)))
            tables = [t for t in tables if not t.name.startswith("main_")]
        for t in tables:
            for group, tex in generic_parts(t, decimals):
                parts.append((f"{s.name}__{t.name}" + (f"__{group}" if group else ""), tex))
        for name, tex in parts:
            p = tables_dir / f"{file_stem(name)}.tex"
            p.write_text(tex, encoding="utf-8", newline="")
            written.append(p)
            body.append(rf"\input{{tables/{p.stem}}}")
        body.append(r"\clearpage")
    for fig in write_figures(figures, folder):  # report.tex holds them as written (a paper \inputs the files)
        written.append(fig)
        body.append(fig.read_text(encoding="utf-8").rstrip("\n"))
    doc = "\n".join([r"\documentclass{article}", r"\usepackage[margin=2cm,landscape]{geometry}",
                     r"\input{memscope-preamble}", r"\extrafloats{200}", r"\begin{document}", *body, r"\end{document}"]) + "\n"
    rep = folder / "report.tex"
    rep.write_text(doc, encoding="utf-8", newline="")
    written.append(rep)
    return written

"""LaTeX tables (booktabs). Writes `memscope-preamble.tex` (packages and the \\bestcell /
\\secondcell macros), one `tables/<section>__<table>.tex` per table, and `report.tex`, a document
that inputs them all. The evaluation matrix is laid out like the MemEye main table: rows Y / X /
Metric (with n), columns methods grouped under Textual / Multimodal memory, `Avg.` rows last."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scorer.metrics.matrix import ALL
from scorer.model import X_LABELS, Y_LABELS
from scorer.report.fmt import cell_text, file_stem, is_number, mark_of, number
from scorer.sections.base import Table
from scorer.sections.matrix import marks_note
from scorer.sections.methods import (
    FAMILY_ORDER,
    FAMILY_TITLES,
    METRIC_TITLES,
    PAPER_ORDER,
)
from scorer.sections.registry import title_of

PREAMBLE = r"""% memscope: packages and macros the generated tables use. \input{memscope-preamble} in your preamble.
\usepackage{booktabs}
\usepackage{multirow}
\usepackage{graphicx}
\usepackage{xcolor}
\usepackage{colortbl}
\providecommand{\bestcell}[1]{\cellcolor{orange!25}#1}
\providecommand{\secondcell}[1]{\cellcolor{cyan!15}#1}
% A table wider than the line, or taller than 80% of the page, is scaled down to fit; a smaller
% one is left as it is.
\newsavebox{\memscopebox}
\newlength{\memscopeheight}
\providecommand{\memscopefit}[1]{\sbox{\memscopebox}{#1}%
  \ifdim\wd\memscopebox>\linewidth \sbox{\memscopebox}{\resizebox{\linewidth}{!}{\usebox{\memscopebox}}}\fi
  \setlength{\memscopeheight}{\ht\memscopebox}\addtolength{\memscopeheight}{\dp\memscopebox}%
  \ifdim\memscopeheight>0.8\textheight \resizebox*{!}{0.8\textheight}{\usebox{\memscopebox}}%
  \else\usebox{\memscopebox}\fi}
"""

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
            "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
            "Δ": r"$\Delta$", "κ": r"$\kappa$", "α": r"$\alpha$", "−": r"$-$", "–": "--", "—": "---", "≥": r"$\geq$",
            "≤": r"$\leq$", "→": r"$\rightarrow$", "·": r"$\cdot$", "λ": r"$\lambda$", "…": r"\ldots{}",
            "×": r"$\times$", "±": r"$\pm$"}


def esc(text: Any) -> str:
    """Data text made safe for LaTeX: specials escaped, control characters dropped."""
    return "".join(_SPECIAL.get(ch, ch) for ch in str(text) if ch.isprintable())


def _marked(text: str, mark: str) -> str:
    if not text:
        return text
    return {"best": rf"\bestcell{{{text}}}", "second": rf"\secondcell{{{text}}}"}.get(mark, text)


def generic(t: Table) -> str:
    cols = list(t.columns)
    numeric = {c for c in cols if any(is_number(r.get(c)) or isinstance(r.get(c), tuple) for r in t.rows)}
    spec = "".join("r" if c in numeric else "l" for c in cols)
    lines = [r"\begin{table}[!htbp]", r"\centering", r"\small", rf"\caption{{{esc(t.title)}}}",
             rf"\label{{tab:memscope-{file_stem(t.name)}}}", r"\memscopefit{%", rf"\begin{{tabular}}{{{spec}}}",
             r"\toprule", " & ".join(esc(c) for c in cols) + r" \\", r"\midrule"]
    for r in t.rows:
        if r.get("_rule"):
            lines.append(r"\midrule")
        lines.append(" & ".join(_marked(esc(cell_text(c, r.get(c), r)), mark_of(r, c)) for c in cols) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}%", "}"]
    if t.note:
        lines.append(rf"\par\smallskip\footnotesize {_flags(esc(t.note))}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


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


def main_matrix(backbone: str, rows: list[dict]) -> str:
    """The paper-layout table of one backbone from its `matrix` rows (EM and LLM-Judge)."""
    rows = [r for r in rows if r["metric"] in ("em", "judge")]
    methods = _methods(rows)
    idx = {(r["metric"], r["agg"], r["y"], r["x"], r["method"]): r for r in rows}
    metrics = [m for m in ("em", "judge") if any(r["metric"] == m for r in rows)]
    ys = [y for y in Y_LABELS if any(r["y"] == y for r in rows)]
    xs = [x for x in X_LABELS if any(r["x"] == x for r in rows)]
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
    lines = [r"\begin{table*}[t]", r"\centering",
             (rf"\caption{{Evaluation matrix on \texttt{{{esc(backbone)}}}. EM (multiple choice, mean over rotations) "
              r"and LLM-Judge (open); $n$ = items. Avg.\ = mean of the non-empty cells. "
              + _flags(esc(marks_note([r for r in rows if r["agg"] != "marginal"], {m: lb for m, lb, _ in methods})))
              + "}"),
             rf"\label{{tab:memscope-matrix-{file_stem(backbone)}}}", r"\scriptsize", r"\setlength{\tabcolsep}{2.2pt}",
             r"\memscopefit{%", rf"\begin{{tabular}}{{lllr{'c' * len(methods)}}}", r"\toprule",
             " & ".join(head1) + r" \\", "".join(rules),
             " & & & & " + " & ".join(esc(label) for _, label, _ in methods) + r" \\", r"\midrule"]

    def line(first: str, second: str, metric: str, agg: str, y: str, x: str) -> str | None:
        found = [idx.get((metric, agg, y, x, m)) for m, _, _ in methods]
        if not any(found):
            return None
        ns = sorted({r["n"] for r in found if r})
        n = str(ns[0]) if len(ns) == 1 else f"{ns[0]}--{ns[-1]}"
        cells = []
        for r in found:
            if r is None:
                cells.append("--")
                continue
            text = number(r["value"])
            if len(ns) > 1:
                text += f" ({r['n']})"
            cells.append(_marked(text, r.get("mark") or ""))
        return " & ".join([first, second, METRIC_TITLES[metric], n, *cells]) + r" \\"

    for yi, y in enumerate(ys):
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
    lines += [r"\bottomrule", r"\end{tabular}%", "}", r"\end{table*}"]
    return "\n".join(lines) + "\n"


def _flags(text: str) -> str:
    """A command-line flag in escaped text as typewriter text (TeX would set "--" as an en dash)."""
    return text.replace("--mark-all", r"\texttt{-{}-mark-all}")


def _swap(line: str, first: str, second: str) -> str:
    """Replace the two leading (empty) cells of a built row."""
    return f"{first} & {second} & " + line[len(" &  & "):]


def write(sections: Sequence[Any], folder: Path, figures: Sequence[Path] = ()) -> list[Path]:
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
        if s.name == "matrix" and isinstance(s.data, list):
            for backbone in sorted({r["backbone"] for r in s.data}):
                parts.append((f"matrix__main_{backbone}", main_matrix(backbone, [r for r in s.data if r["backbone"] == backbone])))
            parts += [(f"{s.name}__{t.name}", generic(t)) for t in s.tables if not t.name.startswith("main_")]
        else:
            parts += [(f"{s.name}__{t.name}", generic(t)) for t in s.tables]
        for name, tex in parts:
            p = tables_dir / f"{file_stem(name)}.tex"
            p.write_text(tex, encoding="utf-8", newline="")
            written.append(p)
            body.append(rf"\input{{tables/{p.stem}}}")
        body.append(r"\clearpage")
    for fig in figures:
        rel = fig.relative_to(folder).as_posix() if fig.is_relative_to(folder) else fig.name
        body.append(rf"\begin{{figure}}[t]\centering\includegraphics[width=\linewidth]{{{rel}}}\end{{figure}}")
    doc = "\n".join([r"\documentclass{article}", r"\usepackage[margin=2cm,landscape]{geometry}",
                     r"\input{memscope-preamble}", r"\extrafloats{200}", r"\begin{document}", *body, r"\end{document}"]) + "\n"
    rep = folder / "report.tex"
    rep.write_text(doc, encoding="utf-8", newline="")
    written.append(rep)
    return written

"""Export one item as a case card, like the MemEye paper's case-study panels: a Markdown file with
the clue images, and a LaTeX figure (the question, the gold answer, the clue images with their
rounds, the captions a text-only method saw, and per run its score and which clues it retrieved and
delivered). Images are copied next to the files so the folder is self-contained; a video clue gets
a still frame (its middle frame, as PNG). Both cards name the backbone(s) of the runs shown and print
the command that opens the app on this item (`memscope tui BENCH --item ID --mode M [--run KEY]`).
The LaTeX thumbnails are half the column width each (two a row), the whole image: the chain facts
carry no region to crop around.

Only loader-resolved media inside the benchmark root are copied (tui.media.source.local_path);
text from the data is escaped for Markdown and LaTeX, with control characters made visible.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from scorer.model import Item, Media, Round
from scorer.report.latex_text import esc
from scorer.safe_text import plain
from tui.evidence import DEFAULT_K, latest_round, run_evidence, stale_clues
from tui.media.frames import open_frames
from tui.media.source import MediaError, local_path
from tui.rows import score_of
from tui.state import AppState

CODE_POINT = re.compile(r"\{\[\}U\+[0-9A-F]{4,6}\{\]\}")  # how esc writes a character pdflatex cannot typeset
_SHELL_SAFE = re.compile(r"[A-Za-z0-9._:/@+=-]+")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#|!])")


def md(text: object) -> str:
    return _MD_SPECIAL.sub(r"\\\1", plain(str(text or ""), one_line=True))


def tex(text: object) -> str:
    """The report's LaTeX escaping (scorer.report.latex_text.esc: what pdflatex cannot typeset is
    printed as [U+XXXX], {[}U+XXXX{]} in the source), of the text with its control characters made
    visible."""
    return esc(plain(str(text or ""), one_line=True))


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "item"


def _score(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}"


def _chain_cell(complete: bool | None, got: int | None, status) -> str:
    """'yes (2/2)', 'no (1/2)' or 'not logged': the chain's completeness with its counts."""
    if got is None or status is None:
        return "not logged"
    if complete is None:
        return "no chain round in the task"
    return f"{'yes' if complete else 'no'} ({got}/{status.n_facts})"


def deep_link(state: AppState, item: Item, runs) -> str:
    """The command that opens the app on this item (and on its run, when the card shows one)."""
    parts = ["memscope", "tui", str(state.bench.root), "--item", item.item_id, "--mode", item.mode]
    if len(runs) == 1 and _SHELL_SAFE.fullmatch(runs[0][0].key):  # a run named oddly: the card lists it
        parts += ["--run", runs[0][0].key]
    return plain(" ".join(shlex.quote(p) for p in parts), one_line=True)


def backbones(runs) -> str:
    return ", ".join(sorted({ref.backbone for ref, _ in runs})) or "no run"


def video_still(state: AppState, m: Media, dest: Path) -> bool:
    """The middle frame of a video clue written to `dest` as PNG; False when it cannot be read."""
    try:
        src = open_frames(m, state.bench.root, state.allow_outside_root)
    except MediaError:
        return False
    try:
        frame = src.frame(src.count // 2)
    except MediaError:
        return False
    finally:
        src.close()
    dest.parent.mkdir(parents=True, exist_ok=True)
    frame.save(dest, format="PNG")
    return True


def copy_images(state: AppState, rounds: list[Round], out: Path) -> dict[int, Path]:
    """Copy the clue images (and a still frame of each clue video) into out/img; id(media) → path
    relative to `out`."""
    copied: dict[int, Path] = {}
    for n, r in enumerate(rounds, start=1):
        for j, m in enumerate((m for m in r.media if m.kind == "video"), start=1):
            rel = Path("img") / f"{n:02d}_v{j}_{slug(Path(m.ref).stem)}_still.png"
            if video_still(state, m, out / rel):
                copied[id(m)] = rel
        for j, m in enumerate(r.images, start=1):
            try:
                src = local_path(m, state.bench.root, state.allow_outside_root)
            except MediaError:
                continue
            if not src.is_file():
                continue
            rel = Path("img") / f"{n:02d}_{j}_{slug(src.stem)}{src.suffix.lower()}"
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, out / rel)
            copied[id(m)] = rel
    return copied


def _runs(state: AppState, item: Item, backbone: str | None):
    preds = state.predictions(item)
    return [(ref, p) for ref, p in preds if backbone is None or ref.backbone == backbone] or preds


def _media_note(m: Media, copied: dict[int, Path]) -> str:
    if id(m) in copied:
        return ""
    return m.problem or ("remote, not fetched" if m.is_remote else f"{m.kind} not copied")


def markdown(state: AppState, item: Item, runs, copied: dict[int, Path]) -> str:
    task = state.task(item)
    rounds = list(task.clue_chain(item))
    latest, stale = latest_round(task, item), stale_clues(task, item)
    cell = f"({','.join(sorted(item.x))}, {','.join(sorted(item.y))})"
    lines = [f"# Case: {md(item.item_id)} ({item.mode})", "",
             f"**Task:** {md(task.name)} · **Cell:** {md(cell)} · "
             f"**Answerable:** {'yes' if item.answerable else 'no'} · **Backbone:** {md(backbones(runs))}", "",
             "Open it in memscope:", "", f"    {deep_link(state, item, runs)}", ""]
    if runs:
        lines += [f"| run | backbone | score | chain retrieved (top-{DEFAULT_K}) | chain delivered |",
                  "|---|---|---|---|---|"]
        for ref, p in runs:
            ev = run_evidence(task, item, p)
            s = ev.marks.status
            lines.append(f"| {md(ref.display)} | {md(ref.backbone)} | {_score(score_of(p, item.mode))} | "
                         f"{_chain_cell(ev.marks.chain_retrieved, s and s.n_retrieved, s)} | "
                         f"{_chain_cell(ev.marks.chain_delivered, s and s.n_delivered, s)} |")
        lines.append("")
        if not item.answerable:
            lines += ["*Abstention control: the report's evidence and delivery tables leave this item out.*", ""]
    lines += ["## Question", "", f"**Q:** {md(item.question)}", "", f"**A:** {md(item.answer)}", ""]
    if item.rotations:
        rot = item.rotations[0]
        lines += [f"- {md(k)}. {md(v)}{' ✓' if k == rot.answer else ''}" for k, v in rot.options.items()]
        lines.append("")
    lines += ["## Clue chain (time order)", ""]
    for n, r in enumerate(rounds, start=1):
        mark = " ★ latest" if r.round_id == latest else " ⟲ stale" if r.round_id in stale else ""
        lines.append(f"{n}. **{md(r.round_id)}** ({md(r.date or 'no date')}){mark}  ")
        if r.user:
            lines.append(f"   user: {md(r.user)}  ")
        if r.assistant:
            lines.append(f"   assistant: {md(r.assistant)}  ")
        for m in r.media:
            if id(m) in copied:
                what = " (still frame)" if m.kind == "video" else ""
                lines.append(f"   ![{md(r.round_id)} {md(m.name)}{what}]({copied[id(m)].as_posix()})  ")
            else:
                lines.append(f"   [{m.kind} {md(m.name)}: {md(_media_note(m, copied))}]  ")
            if m.text:
                lines.append(f"   *caption seen by text-only methods:* “{md(m.text)}”  ")
        lines.append("")
    lines += ["## Each run", ""]
    for ref, p in runs:
        ev = run_evidence(task, item, p)
        lines += [f"### {md(ref.display)} — {md(ref.key)} — score {_score(score_of(p, item.mode))}", "",
                  f"- prediction: {md(p.pred)}"]
        if p.judge_reasoning:
            lines.append(f"- judge's reasoning: {md(p.judge_reasoning)}")
        if ev.retrieval_logged:
            def listed(marks) -> str:
                return ", ".join(f"{md(m.round_id)}{' ✓' if m.gold else ''}{' (stale)' if m.stale else ''}"
                                 f"{' (latest)' if m.latest else ''}" for m in marks)
            top = [m for m in ev.rounds if m.in_top_k]
            pool = [m for m in ev.rounds if not m.in_top_k]
            lines.append(f"- retrieved (top-{ev.marks.k}, ranked): {listed(top) or 'nothing'}")
            if pool:
                lines.append(f"- logged beyond the top-{ev.marks.k} (candidates, not counted as retrieved): "
                             f"{listed(pool)}")
        if ev.delivered is not None:
            lines.append(f"- delivered: {', '.join(md(d.round_id) for d in ev.delivered) or 'nothing'}")
        if ev.dropped:
            lines.append(f"- retrieved (top-{ev.marks.k}) but dropped by packing: "
                         f"{', '.join(md(d.round_id) for d in ev.dropped)}")
        lines.append("")
    return "\n".join(lines)


def latex(state: AppState, item: Item, runs, copied: dict[int, Path]) -> str:
    task = state.task(item)
    rounds = list(task.clue_chain(item))
    latest, stale = latest_round(task, item), stale_clues(task, item)
    xs = ",".join(f"X_{{{x[1:]}}}" if re.fullmatch(r"X\d", x) else tex(x) for x in sorted(item.x))
    ys = ",".join(f"Y_{{{y[1:]}}}" if re.fullmatch(r"Y\d", y) else tex(y) for y in sorted(item.y))
    images = [(r, m) for r in rounds for m in r.media if id(m) in copied]
    width = "0.48" if len(images) > 1 else "0.60"  # half the column each, two a row: details stay legible
    scores = r" \quad ".join(f"{tex(ref.display)}\\,=\\,{_score(score_of(p, item.mode))}" for ref, p in runs)
    out = [
        "% memscope case card — needs \\usepackage{graphicx,xcolor}",
        "\\begin{figure*}[htbp]", "\\centering", "\\footnotesize", "\\fbox{%", "\\begin{minipage}{0.96\\textwidth}",
        "\\centering", "\\vspace{4pt}",
        f"\\textbf{{Case: {tex(item.item_id)}}}\\\\[2pt]",
        f"\\textit{{Task:}} {tex(task.name)} \\quad \\textit{{Cell:}} $({xs};\\,{ys})$"
        f" \\quad \\textit{{Backbone:}} {tex(backbones(runs))}\\\\[1pt]",
        f"{{\\scriptsize\\texttt{{{tex(deep_link(state, item, runs))}}}}}\\\\[1pt]",
    ]
    if scores:
        out.append(f"{scores}\\\\[2pt]")
    out.append("\\vspace{4pt}\\hrule\\vspace{5pt}")
    if images:
        for i, (r, m) in enumerate(images):
            sep = ("\\hfill" if i % 2 == 0 else "\\\\[4pt]") if i < len(images) - 1 else ""
            still = " (video, still frame)" if m.kind == "video" else ""
            out.append(f"\\begin{{minipage}}[t]{{{width}\\linewidth}}\\centering"
                       f"\\includegraphics[width=\\linewidth,height=2in,keepaspectratio]{{{copied[id(m)].as_posix()}}}\\\\"
                       f"{{\\scriptsize {tex(r.round_id)}{still}"
                       f"{' (latest)' if r.round_id == latest else ' (stale)' if r.round_id in stale else ''}}}"
                       f"\\end{{minipage}}{sep}")
        out.append("\\vspace{4pt}\\hrule\\vspace{5pt}")
    out += ["\\begin{minipage}{0.94\\linewidth}\\scriptsize",
            f"\\textbf{{Q:}} {tex(item.question)}\\\\[3pt]", f"\\textbf{{A:}} {tex(item.answer)}",
            "\\end{minipage}"]
    captions = [(r, m) for r in rounds for m in r.media if m.text]
    if captions:
        out += ["\\vspace{4pt}", "\\colorbox{gray!10}{\\parbox{0.91\\linewidth}{\\scriptsize",
                "\\textbf{Captions seen by text-only methods:}\\\\"]
        out += [f"{tex(r.round_id)}: \\textit{{``{tex(m.text)}''}}\\\\" for r, m in captions]
        out.append("}}")
    if runs and rounds:
        cols = "l" + "c" * len(rounds)
        out += ["\\vspace{4pt}", "{\\scriptsize", f"\\begin{{tabular}}{{{cols}}}",
                " & ".join(["run"] + [tex(r.round_id) for r in rounds]) + " \\\\ \\hline"]
        for ref, p in runs:
            ev = run_evidence(task, item, p)
            ret = {m.round_id for m in ev.rounds if m.in_top_k}  # retrieved = in the top K, as the scorer counts
            dlv = {d.round_id for d in ev.delivered or ()}
            cells = []
            for r in rounds:
                if ev.delivered is not None and r.round_id in dlv:
                    cells.append("delivered")
                elif ev.retrieval_logged and r.round_id in ret:
                    cells.append("retrieved")
                elif not ev.retrieval_logged and ev.delivered is None:
                    cells.append("?")
                else:
                    cells.append("missing")
            out.append(" & ".join([tex(ref.display)] + cells) + " \\\\")
        out += ["\\end{tabular}}"]
    out += ["\\vspace{4pt}", "\\end{minipage}", "}",
            f"\\caption{{{tex(item.item_id)}: gold clue chain beside what each run retrieved (in its top-{DEFAULT_K}) "
            "and delivered.}",
            f"\\label{{fig:case-{slug(item.item_id).lower()}}}", "\\end{figure*}", ""]
    if CODE_POINT.search("\n".join(out[1:])):
        out.insert(1, "% characters pdflatex has no glyph for (emoji, CJK, …) are written as [U+XXXX] "
                      "(in this source {[}U+XXXX{]}); case.md has the text as it is")
    return "\n".join(out)


class CaseCardError(ValueError):
    """The card cannot be written as UTF-8 (a lone surrogate in the data): one line for the app."""


def _encoded(text: str, what: str, item: Item) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as err:
        bad = text[err.start:err.end]
        raise CaseCardError(f"{plain(item.item_id)}: the {what} holds text that cannot be written as UTF-8 "
                            f"({bad.encode('unicode_escape', 'backslashreplace').decode('ascii')} at character "
                            f"{err.start}); nothing written") from None


def export_case(state: AppState, item: Item, backbone: str | None = None) -> list[Path]:
    """Write <exports>/<item>/case.md, case.tex and img/*; returns the paths written.

    Both texts are built and encoded before anything is written: text that cannot be written (a lone
    surrogate) raises CaseCardError and leaves no file behind, empty or half-written."""
    out = state.exports_dir / slug(f"{item.item_id}_{item.mode}")
    task = state.task(item)
    runs = _runs(state, item, backbone)
    clues = list(task.clue_chain(item))
    # checked before the folder or any image is written (image paths are ASCII slugs: no new failure)
    _encoded(markdown(state, item, runs, {}), "case card", item)
    _encoded(latex(state, item, runs, {}), "LaTeX card", item)
    out.mkdir(parents=True, exist_ok=True)
    copied = copy_images(state, clues, out)
    md_bytes = _encoded(markdown(state, item, runs, copied), "case card", item)
    tex_bytes = _encoded(latex(state, item, runs, copied), "LaTeX card", item)
    md_path, tex_path = out / "case.md", out / "case.tex"
    md_path.write_bytes(md_bytes)
    tex_path.write_bytes(tex_bytes)
    return [md_path.resolve(), tex_path.resolve(), *((out / p).resolve() for p in copied.values())]

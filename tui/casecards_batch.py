"""Case cards of every item in the Items screen's current filter: one Markdown and one LaTeX file per
item (tui/casecard.py's `markdown` and `latex`, the single-card writer's own text), the clue images
under media/<item>/, and an index (index.md listing every card with what the filter was; index.tex
\\input-ing the LaTeX cards). The runs on each card are the run(s) the filter is about (a Scores
cell's run, A right / B wrong's two), else every run that answered.

The first export asks for the folder (default <exports>/cards); later ones reuse it. Every card's
text is built and checked as UTF-8 before anything is written (casecard.CaseCardError otherwise).
`export_cards` is plain Python; `ask_and_export` is the Items screen's key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from tui.casecard import CaseCardError, _encoded, copy_images, latex, markdown, md, slug
from tui.state import AppState, Filter


def chosen_runs(f: Filter) -> list[int]:
    """The RunRef indices a filter is about, in order: its run, then A right / B wrong's."""
    return list(dict.fromkeys(r for r in (f.run, f.right_run, f.wrong_run) if r is not None))


def _runs_for(state: AppState, item, runs: Sequence[int]):
    preds = state.predictions(item)
    if not runs:
        return preds
    return [(ref, p) for ref, p in preds if ref.index in runs]


def export_cards(state: AppState, keys: Sequence[tuple[str, str]], folder: Path, f: Filter | None = None,
                 runs: Sequence[int] | None = None) -> list[Path]:
    """Write the cards of `keys` under `folder`; the paths of the card files and the two indexes."""
    runs = chosen_runs(f) if runs is None and f is not None else list(runs or [])
    texts = []
    for key in keys:
        item = state.bench.item(*key)
        chosen = _runs_for(state, item, runs)
        _encoded(markdown(state, item, chosen, {}), "case card", item)  # nothing written if one cannot be
        _encoded(latex(state, item, chosen, {}), "LaTeX card", item)
        texts.append((key, item, chosen))
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    index_md = ["# Case cards", ""]
    if f is not None:
        what = "; ".join(f"{n} = {v}" for n, v in f.describe(state)) or "no filter"
        index_md += [f"**Filter:** {md(what)}", ""]
    names = [state.run_refs[i] for i in runs]
    index_md += [f"**Runs:** {md(', '.join(f'{r.display} ({r.backbone}, {r.mode})' for r in names) or 'every run')}",
                 "", f"{len(texts)} item(s).", "", "| # | item | mode | cell | Markdown | LaTeX |",
                 "|---|---|---|---|---|---|"]
    index_tex = ["% memscope case cards — needs \\usepackage{graphicx,xcolor}; \\input this file"]
    for n, (key, item, chosen) in enumerate(texts, start=1):
        stem = slug(f"{item.item_id}_{item.mode}")
        media = Path("media") / stem
        clues = list(state.task(item).clue_chain(item))
        copied = {k: media / rel for k, rel in copy_images(state, clues, folder / media).items()}
        md_path, tex_path = folder / f"{stem}.md", folder / f"{stem}.tex"
        md_path.write_bytes(_encoded(markdown(state, item, chosen, copied), "case card", item))
        tex_path.write_bytes(_encoded(latex(state, item, chosen, copied), "LaTeX card", item))
        written += [md_path, tex_path]
        cell = f"({','.join(sorted(item.x))}, {','.join(sorted(item.y))})"
        index_md.append(f"| {n} | {md(item.item_id)} | {item.mode} | {md(cell)} | [{stem}.md]({stem}.md) | "
                        f"[{stem}.tex]({stem}.tex) |")
        index_tex.append(f"\\input{{{stem}.tex}}")
    (folder / "index.md").write_text("\n".join(index_md) + "\n", encoding="utf-8")
    (folder / "index.tex").write_text("\n".join(index_tex) + "\n", encoding="utf-8")
    return [*written, folder / "index.md", folder / "index.tex"]


def ask_and_export(screen: Any, keys: list[tuple[str, str]], f: Filter) -> None:
    """The Items screen's `X`: the folder asked the first time (then remembered in the state), the
    cards written in a thread worker, one notification with where."""
    from tui.modals.folder import FolderDialog

    state = screen.state
    if not keys:
        screen.notify("No items shown: nothing to export.", severity="warning")
        return

    def run(folder: Path) -> None:
        state.cards_dir = folder

        def work() -> None:
            try:
                paths = export_cards(state, keys, folder, f)
            except (OSError, CaseCardError) as err:
                screen.app.call_from_thread(screen.notify, f"Export failed: {err}", severity="error", markup=False)
                return
            screen.app.call_from_thread(screen.notify, f"{len(keys)} case card(s) written under {folder} "
                                        f"(index: {paths[-2].name}, {paths[-1].name})", title="Export",
                                        markup=False, timeout=8)

        screen.run_worker(work, thread=True, group="cards", exclusive=True)

    if state.cards_dir is not None:
        run(state.cards_dir)
        return

    def chosen(text: str | None) -> None:
        if text:
            run(Path(text).expanduser())

    screen.app.push_screen(FolderDialog(f"Case cards of {len(keys)} item(s): write them to which folder?",
                                        str(state.exports_dir / "cards")), chosen)

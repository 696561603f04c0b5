"""Case cards of every item in the Items screen's current filter: one Markdown and one LaTeX file per
item (tui/casecard.py's `markdown` and `latex`, the single-card writer's own text), the clue images
under media/<item>/, and an index (index.md listing every card with what the filter was; index.tex
\\input-ing the LaTeX cards). The runs on each card are the run(s) the filter is about (a Scores
cell's run, A right / B wrong's two), else every run that answered.

The first export asks for the folder (default <exports>/cards); later ones reuse it. Every card's
text is built and checked as UTF-8 before anything is written (casecard.CaseCardError otherwise).
`export_cards` is plain Python; `ask_and_export` is the Items screen's key.

In a browser (`memscope serve`) the batch also goes to the browser as ONE download, `<folder>.zip`
of the files this export wrote (cards, their images, the two indexes; tui/serve_deliver.py), built
in memory in the worker and sent from the app thread. A browser takes a download only soon after a
key press, and a large batch can outlast that: the zip is then held and the notice says to press
`D` (the Items screen's `download_cards`), which sends it on that fresh key press. Each notice says
what happened: sent and fetched by the browser, not fetched (press D), or held (press D).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Sequence

from tui.casecard import CaseCardError, _encoded, copy_images, latex, markdown, md, slug
from tui.keymap import shown_key
from tui.rows import Filter
from tui.serve_deliver import FETCH_WAIT, Offer, card_zip, send
from tui.state import AppState

DOWNLOAD_KEY = "items.download-cards"  # the binding id of the key that sends a held zip


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
    """Write the cards of `keys` under `folder`; the path of every file written: each card's .md and
    .tex and the images it links (media/<card>/img/…), then index.md and index.tex."""
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
        written += [md_path, tex_path, *(folder / rel for rel in copied.values())]
        cell = f"({','.join(sorted(item.x))}, {','.join(sorted(item.y))})"
        index_md.append(f"| {n} | {md(item.item_id)} | {item.mode} | {md(cell)} | [{stem}.md]({stem}.md) | "
                        f"[{stem}.tex]({stem}.tex) |")
        index_tex.append(f"\\input{{{stem}.tex}}")
    (folder / "index.md").write_text("\n".join(index_md) + "\n", encoding="utf-8")
    (folder / "index.tex").write_text("\n".join(index_tex) + "\n", encoding="utf-8")
    return [*written, folder / "index.md", folder / "index.tex"]


def ask_and_export(screen: Any, keys: list[tuple[str, str]], f: Filter) -> None:
    """The Items screen's `E`: the folder asked the first time (then remembered in the state), the
    cards written in a thread worker, one notification with where (and, in a browser, the zip)."""
    from tui.modals.folder import FolderDialog

    state = screen.state
    if not keys:
        screen.notify("No items shown: nothing to export.", severity="warning")
        return

    def run(folder: Path, pressed: float) -> None:
        state.cards_dir = folder
        app = screen.app
        web = bool(getattr(app, "is_web", False))

        def work() -> None:
            try:
                paths = export_cards(state, keys, folder, f)
            except (OSError, CaseCardError) as err:
                app.call_from_thread(screen.notify, f"Export failed: {err}", severity="error", markup=False)
                return
            written = (f"{len(keys)} case card(s) written under {folder} "
                       f"(index: {paths[-2].name}, {paths[-1].name})")
            if not web:
                app.call_from_thread(screen.notify, written, title="Export", markup=False, timeout=8)
                return
            try:
                offer = Offer(*card_zip(paths, folder), pressed=pressed)
            except OSError as err:
                app.call_from_thread(screen.notify, f"{written}\n(not sent to your browser: {err})",
                                     title="Export", severity="warning", markup=False, timeout=10)
                return
            app.call_from_thread(_offer, app, state, offer, written)

        screen.run_worker(work, thread=True, group="cards", exclusive=True)

    if state.cards_dir is not None:
        run(state.cards_dir, time.monotonic())
        return

    def chosen(text: str | None) -> None:
        if text:
            run(Path(text).expanduser(), time.monotonic())  # the dialog's enter: the key the browser counts

    screen.app.push_screen(FolderDialog(f"Case cards of {len(keys)} item(s): write them to which folder?",
                                        str(state.exports_dir / "cards")), chosen)


def _size(data: bytes) -> str:
    return f"{len(data) / 1e6:.1f} MB" if len(data) >= 1e6 else f"{max(1, round(len(data) / 1e3))} kB"


def _offer(app: Any, state: AppState, offer: Offer, written: str) -> None:
    """On the app thread, the batch's zip made: sent now if its key press is recent enough for the
    browser to open it, else held for the download key."""
    state.cards_offer = offer
    what = f"{offer.name} ({_size(offer.data)})"
    if offer.in_window():
        _send(app, state, offer, f"{written}\nSending {what} to your browser…")
        return
    took = time.monotonic() - offer.pressed
    key = shown_key(DOWNLOAD_KEY, getattr(app, "user_keys", None))
    app.notify(f"{written}\n{what} is ready: press {key} on the Items screen to download it (the export "
               f"took {took:.1f} s; a browser takes a download only just after a key press).",
               title="Export", markup=False, timeout=30)


def _send(app: Any, state: AppState, offer: Offer, text: str) -> None:
    key = shown_key(DOWNLOAD_KEY, getattr(app, "user_keys", None))

    def fetched(o: Offer) -> None:
        app.notify(f"{o.name}: downloaded by your browser ({_size(o.data)}).", title="Export", markup=False,
                   timeout=8)

    def check() -> None:
        if not offer.fetched and offer.sends == this and state.cards_offer is offer:
            app.notify(f"Your browser has not fetched {offer.name} (its popup blocker?): press {key} on the "
                       f"Items screen to download it.", title="Export", severity="warning", markup=False, timeout=30)

    offer.fetched = False
    offer.sends += 1
    this = offer.sends
    try:
        send(app, offer, fetched)
    except OSError as err:
        app.notify(f"{text}\n(not sent to your browser: {err})", title="Export", severity="warning",
                   markup=False, timeout=10)
        return
    app.notify(text, title="Export", markup=False, timeout=8)
    app.set_timer(FETCH_WAIT, check)


def download_cards(screen: Any) -> None:
    """The Items screen's `D`: send the last batch's zip to the browser on this key press."""
    state, app = screen.state, screen.app
    if not getattr(app, "is_web", False):
        where = f" (the last ones are under {state.cards_dir})" if state.cards_dir is not None else ""
        screen.notify(f"Downloading goes to a browser under memscope serve; here the cards are on disk{where}.",
                      markup=False)
        return
    offer = state.cards_offer
    if offer is None:
        export = shown_key("items.export-cards", getattr(app, "user_keys", None))
        screen.notify(f"No case cards to download yet: {export} exports the cards of the items shown.",
                      severity="warning", markup=False)
        return
    offer.pressed = time.monotonic()
    _send(app, state, offer, f"Sending {offer.name} ({_size(offer.data)}) to your browser…")

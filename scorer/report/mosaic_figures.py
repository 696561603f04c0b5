"""Figures of the MOSAIC sections (the `plot` extra), matplotlib's object API, in
scorer.report.figstyle's style (Okabe–Ito colours, paper sizes; PNG, PDF and SVG):
- figures/mosaic_ladder.png: the ladder as a waterfall, one panel per backbone and mode — a bar per
  condition at its Score (n under it), each paired drop of the ladder (DROPS) drawn as a floating
  segment beside the later rung of its pair, from the upper rung's score on the paired items down
  by the drop, with its value and 95% CI, and Chain delivered as a separate marker series;
- figures/mosaic_sweep.png: Score, Chain delivered and required-fact coverage against the delivery
  budget (loosest left), one panel per backbone, mode and ranking.
Labels from data are drawn as plain text (no mathtext)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scorer.report import figstyle

OKABE_ITO = figstyle.OKABE_ITO
SHORT = {"gold_symbolic": "Gold\nsymbolic", "gold_native": "Gold\nnative", "gold_generic_text": "Gold\ngeneric",
         "gold_structured_text": "Gold\nstructured", "retrieved_full": "Retr.\nfull", "retrieved_budget":
         "Retr.\nbudget", "end_to_end": "End-to-\nend"}
DROP_SHORT = {"perception_cost": "perception", "textification_cost": "text-ification",
              "avoidable_write_compression": "structured", "retrieval_loss": "retrieval",
              "delivery_loss": "delivery", "controller_loss": "controller"}


def _plain(text: Any) -> str:
    return str(text).replace("$", r"\$")


def ladder_waterfall(data: dict):
    ladder, drops = data.get("ladder") or [], data.get("drops") or []
    panels: dict[tuple, list[dict]] = {}
    for r in ladder:
        if r.get("score") is not None:
            panels.setdefault((r["backbone"], r["mode"]), []).append(r)
    if not panels:
        return None
    fig = figstyle.figure(figstyle.WIDE_IN, 2.9 * len(panels))
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    for ax, ((backbone, mode), rows) in zip(axes, sorted(panels.items())):
        pos = {r["condition"]: i for i, r in enumerate(rows)}
        xs = list(range(len(rows)))
        ax.bar(xs, [r["score"] for r in rows], width=0.55, color=OKABE_ITO["sky"], edgecolor=OKABE_ITO["blue"],
               label="Score (answerable items)")
        chain = [(i, r["chain"]) for i, r in enumerate(rows) if r.get("chain") is not None]
        if chain:
            ax.plot([i for i, _ in chain], [v for _, v in chain], "D--", color=OKABE_ITO["orange"],
                    label="Chain delivered (a separate measure)")
        for i, r in enumerate(rows):
            ax.text(i, 0.02, f"n={r['n']}", ha="center", va="bottom", fontsize=figstyle.SMALL_PT)
        k = -1
        for d in drops:
            if (d["backbone"], d["mode"]) != (backbone, mode) or d["upper"] not in pos or d["lower"] not in pos:
                continue
            k += 1
            i, j = pos[d["upper"]], pos[d["lower"]]
            if d.get("drop") is None:
                continue
            top, bottom = d["mean_a"], d["mean_a"] - d["drop"]
            x = max(i, j) - 0.4  # beside the later rung of the pair
            colour = OKABE_ITO["vermillion"] if d["drop"] > 0 else OKABE_ITO["green"]
            ax.vlines(x, min(top, bottom), max(top, bottom), colors=colour, linewidth=5)
            ci = "" if d.get("ci_low") is None else f"\n[{d['ci_low']:+.2f}, {d['ci_high']:+.2f}]"
            label = _plain(f"{DROP_SHORT.get(d.get('drop_name'), d['title'])}\nΔ {d['drop']:+.3f}{ci}")
            # staggered heights, so that the labels of neighbouring drops stay clear of each other
            ax.text(x, max(top, bottom) + 0.03 + 0.2 * (k % 2), label, ha="center", va="bottom",
                    fontsize=figstyle.SMALL_PT, color=colour, linespacing=1.0, zorder=3,
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 0.6})
        ax.set_xticks(xs, [SHORT.get(r["condition"], _plain(r["condition"])) for r in rows])
        ax.set_ylim(0, 1.45)
        ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
        ax.set_ylabel("Score / Chain")
        ax.set_title(_plain(f"{backbone} · {mode}: Δ = paired drop, upper − lower rung [item-bootstrap 95% CI]"))
        ax.grid(axis="y", alpha=0.3)
        ax.legend(loc="upper right", ncol=2, frameon=False)
    return fig


def sweep_curve(rows: Sequence[dict]):
    panels: dict[tuple, list[dict]] = {}
    for r in rows:
        panels.setdefault((r["backbone"], r["mode"], r["ranking"]), []).append(r)
    if not panels:
        return None
    cols = min(len(panels), 2)
    fig = figstyle.figure(figstyle.WIDE_IN, 2.6 * ((len(panels) + cols - 1) // cols))
    axes = fig.subplots((len(panels) + cols - 1) // cols, cols, squeeze=False).ravel()
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    series = (("score", "Score", OKABE_ITO["blue"], "o-"), ("chain", "Chain delivered", OKABE_ITO["orange"], "D-"),
              ("coverage", "Required-fact coverage", OKABE_ITO["green"], "s--"),
              ("recall", "Required-fact recall (retrieved)", OKABE_ITO["purple"], ":"))
    for ax, ((backbone, mode, ranking), pts) in zip(axes, sorted(panels.items())):
        xs = list(range(len(pts)))  # in the section's order: loosest budget first
        for key, label, colour, style in series:
            vals = [(i, p[key]) for i, p in enumerate(pts) if p.get(key) is not None]
            if vals:
                ax.plot([i for i, _ in vals], [v for _, v in vals], style, color=colour, label=label)
        ax.set_xticks(xs, [_plain(f"{p['budget']}\nn={p['n']}") for p in pts])
        ax.set_xlabel("delivery budget (tighter →)")
        ax.set_ylim(0, 1.05)
        ax.set_title(_plain(f"{backbone} · {mode}\nranking {ranking}"))
        ax.set_ylabel("Score / rate over items")
        ax.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, frameon=False)
    return fig


def write(sections: Sequence[Any], folder: Path) -> list[Path]:
    """The MOSAIC figures whose sections have data, as PNG, PDF and SVG (scorer.report.figstyle)."""
    by_name = {s.name: s for s in sections if not s.reason}
    folder.mkdir(parents=True, exist_ok=True)
    out: list[Path] = []
    with figstyle.style():
        if "mosaic_ladder" in by_name:
            fig = ladder_waterfall(by_name["mosaic_ladder"].data)
            out += figstyle.save(fig, folder / "mosaic_ladder.png") if fig is not None else []
        if "mosaic_sweep" in by_name:
            fig = sweep_curve(by_name["mosaic_sweep"].data)
            out += figstyle.save(fig, folder / "mosaic_sweep.png") if fig is not None else []
    return out

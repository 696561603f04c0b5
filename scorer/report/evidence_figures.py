"""PNG figures of the evidence sections (the `plot` extra), with matplotlib's object API:
- figures/recall_at_k.png: Any-Clue / Coverage / Full-Clue Recall@K, K = 1…50, one line per run group
  (section `evidence_curve`; an MCQ curve identical to its open mirror is drawn once);
- figures/abstention_tradeoff.png: answer score on answerable items (x) against correct-abstention
  rate (y) per run group, marker area growing with the false-abstention rate, one panel per mode
  (section `abstention`), as MOSAIC's answer-vs-abstain figure.
Labels come from data (method and backbone names) and are drawn as plain text (no mathtext)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

CURVE_METRICS = (("any_clue_recall", "Any-Clue Recall@K"), ("coverage", "Coverage@K"),
                 ("full_clue_recall", "Full-Clue Recall@K"))


def _plain(text: str) -> str:
    """Data text drawn literally: matplotlib treats `$…$` as mathtext, so escape dollars."""
    return str(text).replace("$", r"\$")


def _figure(w: float, h: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w, h), dpi=110)
    FigureCanvasAgg(fig)
    return fig


def recall_curve(rows: Sequence[dict], path: Path) -> Path | None:
    curves: dict[tuple, dict[str, list[tuple[int, float]]]] = {}
    for r in rows:
        key = (r["display"], r["backbone"], r["mode"], r["n"])
        curves.setdefault(key, {}).setdefault(r["metric"], []).append((r["k"], r["value"]))
    if not curves:
        return None
    drawn: dict[tuple, tuple] = {}
    for key in sorted(curves, key=lambda k: (k[0], k[1], k[2] != "open")):
        sig = tuple(tuple(sorted(v)) for _, v in sorted(curves[key].items()))
        twin = (key[0], key[1], sig)
        if twin in drawn:  # identical to the mode already drawn
            continue
        drawn[twin] = key
    fig = _figure(13, 4)
    axes = fig.subplots(1, 3, sharey=True)
    for ax, (metric, title) in zip(axes, CURVE_METRICS):
        for (display, backbone, mode, n) in drawn.values():
            pts = sorted(curves[(display, backbone, mode, n)].get(metric, []))
            if pts:
                ax.plot([k for k, _ in pts], [v for _, v in pts], label=_plain(f"{display} · {backbone} · {mode} (n={n})"))
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("K")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("rate over items")
    axes[-1].legend(fontsize=6, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})
    return path


def abstention_tradeoff(rows: Sequence[dict], path: Path) -> Path | None:
    points: dict[tuple, dict[str, Any]] = {}
    for r in rows:
        points.setdefault((r["mode"], r["display"], r["backbone"]), {})[r["metric"]] = r
    usable = {k: v for k, v in points.items()
              if (v.get("answerable_score") or {}).get("value") is not None
              and (v.get("correct_abstention") or {}).get("value") is not None}
    if not usable:
        return None
    modes = sorted({k[0] for k in usable})
    displays = sorted({k[1] for k in usable})
    backbones = sorted({k[2] for k in usable})
    markers = "os^DvP*Xph"
    fig = _figure(5.2 * len(modes) + 2.6, 4.6)
    axes = fig.subplots(1, len(modes), squeeze=False)[0]
    for ax, mode in zip(axes, modes):
        for (m, display, backbone), v in sorted(usable.items()):
            if m != mode:
                continue
            x, y = v["answerable_score"]["value"], v["correct_abstention"]["value"]
            fa = (v.get("false_abstention") or {}).get("value") or 0.0
            ax.scatter([x], [y], s=40 + 400 * fa, alpha=0.7, color=f"C{displays.index(display) % 10}",
                       marker=markers[backbones.index(backbone) % len(markers)],
                       label=_plain(f"{display} · {backbone}") if mode == modes[-1] else None)
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel("answer score on answerable items")
        ax.set_ylabel("correct-abstention rate (unanswerable)")
        ax.set_title(f"{mode}: answer vs abstain", fontsize=9)
        ax.grid(alpha=0.3)
    axes[-1].legend(fontsize=6, loc="center left", bbox_to_anchor=(1.02, 0.5),
                    title="colour = method, shape = backbone;\nmarker area grows with false abstention",
                    title_fontsize=6)
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})
    return path


def write(sections: Sequence[Any], folder: Path) -> list[Path]:
    """The evidence figures whose sections have data (matplotlib must be importable)."""
    by_name = {s.name: s for s in sections if not s.reason}
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    if "evidence_curve" in by_name:
        p = recall_curve(by_name["evidence_curve"].data, folder / "recall_at_k.png")
        if p:
            out.append(p)
    if "abstention" in by_name:
        p = abstention_tradeoff(by_name["abstention"].data, folder / "abstention_tradeoff.png")
        if p:
            out.append(p)
    return out

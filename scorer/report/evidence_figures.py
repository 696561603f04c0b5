"""Figures of the evidence sections (the `plot` extra), with matplotlib's object API, as PNG
(300 dpi), PDF and SVG in scorer.report.figstyle's colour-blind-safe style:
- figures/recall_at_k.png: Any-Clue / Coverage / Full-Clue Recall@K, K = 1…50, one line per run group
  (section `evidence_curve`; an MCQ curve identical to its open mirror is drawn once);
- figures/abstention_tradeoff.png: answer score on answerable items (x) against correct-abstention
  rate (y) per run group, marker area growing with the false-abstention rate, one panel per mode
  (section `abstention`), as MOSAIC's answer-vs-abstain figure.
Labels come from data (method and backbone names) and are drawn as plain text (no mathtext)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

from scorer.report import figstyle

CURVE_METRICS = (("any_clue_recall", "Any-Clue Recall@K"), ("coverage", "Coverage@K"),
                 ("full_clue_recall", "Full-Clue Recall@K"))


def _plain(text: str) -> str:
    """Data text drawn literally: matplotlib treats `$…$` as mathtext, so escape dollars."""
    return str(text).replace("$", r"\$")


def _legend_below(fig, handles, labels, title: str | None = None) -> None:
    """The legend under the panels, in as many columns as a printed line holds."""
    longest = max((len(lb) for lb in labels), default=10)
    ncol = max(1, min(len(labels), int(figstyle.WIDE_IN * 72 / (figstyle.SMALL_PT * 0.55 * longest + 30))))
    fig.legend(handles, labels, loc="outside lower center", ncol=ncol, frameon=False, title=title)


def build_recall_curve(rows: Sequence[dict]):
    """Recall@K lines: colour and marker = method, dash = backbone, hollow markers for the second mode
    (no series hidden under another, and none told apart by colour alone)."""
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
    displays = sorted({k[0] for k in drawn.values()})
    backbones = sorted({k[1] for k in drawn.values()})
    modes = sorted({k[2] for k in drawn.values()})
    fig = figstyle.figure(figstyle.WIDE_IN, 2.3 + 0.17 * math.ceil(len(drawn) / 2))
    axes = fig.subplots(1, 3, sharey=True)
    handles: dict[str, Any] = {}
    for ax, (metric, title) in zip(axes, CURVE_METRICS):
        for i, (display, backbone, mode, n) in enumerate(drawn.values()):
            pts = sorted(curves[(display, backbone, mode, n)].get(metric, []))
            if not pts:
                continue
            label = _plain(f"{display} · {backbone} · {mode} (n={n})")
            ks = [k for k, _ in pts]
            c = figstyle.colour(displays.index(display))
            # equal curves stay visible: each later line is thinner (the earlier shows around it) and
            # puts its markers at other K
            (line,) = ax.plot(ks, [v for _, v in pts], color=c, linestyle=figstyle.linestyle(backbones.index(backbone)),
                              linewidth=max(0.8, 2.8 - 0.4 * i), marker=figstyle.marker(displays.index(display)),
                              markevery=_markevery(len(ks), i, len(drawn)), markersize=3.5,
                              markerfacecolor=c if modes.index(mode) == 0 else "white", label=label)
            handles.setdefault(label, line)
        ax.set_title(title)
        ax.set_xlabel("K")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("rate over items")
    _legend_below(fig, list(handles.values()), list(handles.keys()))
    return fig


def _markevery(points: int, i: int, series: int) -> tuple[int, int]:
    """Five or so markers per line, series i's shifted from the others' so that none hides another."""
    step = max(1, points // 5)
    return (i * step // max(series, 1)) % step, step


def recall_curve(rows: Sequence[dict], path: Path) -> list[Path]:
    with figstyle.style():
        fig = build_recall_curve(rows)
        return figstyle.save(fig, path) if fig is not None else []


def build_abstention_tradeoff(rows: Sequence[dict]):
    """Answer vs abstain per mode: colour = method, marker = backbone, area = false abstention."""
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
    panel = min(2.7, (figstyle.WIDE_IN - 0.3) / len(modes))
    fig = figstyle.figure(figstyle.WIDE_IN, panel + 0.9 + 0.17 * math.ceil(len(displays) * len(backbones) / 3))
    axes = fig.subplots(1, len(modes), squeeze=False, sharey=True)[0]
    handles: dict[str, Any] = {}
    for ax, mode in zip(axes, modes):
        for (m, display, backbone), v in sorted(usable.items()):
            if m != mode:
                continue
            x, y = v["answerable_score"]["value"], v["correct_abstention"]["value"]
            fa = (v.get("false_abstention") or {}).get("value") or 0.0
            label = _plain(f"{display} · {backbone}")
            pts = ax.scatter([x], [y], s=18 + 220 * fa, alpha=0.8, color=figstyle.colour(displays.index(display)),
                             marker=figstyle.marker(backbones.index(backbone)), edgecolors="black", linewidths=0.4,
                             label=label)
            handles.setdefault(label, pts)
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel("answer score (answerable)")
        ax.set_title(_plain(f"{mode}: answer vs abstain"))
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("correct abstention (unanswerable)")
    _legend_below(fig, list(handles.values()), list(handles.keys()),
                  title="colour = method, marker = backbone; area grows with false abstention")
    return fig


def abstention_tradeoff(rows: Sequence[dict], path: Path) -> list[Path]:
    with figstyle.style():
        fig = build_abstention_tradeoff(rows)
        return figstyle.save(fig, path) if fig is not None else []


def write(sections: Sequence[Any], folder: Path) -> list[Path]:
    """The evidence figures whose sections have data (matplotlib must be importable)."""
    by_name = {s.name: s for s in sections if not s.reason}
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    if "evidence_curve" in by_name:
        out += recall_curve(by_name["evidence_curve"].data, folder / "recall_at_k.png")
    if "abstention" in by_name:
        out += abstention_tradeoff(by_name["abstention"].data, folder / "abstention_tradeoff.png")
    return out

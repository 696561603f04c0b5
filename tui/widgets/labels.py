"""The X/Y taxonomy as annotators see it: each level's definition and the boundary rules (MemEye App.
"Detailed Taxonomy Definitions" and its annotation prompt, in our words), the keys that toggle the
levels (`1`–`4` X1–X4, `5`–`7` Y1–Y3), and the one-line forms of a label pair. Shown by the label
study and by the Item screen's relabel dialog, so both say the same thing.
"""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding

from scorer.model import X_LABELS, Y_LABELS, Item
from tui.acts import labels_pair
from tui.keymap import bind, key_of

X_DEFS = (
    ("X1", "Scene",
     ("the overall kind of place, activity or gist of the picture; a decent caption would usually carry it.")),
    ("X2", "Region",
     ("a part of the scene: a local area, a group of things, where things sit relative to each other.")),
    ("X3", "Instance",
     ("which particular object or person it is, told apart from similar-looking candidates, in one image "
      "or across images.")),
    ("X4", "Pixel",
     ("fine detail: exact colour, small printed text or numbers, texture, a count, small markings.")),
)
Y_DEFS = (
    ("Y1", "Atomic", "one piece of evidence, once found, is enough."),
    ("Y2", "Relational",
     ("several clues that agree must be put together, across rounds, sessions, media or references.")),
    ("Y3", "Evolutionary",
     ("the clues change over time (an update, replacement, conflict, disappearance) and the answer is the "
      "state that holds now.")),
)
RULES = (
    ("Highest bottleneck: X is the finest level of visual evidence the answer cannot do without; Y is the "
     "deepest memory operation still needed once the evidence is at hand."),
    "WHERE something is in a local area → X2. WHICH specific one among similar objects or people → X3.",
    "Reading exact text, an exact colour, small marks or other fine attributes → X4.",
    ("Y3 only when later evidence changes or overrides earlier evidence; clues that add up without "
     "conflict → Y2; a single clue → Y1."),
)
X_KEYS = {key_of(f"labels.toggle-{x.lower()}"): x for x in X_LABELS}  # 1–4 (tui/keymap.py)
Y_KEYS = {key_of(f"labels.toggle-{y.lower()}"): y for y in Y_LABELS}  # 5–7


def toggle_bindings() -> list[Binding]:
    """1–7 toggle X1–X4 and Y1–Y3 (`action_toggle(label)`), in the label study and the relabel dialog."""
    return [bind(f"labels.toggle-{v.lower()}", f"toggle('{v}')", show=False) for v in {**X_KEYS, **Y_KEYS}.values()]


def definitions(sel_x: set[str], sel_y: set[str]) -> Text:
    out = Text()
    for title, defs, keys, sel in (("X · visual evidence granularity", X_DEFS, X_KEYS, sel_x),
                                   ("Y · memory-reasoning depth", Y_DEFS, Y_KEYS, sel_y)):
        out.append(title + "\n", style="bold underline")
        key_of = {v: k for k, v in keys.items()}
        for code, name, text in defs:
            on = code in sel
            out.append(f"{'■' if on else '□'} {key_of[code]} {code} {name}", style="bold reverse" if on else "bold")
            out.append(f" {text}\n")
        out.append("\n")
    out.append("Rules\n", style="bold underline")
    for rule in RULES:
        out.append(f"· {rule}\n", style="dim")
    out.rstrip()
    return out


labels_str = labels_pair  # "X2+X3 · Y1" (tui/acts.py: the one form, also in saved and undo lines)


def gold_compare(item: Item, x, y) -> Text:
    same_x, same_y = set(x) == set(item.x), set(y) == set(item.y)
    out = Text.assemble("gold ", (labels_str(item.x, item.y), "bold"))
    if same_x and same_y:
        out.append(" — same", style="green")
    else:
        out.append(" — differs on " + " and ".join(a for a, same in (("X", same_x), ("Y", same_y)) if not same),
                   style="yellow")
    return out

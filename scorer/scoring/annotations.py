"""The annotation store's current state for a report: every label, verdict and oracle act and every
adjudication (columns `of`, `decision`, `reason`) as one DataFrame with a `kind` column (`ctx.annotations`), and its inputs record (acts per kind, a digest)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def _check_study(store, study: str, kinds) -> None:
    """`--study` naming no study of the database and no act's study (a misspelling) is an error:
    without this every annotation section would say "no verdicts", a wrong reason."""
    from scorer.errors import UserError

    known = {st.name for st in store.studies()}
    for kind in kinds:
        f = store.frame(kind, None)
        if "study" in f:
            known |= {str(v) for v in f["study"].dropna().unique()}
    if study not in known:
        shown = ", ".join(repr(n) for n in sorted(known)[:10]) or "none"
        raise UserError(f"--study {study!r}: no study of that name in {store.path} and no act made in one "
                        f"(studies there: {shown})")


def read_annotations(db: str | Path, study: str | None) -> tuple[pd.DataFrame, dict]:
    # Imported here, for start-up speed: pandas loads while the runs are read (scorer.scoring.pipeline),
    # and the store (SQLite) only with --db.
    import pandas as pd

    from scorer.store import DECISION_KINDS, Store  # the kinds whose latest act stands
    from scorer.store.payload import ADJUDICATION  # and the decisions that are the gold where they exist

    parts = []
    with Store(db, create=False) as store:
        for kind in (*DECISION_KINDS, ADJUDICATION):
            # a decision is the gold of its entry whichever study made it (`--study` names the acts')
            f = store.frame(kind, None if kind == ADJUDICATION else study)
            f.insert(0, "kind", kind)
            parts.append(f)
        if study is not None and all(p.empty for p in parts[:len(DECISION_KINDS)]):  # not the adjudications
            _check_study(store, study, DECISION_KINDS)
    frame = pd.concat([p for p in parts if not p.empty], ignore_index=True) if any(not p.empty for p in parts) \
        else pd.concat(parts, ignore_index=True)
    canon = frame.drop(columns=[c for c in ("event_id",) if c in frame]).sort_values(["uid"]) if "uid" in frame else frame
    digest = hashlib.sha256(canon.to_json(orient="records", force_ascii=False).encode()).hexdigest()
    counts = {k: int((frame["kind"] == k).sum()) for k in (*DECISION_KINDS, ADJUDICATION)}
    return frame, {"db": Path(db).as_posix(), "study": study, "acts": counts, "sha256": digest}

"""Resolving media references from data files to local paths, never outside the benchmark root."""

from __future__ import annotations

import os
from pathlib import Path

REMOTE_PREFIXES = ("http://", "https://")


def is_remote(ref: str) -> bool:
    return ref.lower().startswith(REMOTE_PREFIXES)


def inside(path: Path, root: Path) -> bool:
    """True when `path` (after resolving `..` and symlinks) lies under `root`."""
    try:  # realpath, not Path.resolve: a symlink loop raises RuntimeError there
        Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
        return True
    except (ValueError, OSError):
        return False


def resolve_media(
    ref: str, dialog_file: Path, root: Path, allow_outside_root: bool = False
) -> tuple[Path | None, str | None]:
    """Find the local file a reference names, as the upstream loader does.

    Candidates, in order: relative to the dialog file's folder, to its parent, to the benchmark root,
    to `<root>/image`. Returns (path, None) or (None, problem). A reference that leaves the
    benchmark root is refused unless the user allowed it, even when the file exists.
    """
    if not ref or not isinstance(ref, str):
        return None, "empty media reference"
    if "\x00" in ref:
        return None, "media reference contains a NUL byte"
    ref_path = Path(ref)
    if ref_path.is_absolute():
        candidates = [ref_path]
    else:
        bases = [dialog_file.parent, dialog_file.parent.parent, root, root / "image"]
        seen: list[Path] = []
        for b in bases:
            if b not in seen:
                seen.append(b)
        candidates = [Path(os.path.normpath(b / ref_path)) for b in seen]
    outside_hit: Path | None = None
    for cand in candidates:
        try:
            there = os.path.lexists(cand) and (cand.exists() or "symlink loop")
        except OSError as err:  # a name longer than the file system allows
            return None, f"cannot read {ref[:80]}: {err.strerror or err}"
        if not allow_outside_root and not inside(cand, root):
            if outside_hit is None and there is True:
                outside_hit = cand
            continue
        if there == "symlink loop":
            return None, f"cannot read {ref[:80]}: a symlink loop or a dangling link"
        if there:
            return cand, None
    if outside_hit is not None or (
        not allow_outside_root and all(not inside(c, root) for c in candidates)
    ):
        return None, f"path leaves the benchmark root: {ref}"
    return None, f"media file not found: {ref}"

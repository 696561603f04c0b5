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


def _lexically_inside(path: Path, root: Path) -> bool:
    """True when `path`, its `..` removed but no link followed, lies under `root` (so is looked at)."""
    try:
        Path(os.path.normpath(path)).relative_to(os.path.normpath(root))
        return True
    except ValueError:
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
    outside = linked_out = False
    for cand in candidates:
        if not allow_outside_root and not _lexically_inside(cand, root):
            # never looked at: whether a file exists outside the root is not the benchmark's to tell
            outside = True
            continue
        if not allow_outside_root and not inside(cand, root):
            linked_out = True  # a link in the benchmark that leads out of it (the link is the benchmark's)
            continue
        try:
            there = os.path.lexists(cand) and (cand.exists() or "symlink loop")
        except OSError as err:  # a name longer than the file system allows
            return None, f"cannot read {ref[:80]}: {err.strerror or err}"
        if there == "symlink loop":
            return None, f"cannot read {ref[:80]}: a symlink loop or a dangling link"
        if there:
            return cand, None
    if linked_out or outside and all(not _lexically_inside(c, root) for c in candidates):
        return None, f"path leaves the benchmark root: {ref}"
    if outside:
        return None, (f"media file not found: {ref} (under the benchmark root; where the reference leads outside "
                      "it, nothing was looked at)")
    return None, f"media file not found: {ref}"

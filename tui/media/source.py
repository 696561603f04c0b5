"""Which file a Media may be read from: only what the loader resolved, and never outside the root.

The loader already refuses references that leave the benchmark root (scorer.load.paths); this is the
second check at the point of opening, so a Media built elsewhere (an importer, a test, a future
loader) cannot make the app read an arbitrary file. Remote media are never fetched.
"""

from __future__ import annotations

from pathlib import Path

from scorer.load.paths import inside
from scorer.model import Media


class MediaError(Exception):
    """Why a media item cannot be shown; the message is shown to the user as a placeholder."""


def remote_text(media: Media) -> str:
    """What a remote reference is shown as: its URL and caption, never fetched."""
    parts = [f"remote {media.kind} (not fetched): {media.url}"]
    if media.text:
        parts.append(media.text)
    return "\n".join(parts)


def check_inside(path: Path, root: Path | None, allow_outside_root: bool = False) -> Path:
    """`path` when it may be read; MediaError otherwise."""
    if root is not None and not allow_outside_root and not inside(path, root):
        raise MediaError(f"refused: path leaves the benchmark root: {path}")
    return path


def local_path(media: Media, root: Path | None, allow_outside_root: bool = False) -> Path:
    """The loader-resolved file of `media`, re-checked against the root, or MediaError with the reason.

    Existence is not checked here: a missing file is reported by whoever opens it, with the path.
    """
    if media.is_remote:
        raise MediaError(remote_text(media))
    if media.path is None:
        raise MediaError(media.problem or f"no local file for {media.kind} {media.ref!r}")
    return check_inside(Path(media.path), root, allow_outside_root)


def file_key(path: Path) -> tuple[str, int, int]:
    """(path, mtime_ns, size): a cache key that changes when the file does. OSError if missing."""
    st = path.stat()
    return (str(path), st.st_mtime_ns, st.st_size)


def media_key(path: Path) -> tuple[str, int, int]:
    """`file_key(path)`, or MediaError naming why the file cannot be read."""
    try:
        return file_key(path)
    except FileNotFoundError:
        raise MediaError(f"missing file: {path}") from None
    except OSError as exc:
        raise MediaError(f"cannot read {path}: {exc.strerror or exc}") from None

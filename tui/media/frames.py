"""Video as numbered frames, from whichever source a round gives.

Three sources behind one interface, so the app (and its tests) need PyAV only for real video files:
- `FileFrames`: pre-extracted frames (`video_frames`) or a folder of frame images;
- `PillowFrames`: animated GIF / WebP (Pillow seeks a frame in ~2 ms);
- `PyAVFrames`: mp4 / webm / mkv / mov through PyAV (the `video` extra). `stream.frames` is 0 for
  webm, so frames are numbered from the packets' presentation timestamps, indexed once on open.

Sources are used from Textual thread workers; a cancelled worker keeps running until it returns,
so every source serialises access to its decoder with a lock.
"""

from __future__ import annotations

import re
import threading
from fractions import Fraction
from pathlib import Path
from typing import Hashable, Sequence

from PIL import Image

from scorer.model import Media
from tui.media.source import MediaError, check_inside, file_key, local_path

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff"}
VIDEO_SUFFIXES = {".mp4", ".webm", ".mkv", ".mov", ".avi", ".m4v", ".ogv"}
SEQUENTIAL_LIMIT = 48  # decode forward instead of seeking when the target is this close ahead


class FrameSource:
    """Frames 0..count-1 as PIL images. `kind` names the source for the frame counter."""

    kind = "frames"

    def __init__(self) -> None:
        self._lock = threading.Lock()

    @property
    def count(self) -> int:
        raise NotImplementedError

    def frame(self, i: int) -> Image.Image:
        """Frame `i` (clamped), full size, RGB. MediaError when it cannot be decoded."""
        raise NotImplementedError

    def key(self, i: int) -> Hashable:
        """A cache key for frame `i` that changes when the underlying file does."""
        raise NotImplementedError

    def time_of(self, i: int) -> float | None:
        """Seconds from the start of the clip to frame `i`, when the source knows it."""
        return None

    def close(self) -> None:
        pass

    def _clamp(self, i: int) -> int:
        return max(0, min(i, self.count - 1))


def _natural(p: Path) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name)]


class FileFrames(FrameSource):
    """One image file per frame, in the given order."""

    kind = "frames"

    def __init__(self, paths: Sequence[Path]) -> None:
        super().__init__()
        if not paths:
            raise MediaError("video has no frames")
        self.paths = list(paths)

    @property
    def count(self) -> int:
        return len(self.paths)

    def frame(self, i: int) -> Image.Image:
        p = self.paths[self._clamp(i)]
        try:
            with Image.open(p) as im:
                return im.convert("RGB")
        except FileNotFoundError:
            raise MediaError(f"missing frame: {p}") from None
        except Exception as exc:
            raise MediaError(f"corrupt frame: {p} ({type(exc).__name__})") from None

    def key(self, i: int) -> Hashable:
        p = self.paths[self._clamp(i)]
        try:
            return ("file",) + file_key(p)
        except OSError:
            return ("file", str(p), -1, -1)


class PillowFrames(FrameSource):
    """Animated GIF / WebP / APNG; a still image is a one-frame clip."""

    kind = "gif"

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        try:
            self._fkey = file_key(path)
            self._im = Image.open(path)
            n = getattr(self._im, "n_frames", 1)
            starts, t = [], 0.0
            for k in range(n):  # durations give the counter a time; n_frames scans the file anyway
                self._im.seek(k)
                if "duration" not in self._im.info:
                    self._im.load()  # WebP sets a frame's duration only once it is decoded
                starts.append(t)
                t += float(self._im.info.get("duration", 0) or 0) / 1000.0
            self._starts = starts if t > 0 else None
            self._im.seek(0)
        except FileNotFoundError:
            raise MediaError(f"missing file: {path}") from None
        except Exception as exc:
            raise MediaError(f"not a readable animation: {path} ({type(exc).__name__})") from None
        self.kind = (path.suffix.lstrip(".") or "image").lower()
        self._n = n

    @property
    def count(self) -> int:
        return self._n

    def frame(self, i: int) -> Image.Image:
        with self._lock:
            try:
                self._im.seek(self._clamp(i))
                return self._im.convert("RGB")
            except Exception as exc:
                raise MediaError(f"corrupt frame {i + 1} in {self.path} ({type(exc).__name__})") from None

    def key(self, i: int) -> Hashable:
        return ("anim",) + self._fkey + (self._clamp(i),)

    def time_of(self, i: int) -> float | None:
        return None if self._starts is None else self._starts[self._clamp(i)]

    def close(self) -> None:
        with self._lock:
            self._im.close()


class PyAVFrames(FrameSource):
    """A video file through PyAV, frames numbered by presentation timestamp."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        import av  # the `video` extra; the caller turns ImportError into a message

        self.path = path
        self.kind = (path.suffix.lstrip(".") or "video").lower()
        try:
            self._fkey = file_key(path)
            self._c = av.open(str(path))
            if not self._c.streams.video:
                raise MediaError(f"no video stream in {path}")
            self._s = self._c.streams.video[0]
            # Index presentation timestamps from packets (no decoding): works for webm, whose
            # stream.frames is 0. Sorting puts B-frame reordering back into display order.
            pts = [p.pts for p in self._c.demux(self._s) if p.size and p.pts is not None]
        except MediaError:
            raise
        except FileNotFoundError:
            raise MediaError(f"missing file: {path}") from None
        except Exception as exc:  # av.error.InvalidDataError and friends
            raise MediaError(f"not a readable video: {path} ({type(exc).__name__})") from None
        if not pts:
            self._c.close()
            raise MediaError(f"no decodable frames in {path}")
        self._pts = sorted(pts)
        self._tb = self._s.time_base or Fraction(1, 1)
        self._decoder = None  # a live frame generator after a seek
        self._at = -1  # index of the last frame the generator produced

    @property
    def count(self) -> int:
        return len(self._pts)

    def frame(self, i: int) -> Image.Image:
        i = self._clamp(i)
        target = self._pts[i]
        with self._lock:
            try:
                if self._decoder is None or not (self._at < i <= self._at + SEQUENTIAL_LIMIT):
                    self._c.seek(target, stream=self._s, backward=True, any_frame=False)
                    self._decoder = self._c.decode(self._s)
                    self._at = -1
                last = None
                for fr in self._decoder:
                    last = fr
                    if fr.pts is not None and fr.pts >= target:
                        self._at = i
                        return fr.to_image()
                self._decoder = None
                if last is not None:  # past the end: show the last frame decoded
                    return last.to_image()
            except Exception as exc:
                self._decoder = None
                raise MediaError(f"cannot decode frame {i + 1} of {self.path} ({type(exc).__name__})") from None
        raise MediaError(f"frame {i + 1} of {self.path} could not be decoded")

    def key(self, i: int) -> Hashable:
        return ("av",) + self._fkey + (self._clamp(i),)

    def time_of(self, i: int) -> float | None:
        return float((self._pts[self._clamp(i)] - self._pts[0]) * self._tb)

    def close(self) -> None:
        with self._lock:
            self._decoder = None
            self._c.close()


def _folder(path: Path, root: Path | None, allow: bool) -> FileFrames:
    files = sorted((p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file()), key=_natural)
    return FileFrames([check_inside(p, root, allow) for p in files])


def open_frames(media: Media, root: Path | None, allow_outside_root: bool = False) -> FrameSource:
    """The frame source for a video Media: its pre-extracted frames if any, else its file or folder.

    Raises MediaError with a one-line reason (missing, corrupt, outside the root, needs PyAV, remote).
    """
    if media.frames:
        return FileFrames([check_inside(Path(p), root, allow_outside_root) for p in media.frames])
    path = local_path(media, root, allow_outside_root)
    if path.is_dir():
        return _folder(path, root, allow_outside_root)
    if not path.exists():
        raise MediaError(f"missing file: {path}")
    suffix = path.suffix.lower()
    if suffix in VIDEO_SUFFIXES:
        try:
            import av  # noqa: F401
        except ImportError:
            raise MediaError(f"{suffix[1:]} video needs PyAV: pip install 'memscope[video]' ({path})") from None
        return PyAVFrames(path)
    return PillowFrames(path)


def is_animated(path: Path) -> bool:
    """Whether an image file holds more than one frame (GIF, WebP, APNG): played like a video."""
    try:
        with Image.open(path) as im:
            return getattr(im, "n_frames", 1) > 1
    except Exception:
        return False  # the still path reports what is wrong with it

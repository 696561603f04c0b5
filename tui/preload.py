"""What the Item screen imports on first use — the video decoder (PyAV), the audio reader
(soundfile), the image codecs Pillow loads per format — imported in a worker thread once the first
screen is up (tui.app), so that the first Enter on an item does not pay for them (a quarter of a
second and more). An optional extra that is not installed is skipped here: where it is used, its
absence is reported as it always was."""

from __future__ import annotations

import importlib

MODULES = ("PIL.JpegImagePlugin", "PIL.PngImagePlugin", "PIL.GifImagePlugin", "PIL.WebPImagePlugin", "av",
           "soundfile")


def preload(modules: tuple[str, ...] = MODULES) -> list[str]:
    """Import `modules`; the names imported (those missing or failing are left to their users)."""
    done = []
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 — ImportError, or OSError for a missing libsndfile
            continue
        done.append(name)
    return done

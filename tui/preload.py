"""What the Item screen needs on first use, got ready in a worker thread once the first screen is up
(tui.app), so that the first Enter on an item does not pay for it (issue 19: ≤ 150 ms, imports
included; bench/app.py):

- the half-cell pictures' first-use costs (numpy and rich on that path, 10–20 ms);
- the modules it imports: the video decoder (PyAV), the audio reader (soundfile), the image codecs
  Pillow loads per format (a quarter of a second and more). An optional extra that is not installed
  is skipped here: where it is used, its absence is reported as it always was;
- the default CSS of its widget classes (the run tabs, the thumbnails…), which Textual parses on the
  UI thread when the first widget of a class is mounted (warm_css: only Textual's parse cache is
  filled; the stylesheet's sources and rules stay Textual's own).
"""

from __future__ import annotations

import importlib

MODULES = ("PIL.JpegImagePlugin", "PIL.PngImagePlugin", "PIL.GifImagePlugin", "PIL.WebPImagePlugin", "av",
           "soundfile")


def preload(modules: tuple[str, ...] = MODULES) -> list[str]:
    """Import `modules`; the names imported (those missing or failing are left to their users). Then
    build one tiny half-cell picture (tui.media.halfcell.warm); run as a thread worker of the app, it
    warms the Item screen's CSS too (warm_css)."""
    done = []
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 — ImportError, or OSError for a missing libsndfile
            continue
        done.append(name)
    from tui.media.halfcell import warm as warm_halfcell

    warm_halfcell()  # the half-cell path's first-use costs, not the first picture's (the viewer, a thumbnail)
    from textual.app import App
    from textual.worker import NoActiveWorker, get_current_worker

    try:
        node = get_current_worker().node
    except NoActiveWorker:  # called directly (tests): the imports only
        return done
    if isinstance(node, App):
        warm_css(node, WARM)
    return done


WARM: list[type] = []  # the widget classes whose CSS is parsed ahead (warm_later; the Item screen's)


def warm_later(*classes: type) -> None:
    """Have the CSS of `classes` parsed ahead (by preload, and by the Items screen: warm_css). The
    Item screen names its own widgets (tui/screens/item.py): a screen that needs it says so, and
    nothing here imports a screen."""
    WARM.extend(c for c in classes if c not in WARM)


def warm_css(app, classes: list[type]) -> int:
    """Parse (in this thread) the CSS sources the app's stylesheet would parse on the UI thread when
    widgets of `classes` are first mounted, and hand them to its parse cache on the UI thread, unless
    the theme changed meanwhile. The number of sources parsed.

    Textual keys a parsed source by its text, where it was read from and its tie-breaker (the depth of
    the class that brought it: the least one wins), so the sources are worked out as
    Stylesheet.add_source would record them for those classes, from the ones it holds now."""
    from textual.css.parse import parse
    from textual.css.stylesheet import CssSource
    from textual.dom import DOMNode

    sheet = app.stylesheet
    try:  # Textual's private parts: should they change, the CSS is parsed where it always was
        tokens = sheet._variable_tokens
        sources = sheet.source.copy()  # one C call: atomic under the GIL
        cached = set(sheet._parse_cache.keys())
        for cls in classes:
            # DOMNode._get_default_css reads only the class (its bases): a bare instance asks for nothing
            for read_from, css, tie_breaker, scope in DOMNode._get_default_css(object.__new__(cls)):
                old = sources.get(read_from)
                if old is None or old.content != css:
                    sources[read_from] = CssSource(css, True, tie_breaker, scope)
                elif old.tie_breaker > tie_breaker:
                    sources[read_from] = CssSource(old.content, old.is_defaults, tie_breaker, scope)
    except (AttributeError, TypeError, ValueError, RuntimeError):
        return 0
    parsed = {}
    for read_from, (css, is_defaults, tie_breaker, scope) in sources.items():
        key = (css, read_from, is_defaults, tie_breaker, scope)
        if key in cached:
            continue
        try:
            parsed[key] = list(parse(scope, css, read_from, variable_tokens=tokens, is_default_rules=is_defaults,
                                     tie_breaker=tie_breaker))
        except Exception:  # noqa: BLE001 — left to Textual, which reports bad CSS where it parses it
            continue

    def store() -> None:  # on the UI thread
        if sheet is app.stylesheet and sheet._variable_tokens is tokens:
            for key, rules in parsed.items():
                sheet._parse_cache[key] = rules

    if parsed:
        try:
            app._loop.call_soon_threadsafe(store)
        except (AttributeError, RuntimeError):  # the app is gone (or its loop closed) meanwhile
            return 0
    return len(parsed)

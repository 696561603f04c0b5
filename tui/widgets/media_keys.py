"""The media keys a screen with videos and audio clips shares (Session, the oracle study):
←/→ steps the focused (else first) video (a focused or lone audio clip: seeks by a second), space plays/stops the focused video or clip (else the first
clip, else the first video), `m` moves focus to the next media widget. A screen mixes this in and
says where its media live."""

from __future__ import annotations

from textual.widget import Widget

from tui.widgets.media_audio import MediaAudio
from tui.widgets.media_video import MediaVideo


class MediaKeys:
    def media_widgets(self) -> list[Widget]:  # pragma: no cover - every screen overrides it
        return []

    def _active(self, kind: type) -> Widget | None:
        if isinstance(self.focused, kind):
            return self.focused
        return next((w for w in self.media_widgets() if isinstance(w, kind)), None)

    def action_frame(self, delta: int) -> None:
        """←/→: the focused audio clip seeks by a second; else the video steps a frame; else the
        first clip seeks."""
        if isinstance(self.focused, MediaAudio):
            self.focused.seek(float(delta))
            return
        video = self._active(MediaVideo)
        if video is not None:
            video.step(delta)
            return
        audio = self._active(MediaAudio)
        if audio is not None:
            audio.seek(float(delta))

    def action_play(self) -> None:
        if isinstance(self.focused, MediaVideo):
            self.focused.toggle()
            return
        audio = self._active(MediaAudio)
        if audio is not None:
            audio.toggle()
            return
        video = self._active(MediaVideo)
        if video is not None:
            video.toggle()

    def action_next_media(self) -> None:
        ws = self.media_widgets()
        if not ws:
            return
        k = ws.index(self.focused) + 1 if self.focused in ws else 0
        target = ws[k % len(ws)]
        target.focus()
        target.scroll_visible(animate=False)

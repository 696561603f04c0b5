"""Audio clips: reading, a waveform for a Sparkline, and playing through sounddevice.

Reading: the stdlib `wave` for 8/16/24/32-bit PCM WAV; soundfile (the `audio` extra) for float WAV,
FLAC and OGG. Playing (DESIGN §9): `import sounddevice` raises OSError, not ImportError, when the
PortAudio library is missing; with PortAudio but no device, `check_output_settings()` raises
PortAudioError. Both are probed once, lazily, and turned into one line for the user. Playback is
`sd.play` (non-blocking) and `sd.stop`; nothing here ever waits for a clip to end. ALSA and JACK
print to fd 2 — the very stream Textual draws the screen on — so their error hooks are silenced and
fd 2 is pointed at /dev/null around the probe.

Players are plain objects with play/stop/is_playing/unavailable: the app gets `default_player()`,
tests inject a `NullPlayer` (a real player that makes no sound), never a mock of sounddevice.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Protocol

import numpy as np

from tui.media.source import MediaError

NO_SOUNDDEVICE = "no audio: sounddevice is not installed (pip install 'memscope[audio]')"
NO_PORTAUDIO = "no audio: the PortAudio library is missing (apt install libportaudio2)"
NO_DEVICE = "no audio: no output device"


@dataclass(frozen=True, eq=False)
class Clip:
    path: Path
    samples: np.ndarray  # float32, shape (frames, channels), in [-1, 1]
    rate: int

    @property
    def duration(self) -> float:
        return len(self.samples) / self.rate if self.rate else 0.0

    @property
    def channels(self) -> int:
        return int(self.samples.shape[1]) if self.samples.ndim == 2 else 1


def fmt_duration(seconds: float) -> str:
    m, s = divmod(max(0.0, seconds), 60)
    return f"{int(m)}:{s:04.1f}"


def _pcm(raw: bytes, width: int, channels: int) -> np.ndarray:
    """Little-endian PCM bytes → float32 (frames, channels)."""
    frame = width * channels
    raw = raw[: len(raw) - len(raw) % frame]  # a truncated data chunk: drop the partial frame
    if width == 1:  # 8-bit WAV is unsigned
        a = (np.frombuffer(raw, dtype=np.uint8).astype(np.float32) - 128.0) / 128.0
    elif width == 2:
        a = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    elif width == 3:
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        v = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        v = np.where(v >= 1 << 23, v - (1 << 24), v)  # sign-extend 24 → 32 bits
        a = v.astype(np.float32) / float(1 << 23)
    elif width == 4:
        a = np.frombuffer(raw, dtype="<i4").astype(np.float32) / float(1 << 31)
    else:
        raise MediaError(f"unsupported WAV sample width: {width} bytes")
    return a.reshape(-1, channels)


def _read_wave(path: Path) -> Clip:
    with wave.open(str(path), "rb") as w:
        ch, width, rate, n = w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()
        if ch < 1 or rate < 1:
            raise MediaError(f"corrupt WAV header: {path} ({ch} channels, {rate} Hz)")
        return Clip(path, _pcm(w.readframes(n), width, ch), rate)


def _soundfile() -> Any:
    try:
        import soundfile
    except (ImportError, OSError):  # OSError: libsndfile missing
        return None
    return soundfile


def read_clip(path: Path) -> Clip:
    """The clip at `path`, decoded to float32. MediaError with the reason when it cannot be read."""
    if not path.exists():
        raise MediaError(f"missing file: {path}")
    wave_error = None
    if path.suffix.lower() in (".wav", ".wave"):
        try:
            return _read_wave(path)
        except MediaError:
            raise
        except OSError as exc:
            raise MediaError(f"cannot read {path}: {exc.strerror or exc}") from None
        except Exception as exc:  # wave.Error (float/extensible WAV, bad header), EOFError, RuntimeError…
            wave_error = str(exc) or type(exc).__name__
    sf = _soundfile()
    if sf is None:
        if wave_error and "unknown format" not in wave_error:
            raise MediaError(f"corrupt WAV: {path} ({wave_error})")
        raise MediaError(f"{path.suffix or 'this'} audio needs soundfile: pip install 'memscope[audio]' ({path})")
    try:
        data, rate = sf.read(str(path), dtype="float32", always_2d=True)
    except Exception as exc:  # soundfile.LibsndfileError (a RuntimeError) and friends
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        why = wave_error or first
        raise MediaError(f"corrupt or unsupported audio: {path} ({why})") from None
    if rate < 1:
        raise MediaError(f"corrupt audio header: {path}")
    return Clip(path, np.ascontiguousarray(data, dtype=np.float32), int(rate))


def waveform(clip: Clip, buckets: int = 512) -> list[float]:
    """Peak absolute amplitude per bucket (channels mixed by max): what a Sparkline should be fed."""
    a = np.abs(clip.samples)
    mono = a.max(axis=1) if a.ndim == 2 and a.shape[1] else a.reshape(-1)
    n = len(mono)
    if n == 0:
        return []
    buckets = max(1, min(buckets, n))
    edges = (np.arange(buckets) * n) // buckets
    return np.maximum.reduceat(mono, edges).astype(float).tolist()


# ---------------------------------------------------------------- players


class Player(Protocol):
    def unavailable(self) -> str | None:
        """None when the player can play; otherwise one line saying why not (probes once)."""

    def play(self, clip: Clip, start: float = 0.0) -> None:
        """Start playing `clip` from `start` seconds without waiting; stops whatever was playing.
        AudioUnavailable if not."""

    def stop(self) -> None: ...

    def is_playing(self) -> bool: ...


class AudioUnavailable(Exception):
    """Playing is impossible here; the message is the one line shown to the user."""


class NullPlayer:
    """A player that makes no sound but keeps real state: playing until stopped or the clip's end.

    For tests (inject it) and for machines where sound is unwanted. `reason` makes it report itself
    unavailable, as a machine without a device would.
    """

    def __init__(self, reason: str | None = None) -> None:
        self.reason = reason
        self.played: list[Path] = []
        self.starts: list[float] = []  # where each play began, seconds into the clip
        self.stops = 0
        self._clip: Clip | None = None
        self._until = 0.0

    def unavailable(self) -> str | None:
        return self.reason

    def play(self, clip: Clip, start: float = 0.0) -> None:
        if self.reason:
            raise AudioUnavailable(self.reason)
        self.played.append(clip.path)
        self.starts.append(start)
        self._clip, self._until = clip, time.monotonic() + max(0.0, clip.duration - start)

    def stop(self) -> None:
        self.stops += 1
        self._clip = None

    def is_playing(self) -> bool:
        return self._clip is not None and time.monotonic() < self._until


_HANDLERS: list[Any] = []  # ctypes callbacks must outlive the libraries that call them


def _silence_native_logs() -> None:
    """Point ALSA's and JACK's error printers at no-ops (they write to fd 2, Textual's screen)."""
    if _HANDLERS:
        return
    import ctypes
    import ctypes.util

    try:
        asound = ctypes.CDLL(ctypes.util.find_library("asound") or "libasound.so.2")
        alsa_cb = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
                                   ctypes.c_char_p)(lambda *a: None)
        asound.snd_lib_error_set_handler(alsa_cb)
        _HANDLERS.append(alsa_cb)
    except (OSError, AttributeError):
        pass
    try:
        jack = ctypes.CDLL(ctypes.util.find_library("jack") or "libjack.so.0")
        jack_cb = ctypes.CFUNCTYPE(None, ctypes.c_char_p)(lambda msg: None)
        jack.jack_set_error_function(jack_cb)
        jack.jack_set_info_function(jack_cb)
        _HANDLERS.append(jack_cb)
    except (OSError, AttributeError):
        pass
    _HANDLERS.append(None)  # marks "done" even when neither library exists


@contextlib.contextmanager
def quiet_fd2() -> Iterator[None]:
    """fd 2 → /dev/null for the duration (anything native code prints there is lost, on purpose).

    Textual draws on fd 2 too, so a frame drawn meanwhile is lost: callers repaint afterwards.
    """
    try:
        saved = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        yield
        return
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


class SoundDevicePlayer:
    """Plays through sounddevice. Probes PortAudio and the output device once, on first use."""

    _probe_lock = threading.Lock()

    def __init__(self) -> None:
        self._sd: Any = None
        self._reason: str | None = None
        self._probed = False
        self.detail = ""

    def unavailable(self) -> str | None:
        with self._probe_lock:
            if not self._probed:
                self._reason = self._probe()
                self._probed = True
        return self._reason

    def _probe(self) -> str | None:
        _silence_native_logs()
        with quiet_fd2():
            try:
                import sounddevice as sd
            except OSError:  # the wheel does not bundle PortAudio on Linux
                return NO_PORTAUDIO
            except ImportError:
                return NO_SOUNDDEVICE
            try:
                sd.check_output_settings()
            except Exception as exc:  # sounddevice.PortAudioError, ValueError
                self.detail = str(exc).strip()  # PortAudio's words ("Error querying device -1"), for logs
                return NO_DEVICE
        self._sd = sd
        return None

    def play(self, clip: Clip, start: float = 0.0) -> None:
        reason = self.unavailable()
        if reason:
            raise AudioUnavailable(reason)
        try:
            first = max(0, min(len(clip.samples), int(start * clip.rate)))
            self._sd.play(clip.samples[first:], clip.rate)  # returns at once; PortAudio plays in its thread
        except Exception as exc:
            raise AudioUnavailable(f"{NO_DEVICE} ({exc})") from None

    def stop(self) -> None:
        if self._sd is not None:
            with contextlib.suppress(Exception):
                self._sd.stop()

    def is_playing(self) -> bool:
        if self._sd is None:
            return False
        try:
            return bool(self._sd.get_stream().active)
        except Exception:  # no stream yet
            return False


_DEFAULT: Player | None = None


def default_player() -> Player:
    """The process-wide player ($MEMSCOPE_AUDIO=off gives a silent one that says so)."""
    global _DEFAULT
    if _DEFAULT is None:
        if os.environ.get("MEMSCOPE_AUDIO", "").lower() in ("off", "0", "no"):
            _DEFAULT = NullPlayer("audio off ($MEMSCOPE_AUDIO=off)")
        else:
            _DEFAULT = SoundDevicePlayer()
    return _DEFAULT

"""tui.media.audio: reading WAV (stdlib) and float WAV / FLAC (soundfile), the waveform peaks, the
NullPlayer, and the real sounddevice player on a machine without an output device."""

from __future__ import annotations

import ctypes.util
import os
import struct
import subprocess
import sys
import wave
from pathlib import Path

import numpy as np
import pytest

from tests.paths import REPO
from tui.media.audio import (NO_DEVICE, NO_PORTAUDIO, AudioUnavailable, Clip, NullPlayer, SoundDevicePlayer,
                             fmt_duration, read_clip, waveform)
from tui.media.source import MediaError


def write_pcm(path: Path, values: list[int], width: int, channels: int = 1, rate: int = 8000) -> Path:
    """Raw little-endian PCM through the stdlib writer (24-bit packed by hand)."""
    if width == 1:
        data = bytes(v + 128 for v in values)
    elif width == 2:
        data = b"".join(struct.pack("<h", v) for v in values)
    elif width == 3:
        data = b"".join(struct.pack("<i", v)[:3] for v in values)
    else:
        data = b"".join(struct.pack("<i", v) for v in values)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(data)
    return path


def test_16_bit_pcm_values_and_duration(tmp_path):
    p = write_pcm(tmp_path / "a.wav", [0, 16384, -32768, 32767] * 2000, 2)
    clip = read_clip(p)
    assert clip.rate == 8000 and clip.channels == 1 and len(clip.samples) == 8000
    assert clip.duration == pytest.approx(1.0)
    assert clip.samples[:4, 0].tolist() == [0.0, 0.5, -1.0, pytest.approx(32767 / 32768)]


def test_24_bit_pcm_sign_extends(tmp_path):
    p = write_pcm(tmp_path / "a.wav", [0, 1 << 22, -(1 << 23), -1], 3)
    assert read_clip(p).samples[:, 0].tolist() == [0.0, 0.5, -1.0, pytest.approx(-1 / (1 << 23))]


def test_8_bit_is_unsigned_and_stereo_keeps_channels(tmp_path):
    assert read_clip(write_pcm(tmp_path / "a.wav", [0, 64, -128], 1)).samples[:, 0].tolist() == [0.0, 0.5, -1.0]
    clip = read_clip(write_pcm(tmp_path / "s.wav", [16384, -16384, 0, 8192], 2, channels=2))
    assert clip.samples.shape == (2, 2) and clip.samples[1].tolist() == [0.0, 0.25]


def test_float_wav_and_flac_through_soundfile(tmp_path):
    sf = pytest.importorskip("soundfile")
    data = np.array([0.0, 0.25, -0.75, 0.5], dtype=np.float32)
    fw = tmp_path / "f.wav"
    sf.write(str(fw), data, 8000, subtype="FLOAT")
    with pytest.raises(wave.Error):  # what the stdlib says, and why soundfile is needed
        wave.open(str(fw)).close()
    assert read_clip(fw).samples[:, 0].tolist() == data.tolist()
    fl = tmp_path / "a.flac"
    sf.write(str(fl), data, 8000, subtype="PCM_16")
    assert np.allclose(read_clip(fl).samples[:, 0], data, atol=1e-4)


def test_missing_and_corrupt_are_reasons(tmp_path):
    with pytest.raises(MediaError, match="missing file"):
        read_clip(tmp_path / "nope.wav")
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"RIFF\x10\x00\x00\x00WAVEjunkjunkjunk")
    with pytest.raises(MediaError, match="corrupt"):
        read_clip(bad)
    txt = tmp_path / "t.wav"
    txt.write_text("not audio at all")
    with pytest.raises(MediaError, match="corrupt"):
        read_clip(txt)


def test_truncated_data_drops_the_partial_frame(tmp_path):
    p = write_pcm(tmp_path / "a.wav", [1000] * 100, 2)
    raw = p.read_bytes()
    p.write_bytes(raw[:-3])  # half a sample short, and the header still claims 100 frames
    assert len(read_clip(p).samples) == 98


def test_waveform_is_peak_absolute_per_bucket():
    s = np.array([[0.0], [0.5], [-1.0], [0.25], [0.1], [-0.2]], dtype=np.float32)
    clip = Clip(Path("x.wav"), s, 6)
    assert waveform(clip, 3) == pytest.approx([0.5, 1.0, 0.2])
    assert waveform(clip, 100) == pytest.approx([0.0, 0.5, 1.0, 0.25, 0.1, 0.2])  # never more buckets than samples
    stereo = Clip(Path("s.wav"), np.array([[0.1, -0.9], [0.3, 0.2]], dtype=np.float32), 2)
    assert waveform(stereo, 1) == pytest.approx([0.9])
    assert waveform(Clip(Path("e.wav"), np.zeros((0, 1), np.float32), 8000), 10) == []


def test_fmt_duration():
    assert fmt_duration(0.84) == "0:00.8" and fmt_duration(75.25) == "1:15.2"


def test_null_player_keeps_real_state(tmp_path):
    clip = Clip(tmp_path / "c.wav", np.zeros((8000, 1), np.float32), 8000)
    p = NullPlayer()
    assert p.unavailable() is None and not p.is_playing()
    p.play(clip)
    assert p.is_playing() and p.played == [clip.path]
    p.stop()
    assert not p.is_playing() and p.stops == 1
    with pytest.raises(AudioUnavailable, match="no device here"):
        NullPlayer("no device here").play(clip)


def _has_output_device() -> bool:
    try:
        import sounddevice as sd
        sd.check_output_settings()
        return True
    except Exception:
        return False


def test_sounddevice_without_a_device_says_so_in_one_line(tmp_path):
    """The real player: PortAudio missing (OSError at import) or present with no device (CI)."""
    if _has_output_device():
        pytest.skip("this machine has an audio output device")
    p = SoundDevicePlayer()
    reason = p.unavailable()
    assert reason is not None and "\n" not in reason
    assert reason in (NO_PORTAUDIO, NO_DEVICE)
    assert p.unavailable() is reason  # probed once
    clip = Clip(tmp_path / "c.wav", np.zeros((800, 1), np.float32), 8000)
    with pytest.raises(AudioUnavailable, match="^no audio"):
        p.play(clip)
    p.stop()  # harmless
    assert not p.is_playing()


ALSA_NOISE = r"""
import ctypes, ctypes.util, sys
if sys.argv[1] == "quiet":
    from tui.media.audio import _silence_native_logs
    _silence_native_logs()
asound = ctypes.CDLL(ctypes.util.find_library("asound") or "libasound.so.2")
pcm = ctypes.c_void_p()
print(asound.snd_pcm_open(ctypes.byref(pcm), b"memscope_no_such_pcm", 0, 0))
"""


def _run(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60,
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})


def test_alsa_errors_no_longer_reach_stderr():
    """ALSA prints to fd 2, where Textual draws; the no-op handler keeps it off the screen."""
    if ctypes.util.find_library("asound") is None:
        pytest.skip("no ALSA library here")
    loud, quiet = _run(ALSA_NOISE, "loud"), _run(ALSA_NOISE, "quiet")
    assert "ALSA lib" in loud.stderr  # the noise is real…
    assert quiet.stderr == "" and quiet.stdout.strip() == loud.stdout.strip()  # …and gone, same result


def test_quiet_fd2_swallows_native_writes_and_restores_stderr():
    code = ("import os\nfrom tui.media.audio import quiet_fd2\n"
            "with quiet_fd2():\n    os.write(2, b'native noise\\n')\nos.write(2, b'after\\n')\n")
    assert _run(code).stderr == "after\n"

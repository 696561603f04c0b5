"""tui.media.frames: frame lists and folders, animated GIF/WebP through Pillow, and one mp4/webm
through PyAV (built here with PyAV itself; skipped when the `video` extra is not installed)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from scorer.model import Media
from tui.media.frames import FileFrames, PillowFrames, open_frames
from tui.media.source import MediaError

# distinct, well-separated colours: frame k is COLOURS[k]
COLOURS = [(250, 10, 10), (10, 250, 10), (10, 10, 250), (250, 250, 10), (10, 250, 250), (250, 10, 250),
           (240, 240, 240), (10, 10, 10)]


def frame_pngs(folder: Path, n: int, names=None) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for k in range(n):
        p = folder / (names[k] if names else f"frame_{k:02d}.png")
        Image.new("RGB", (32, 24), COLOURS[k]).save(p)
        out.append(p)
    return out


def animation(path: Path, n: int, ms: int = 100) -> Path:
    frames = [Image.new("RGB", (32, 24), COLOURS[k]) for k in range(n)]
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=ms, loop=0)
    return path


def centre(im: Image.Image) -> tuple[int, int, int]:
    return im.getpixel((im.width // 2, im.height // 2))[:3]


def close_to(a, b, tol=40) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b))


def test_frame_list_in_given_order(tmp_path):
    paths = frame_pngs(tmp_path / "f", 4)
    src = FileFrames(list(reversed(paths)))
    assert src.count == 4
    assert centre(src.frame(0)) == COLOURS[3] and centre(src.frame(3)) == COLOURS[0]
    assert centre(src.frame(99)) == COLOURS[0]  # clamped
    assert src.key(0) != src.key(1)


def test_frame_folder_sorts_naturally(tmp_path):
    folder = tmp_path / "clip"
    frame_pngs(folder, 3, ["f2.png", "f10.png", "f1.png"])  # colours 0, 1, 2
    (folder / "notes.txt").write_text("not a frame")
    src = open_frames(Media("video", "clip", path=folder), tmp_path)
    assert src.count == 3
    assert [centre(src.frame(i)) for i in range(3)] == [COLOURS[2], COLOURS[0], COLOURS[1]]  # f1, f2, f10


def test_video_frames_win_over_the_file(tmp_path):
    paths = frame_pngs(tmp_path / "f", 2)
    gif = animation(tmp_path / "a.gif", 5)
    src = open_frames(Media("video", "a.gif", path=gif, frames=tuple(paths)), tmp_path)
    assert isinstance(src, FileFrames) and src.count == 2


@pytest.mark.parametrize("suffix", [".gif", ".webp"])
def test_animated_gif_and_webp_seek_to_any_frame(tmp_path, suffix):
    path = animation(tmp_path / f"a{suffix}", 6, ms=120)
    src = open_frames(Media("video", path.name, path=path), tmp_path)
    assert isinstance(src, PillowFrames) and src.count == 6
    for i in (4, 1, 5, 0):  # backwards too
        assert close_to(centre(src.frame(i)), COLOURS[i]), (i, centre(src.frame(i)))
    assert src.time_of(3) == pytest.approx(0.36)
    src.close()


def test_a_still_image_is_a_one_frame_clip(tmp_path):
    p = frame_pngs(tmp_path, 1)[0]
    src = open_frames(Media("video", p.name, path=p), tmp_path)
    assert src.count == 1 and centre(src.frame(0)) == COLOURS[0]


def test_missing_corrupt_and_outside_root_are_reasons(tmp_path):
    root = tmp_path / "bench"
    root.mkdir()
    with pytest.raises(MediaError, match="missing file"):
        open_frames(Media("video", "x.gif", path=root / "x.gif"), root)
    bad = root / "bad.gif"
    bad.write_bytes(b"GIF89a" + b"\x00" * 7)
    with pytest.raises(MediaError, match="not a readable animation"):
        open_frames(Media("video", "bad.gif", path=bad), root)
    outside = animation(tmp_path / "o.gif", 2)
    with pytest.raises(MediaError, match="leaves the benchmark root"):
        open_frames(Media("video", "../o.gif", path=outside), root)
    outside_frames = frame_pngs(tmp_path / "of", 2)
    with pytest.raises(MediaError, match="leaves the benchmark root"):
        open_frames(Media("video", "2 frames", frames=tuple(outside_frames)), root)
    with pytest.raises(MediaError, match="not fetched"):
        open_frames(Media("video", "https://x/v.mp4", url="https://x/v.mp4"), root)


def test_mp4_without_pyav_says_which_extra(tmp_path, monkeypatch):
    p = tmp_path / "v.mp4"
    p.write_bytes(b"\x00" * 64)
    monkeypatch.setitem(sys.modules, "av", None)  # as if the `video` extra were not installed
    with pytest.raises(MediaError, match=r"needs PyAV: pip install 'memscope\[video\]'"):
        open_frames(Media("video", "v.mp4", path=p), tmp_path)


# ---------------------------------------------------------------- PyAV (the one place it is used)


def write_video(path: Path, codec: str, n: int, rate: int = 10) -> None:
    av = pytest.importorskip("av")
    with av.open(str(path), "w") as c:
        s = c.add_stream(codec, rate=rate)
        s.width, s.height, s.pix_fmt = 64, 48, "yuv420p"
        for k in range(n):
            arr = np.zeros((48, 64, 3), dtype=np.uint8)
            arr[:, :] = COLOURS[k]
            for pkt in s.encode(av.VideoFrame.from_ndarray(arr, format="rgb24")):
                c.mux(pkt)
        for pkt in s.encode():
            c.mux(pkt)


@pytest.mark.parametrize("name,codec", [("v.mp4", "mpeg4"), ("v.webm", "libvpx")])
def test_pyav_numbers_frames_from_pts(tmp_path, name, codec):
    av = pytest.importorskip("av")
    from tui.media.frames import PyAVFrames

    path = tmp_path / name
    try:
        write_video(path, codec, 8)
    except av.error.FFmpegError as exc:  # pragma: no cover - an FFmpeg build without this encoder
        pytest.skip(f"{codec} not available: {exc}")
    if name.endswith(".webm"):
        with av.open(str(path)) as c:
            assert c.streams.video[0].frames == 0  # why frames are counted from pts
    src = open_frames(Media("video", name, path=path), tmp_path)
    assert isinstance(src, PyAVFrames) and src.count == 8 and src.kind == name.split(".")[1]
    for i in (0, 1, 2, 6, 3, 7, 5):  # forward steps decode on; backward jumps seek
        assert close_to(centre(src.frame(i)), COLOURS[i]), (i, centre(src.frame(i)))
    assert src.time_of(0) == 0.0 and src.time_of(5) == pytest.approx(0.5)
    src.close()


def test_pyav_refuses_a_broken_file(tmp_path):
    pytest.importorskip("av")
    p = tmp_path / "bad.mp4"
    p.write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 100)
    with pytest.raises(MediaError, match="not a readable video|no decodable frames|no video stream"):
        open_frames(Media("video", "bad.mp4", path=p), tmp_path)

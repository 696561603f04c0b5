"""The lean reader's line split (a fast path when every line starts with "{") and read_regular (os-level
reads): the same lines, numbers and bytes as the plain definitions, whatever the file holds."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer.errors import DataError
from scorer.load.jsonio import read_regular
from scorer.load.lean import _json_file, _split_lines


def plain_split(data: bytes) -> tuple[list[int], list[bytes]]:
    """The definition: every line that is not blank once stripped, as it is, with its 1-based number;
    lines end at \\n, \\r\\n or a bare \\r, as the full reader (scorer.load.runs.read_rows) ends them."""
    kept = [(n, line) for n, line in enumerate(data.splitlines(), start=1) if line.strip()]
    return [n for n, _ in kept], [line for _, line in kept]


PIECES = [b'{"a": 1}', b"{}", b"", b" ", b"\t", b"\r", b"\x0b", b"\x0c", b' {"b": 2}', b'{"c": 3}\r', b"x", b"{",
          b"\n", b"\n\n", b"\r\n"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12), st.sampled_from([b"", b"\n", b"\n\n", b"\r\n"]))
def test_split_is_the_plain_definition(pieces: list[bytes], end: bytes) -> None:
    data = b"\n".join(pieces) + end
    assert _split_lines(data) == plain_split(data)


@pytest.mark.parametrize("data", [b"", b"\n", b'{"a": 1}', b'{"a": 1}\n', b'{"a": 1}\n{"b": 2}\n', b'{"a": 1}\n\n{"b": 2}\n',
                                  b'{"a": 1}\n \n{"b": 2}', b'\n{"a": 1}', b'{"a": 1}\r\n{"b": 2}\r\n',
                                  b'{"a": 1}\n{"b": 2}\n\n'])
def test_split_cases(data: bytes) -> None:
    assert _split_lines(data) == plain_split(data)


def test_blank_lines_keep_their_numbers() -> None:
    assert _split_lines(b'{"a": 1}\n\n{"b": 2}\n') == ([1, 3], [b'{"a": 1}', b'{"b": 2}'])


@pytest.mark.parametrize("size", [0, 1, 4095, 4096, 65_537, 3 << 20])
def test_read_regular_reads_every_byte(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    p = tmp_path / "f.bin"
    p.write_bytes(data)
    assert read_regular(p) == data


def test_read_regular_of_a_file_that_grows_after_it_was_looked_at(tmp_path: Path, monkeypatch) -> None:
    """The size os.stat gave is only where reading starts: bytes appended before the read are read."""
    p = tmp_path / "f.bin"
    p.write_bytes(b"x" * 10)
    real_stat = os.stat

    def stat_then_grow(path, *a, **k):
        st_ = real_stat(path, *a, **k)
        if str(path) == str(p):
            with open(p, "ab") as fh:
                fh.write(b"y" * 3_000_000)
        return st_

    monkeypatch.setattr(os, "stat", stat_then_grow)
    assert read_regular(p) == b"x" * 10 + b"y" * 3_000_000


def test_read_regular_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    done: list[BaseException] = []

    def read() -> None:
        try:
            read_regular(fifo)
        except BaseException as err:  # noqa: BLE001 — what the reader raised
            done.append(err)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive(), "read_regular blocked on a FIFO"
    assert isinstance(done[0], DataError) and "not a regular file (a FIFO)" in str(done[0])


def test_a_fifo_swapped_in_after_the_look_does_not_block(tmp_path: Path, monkeypatch) -> None:
    """The file is replaced by a FIFO between os.stat and the open: the open does not wait for a writer."""
    p = tmp_path / "config.json"
    p.write_text("{}")
    real_stat = os.stat

    def stat_then_swap(path, *a, **k):
        st_ = real_stat(path, *a, **k)
        if str(path) == str(p):
            p.unlink()
            os.mkfifo(p)
        return st_

    monkeypatch.setattr(os, "stat", stat_then_swap)
    done: list[BaseException] = []

    def read() -> None:
        try:
            read_regular(p)
        except BaseException as err:  # noqa: BLE001
            done.append(err)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive(), "read_regular blocked on a FIFO swapped in"


def test_json_file_missing_is_empty_and_a_dangling_link_is_an_error(tmp_path: Path) -> None:
    files: list = []
    assert _json_file(tmp_path / "config.json", files) == {} and files == []
    (tmp_path / "metrics.json").symlink_to(tmp_path / "nowhere.json")
    with pytest.raises(DataError, match="cannot read"):
        _json_file(tmp_path / "metrics.json", files)
    (tmp_path / "ok.json").write_text('{"a": 1}')
    assert _json_file(tmp_path / "ok.json", files) == {"a": 1} and files[0][2] == 8

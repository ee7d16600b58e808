"""The reader's window: the bytes it hands out are the file's, however long they are held, in reused buffers."""

from __future__ import annotations

import io
import os
import random

import pytest
from hypothesis import given, settings, strategies as st

from kbatch.reading import window as window_module
from kbatch.reading.window import BUFFER_SIZE, CHUNK, PAGE, Buffers, Window

SIZE = 3 * CHUNK + 12_345
DATA = random.Random(7).randbytes(SIZE)


@pytest.fixture
def buffers(monkeypatch):
    """A pool of the test's own."""
    pool = Buffers()
    monkeypatch.setattr(window_module, "BUFFERS", pool)
    return pool


@pytest.fixture
def segment(tmp_path):
    path = tmp_path / "bytes.log"
    path.write_bytes(DATA)
    return path


def test_a_view_still_held_keeps_its_bytes_while_the_window_reads_on(segment, buffers):
    held = []
    with open(segment, "rb", buffering=0) as stream:
        window = Window(stream, SIZE)
        for pos in range(0, SIZE - 64, CHUNK // 3 + 4099):
            buf, i, available = window.view(pos, 64)
            held.append((pos, buf[i:i + available]))
    assert len(held) > 6
    for pos, view in held:
        assert bytes(view) == DATA[pos:pos + 64]


def test_a_buffer_is_read_into_again_once_nothing_holds_it(segment, buffers):
    with open(segment, "rb", buffering=0) as stream:
        window = Window(stream, SIZE)
        for pos in range(0, SIZE - 64, CHUNK // 2 + 17):
            buf, i, available = window.view(pos, CHUNK // 2)
            assert bytes(buf[i:i + available]) == DATA[pos:pos + available]
    assert len(buffers.kept) == 2   # the chunk being read, and the one the loop still held a view of


def test_views_held_at_once_each_keep_a_buffer_of_their_own(segment, buffers):
    with open(segment, "rb", buffering=0) as stream:
        window = Window(stream, SIZE)
        held = [window.view(pos, 16) for pos in range(0, SIZE - 16, CHUNK + 1)]
        assert len({id(buf.obj) for buf, _, _ in held}) == len(held)   # none read over another
        assert len(buffers.kept) <= Buffers.KEPT


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, SIZE), st.integers(0, BUFFER_SIZE + 2 * PAGE), st.booleans(), st.booleans()),
                max_size=20))
def test_two_windows_hand_out_their_files_bytes_whatever_is_held(reads):
    """Views held and dropped at random, two windows sharing the pool: every view is still the file's."""
    other = bytes(reversed(DATA))
    windows = {False: (Window(io.BytesIO(DATA), SIZE), DATA), True: (Window(io.BytesIO(other), SIZE), other)}
    held = []
    for pos, size, second, keep in reads:
        window, data = windows[second]
        buf, i, available = window.view(pos, size)
        assert available == max(0, min(size, SIZE - pos))
        assert bytes(buf[i:i + available]) == data[pos:pos + available]
        if keep:
            held.append((buf[i:i + available], data[pos:pos + available]))
        for view, expected in held:
            assert bytes(view) == expected


def test_a_read_lands_where_its_bytes_lie_in_a_page_of_the_file(segment, buffers):
    """So the kernel copies page to page (see page_aligned_buffer)."""
    with open(segment, "rb", buffering=0) as stream:
        window = Window(stream, SIZE)
        for pos in (0, 1, 17, 4095, 4096 + 48, CHUNK + 31, 2 * CHUNK + 3000):
            buf, i, available = window.view(pos, CHUNK)
            buffer = buf.obj   # the page-aligned buffer under the view
            assert bytes(buffer[pos % PAGE:pos % PAGE + 64]) == DATA[pos:pos + 64]


def test_an_entry_larger_than_a_chunk_is_read_whole_and_its_buffer_not_kept(segment, buffers):
    with open(segment, "rb", buffering=0) as stream:
        window = Window(stream, SIZE)
        buf, i, available = window.view(100, 2 * CHUNK)
        assert bytes(buf[i:i + available]) == DATA[100:100 + 2 * CHUNK]
        assert all(buffer is not buf.obj for buffer in buffers.kept)


def test_a_small_file_is_read_into_a_buffer_of_its_size(buffers):
    """Faulting in a chunk's pages would cost a small file more than reading it."""
    data = DATA[:10_000]
    buf, i, available = Window(io.BytesIO(data), len(data)).view(0, 100)
    assert bytes(buf[i:i + available]) == data[:100]
    assert len(buf.obj) < CHUNK and buffers.kept == []


@pytest.mark.parametrize("size", [0, 1, PAGE - 1, PAGE, 2 * PAGE, CHUNK])
def test_the_end_of_a_file_of_any_size_has_no_bytes(size, buffers):
    window = Window(io.BytesIO(DATA[:size]), size)
    for pos in (size, size + 1, size + PAGE):
        buf, i, available = window.view(pos, 100)
        assert available == 0 and bytes(buf[i:i + available]) == b""
    buf, i, available = window.view(max(0, size - 1), 100)   # and the window reads on after it
    assert bytes(buf[i:i + available]) == DATA[max(0, size - 1):size]


def test_a_stream_that_can_only_read(buffers):
    class ReadOnly(io.RawIOBase):
        def __init__(self, data):
            self.inner = io.BytesIO(data)

        def read(self, size=-1):
            return self.inner.read(size)

        def seek(self, pos, whence=0):
            return self.inner.seek(pos, whence)

        readinto = None   # what a stream without it looks like to the window

    window = Window(ReadOnly(DATA), SIZE)
    for pos in (0, CHUNK - 5, SIZE - 10):
        buf, i, available = window.view(pos, 100)
        assert bytes(buf[i:i + available]) == DATA[pos:pos + 100]


def test_views_are_read_only(segment, buffers):
    with open(segment, "rb", buffering=0) as stream:
        buf, i, _ = Window(stream, SIZE).view(10, 10)
        assert buf.readonly
        with pytest.raises(TypeError):
            buf[i] = 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_keeps_none_of_its_parents_buffers(segment):
    with open(segment, "rb", buffering=0) as stream:
        window = Window(stream, SIZE)
        window.view(0, 10)
        assert window_module.BUFFERS.kept
        readable, writable = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(readable)
            os.write(writable, str(len(window_module.BUFFERS.kept)).encode())
            os._exit(0)
        os.close(writable)
        with open(readable, "rb") as child:
            kept_in_child = child.read()
        os.waitpid(pid, 0)
    assert kept_in_child == b"0"

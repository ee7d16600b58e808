"""Each frame rule is written once, in kbatch.format.framing, and every run over a segment honours it.

The bounds of an entry (a magic Kafka reads, least size <= size <= the reader's maximum, all of it in the
input) and the CRC each magic carries are kbatch.format.framing's.  The CRC run, --deep's run (its
compiled loop too), the listing's run, the reader, its recovery (resync) and the seek by index all ask
framing: change a rule there and every one of them follows.
"""

from __future__ import annotations

import ast
import io
import pathlib

import pytest
from hypothesis import given, strategies as st

import kbatch
import kbatch.walk.deep
from kbatch.format import framing
from kbatch.format.codecs import DEFAULT_DECOMPRESSED_LIMIT, Decompressor
from kbatch.format.structs import LOG_OVERHEAD
from kbatch.partition.seek import peek
from kbatch.reading.invariants import OffsetOrder
from kbatch.reading.model import Batch
from kbatch.reading.reader import ReadOptions, SegmentReader
from kbatch.reading.summary import FileSummary
from kbatch.reading.window import Window
from kbatch.walk.crcrun import CrcRun
from kbatch.walk.deep import DeepRun
from kbatch.walk.listing import ListRun

from .helpers import compiled_kernels, pure_recordwalk
from .test_fastdeep import field, segment

KBATCH = pathlib.Path(kbatch.__file__).parent
BATCHES = segment(4)
DATA = b"".join(BATCHES)
SIZES = [len(batch) - LOG_OVERHEAD for batch in BATCHES]   # each batch's size field


def what_each_run_takes(tmp_path, max_entry_size: int = framing.DEFAULT_MAX_ENTRY_SIZE) -> dict[str, bool]:
    """Whether each run over a segment takes its first batch (the one it may take) as an entry."""
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(DATA)
    window = Window(io.BytesIO(DATA), len(DATA))
    summary = FileSummary(str(path), len(DATA))
    # --deep's run leaves the first batch of a walk to the full reader: it starts on the second, the order
    # standing where the first left it.
    order = OffsetOrder()
    order.last_offset, order.last_pos = field(BATCHES[0], "base_offset") + field(BATCHES[0], "last_offset_delta"), 0
    deep = DeepRun(summary, order, 0, max_entry_size, Decompressor(DEFAULT_DECOMPRESSED_LIMIT))
    reader = SegmentReader(io.BytesIO(DATA), ReadOptions(max_entry_size=max_entry_size))
    return {
        "crc run": CrcRun(summary, max_entry_size).walk(window, 0, len(DATA)) > 0,
        "deep run": deep.walk(window, len(BATCHES[0]), len(DATA)) > len(BATCHES[0]),
        "listing run": ListRun(summary, b"{", lambda lines: None, max_entry_size).walk(window, 0, len(DATA)) > 0,
        "reader": isinstance(next(iter(reader.walk())), Batch),
        "recovery": reader.recovery.verified_entry_at(0),
        "resync": reader.recovery.resync(1) == len(BATCHES[0]),
        "seek": peek(io.BytesIO(DATA), 0, len(DATA), max_entry_size) is not None,
    }


@pytest.fixture(params=["compiled", "pure"])
def kernel(request, monkeypatch):
    """--deep's run with the compiled loop, then with its plain-Python twin."""
    if request.param == "pure":
        monkeypatch.setattr(kbatch.walk.deep, "CleanBatches", pure_recordwalk().CleanBatches)


def test_every_run_takes_the_batches_as_they_are(tmp_path, kernel):
    assert all(what_each_run_takes(tmp_path).values()), what_each_run_takes(tmp_path)


def test_every_run_honours_the_maximum_entry_size(tmp_path, kernel):
    """One byte under the smallest batch's size field: no run takes a batch; at it, every run does."""
    assert not any(what_each_run_takes(tmp_path, min(SIZES) - 1).values())
    assert all(what_each_run_takes(tmp_path, max(SIZES)).values())


def test_every_run_honours_a_least_size_changed_in_framing(tmp_path, monkeypatch, kernel):
    """framing.MIN_ENTRY_SIZE raised past the batches (in framing alone): every run refuses them."""
    monkeypatch.setattr(framing, "MIN_ENTRY_SIZE", {**framing.MIN_ENTRY_SIZE, 2: max(SIZES) + 1})
    assert not any(what_each_run_takes(tmp_path).values()), what_each_run_takes(tmp_path)


@given(magic=st.integers(-128, 127), size=st.integers(-2**31, 2**31 - 1), most=st.integers(0, 2**31 - 1))
def test_the_compiled_frame_check_is_framings(magic, size, most):
    """The compiled loop's check of a v2 batch's frame (kernels.batchrules.framed_v2_batch) takes its bounds
    from framing and answers as framing.framed does for a v2 batch, compiled and pure."""


    expected = magic == 2 and framing.framed(0, 2, size, most, 2**40)
    for module in (compiled_kernels(), pure_recordwalk()):
        assert module.framed_v2_batch(magic, size, *framing.size_bounds(2, most)) == expected


def _modules():
    for path in sorted(KBATCH.rglob("*.py")):
        yield path.relative_to(KBATCH).as_posix(), ast.parse(path.read_text())


def test_entry_bounds_are_written_only_in_framing():
    """No module but the declarations and framing reads a least entry size (asserts on a layout's size
    aside): every bound is framing.size_bounds'."""
    declared_in = {"format/framing.py", "format/structs.py", "format/layouts.py"}
    readers = []
    for name, tree in _modules():
        if name in declared_in:
            continue
        asserted = {id(node) for statement in ast.walk(tree) if isinstance(statement, ast.Assert)
                    for node in ast.walk(statement)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                    and node.value.id == "MIN_ENTRY_SIZE" and id(node) not in asserted:
                readers.append(f"{name}:{node.lineno}")
            if isinstance(node, ast.Name) and node.id == "V3_MIN_ENTRY_SIZE":
                readers.append(f"{name}:{node.lineno}")
    assert readers == []


def test_the_crc_of_each_magic_is_chosen_only_in_framing():
    """The reader, its parts, the runs and the kernels take a log entry's CRC from framing.CHECKSUMS: none
    imports a CRC function of its own."""
    importers = []
    for name, tree in _modules():
        if not name.startswith(("reading/", "walk/", "kernels/")):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "kbatch.format.checksums":
                importers += [f"{name}: {alias.name}" for alias in node.names if alias.name != "SpanCrc"]
    assert importers == []

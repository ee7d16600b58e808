"""Walking a segment: every log entry in file order, and every damaged range.

:class:`SegmentReader` reads a file (or stdin, or pasted hex) front to back in
constant memory and yields, in file order, a :class:`~kbatch.model.Batch` for
each log entry of any magic and a :class:`~kbatch.findings.Finding` for each
range of bytes that is no log entry.  It never raises on bad bytes: where an
entry does not check out it reports why, looks for the next entry whose CRC
verifies (resync) and goes on from there.

The framing is Kafka's (FileLogInputStream / ByteBufferLogInputStream): an
int64 offset, an int32 size, and the magic byte at position 16 of every entry.
A length field is not covered by any CRC, so when an entry's CRC fails and its
declared end does not land on another entry, the reader tries the end the
next valid entry suggests: if the CRC verifies there, the entry is intact and
only its length lies (``bad-length``), which is what repair-length builds on.

This module is the library: it imports neither click nor rich.
"""

from __future__ import annotations

import io
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from .checksums import crc32, crc32c
from .codecs import DEFAULT_DECOMPRESSED_LIMIT, CodecError, Decompressor, codec_name
from .findings import Finding
from .layouts import (
    BATCH_CRC_START,
    BATCH_HEADER,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    HEADER_SIZE_UP_TO_MAGIC,
    LEGACY_CODEC_MASK,
    LEGACY_TIMESTAMP_TYPE_MASK,
    LOG_ENTRY_PREFIX,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MESSAGE_CRC_START,
    MESSAGE_V0_HEADER,
    MESSAGE_V1_HEADER,
    MIN_ENTRY_SIZE,
    PROPOSED_V3_MAGIC,
    SIZE_OFFSET,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    V3_MIN_ENTRY_SIZE,
)
from .model import NO_TIMESTAMP_TYPE, TIMESTAMP_TYPES, Batch, Record
from .records import decode_batch_records

DEFAULT_MAX_ENTRY_SIZE = 1 << 30
_CHUNK = 4 * 1024 * 1024
_INT32 = __import__("struct").Struct(">i")

# Where an entry may start: a size field that is positive and not absurdly
# large (first byte < 0x80, not all four bytes zero) and a magic byte of 0, 1
# or 2 at position 16.  Scanned by the regex engine, checked in Python.
_ENTRY_CANDIDATE = re.compile(rb"(?s)(?=.{8}(?!\x00\x00\x00\x00)[\x00-\x7f].{7}[\x00-\x02])")


@dataclass(frozen=True)
class ReadOptions:
    records: bool = False                    # decode the records of every batch
    decompressed_limit: int = DEFAULT_DECOMPRESSED_LIMIT
    max_entry_size: int = DEFAULT_MAX_ENTRY_SIZE   # a larger size field is taken as damage
    keep_body: bool = False                  # keep each entry's bytes after its fixed header (Batch.body)
    inflate: bool = False                    # decompress v2 records (for Batch.decompressed_size) without decoding


class _Window:
    """Bytes of a seekable stream around the reader's position, in one reused buffer."""

    def __init__(self, stream: BinaryIO, size: int):
        self.stream = stream
        self.size = size            # bytes in the stream
        self.buf = b""
        self.base = 0               # stream position of buf[0]
        self._stream_pos = None

    def view(self, pos: int, size: int) -> tuple[bytes, int, int]:
        """(buffer, index, available): buffer[index:index+available] are the bytes at ``pos``."""
        size = max(0, min(size, self.size - pos))
        start = pos - self.base
        if 0 <= start and start + size <= len(self.buf):
            return self.buf, start, size
        tail = self.buf[start:] if 0 <= start < len(self.buf) else b""
        more = self._read(pos + len(tail), max(size - len(tail), _CHUNK))
        self.buf, self.base = tail + more, pos
        return self.buf, 0, min(size, len(self.buf))

    def _read(self, pos: int, size: int) -> bytes:
        if self._stream_pos != pos:
            self.stream.seek(pos)
        parts, wanted = [], min(size, self.size - pos)
        while wanted > 0:
            part = self.stream.read(wanted)
            if not part:
                break
            parts.append(part)
            wanted -= len(part)
        data = b"".join(parts)
        self._stream_pos = pos + len(data)
        return data


class SegmentReader:
    """Yields every log entry (as a Batch) and every damaged range (as a Finding)."""

    def __init__(self, stream: BinaryIO, options: ReadOptions = ReadOptions(), *, size: int | None = None,
                 decompressor: Decompressor | None = None, nested_magic: int | None = None):
        if size is None:
            size = stream.seek(0, os.SEEK_END)
        self.size = size
        self.options = options
        self.window = _Window(stream, size)
        self.decompressor = decompressor or Decompressor(options.decompressed_limit)
        self._nested_magic = nested_magic   # set when walking the inner set of a wrapper message

    # -- the walk ------------------------------------------------------------

    def __iter__(self) -> Iterator[Batch | Finding]:
        return self.walk()

    def walk(self, start: int = 0, stop: int | None = None) -> Iterator[Batch | Finding]:
        """Entries starting in [start, stop) (an entry may end past ``stop``); ``self.landed`` is where it ended.

        ``start`` must be where an entry begins (0, or a position :meth:`next_entry_at_or_after` found).
        """
        stop = self.size if stop is None else min(stop, self.size)
        pos = start
        while pos < stop:
            pos = yield from self._step(pos)
        self.landed = pos

    def next_entry_at_or_after(self, pos: int) -> int | None:
        """The first position at or after ``pos`` where an entry with a valid CRC begins."""
        return pos if self._verified_entry_at(pos) else self._resync(pos + 1)

    def entry_verifies_at(self, pos: int) -> bool:
        return self._verified_entry_at(pos)

    def _step(self, pos: int):
        buf, i, available = self.window.view(pos, BATCH_HEADER.size)
        if not any(buf[i:i + min(available, HEADER_SIZE_UP_TO_MAGIC)]):
            zero_end = self._zero_run_end(pos)
            if zero_end == self.size:
                yield Finding("zero-tail", pos, pos, self.size - pos, "tail",
                              "a log entry or the end of the file", f"{self.size - pos} zero bytes")
                return self.size
        if available < HEADER_SIZE_UP_TO_MAGIC:
            yield Finding("truncated", pos, pos, available, "entry",
                          f"a log entry header of at least {HEADER_SIZE_UP_TO_MAGIC} bytes",
                          f"{available} bytes, then the end of the input")
            return self.size
        offset, size = LOG_ENTRY_PREFIX.unpack_from(buf, i)
        magic = buf[i + MAGIC_OFFSET]
        if magic == PROPOSED_V3_MAGIC and V3_MIN_ENTRY_SIZE <= size <= self.size - pos - LOG_OVERHEAD:
            yield self._proposed_v3(pos, pos + LOG_OVERHEAD + size)
            return pos + LOG_OVERHEAD + size
        if magic not in MIN_ENTRY_SIZE:
            problem = Finding("unknown-magic", pos, pos + MAGIC_OFFSET, 1, "magic", "0, 1 or 2", str(magic))
            return (yield from self._damaged(pos, problem))
        if not MIN_ENTRY_SIZE[magic] <= size <= self.options.max_entry_size:
            problem = Finding("bad-length", pos, pos + SIZE_OFFSET, 4, "size" if magic < 2 else "batch_length",
                              f"{MIN_ENTRY_SIZE[magic]}..{self.options.max_entry_size} for magic {magic}",
                              str(size))
            return (yield from self._damaged(pos, problem))
        end = pos + LOG_OVERHEAD + size
        if end > self.size:
            problem = Finding("truncated", pos, pos, self.size - pos, "entry",
                              f"{LOG_OVERHEAD + size} bytes (size field {size})",
                              f"{self.size - pos} bytes, then the end of the input")
            return (yield from self._damaged(pos, problem, declared_size=size))
        batch = self._entry(pos, end, magic)
        if batch.crc_valid:
            yield batch
            return end
        # The CRC fails.  A length field is covered by no CRC: if the CRC verifies at an end another
        # entry suggests, the bytes are intact and only the length lies.
        recovered = self._recover_length(pos, self._resync(pos + 1) or self.size)
        if recovered is not None:
            yield recovered
            return recovered.pos + recovered.size
        if end == self.size or self._plausible_entry_at(end):
            yield batch
            return end
        problem = Finding("crc-mismatch", pos, *self._crc_span(pos, end, magic), "crc",
                          f"{batch.computed_crc} (computed)", f"{batch.crc} (stored)")
        return (yield from self._damaged(pos, problem))

    def _damaged(self, pos: int, problem: Finding, declared_size: int | None = None):
        """Bytes at ``pos`` are no intact entry: explain them and find where to go on."""
        resume = self._resync(pos + 1)
        end = self.size if resume is None else resume
        intact = self._recover_length(pos, end)
        if intact is not None:
            yield intact
            return intact.pos + intact.size
        if problem.code == "truncated":
            if resume is None:
                yield problem   # the input ends inside this entry
                return self.size
            # Valid entries follow, so the input is not cut short: the size field is what lies.
            problem = Finding("bad-length", pos, pos + SIZE_OFFSET, 4, "size",
                              f"at most {self.size - pos - LOG_OVERHEAD} (the bytes left in the input)",
                              str(declared_size))
        yield Finding("resync", pos, pos, end - pos, "entry", "a valid log entry",
                      f"{end - pos} bytes that are none" + (f"; resumed at {end}" if resume is not None
                                                           else ", up to the end of the input"))
        yield problem   # why the first of those bytes is no entry
        return end

    _MAX_LENGTH_CANDIDATES = 256

    def _recover_length(self, pos: int, limit: int) -> Batch | None:
        """The entry at ``pos``, if its CRC verifies at some end up to ``limit`` other than its length's.

        The candidate ends are where another entry plausibly starts, and
        ``limit`` itself (the next entry whose CRC verifies, or the end of the
        input).  One running CRC is carried from candidate to candidate, so
        trying them all costs one pass over the bytes.
        """
        buf, i, available = self.window.view(pos, BATCH_HEADER.size)
        if available < HEADER_SIZE_UP_TO_MAGIC or buf[i + MAGIC_OFFSET] not in MIN_ENTRY_SIZE:
            return None
        magic = buf[i + MAGIC_OFFSET]
        if available < (BATCH_HEADER.size if magic == 2 else MESSAGE_V0_HEADER.size):
            return None   # not even a whole header: nothing to prove a length with
        if magic == 2:
            stored, checksum, covered_from = BATCH_HEADER.unpack_from(buf, i)[4], crc32c, pos + BATCH_CRC_START
        else:
            stored, checksum, covered_from = MESSAGE_V0_HEADER.unpack_from(buf, i)[2], crc32, pos + MESSAGE_CRC_START
        first_end = pos + LOG_OVERHEAD + MIN_ENTRY_SIZE[magic]
        limit = min(limit, pos + LOG_OVERHEAD + self.options.max_entry_size)
        running, covered_to = 0, covered_from
        for end in self._candidate_ends(first_end, limit):
            running = checksum(self.read_bytes(covered_to, end - covered_to), running)
            covered_to = end
            if running == stored:
                return self._entry_with_true_length(pos, end)
        return None

    def _candidate_ends(self, first: int, limit: int):
        """Positions in [first, limit) where an entry plausibly starts, then ``limit``."""
        found = 0
        chunk_pos = first
        while chunk_pos < limit and found < self._MAX_LENGTH_CANDIDATES:
            buf, i, available = self.window.view(chunk_pos, min(_CHUNK, limit - chunk_pos) + HEADER_SIZE_UP_TO_MAGIC)
            stop = i + min(available, limit - chunk_pos)
            for match in _ENTRY_CANDIDATE.finditer(buf, i, stop):
                candidate = chunk_pos + match.start() - i
                if self._plausible_entry_at(candidate, zeros_too=False):
                    yield candidate
                    found += 1
                    if found >= self._MAX_LENGTH_CANDIDATES:
                        break
            chunk_pos += max(stop - i, 1)
        if first <= limit:
            yield limit

    def _entry_with_true_length(self, pos: int, end: int) -> Batch | None:
        """The entry at ``pos`` if it verifies when it ends at ``end`` (its length field lying)."""
        buf, i, available = self.window.view(pos, HEADER_SIZE_UP_TO_MAGIC)
        if available < HEADER_SIZE_UP_TO_MAGIC:
            return None
        magic = buf[i + MAGIC_OFFSET]
        true_size = end - pos - LOG_OVERHEAD
        if magic not in MIN_ENTRY_SIZE or not MIN_ENTRY_SIZE[magic] <= true_size <= self.options.max_entry_size:
            return None
        (stored_size,) = _INT32.unpack_from(buf, i + SIZE_OFFSET)
        if stored_size == true_size:
            return None
        batch = self._entry(pos, end, magic)
        if not batch.crc_valid:
            return None
        batch.findings.insert(0, Finding("bad-length", pos, pos + SIZE_OFFSET, 4, "size" if magic < 2 else "batch_length",
                                         f"{true_size} (the CRC verifies with it)", str(stored_size)))
        return batch

    # -- telling entries from other bytes ------------------------------------

    def _plausible_entry_at(self, pos: int, zeros_too: bool = True) -> bool:
        """Does an entry (or, with ``zeros_too``, a zero run) plausibly start at ``pos``?  Header checks only."""
        buf, i, available = self.window.view(pos, HEADER_SIZE_UP_TO_MAGIC)
        if available < HEADER_SIZE_UP_TO_MAGIC:
            return False
        if not any(buf[i:i + HEADER_SIZE_UP_TO_MAGIC]):
            return zeros_too
        offset, size = LOG_ENTRY_PREFIX.unpack_from(buf, i)
        magic = buf[i + MAGIC_OFFSET]
        return (magic in MIN_ENTRY_SIZE and offset >= 0
                and MIN_ENTRY_SIZE[magic] <= size and pos + LOG_OVERHEAD + size <= self.size)

    def _verified_entry_at(self, pos: int) -> bool:
        """Does an entry whose CRC verifies start at ``pos``?"""
        if not self._plausible_entry_at(pos, zeros_too=False):
            return False
        buf, i, _ = self.window.view(pos, HEADER_SIZE_UP_TO_MAGIC)
        _, size = LOG_ENTRY_PREFIX.unpack_from(buf, i)
        magic = buf[i + MAGIC_OFFSET]
        if size > self.options.max_entry_size:
            return False
        end = pos + LOG_OVERHEAD + size
        buf, i, _ = self.window.view(pos, end - pos)
        if magic == 2:
            (stored,) = BATCH_HEADER.codec.unpack_from(buf, i)[4:5]
            return crc32c(memoryview(buf)[i + BATCH_CRC_START:i + end - pos]) == stored
        stored = MESSAGE_V0_HEADER.codec.unpack_from(buf, i)[2]
        return crc32(memoryview(buf)[i + MESSAGE_CRC_START:i + end - pos]) == stored

    def _resync(self, start: int) -> int | None:
        """The next position at or after ``start`` where an entry with a valid CRC begins."""
        chunk_pos = start
        while chunk_pos + HEADER_SIZE_UP_TO_MAGIC <= self.size:
            buf, i, available = self.window.view(chunk_pos, _CHUNK + HEADER_SIZE_UP_TO_MAGIC)
            for match in _ENTRY_CANDIDATE.finditer(buf, i, i + available):
                candidate = chunk_pos + match.start() - i
                if self._verified_entry_at(candidate):
                    return candidate
            chunk_pos += max(available - HEADER_SIZE_UP_TO_MAGIC + 1, 1)
        return None

    def _zero_run_end(self, pos: int) -> int:
        """Where the run of zero bytes starting at ``pos`` ends."""
        while pos < self.size:
            buf, i, available = self.window.view(pos, _CHUNK)
            chunk = buf[i:i + available]
            nonzero = len(chunk) - len(chunk.lstrip(b"\x00"))
            if nonzero < len(chunk):
                return pos + nonzero
            pos += available
        return self.size

    @staticmethod
    def _crc_span(pos: int, end: int, magic: int) -> tuple[int, int]:
        start = pos + (BATCH_CRC_START if magic == 2 else MESSAGE_CRC_START)
        return start, end - start

    # -- decoding one entry --------------------------------------------------

    def _entry(self, pos: int, end: int, magic: int) -> Batch:
        buf, i, _ = self.window.view(pos, end - pos)
        entry = memoryview(buf)[i:i + end - pos]
        batch = self._batch_v2(pos, entry) if magic == 2 else self._message(pos, entry, magic)
        if self.options.keep_body:
            fixed = {0: MESSAGE_V0_HEADER, 1: MESSAGE_V1_HEADER, 2: BATCH_HEADER}[magic].size
            batch.body = bytes(entry[fixed:])
        return batch

    def _proposed_v3(self, pos: int, end: int) -> Batch:
        """A magic-3 entry: the v3 proposal, read only to be looked at (kbatch.proposed)."""
        from .proposed import read_v3_batch

        buf, i, _ = self.window.view(pos, end - pos)
        return read_v3_batch(pos, memoryview(buf)[i:i + end - pos], self.decompressor,
                             records=self.options.records, keep_body=self.options.keep_body)

    def read_bytes(self, pos: int, size: int) -> bytes:
        """The input's bytes at ``pos`` (e.g. a damaged range a finding names)."""
        buf, i, available = self.window.view(pos, size)
        return bytes(buf[i:i + available])

    def _batch_v2(self, pos: int, entry: memoryview) -> Batch:
        (base_offset, batch_length, leader_epoch, magic, crc, attributes, last_offset_delta, base_timestamp,
         max_timestamp, producer_id, producer_epoch, base_sequence, records_count) = BATCH_HEADER.unpack_from(entry)
        codec_id = attributes & COMPRESSION_CODEC_MASK
        batch = Batch(
            pos=pos, size=len(entry), magic=2, length_field=batch_length, offset_field=base_offset,
            base_offset=base_offset, last_offset=base_offset + last_offset_delta, count=records_count,
            attributes=attributes, codec=codec_name(codec_id), crc=crc,
            computed_crc=crc32c(entry[BATCH_CRC_START:]),
            timestamp_type=TIMESTAMP_TYPES[bool(attributes & TIMESTAMP_TYPE_MASK)],
            base_timestamp=base_timestamp, max_timestamp=max_timestamp,
            partition_leader_epoch=leader_epoch, last_offset_delta=last_offset_delta,
            producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
            is_transactional=bool(attributes & TRANSACTIONAL_FLAG_MASK),
            is_control=bool(attributes & CONTROL_FLAG_MASK),
            delete_horizon_ms=base_timestamp if attributes & DELETE_HORIZON_FLAG_MASK else None,
            payload_pos=pos + BATCH_HEADER.size, payload_size=len(entry) - BATCH_HEADER.size,
        )
        if not batch.crc_valid:
            batch.findings.append(Finding("crc-mismatch", pos, *self._crc_span(pos, pos + len(entry), 2), "crc",
                                          f"{batch.computed_crc} (computed)", f"{crc} (stored)"))
        if self.options.records or (self.options.inflate and codec_id != 0):
            load_records(batch, entry[BATCH_HEADER.size:], self.decompressor, decode=self.options.records)
        return batch

    def _message(self, pos: int, entry: memoryview, magic: int) -> Batch:
        """A v0/v1 message: one record, or a compressed wrapper holding a message set."""
        header = MESSAGE_V1_HEADER if magic == 1 else MESSAGE_V0_HEADER
        fields = header.unpack_from(entry)
        offset, size, crc, _, attributes = fields[:5]
        timestamp = fields[5] if magic == 1 else None
        codec_id = attributes & LEGACY_CODEC_MASK
        log_append_time = magic == 1 and bool(attributes & LEGACY_TIMESTAMP_TYPE_MASK)
        batch = Batch(
            pos=pos, size=len(entry), magic=magic, length_field=size, offset_field=offset,
            base_offset=offset, last_offset=offset, count=1, attributes=attributes,
            codec=codec_name(codec_id), crc=crc, computed_crc=crc32(entry[MESSAGE_CRC_START:]),
            timestamp_type=TIMESTAMP_TYPES[log_append_time] if magic == 1 else NO_TIMESTAMP_TYPE,
            base_timestamp=timestamp, max_timestamp=timestamp,
        )
        if not batch.crc_valid:
            batch.findings.append(Finding("crc-mismatch", pos, *self._crc_span(pos, pos + len(entry), magic), "crc",
                                          f"{batch.computed_crc} (computed)", f"{crc} (stored)"))
        key_value = self._key_value(batch, entry, header.size, "")
        if key_value is None:
            batch.count = None
            return batch
        key, value, value_pos = key_value
        batch.payload_pos, batch.payload_size = pos + value_pos, 0 if value is None else len(value)
        if codec_id == 0:
            batch.records = [Record(offset=offset, timestamp=timestamp, key=key, value=value, headers=[],
                                    pos=pos, size=len(entry), magic=magic, crc=crc, crc_valid=batch.crc_valid)]
            return batch
        self._unwrap(batch, value, codec_id, log_append_time)
        return batch

    def _key_value(self, batch: Batch, entry: memoryview, pos: int, path: str):
        """The key and value of a v0/v1 message, or None (with a finding) when they do not fit."""
        parts = []
        for name in ("key", "value"):
            if pos + 4 > len(entry):
                batch.findings.append(Finding("record-overrun", batch.pos, batch.pos + pos, len(entry) - pos,
                                              f"{path}{name}_length", "4 bytes", f"{len(entry) - pos} bytes left"))
                return None
            (length,) = _INT32.unpack_from(entry, pos)
            if pos + 4 + max(length, 0) > len(entry):
                batch.findings.append(Finding("bad-length", batch.pos, batch.pos + pos, 4, f"{path}{name}_length",
                                              f"-1..{len(entry) - pos - 4}", str(length)))
                return None
            if length < -1:   # LegacyRecord reads any negative length as null (Utils.sizeDelimited)
                batch.findings.append(Finding("negative-length", batch.pos, batch.pos + pos, 4,
                                              f"{path}{name}_length", "-1 (null) or a length >= 0",
                                              f"{length} (Kafka reads it as null)"))
            pos += 4
            parts.append((None if length < 0 else bytes(entry[pos:pos + length]), pos))
            pos += max(length, 0)
        if pos != len(entry):
            batch.findings.append(Finding("trailing-bytes", batch.pos, batch.pos + pos, len(entry) - pos,
                                          f"{path}value", "the message to end after its value",
                                          f"{len(entry) - pos} more bytes"))
        (key, _), (value, value_pos) = parts
        return key, value, value_pos

    @staticmethod
    def _absolute_inner_offsets(batch: Batch, records: list[Record]) -> None:
        """A v1 wrapper's inner offsets are relative: its own offset is that of its last record.

        AbstractLegacyRecordBatch.DeepRecordsIterator: absolute = wrapper offset - last inner offset + inner
        offset.  A wrapper offset of 0 (produce data from some librdkafka versions) means the inner offsets
        stand as stored; a wrapper offset below the last inner offset is corrupt.  (A v0 wrapper's inner
        offsets are absolute already.)
        """
        last_inner = records[-1].offset
        if batch.offset_field == 0:
            if last_inner != 0:
                batch.findings.append(Finding(
                    "wrapper-offset-zero", batch.pos, batch.pos, 8, "offset", "the offset of the last inner message",
                    f"0, so the inner offsets {records[0].offset}..{last_inner} are taken as they are"))
            return
        if batch.offset_field < last_inner:
            batch.findings.append(Finding("bad-wrapper-offset", batch.pos, batch.pos, 8, "offset",
                                          f"at least the last inner offset {last_inner}", str(batch.offset_field)))
            return
        for record in records:
            record.offset += batch.offset_field - last_inner

    def _unwrap(self, batch: Batch, value: bytes | None, codec_id: int, log_append_time: bool) -> None:
        """Decompress a wrapper's value and read the inner message set (AbstractLegacyRecordBatch)."""
        def finding(code, field, expected, actual, inner_pos=None):
            batch.findings.append(Finding(code, batch.pos, batch.payload_pos, batch.payload_size, field,
                                          expected, actual, inner_pos))

        if self._nested_magic is not None:
            finding("nested-compression", "attributes", "an uncompressed inner message",
                    f"{batch.codec} inside a compressed message set")
            return
        try:
            inner = self.decompressor.decompress(codec_id, value or b"", batch.magic)
        except CodecError as error:
            finding(error.code, "value", f"{batch.codec} data", error.detail)
            batch.count = None
            return
        batch.decompressed_size = len(inner)
        messages: list[Batch] = []
        reader = SegmentReader(io.BytesIO(inner), self.options, size=len(inner),
                               decompressor=Decompressor(self.options.decompressed_limit),
                               nested_magic=batch.magic)
        for item in reader:
            if isinstance(item, Finding):
                finding(item.code, f"inner.{item.field}", item.expected, item.actual, item.pos)
                continue
            for inner_finding in item.findings:
                finding(inner_finding.code, f"inner[{len(messages)}].{inner_finding.field}",
                        inner_finding.expected, inner_finding.actual, inner_finding.pos)
            if item.magic != batch.magic:
                finding("inner-magic-mismatch", f"inner[{len(messages)}].magic", str(batch.magic), str(item.magic),
                        item.pos)
            messages.append(item)
        batch.count = len(messages)
        records = [record for message in messages for record in (message.records or [])]
        if batch.magic == 1 and records:
            self._absolute_inner_offsets(batch, records)
        if log_append_time:   # LegacyRecord.timestamp(): the wrapper's LogAppendTime wins for v1 messages
            for record in records:
                if record.magic == 1:
                    record.timestamp = batch.base_timestamp
        if records:
            batch.base_offset = records[0].offset
            batch.last_offset = records[-1].offset
        batch.records = records


def load_records(batch: Batch, payload, decompressor: Decompressor, *, decode: bool = True) -> None:
    """Inflate a v2 batch's records (``payload``: its bytes after the header) and decode them into it.

    For a batch read without ``ReadOptions.records`` (its ``body`` kept),
    this decodes its records later, only if they are needed.
    """
    codec_id = batch.attributes & COMPRESSION_CODEC_MASK
    if codec_id != 0:
        try:
            payload = decompressor.decompress(codec_id, payload, 2)
        except CodecError as error:
            batch.findings.append(Finding(error.code, batch.pos, batch.payload_pos, batch.payload_size,
                                          "records", f"{batch.codec} data", error.detail))
            batch.records = batch.records if batch.records is not None else []
            return
        batch.decompressed_size = len(payload)
    if decode:
        batch.findings += decode_batch_records(batch, payload, batch.payload_pos, batch.payload_pos,
                                               batch.payload_size)


# -- opening inputs ------------------------------------------------------------

_HEX_NOISE = re.compile(rb"0x|[\s:,|-]")


def parse_hex(text: bytes) -> bytes:
    """Bytes from pasted hex: whitespace, colons, commas and 0x prefixes are ignored."""
    digits = _HEX_NOISE.sub(b"", text)
    try:
        return bytes.fromhex(digits.decode("ascii"))
    except (UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"not hex: {error}") from None


def open_input(path: str, *, hex_text: bool = False) -> BinaryIO:
    """A seekable binary stream for a path, ``-`` (stdin) or a file of hex text.

    stdin is spooled to a temporary file so the reader can revisit bytes while
    resyncing, in constant memory.
    """
    if hex_text:
        raw = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
        return io.BytesIO(parse_hex(raw))
    if path == "-":
        spool = tempfile.TemporaryFile()
        while chunk := sys.stdin.buffer.read(_CHUNK):
            spool.write(chunk)
        spool.seek(0)
        return spool
    return open(path, "rb", buffering=0)

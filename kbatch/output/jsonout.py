"""The JSON form of batches, records and findings (``--format jsonl`` and ``json``).

Field names are stable and documented in README.md ("JSON output").  Every
entry carries every key, null where its magic has no such field, so a jq
filter works on mixed segments.  Bytes are explicit objects: {"utf8": ...},
{"hex": ...} or {"base64": ...}, or null.
"""

from __future__ import annotations

import codecs
import json
from types import SimpleNamespace

from kbatch.output import columns
from kbatch.format.findings import Finding
from kbatch.reading.model import Batch, Record
from kbatch.kernels.jsonl import BATCH_JSON_KEYS, JSON_HEX, JSON_OTHER, JSON_TEXT, RECORD_JSON_KEYS, batch_json, records_json
from kbatch.kernels.recordwalk import any_key_or_value_starts_with_zero, is_compiled
from kbatch.output.values import bytes_json
# The JSON form of each kind of row, written out from its columns (kbatch.output.columns: what each key is and how
# it is read) by python -m kbatch.output.docs.  Every key is present, null where an entry has no such field, except
# the optional ones.
from kbatch.output._dicts import (batch_dict, coordinator_dict, coordinator_partition_dict, diff_summary_dict,  # noqa: F401
                                  difference_dict, error_line, file_summary_dict, file_summary_line, finding_dict,
                                  finding_line, finding_offsets, grep_match_dict, record_dict, region_dict,
                                  sidecar_entry_dict, sidecar_header_dict, sidecar_summary_dict,
                                  sidecar_summary_line, stats_dict, transaction_dict, txn_partition_dict,
                                  what_if_dict, scan_dict)
from kbatch.reading.summary import FileSummary
from kbatch.output.visible import json_name

JSON_FORMAT_VERSION = 1


def match_dict(path: str, found, decode: str) -> dict:
    """A record ``kbatch grep`` shows (kbatch.ops.grep.Found): as record_dict writes it, with its file and batch
    before it and what a consumer makes of it after."""
    return grep_match_dict(path, found, found.record, found.batch, decode)


def summary_dict(summary) -> dict:
    """A file's summary: a segment's (kbatch.reading.summary.FileSummary) or a file beside one's
    (kbatch.partition.sidecars.SidecarSummary)."""
    return file_summary_dict(summary) if isinstance(summary, FileSummary) else sidecar_summary_dict(summary)


def summary_line(summary) -> dict:
    """The same as a file's last line."""
    return file_summary_line(summary) if isinstance(summary, FileSummary) else sidecar_summary_line(summary)


def file_first(line: dict) -> dict:
    """A line of dump's and verify-crc's JSON Lines: each names its file first."""
    return {_FILE: line[_FILE], **line}


_FILE = columns.FINDING_LINE[1].name


def json_line(line: dict) -> str:
    """One line of JSON Lines (UTF-8 kept as it is)."""
    return json.dumps(line, ensure_ascii=False) + "\n"


def write_batch_with_records(out, head: dict, batch: Batch, decode: str) -> None:
    """``json.dumps`` of ``head`` with ``batch_dict``'s "records" added, byte for byte, written record by
    record: a wrapper's 100,000 records never sit in memory as dicts or as one string."""
    head = dict(head)
    payload = head.pop("payload", None)   # batch_dict puts it after the records
    text = json.dumps(head, ensure_ascii=False)
    out.write(f'{text[:-1]}, "records": [')
    _write_records(out, (json.dumps(record_dict(record, batch, decode), ensure_ascii=False)
                         for record in batch.records or ()))
    out.write("]" + ("" if payload is None else f', "payload": {json.dumps(payload, ensure_ascii=False)}') + "}")


_RECORD_JSON_MODES = {"hex": JSON_HEX, "base64": JSON_OTHER}   # the text modes: JSON_TEXT


def records_json_parts(batch: Batch, decode: str):
    """``batch_dict(..., with_records=True)["records"]``'s items as json.dumps writes them, in UTF-8, from the
    columns, a chunk of records at a time (to be joined by ", "): no dict per record, and never the whole
    batch's text at once, however many records it holds.

    For a v2 batch read without Record objects (``batch.record_data``).
    """
    from kbatch.reading.records import record_chunks

    def other(data: bytes) -> bytes:
        return json.dumps(bytes_json(data, decode), ensure_ascii=False).encode()

    shift = 0 if batch.compressed else batch.payload_pos
    base_sequence = batch.base_sequence if batch.base_sequence is not None else -1
    mode = _RECORD_JSON_MODES.get(decode, JSON_TEXT)
    data = batch.record_data
    for chunk in record_chunks(batch):
        if any_key_or_value_starts_with_zero(chunk, data):
            # record_dict adds "schema_registry" for such records: written the slow way, from objects.
            from kbatch.reading.records import chunk_records

            yield ", ".join(json.dumps(record_dict(record, batch, decode), ensure_ascii=False)
                            for record in chunk_records(chunk, batch)).encode()
            continue
        yield records_json(chunk, data, shift, batch.compressed, base_sequence,
                           batch.timestamp_type == "LogAppendTime", batch.max_timestamp, mode, other)


def records_json_text(batch: Batch, decode: str) -> str:
    """All of :func:`records_json_parts` as one string (for a caller that holds a batch's records anyway)."""
    return ", ".join(str(part, "utf-8") for part in records_json_parts(batch, decode) if part)


def _write_records(out, parts, separator=", ") -> None:
    """The items of a "records" array, chunk by chunk as they are made (str, or bytes with a bytes separator)."""
    first = True
    for part in parts:
        if part:
            out.write(part if first else separator + part)
            first = False


# The compiled writer writes the keys it knows (kbatch.kernels.jsonl): it is used only while they are the
# declared ones (tests/test_columns.py fails where they are not).
def _records_json_matches_record_dict() -> bool:
    sample = Record(offset=0, timestamp=0, key=None, value=None, headers=[], pos=0, size=0)
    return tuple(record_dict(sample, _SAMPLE_BATCH, "auto")) == RECORD_JSON_KEYS


def _batch_json_matches_batch_dict() -> bool:
    return tuple(batch_dict(_SAMPLE_BATCH)) == BATCH_JSON_KEYS


_SAMPLE_BATCH = Batch(pos=0, size=0, magic=2, length_field=0, offset_field=0, base_offset=0, last_offset=0, count=0,
                      attributes=0, codec="none", crc=0, computed_crc=0, timestamp_type="CreateTime",
                      base_timestamp=0, max_timestamp=0)


def utf8_buffer(out):
    """Where a text stream's bytes go when it writes UTF-8 (its binary buffer), else None."""
    buffer, encoding = getattr(out, "buffer", None), getattr(out, "encoding", None)
    try:
        return buffer if buffer is not None and encoding and codecs.lookup(encoding).name == "utf-8" else None
    except LookupError:
        return None


class JsonlSink:
    """One JSON object per line: a batch, a damaged range, or a file's summary.

    The compiled writer makes UTF-8: where the output writes UTF-8 too (``writes_utf8``), every line goes to
    its bytes (never to its text layer, so nothing waits there out of order) and a batch's records are never
    made a str.  Only then are a large file's parts listed at once and put end to end: an encoding such as
    UTF-16 would open each part with its byte order mark.
    """

    def __init__(self, out, *, records: bool, decode: str):
        self.out, self.records, self.decode = out, records, decode
        self._writer = SimpleNamespace(write=self._emit)   # for the writers that take a stream
        # Batches read without Record objects have their records written from the decoder's columns.
        self.from_columns = records and _records_json_matches_record_dict()
        # A batch's own fields are written by the compiled writer (json.dumps of a dict is most of a listing's
        # time); interpreted, json.dumps is the faster of the two.
        self.compiled_lines = is_compiled() and _batch_json_matches_batch_dict()

    @property
    def out(self):
        return self._out

    @out.setter
    def out(self, stream) -> None:
        self._out, self._bytes = stream, utf8_buffer(stream)
        if self._bytes is not None:
            stream.flush()   # what its text layer holds goes first

    @property
    def writes_utf8(self) -> bool:
        return self._bytes is not None

    def _emit(self, piece) -> None:
        """A str, or UTF-8 bytes (the compiled writer's), to the output."""
        if self._bytes is None:
            self._out.write(piece if isinstance(piece, str) else str(piece, "utf-8", "surrogateescape"))
        else:
            self._bytes.write(piece.encode("utf-8", "surrogateescape") if isinstance(piece, str) else piece)

    def begin(self, path: str, size: int) -> None:
        self.path = json_name(path)   # a name's bytes that are not UTF-8 as \xNN: the JSON stays UTF-8
        self.head = f'{{"{_FILE}": {json.dumps(self.path, ensure_ascii=False)}, '.encode("utf-8")

    def _write(self, obj: dict) -> None:
        self._emit(json_line({_FILE: self.path, **obj}))   # (the file first, then the line's own keys)

    def _batch_line(self, batch: Batch):
        """The batch's line without its records (str, or UTF-8 bytes): json.dumps of
        {"file": ..., **batch_dict(batch)}."""
        line = batch_json(batch, self.head) if self.compiled_lines else None
        if line is not None:
            return line
        return json.dumps({_FILE: self.path, **batch_dict(batch, self.decode)}, ensure_ascii=False)

    def batch(self, batch: Batch) -> None:
        if self.records and batch.records is None and batch.record_data is not None:
            line = self._batch_line(batch)
            self._emit(line[:-1])
            self._emit(b', "records": [')
            _write_records(self._writer, records_json_parts(batch, self.decode), b", ")
            self._emit(b"]}\n")
            return
        if self.records:
            write_batch_with_records(self._writer, {_FILE: self.path, **batch_dict(batch, self.decode)}, batch,
                                     self.decode)
            self._emit(b"\n")
            return
        self._emit(self._batch_line(batch))
        self._emit(b"\n")

    def lines(self, data: bytes) -> None:
        """Whole lines, UTF-8 (kbatch.walk.listing's batches)."""
        self._emit(data)

    def region(self, finding: Finding, raw: bytes | None = None) -> None:
        self._write(region_dict(finding))

    def end(self, summary) -> None:
        self._write(summary_line(summary))

    def unreadable(self, path: str, reason: str) -> None:
        self.path = json_name(path)
        self._write(error_line(path, reason))


class JsonSink:
    """One JSON document for all files, written as it goes (a 1 GiB segment never sits in memory)."""

    def __init__(self, out, *, records: bool, decode: str):
        self.out, self.records, self.decode = out, records, decode
        self.out.write(f'{{"kbatch_json_version": {JSON_FORMAT_VERSION}, "files": [')
        self.files = 0

    def begin(self, path: str, size: int) -> None:
        self.out.write("," if self.files else "")
        self.out.write(f"\n{{\"file\": {json.dumps(json_name(path), ensure_ascii=False)}, \"size\": {size}, \"entries\": [")
        self.files += 1
        self.entries = 0

    def _entry(self, obj: dict) -> None:
        self.out.write(",\n" if self.entries else "\n")
        self.out.write(json.dumps(obj, ensure_ascii=False))
        self.entries += 1

    def batch(self, batch: Batch) -> None:
        if not self.records:
            self._entry(batch_dict(batch, self.decode))
            return
        # The records are written one by one as they are read, so a batch of millions never sits in memory.
        self.out.write(",\n" if self.entries else "\n")
        self.entries += 1
        write_batch_with_records(self.out, batch_dict(batch, self.decode), batch, self.decode)

    def region(self, finding: Finding, raw: bytes | None = None) -> None:
        self._entry(region_dict(finding, raw))

    def end(self, summary) -> None:
        self.out.write(f"\n], \"summary\": {json.dumps(summary_dict(summary), ensure_ascii=False)}}}")

    def unreadable(self, path: str, reason: str) -> None:
        """A file that could not be read: in the document with its ``error`` and no entries."""
        self.out.write("," if self.files else "")
        self.out.write(f"\n{json.dumps({'file': json_name(path), 'error': f'cannot read: {reason}', 'entries': []})}")
        self.files += 1

    def close(self) -> None:
        self.out.write("\n]}\n")

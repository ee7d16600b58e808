"""The batches level's rows by whole columns: clean v2 batches from the walk engine's run into Arrow arrays.

Nearly every entry of a segment is a v2 batch whose CRC holds and which the
full reader would read without a finding; its row says nothing but its header.
:class:`BatchColumnsRun` is a run of the walk engine (kbatch.walk.engine) over
those: it keeps each one's 61 header bytes and its position, in one compiled
loop (kbatch.kernels.cleanruns.headers_taken; a batch is taken only when its CRC
holds, so the CRC computed is the one stored), and :meth:`BatchColumnsRun.flush` turns them into one Arrow record batch of the
batches level's schema with numpy, a column at a time -- no Python object per
batch.  Every other entry goes to the full reader and becomes a row as before
(kbatch.spark.source.batch_rows); tests/test_spark_columns.py holds the two ways
to the same rows on every fixture, compiled and pure Python.
"""

from __future__ import annotations

from array import array

from kbatch.format.codecs import codec_name
from kbatch.format.framing import CHECKSUMS, size_bounds
from kbatch.format.structs import (BATCH_HEADER, COMPRESSION_CODEC_MASK, CONTROL_FLAG_MASK, DELETE_HORIZON_FLAG_MASK,
                                   LOG_OVERHEAD, TIMESTAMP_TYPE_MASK, TRANSACTIONAL_FLAG_MASK)
from kbatch.kernels.batchrules import NO_SEQUENCE
from kbatch.kernels.cleanruns import headers_taken
from kbatch.output.values import ISO_MAX_MS
from kbatch.reading.model import TIMESTAMP_TYPES
from kbatch.reading.v2 import batch_in_view

# numpy's name of each struct format character of the declaration (big-endian, as Kafka writes).
_NUMPY_TYPES = {"q": ">i8", "l": ">i4", "h": ">i2", "b": "i1", "L": ">u4"}
_INT_MAX = 2**31 - 1


def header_dtype():
    """BATCH_HEADER as a numpy record type: a run's header bytes read as columns in one step."""
    import numpy as np

    return np.dtype([(name, _NUMPY_TYPES[char]) for name, char in BATCH_HEADER.fields])


class BatchColumnsRun:
    """Takes the v2 batches the full reader reads without a finding (kbatch.walk.engine.clean_v2_batches), and
    with ``inflate`` (decompressed_size measured) only uncompressed ones: a compressed one is the full reader's.
    Their headers and positions go into buffers of ``rows`` rows in one compiled loop
    (kbatch.kernels.cleanruns.headers_taken); ``full`` says when they are full (the walk hands back to have them
    flushed)."""

    def __init__(self, max_entry_size: int, inflate: bool, rows: int):
        self.inflate, self.rows = inflate, rows
        self.least, self.most = size_bounds(2, max_entry_size)   # a v2 batch's size field, framed
        self.last_pos: int | None = None
        self.located: list[tuple] = []   # (path, topic, partition) of each file read since the last flush
        self._reset()

    def _reset(self) -> None:
        # New buffers for each record batch: Arrow's arrays are made of them without a copy where it can.
        self.headers = bytearray(self.rows * BATCH_HEADER.size)
        self.positions = array("q", bytes(8 * self.rows))
        self.files = array("q", bytes(8 * self.rows))   # each batch's file, an index into self.located
        self.held = 0

    def begin(self, path: str, topic, partition) -> None:
        """The batches taken from now on are of ``path``: a record batch holds the batches of many files (a
        task's tiny segments), as costly to make as one of a single file."""
        self.located.append((path, topic, partition))

    @property
    def full(self) -> bool:
        return self.held >= self.rows

    def walk(self, window, pos: int, stop: int) -> int:
        data, i = batch_in_view(window, pos)
        base = pos - i   # the file position of data[0]
        with memoryview(data) as view:
            end, held, last_taken = headers_taken(view, i, stop - base, self.least, self.most, CHECKSUMS[2],
                                                  self.inflate, self.headers, self.positions, self.held, base)
        if held == self.held:
            return pos
        self.files[self.held:held] = array("q", [len(self.located) - 1]) * (held - self.held)
        self.held = held
        self.last_pos = base + last_taken
        return base + end

    def flush(self, schema):
        """What was taken as one record batch of ``schema`` (the batches level's, in Arrow), and forget it (but
        the file being read)."""
        import numpy as np
        import pyarrow as pa

        n = self.held
        big_endian = header_dtype()
        h = np.frombuffer(self.headers, dtype=big_endian, count=n).astype(big_endian.newbyteorder("="))
        pos = np.frombuffer(self.positions, dtype=np.int64, count=n)
        base_offset = h["base_offset"].astype(np.int64)
        batch_length = h["batch_length"].astype(np.int32)
        delta = h["last_offset_delta"].astype(np.int32)
        attributes = h["attributes"].astype(np.int32)
        base_timestamp = h["base_timestamp"].astype(np.int64)
        max_timestamp = h["max_timestamp"].astype(np.int64)
        base_sequence = h["base_sequence"].astype(np.int64)
        size = batch_length.astype(np.int64) + LOG_OVERHEAD
        flags = {name: (attributes & mask) != 0 for name, mask in
                 (("transactional", TRANSACTIONAL_FLAG_MASK), ("control", CONTROL_FLAG_MASK),
                  ("horizon", DELETE_HORIZON_FLAG_MASK), ("log_append", TIMESTAMP_TYPE_MASK))}
        codecs = pa.array([codec_name(codec) for codec in range(COMPRESSION_CODEC_MASK + 1)])
        file = pa.array(np.frombuffer(self.files, dtype=np.int64, count=n))
        paths, topics, partitions = zip(*self.located)
        column = {
            "file": pa.array(paths, pa.string()).take(file),
            "topic": pa.array(topics, pa.string()).take(file),
            "partition": pa.array(partitions, pa.int32()).take(file),
            "pos": pos, "size": size, "magic": np.full(n, 2, dtype=np.int32),
            "base_offset": base_offset, "last_offset": base_offset + delta, "stored_offset": base_offset,
            "count": h["records_count"], "batch_length": batch_length,
            "partition_leader_epoch": h["partition_leader_epoch"], "crc": h["crc"],
            "crc_computed": h["crc"], "crc_valid": np.ones(n, dtype=bool),   # (taken: the one computed)
            "attributes": attributes, "codec": codecs.take(pa.array(attributes & COMPRESSION_CODEC_MASK)),
            "timestamp_type": pa.array(TIMESTAMP_TYPES).take(pa.array(flags["log_append"].astype(np.int8))),
            "is_transactional": flags["transactional"], "is_control": flags["control"],
            "last_offset_delta": delta,
            "base_timestamp": base_timestamp, "base_timestamp_iso": _iso(base_timestamp),
            "max_timestamp": max_timestamp, "max_timestamp_iso": _iso(max_timestamp),
            "delete_horizon_ms": pa.array(base_timestamp, mask=~flags["horizon"]),
            "producer_id": h["producer_id"], "producer_epoch": h["producer_epoch"],
            "base_sequence": base_sequence, "last_sequence": _last_sequence(base_sequence, delta),
            "payload_pos": pos + BATCH_HEADER.size, "payload_size": size - BATCH_HEADER.size,
            "decompressed_size": pa.nulls(n, pa.int64()),
            "finding_count": np.zeros(n, dtype=np.int32), "damaged": np.zeros(n, dtype=bool),
        }
        located = self.located[-1:]
        self._reset()
        self.located = located
        return pa.RecordBatch.from_arrays([pa.array(column[field.name], type=field.type)
                                           if not isinstance(column[field.name], pa.Array)
                                           else column[field.name].cast(field.type) for field in schema],
                                          schema=schema)


def _iso(ms):
    """kbatch.output.values.iso_timestamp of each value (null where it is empty: -1, out of range), by Arrow."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out_of_range = (ms < 0) | (ms > ISO_MAX_MS)
    # Arrow writes a millisecond timestamp of no time zone as "YYYY-MM-DD HH:MM:SS.mmm" (milliseconds since
    # the epoch, so UTC's): the ISO form is that with a T and a Z.  (strftime of one in UTC says the same and
    # takes 70 times longer: it converts each from its zone.)
    stamps = pa.array(ms.clip(0, ISO_MAX_MS), type=pa.int64()).cast(pa.timestamp("ms"))
    text = pc.binary_join_element_wise(pc.replace_substring(stamps.cast(pa.string()), " ", "T", max_replacements=1),
                                       "Z", "")
    return pc.if_else(pa.array(out_of_range), pa.nulls(len(ms), pa.string()), text)


def _last_sequence(base_sequence, delta):
    """kbatch.kernels.batchrules.last_sequence of each batch, by whole columns: DefaultRecordBatch.lastSequence,
    -1 only for 'no sequence', counting lastOffsetDelta on and wrapping from Integer.MAX_VALUE to 0
    (DefaultRecordBatch.incrementSequence)."""
    import numpy as np

    delta = delta.astype(np.int64)
    wrapped = np.where(base_sequence > _INT_MAX - delta, delta - (_INT_MAX - base_sequence) - 1,
                       base_sequence + delta)
    return np.where(base_sequence == NO_SEQUENCE, NO_SEQUENCE, wrapped)

"""``--format dumplog`` prints DumpLogSegments' lines field for field.

The token order below is copied from Kafka 4.x's
tools/src/main/java/org/apache/kafka/tools/DumpLogSegments.java
(printBatchLevel and printRecordMetadata/printRecordContents).
"""

from __future__ import annotations

import re
import struct

import crc32c
import pytest

from kbatch.reading.model import increment_sequence

from .helpers import FIXTURES, sidecar

V2_BATCH = ["baseOffset", "lastOffset", "count", "baseSequence", "lastSequence", "producerId", "producerEpoch",
            "partitionLeaderEpoch", "isTransactional", "isControl", "deleteHorizonMs", "position", "TIMESTAMP",
            "size", "magic", "compresscodec", "crc", "isvalid"]
LEGACY_BATCH = ["offset", "position", "TIMESTAMP", "size", "magic", "compresscodec", "crc", "isvalid"]
V2_RECORD = ["offset", "TIMESTAMP", "keySize", "valueSize", "sequence", "headerKeys"]
LEGACY_RECORD = ["offset", "TIMESTAMP", "keySize", "valueSize", "isValid", "crc"]


def _keys(line: str) -> list[str]:
    keys = re.findall(r"(?:^|\s)(\w+): ", line.removeprefix("| "))
    return ["TIMESTAMP" if key in ("CreateTime", "LogAppendTime", "NoTimestampType") else key for key in keys]


@pytest.mark.parametrize("name", ["mixed-v0-v1-v2.log", "v2-txn-commit.log", "v1-gzip.log", "v0-lz4.log",
                                  "v2-headers.log", "v2-empty-compacted.log"])
def test_lines_have_kafkas_fields_in_kafkas_order(name, kbatch):
    out = kbatch("dump", "--format", "dumplog", "--records", f"fixtures/{name}", expect=0).out
    lines = out.splitlines()
    assert lines[0] == f"Dumping fixtures/{name}"
    batch_magic = None
    for line in lines[1:]:
        if line.startswith("| "):
            keys = _keys(line)
            expected = V2_RECORD if batch_magic == 2 else LEGACY_RECORD
            assert keys[:len(expected)] == expected, line
            rest = keys[len(expected):]
            assert rest in ([], ["key"], ["payload"], ["key", "payload"], ["endTxnMarker", "coordinatorEpoch"]), line
        elif line.startswith(("baseOffset: ", "offset: ")):
            keys = _keys(line)
            batch_magic = int(re.search(r" magic: (\d)", line).group(1))
            assert keys == (V2_BATCH if batch_magic == 2 else LEGACY_BATCH), line
            assert re.search(r" compresscodec: (none|gzip|snappy|lz4|zstd) ", line)
            assert re.search(r" isvalid: (true|false)$", line)
        # any other line is the rest of a payload that holds newlines, printed as Kafka prints it


def test_segment_named_by_its_base_offset_gets_the_starting_offset_line(kbatch, tmp_path):
    segment = tmp_path / "00000000000000000900.log"
    segment.write_bytes((FIXTURES / "v2-txn-commit.log").read_bytes())
    lines = kbatch("dump", "--format", "dumplog", str(segment), expect=0).out.splitlines()
    assert lines[:2] == [f"Dumping {segment}", "Log starting offset: 900"]


def test_delete_horizon_prints_as_an_optional_long(kbatch):
    out = kbatch("dump", "--format", "dumplog", "fixtures/v2-none.log", expect=0).out
    assert "deleteHorizonMs: OptionalLong.empty position:" in out


def test_sequences_wrap_like_javas():
    # DefaultRecordBatchTest.testIncrementSequence
    assert increment_sequence(5, 5) == 10
    assert increment_sequence(2**31 - 1, 1) == 0
    assert increment_sequence(2**31 - 1 - 5, 10) == 4
    assert increment_sequence(-5, 3) == -2   # only -1 is "no sequence"; Java does not wrap this


def test_non_consecutive_offsets_are_reported_as_kafka_does(kbatch):
    """DumpLogSegments.dumpBatchRecords/main (the 4.x Java tool): each record offset not one past the previous
    (the first against -1), per file, on stderr, under the file's absolute path, in the order of the previous
    offset (a TreeMap)."""
    path = FIXTURES / "v2-empty-compacted.log"
    offsets = [record["offset"] for entry in sidecar(path)["expected"]["entries"] for record in entry["records"]]
    pairs = [(a, b) for a, b in zip([-1, *offsets], offsets) if b != a + 1]
    assert pairs   # compaction left holes
    result = kbatch("dump", "--format", "dumplog", "--records", "fixtures/v2-empty-compacted.log", expect=0)
    assert result.err.splitlines() == [f"Non-consecutive offsets in {path}",
                                       *(f"  {a} is followed by {b}" for a, b in pairs)]
    # without --records (Kafka: without --deep-iteration) no record is read, so nothing is reported
    assert kbatch("dump", "--format", "dumplog", "fixtures/v2-empty-compacted.log", expect=0).err == ""
    assert kbatch("dump", "--format", "dumplog", "--records", "fixtures/v2-none.log", expect=0).err == ""


def test_an_unknown_control_type_prints_as_kafkas_unknown_constant(kbatch, tmp_path):
    """ControlRecordType.fromTypeId gives UNKNOWN for type 7, whose name is "UNKNOWN": `UNKNOWN(7)`."""
    data = bytearray((FIXTURES / "v2-txn-commit.log").read_bytes()[486:486 + 78])   # the COMMIT marker batch
    key = data.index(b"\x00\x00\x00\x01", 61)   # the control key: version 0, type 1 (COMMIT)
    data[key + 3] = 7
    struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))
    segment = tmp_path / "unknown-control.log"
    segment.write_bytes(bytes(data))
    out = kbatch("dump", "--format", "dumplog", "--records", str(segment), expect=1).out
    assert re.search(r" controlType: UNKNOWN\(7\)$", out, re.M), out
    assert "(7)(7)" not in out


def test_decode_stands_in_for_kafkas_decoder_classes(kbatch):
    plain = kbatch("dump", "--format", "dumplog", "--records", "fixtures/v2-none.log", expect=0).out
    assert " key: key-0 payload: " in plain
    assert plain == kbatch("dump", "--format", "dumplog", "--records", "--decode", "utf8", "fixtures/v2-none.log",
                           expect=0).out
    hexed = kbatch("dump", "--format", "dumplog", "--records", "--decode", "hex", "fixtures/v2-none.log", expect=0).out
    assert f" key: 0x{b'key-0'.hex()} payload: 0x" in hexed

"""The files beside a segment, each on its own: layouts, ``kbatch dump FILE`` of every kind, what is no segment.

The partition under fixtures/partition/ is written by fixtures/make_partition.py (kafka-python's batch
builder and a hand-written imitation of the broker, not kbatch).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import struct
import sys

import pytest
from hypothesis import given, settings, strategies as st

from kbatch.files import kinds
from kbatch.partition.layouts import (
    ABORTED_TXN_ENTRY,
    OFFSET_INDEX_ENTRY,
    PRODUCER_SNAPSHOT_CRC_START,
    PRODUCER_SNAPSHOT_ENTRY,
    PRODUCER_SNAPSHOT_HEADER,
    TIME_INDEX_ENTRY,
)
from kbatch.partition.sidecars import SIDECAR_KINDS, Entry, Header, looks_like, read_sidecar

from .helpers import FIXTURES, ROOT

PARTITION = FIXTURES / "partition"
FILES = sorted(path for path in PARTITION.rglob("*") if path.is_file())
SEGMENT_0 = PARTITION / "orders-0" / "00000000000000000000"
ACTIVE = PARTITION / "orders-0" / "00000000000000000053"


def _rel(path) -> str:
    return path.relative_to(ROOT).as_posix()


def _id(path) -> str:
    return path.relative_to(PARTITION).as_posix().replace("/", "--")


def _builder():
    spec = importlib.util.spec_from_file_location("make_partition", FIXTURES / "make_partition.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _read(kind, data, base=None):
    items = list(read_sidecar(kind, data, base))
    entries = [item for item in items if isinstance(item, Entry)]
    findings = [item for item in items if not isinstance(item, (Entry, Header))]
    findings += [f for item in items if isinstance(item, (Entry, Header)) for f in item.findings]
    return entries, findings


# -- layouts: the sizes Kafka's sources state ---------------------------------------------------------------


def test_layout_sizes_are_kafkas():
    assert OFFSET_INDEX_ENTRY.size == 8          # OffsetIndex.ENTRY_SIZE
    assert TIME_INDEX_ENTRY.size == 12           # TimeIndex.ENTRY_SIZE
    assert ABORTED_TXN_ENTRY.size == 34          # AbortedTxn.TOTAL_SIZE
    assert PRODUCER_SNAPSHOT_CRC_START == 6      # ProducerStateManager.PRODUCER_ENTRIES_OFFSET
    assert PRODUCER_SNAPSHOT_HEADER.size == 10 and PRODUCER_SNAPSHOT_ENTRY.size == 46


def test_kinds_by_name():
    assert kinds.kind_of("/x/orders-0/00000000000000000042.index") == kinds.OFFSET_INDEX
    assert kinds.kind_of("00000000000000000042.timeindex.deleted") == kinds.TIME_INDEX
    assert kinds.kind_of("00000000000000000042.snapshot") == kinds.PRODUCER_SNAPSHOT
    assert kinds.kind_of("00000000000000000003-0000000001.checkpoint") == kinds.KRAFT_CHECKPOINT
    assert kinds.kind_of("replication-offset-checkpoint") == kinds.OFFSET_CHECKPOINT
    assert kinds.kind_of("whatever.log") == kinds.LOG
    assert kinds.kind_of("notes.txt") is None
    assert kinds.base_offset_of("00000000000000000042.txnindex") == 42


def test_a_partition_directory_lists_by_offset_then_kind():
    names = ["partition.metadata", "00000000000000000027.snapshot", "00000000000000000027.index", "notes.txt",
             "leader-epoch-checkpoint", "00000000000000000000.timeindex", "00000000000000000027.log",
             "00000000000000000000.log"]
    assert sorted(names, key=kinds.listing_order) == [
        "00000000000000000000.log", "00000000000000000000.timeindex", "00000000000000000027.log",
        "00000000000000000027.index", "00000000000000000027.snapshot", "leader-epoch-checkpoint",
        "partition.metadata", "notes.txt"]


# -- the builder is reproducible, and its files read back as it wrote them -------------------------------------


def test_fixture_partition_is_what_the_builder_writes(tmp_path):
    _builder().build(tmp_path / "partition")
    rebuilt = sorted(p.relative_to(tmp_path / "partition") for p in (tmp_path / "partition").rglob("*") if p.is_file())
    assert rebuilt == [p.relative_to(PARTITION) for p in FILES]
    for relative in rebuilt:
        assert (tmp_path / "partition" / relative).read_bytes() == (PARTITION / relative).read_bytes(), relative


def test_every_fixture_file_reads_clean_as_its_kind():
    for path in FILES:
        kind = kinds.kind_of(str(path))
        if kind in kinds.BATCH_KINDS:
            continue
        entries, findings = _read(kind, path.read_bytes(), kinds.base_offset_of(str(path)))
        assert entries, path
        assert not [f for f in findings if f.is_damage], (path, findings)


def test_active_index_zero_tail_is_summarised_not_listed():
    data = ACTIVE.with_suffix(".index").read_bytes()
    entries, findings = _read(kinds.OFFSET_INDEX, data, 53)
    assert [(e.fields["offset"], e.fields["position"]) for e in entries] == [(61, 498), (67, 996)]
    assert [(f.code, f.pos, f.size) for f in findings] == [("zero-tail", 16, len(data) - 16)]
    times, findings = _read(kinds.TIME_INDEX, ACTIVE.with_suffix(".timeindex").read_bytes(), 53)
    assert len(times) == 2 and [f.code for f in findings] == ["zero-tail"]


def test_index_entries_out_of_order_and_partial():
    data = struct.pack(">iiii", 8, 474, 8, 948) + b"\x01\x02"
    entries, findings = _read(kinds.OFFSET_INDEX, data, 0)
    assert [(f.code, f.pos, f.field) for f in findings] == [("partial-entry", 16, "entry"),
                                                           ("index-order", 8, "relative_offset")]
    entries, findings = _read(kinds.OFFSET_INDEX, struct.pack(">ii", -3, 100), 10)
    assert entries[0].fields["offset"] == 7 and [f.code for f in findings] == ["offset-below-base"]
    entries, findings = _read(kinds.TIME_INDEX, struct.pack(">qiqi", 2000, 1, 1999, 2), 0)
    assert [(f.code, f.pos, f.field) for f in findings] == [("index-order", 12, "timestamp")]


def test_snapshot_crc_and_count():
    data = bytearray((PARTITION / "orders-0" / "00000000000000000053.snapshot").read_bytes())
    data[-1] ^= 0x40
    entries, findings = _read(kinds.PRODUCER_SNAPSHOT, bytes(data), 53)
    assert len(entries) == 3 and [(f.code, f.pos) for f in findings] == [("crc-mismatch", 2)]
    entries, findings = _read(kinds.PRODUCER_SNAPSHOT, bytes(data[:-10]), 53)
    assert {f.code for f in findings} == {"crc-mismatch", "bad-length", "truncated"} and len(entries) == 2


def test_txn_index_version_is_an_int16_of_version_0_only():
    # TransactionIndex.iterable: buffer.getShort(), refused outside AbortedTxn's validVersions (0)
    for version in (0x0100, 1, -1):
        _, findings = _read(kinds.TXN_INDEX, struct.pack(">hqqqq", version, 7, 1, 2, 3))
        assert [(f.code, f.actual) for f in findings] == [("unknown-version", str(version))]


def test_txn_index_zeros_are_entries_not_a_preallocated_tail():
    entry = struct.pack(">hqqqq", 0, 7, 100, 105, 106)
    # TransactionIndex only appends: zeros at its end are an entry (producer 0, offsets 0..0)
    entries, findings = _read(kinds.TXN_INDEX, entry + bytes(34), 0)
    assert [e.fields["producer_id"] for e in entries] == [7, 0]
    assert [f.code for f in findings] == ["index-order"]   # lastOffset 0 after 105
    # ... which TransactionIndex.sanityCheck refuses in a segment based above its lastOffset
    entries, findings = _read(kinds.TXN_INDEX, bytes(34), 100)
    assert [(f.code, f.pos, f.field) for f in findings] == [("offset-below-base", 18, "last_offset")]
    # a partial last entry is ignored by Kafka (hasNext: a whole entry left): a warning, not damage
    entries, findings = _read(kinds.TXN_INDEX, entry + entry[:10], 100)
    assert len(entries) == 1 and [(f.code, f.is_damage) for f in findings] == [("ignored-partial-entry", False)]


def test_checkpoint_count_and_lines():
    entries, findings = _read(kinds.LEADER_EPOCH_CHECKPOINT, b"0\n3\n0 0\n2 x\n")
    assert [(f.code, f.pos, f.field) for f in findings] == [("bad-checkpoint", 2, "entry_count"),
                                                           ("bad-checkpoint", 8, "entry")]
    assert entries[0].fields == {"epoch": 0, "start_offset": 0}


@pytest.mark.parametrize("kind", [kinds.LEADER_EPOCH_CHECKPOINT, kinds.OFFSET_CHECKPOINT])
@pytest.mark.parametrize("data", [b"", b"0\n"])
def test_a_checkpoint_without_a_count_line_holds_no_entries(kind, data):
    # CheckpointReadBuffer.read returns no entries at the end of the file before the count line; Kafka
    # creates leader-epoch-checkpoint (UnifiedLog) and cleaner-offset-checkpoint (LogCleanerManager) empty.
    entries, findings = _read(kind, data)
    assert entries == [] and findings == []


def test_leader_epoch_checkpoint_lines_kafka_refuses():
    # LeaderEpochFileCache.assign throws on a negative epoch or start offset, at load
    _, findings = _read(kinds.LEADER_EPOCH_CHECKPOINT, b"0\n2\n-1 0\n3 -5\n")
    assert [(f.code, f.pos) for f in findings] == [("bad-checkpoint", 4), ("bad-checkpoint", 9)]
    # Formatter.fromString splits on \\s+ as String.split does: a leading blank makes three parts
    entries, findings = _read(kinds.LEADER_EPOCH_CHECKPOINT, b"0\n1\n 1 0\n")
    assert [(f.code, f.field) for f in findings] == [("bad-checkpoint", "entry")]
    # ... and a trailing one is dropped; Integer.parseInt takes a sign, Python's blanks and "_" it does not
    entries, findings = _read(kinds.LEADER_EPOCH_CHECKPOINT, b"+0\n1\n1 0 \n")
    assert findings == [] and entries[0].fields == {"epoch": 1, "start_offset": 0}
    _, findings = _read(kinds.LEADER_EPOCH_CHECKPOINT, b" 0\n1\n1 1_0\n")
    assert [f.field for f in findings] == ["version", "entry"]
    # an epoch past Integer.MAX_VALUE is no int
    _, findings = _read(kinds.LEADER_EPOCH_CHECKPOINT, b"0\n1\n2147483648 0\n")
    assert [f.field for f in findings] == ["entry"]


def test_partition_metadata_topic_id():
    _, findings = _read(kinds.PARTITION_METADATA, b"version: 0\ntopic_id: not-a-uuid\n")
    assert [(f.code, f.pos, f.field) for f in findings] == [("bad-checkpoint", 11, "topic_id")]


def test_partition_metadata_as_kafka_reads_it():
    topic_id = b"kdyrYxk-RgK2tmo0Obxo6w"
    # PartitionMetadataReadBuffer.read: any version >= 0 (downgrades), nothing read after the topic id line
    entries, findings = _read(kinds.PARTITION_METADATA, b"version: 3\ntopic_id: " + topic_id + b"\nmore\n")
    assert findings == [] and entries[0].fields == {"version": 3, "topic_id": topic_id.decode()}
    # ... but not a negative version, nor Uuid.ZERO_UUID ("Invalid topic ID": the log dir goes offline)
    _, findings = _read(kinds.PARTITION_METADATA, b"version: -1\ntopic_id: " + topic_id + b"\n")
    assert [(f.code, f.field) for f in findings] == [("bad-checkpoint", "version")]
    _, findings = _read(kinds.PARTITION_METADATA, b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n")
    assert [(f.code, f.field) for f in findings] == [("bad-checkpoint", "topic_id")]
    # the key is not read by Kafka: another one is a warning of ours
    _, findings = _read(kinds.PARTITION_METADATA, b"versio: 0\ntopic_id: " + topic_id + b"\n")
    assert [(f.code, f.is_damage) for f in findings] == [("unexpected-key", False)]


def test_integers_in_text_are_bounded_before_conversion():
    # a 5,000-digit version is no int (Python's int() would raise past 4,300 digits)
    entries, findings = _read(kinds.PARTITION_METADATA, b"version: " + b"9" * 5000 + b"\ntopic_id: x\n")
    assert [(f.code, f.field) for f in findings] == [("bad-checkpoint", "version")]
    entries, findings = _read(kinds.OFFSET_CHECKPOINT, b"0\n" + b"7" * 50_000 + b"\n")
    assert [(f.code, f.field) for f in findings] == [("bad-checkpoint", "entry_count")]
    assert len(findings[0].actual) < 200   # the line is shown cut
    # leading zeros are read as Integer.parseInt reads them
    entries, findings = _read(kinds.OFFSET_CHECKPOINT, b"0\n" + b"0" * 500 + b"1\nt 0 5\n")
    assert findings == [] and entries[0].fields == {"topic": "t", "partition": 0, "offset": 5}
    # ... up to LINE_LIMIT: past it a line Kafka may read is one no Kafka writes, a warning
    entries, findings = _read(kinds.OFFSET_CHECKPOINT, b"0\n" + b"0" * 50_000 + b"1\nt 0 5\n")
    assert [(f.code, f.is_damage, f.size) for f in findings] == [("line-too-long", False, 50_002)]


@pytest.mark.parametrize("path", [SEGMENT_0.with_suffix(s) for s in (".index", ".timeindex", ".txnindex")]
                         + [ACTIVE.with_suffix(".snapshot"), PARTITION / "orders-0" / "leader-epoch-checkpoint",
                            PARTITION / "orders-0" / "partition.metadata"], ids=_id)
def test_content_says_what_a_file_looks_like(path):
    assert looks_like(path.read_bytes()) == kinds.kind_of(str(path))


def test_no_kind_for_a_log_segment():
    assert looks_like(SEGMENT_0.with_suffix(".log").read_bytes()) is None


# -- kbatch dump FILE -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_dump_partition_file_text_snapshot(path, kbatch, text_snapshot):
    shown = []
    for fmt in ("table", "dumplog"):
        args = ["dump", "--format", fmt, _rel(path)]
        result = kbatch(*args)
        assert result.err == "" and result.code == 0
        shown.append(f"$ kbatch {' '.join(args)}\n{result.out}(exit {result.code})\n")
    assert "\n".join(shown) == text_snapshot


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_dump_partition_file_jsonl_snapshot(path, kbatch, jsonl_snapshot):
    result = kbatch("dump", "--format", "jsonl", "--records", _rel(path), expect=0)
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert lines[-1]["type"] == "summary" and lines[-1]["damaged"] is False
    assert result.out == jsonl_snapshot


def test_dump_of_a_directory_lists_every_file_segment_by_segment(kbatch):
    result = kbatch("dump", "--format", "jsonl", _rel(PARTITION / "orders-0"))
    files = [json.loads(line)["file"].rsplit("/", 1)[-1] for line in result.out.splitlines()
             if json.loads(line)["type"] == "summary"]
    assert result.code == 0 and files == sorted((p.name for p in (PARTITION / "orders-0").iterdir()),
                                                key=kinds.listing_order)
    assert files[:3] == ["00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex"]
    assert files[-2:] == ["leader-epoch-checkpoint", "partition.metadata"]


def test_dump_json_is_one_document_over_kinds(kbatch):
    files = [_rel(SEGMENT_0.with_suffix(".log")), _rel(SEGMENT_0.with_suffix(".index")),
             _rel(ACTIVE.with_suffix(".snapshot"))]
    result = kbatch("dump", "--format", "json", *files)
    document = json.loads(result.out)
    assert [f["file"] for f in document["files"]] == files
    index = document["files"][1]
    assert [e["offset"] for e in index["entries"]] == [8, 13, 19, 26]
    assert index["summary"]["kind"] == "index" and index["summary"]["entry_count"] == 4
    assert result.code == 0


@pytest.mark.parametrize("source, kind", [(".index", "index"), (".txnindex", "txnindex"), (".timeindex", "timeindex")])
def test_a_file_that_is_no_segment_says_what_it_looks_like(tmp_path, kbatch, source, kind):
    renamed = tmp_path / "00000000000000000000.log"
    renamed.write_bytes(SEGMENT_0.with_suffix(source).read_bytes())
    result = kbatch("dump", str(renamed))
    assert result.code == 2 and result.out == ""
    assert f"not a log segment: looks like {kinds.DESCRIPTIONS[kind]} (--kind {kind} reads it as one)" in result.err
    forced = kbatch("dump", "--kind", kind, "--format", "jsonl", str(renamed))
    assert forced.code == 0 and json.loads(forced.out.splitlines()[0])["kind"] == kind


def test_kind_override_reads_a_damaged_index_as_damage(tmp_path, kbatch):
    renamed = tmp_path / "copy"
    renamed.write_bytes(SEGMENT_0.with_suffix(".index").read_bytes()[:-3])
    result = kbatch("dump", "--kind", "index", "--format", "jsonl", str(renamed))
    assert result.code == 1
    assert [json.loads(line).get("code") for line in result.out.splitlines()][-2] == "partial-entry"


@pytest.mark.parametrize("path", sorted(path for path in (FIXTURES / "partition").rglob("*")
                                        if path.is_file() and kinds.kind_of(path.name) in SIDECAR_KINDS),
                         ids=lambda path: path.name)
def test_the_sniff_names_every_fixture_file_from_a_map_of_it_as_from_its_bytes(path):
    import mmap

    with open(path, "rb") as stream, mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        assert looks_like(mapped) == looks_like(path.read_bytes()) == kinds.kind_of(path.name)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.integers(1, 40), st.integers(0, 300))
def test_the_zero_tail_is_found_reading_back_a_chunk_at_a_time(data, chunk, end):
    from kbatch.partition.indexes import _end_of_nonzero

    end = min(end, len(data))
    assert _end_of_nonzero(data, end, chunk) == len(data[:end].rstrip(b"\x00"))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SIDECAR_KINDS), st.binary(max_size=400), st.one_of(st.none(), st.integers(0, 1 << 40)))
def test_arbitrary_bytes_read_as_any_kind_never_raise_and_stay_in_the_file(kind, data, base_offset):
    """Every finding's position lies in the file; entries come in file order without overlap; an index's
    entries, zero tail and partial entry tile it."""
    items = list(read_sidecar(kind, data, base_offset))
    end, covered = 0, []
    for item in items:
        findings = [item] if not isinstance(item, (Entry, Header)) else item.findings
        for finding in findings:
            assert 0 <= finding.pos <= finding.pos + finding.size <= len(data), finding
            assert 0 <= finding.entry_pos <= len(data), finding
        if isinstance(item, Entry):
            assert end <= item.pos and item.pos + item.size <= len(data)
            end = item.pos + item.size
            covered.append((item.pos, item.size))
        elif not isinstance(item, Header) and item.code in ("zero-tail", "partial-entry", "ignored-partial-entry"):
            covered.append((item.pos, item.size))
    if kind in (kinds.OFFSET_INDEX, kinds.TIME_INDEX, kinds.TXN_INDEX):
        position = 0
        for pos, size in sorted(covered):
            assert pos == position, (covered, len(data))
            position = pos + size
        assert position == len(data)
    assert looks_like(data) in (None, *SIDECAR_KINDS)


# Pieces of a side file that a terminal would act on, as bytes and as the escapes Java's readers unescape
# (Properties' \\uXXXX and \\n), a separator, line ends, lines of what each kind holds, and one too long to read.
HOSTILE_PIECES = [b"\x1b]8;;x\x07", b"\\u001b[2J", b"\\n::error::x", b"\xc2\x9b", "\u202e".encode(), b"\xff", b"=",
                  b":", b" ", b"\n", b"\r", b"0", b"1", b"t 0 5", b"version=1", b"node.id=1", b"version: 0",
                  b"{", b"A" * 5000]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SIDECAR_KINDS), st.lists(st.sampled_from(HOSTILE_PIECES), max_size=14))
def test_no_finding_of_a_side_file_holds_a_character_a_terminal_acts_on(kind, pieces):
    """A finding's field, expected and found are shown as they are (kbatch.output.values.finding_text, a CI
    annotation, JUnit): what they say of the file is escaped where they are made."""
    from kbatch.output.visible import visible

    _, findings = _read(kind, b"".join(pieces))
    for finding in findings:
        for text in (finding.field, finding.expected, finding.actual):
            assert visible(text, backslash=False) == text, (finding.code, text)


@pytest.mark.parametrize("content, kafka_lines", [
    (b"", ["{path} is empty."]),                              # dumpIndex: index.entries() == 0
    (bytes(8 * 4), ["offset: 400 position: 0"]),              # a preallocated index: its first slot, then stop
], ids=["empty", "preallocated"])
def test_dumplog_of_an_offset_index_with_no_entry_prints_what_kafka_prints(kbatch, tmp_path, content, kafka_lines):
    """DumpLogSegments.dumpIndex (the 4.x Java tool): it stops at a zero slot only after the first."""
    path = tmp_path / "00000000000000000400.index"
    path.write_bytes(content)
    out = kbatch("dump", "--format", "dumplog", str(path), expect=0).out.splitlines()
    assert [line for line in out if not line.startswith("#")] == [f"Dumping {path}",
                                                                 *(line.format(path=path) for line in kafka_lines)]


def test_dumplog_of_a_producer_without_batch_metadata_has_no_trailing_space(tmp_path):
    """DumpLogSegments.dumpProducerIdSnapshot prints ' firstSequence: ...' only with batch metadata."""
    from kbatch.partition.sidecars import Entry
    from kbatch.render.partition import dumplog_line

    fields = {"producer_id": 7, "epoch": 3, "coordinator_epoch": 0, "current_txn_first_offset": -1,
              "timestamp": 5, "last_offset": -1, "last_sequence": -1, "offset_delta": 0}
    line = dumplog_line(Entry(kinds.PRODUCER_SNAPSHOT, 0, 0, 0, fields, []))
    assert line == "producerId: 7 producerEpoch: 3 coordinatorEpoch: 0 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: 5"


# -- quorum-state (FileQuorumStateStore) --------------------------------------------------------------------

# What the broker of KRaft mode writes in __cluster_metadata-0 (Kafka 4.4, data_version 0).
QUORUM_STATE = (b'{"clusterId":"","leaderId":1,"leaderEpoch":1,"votedId":-1,"appliedOffset":0,'
                b'"currentVoters":[{"voterId":1}],"data_version":0}')


def test_quorum_state_as_the_broker_writes_it():
    assert kinds.kind_of("/logs/__cluster_metadata-0/quorum-state") == kinds.QUORUM_STATE
    entries, findings = _read(kinds.QUORUM_STATE, QUORUM_STATE)
    assert findings == []
    assert entries[0].fields == {"data_version": 0, "cluster_id": "", "leader_id": 1, "leader_epoch": 1,
                                 "voted_id": -1, "applied_offset": 0, "current_voters": [{"voterId": 1}]}
    # version 1 has votedDirectoryId and no clusterId, appliedOffset or currentVoters
    entries, findings = _read(kinds.QUORUM_STATE, b'{"leaderId":1,"leaderEpoch":3,"votedId":1,'
                                                  b'"votedDirectoryId":"98elA9eemfFQLkSfZGAaSA","data_version":1}')
    assert findings == [] and entries[0].fields["voted_directory_id"] == "98elA9eemfFQLkSfZGAaSA"


@pytest.mark.parametrize("data, code, field", [
    (b"", "truncated", "line"),                                             # "File ended prematurely."
    (b"[1]", "bad-quorum-state", "line"),                                   # "is not an object node"
    (b'{"leaderId":1}', "bad-quorum-state", "data_version"),               # "does not have data_version field"
    (QUORUM_STATE.replace(b'"data_version":0', b'"data_version":2'), "unknown-version", "data_version"),
    (QUORUM_STATE.replace(b'"leaderEpoch":1,', b""), "bad-quorum-state", "leader_epoch"),   # mandatory in v0
    (QUORUM_STATE.replace(b'"leaderId":1', b'"leaderId":2147483648'), "bad-quorum-state", "leader_id"),
    (QUORUM_STATE.replace(b'"leaderId":1', b'"leaderId":"1"'), "bad-quorum-state", "leader_id"),
    (QUORUM_STATE.replace(b'"leaderId":1', b'"leaderId":' + b"9" * 5000), "bad-quorum-state", "line"),
])
def test_quorum_state_kafka_cannot_read(data, code, field):
    _, findings = _read(kinds.QUORUM_STATE, data)
    assert [(f.code, f.field) for f in findings] == [(code, field)]


# -- meta.properties (MetaProperties.Builder) ----------------------------------------------------------------

# What the KRaft broker wrote in its log directory (Kafka 4.4).
META_PROPERTIES = (b"#\n#Fri Nov 27 00:42:49 UTC 2026\nnode.id=1\ndirectory.id=98elA9eemfFQLkSfZGAaSA\nversion=1\n"
                   b"cluster.id=X9YOM6ocTCSPCqLpL7vn3g\n")


def test_meta_properties_as_the_broker_writes_it():
    assert kinds.kind_of("/logs/meta.properties") == kinds.META_PROPERTIES
    entries, findings = _read(kinds.META_PROPERTIES, META_PROPERTIES)
    assert findings == []
    assert entries[0].fields == {"version": 1, "node_id": 1, "cluster_id": "X9YOM6ocTCSPCqLpL7vn3g",
                                 "directory_id": "98elA9eemfFQLkSfZGAaSA"}
    # java.util.Properties: ':' or a blank separates too, a trailing '\' continues, version 0 when absent
    entries, findings = _read(kinds.META_PROPERTIES, b"broker.id : 7\ncluster.id  ab\\\n   cd\n")
    assert findings == [] and entries[0].fields == {"version": 0, "broker_id": 7, "cluster_id": "abcd",
                                                    "directory_id": None}


@pytest.mark.parametrize("data, field", [
    (META_PROPERTIES.replace(b"version=1", b"version=2"), "version"),        # "Unknown meta.properties version"
    (META_PROPERTIES.replace(b"node.id=1\n", b""), "node.id"),               # "Failed to find node.id"
    (META_PROPERTIES.replace(b"node.id=1", b"node.id= 1x"), "node.id"),      # "as a base-10 number"
    (META_PROPERTIES.replace(b"cluster.id=", b"#cluster.id="), "cluster.id"),  # "cluster.id was not found"
    (META_PROPERTIES.replace(b"98elA9eemfFQLkSfZGAaSA", b"not-a-uuid"), "directory.id"),
])
def test_meta_properties_kafka_cannot_load(data, field):
    _, findings = _read(kinds.META_PROPERTIES, data)
    assert [(f.code, f.field) for f in findings] == [("bad-meta-properties", field)]


# -- names Kafka gives while it writes, moves or deletes -----------------------------------------------------


def test_a_partial_kraft_snapshot_is_read_as_the_snapshot_it_would_be(tmp_path, kbatch):
    # Snapshots.PARTIAL_SUFFIX: <offset>-<epoch>.checkpoint.part while KafkaRaftLog writes it
    source = next((PARTITION / "orders-0").glob("*.log"))
    partial = tmp_path / "__cluster_metadata-0" / "00000000000000000053-0000000005.checkpoint.part"
    partial.parent.mkdir()
    partial.write_bytes(source.read_bytes())
    assert kinds.kind_of(str(partial)) == kinds.KRAFT_CHECKPOINT and kinds.is_partial_snapshot(str(partial))
    result = kbatch("dump", "--format", "jsonl", str(partial.parent))
    assert result.code == 0 and "being written (.checkpoint.part), partial" in result.err
    assert '"type": "batch"' in result.out or '"type":"batch"' in result.out


@pytest.mark.parametrize("state", ["delete", "future", "stray"])
def test_a_renamed_partition_directory_says_what_it_is_and_reads_as_its_partition(tmp_path, kbatch, state):
    from kbatch.messages import decoder_for_path
    from kbatch.files.inputs import topic_partition

    # LocalLog.logDeleteDirName / logFutureDirName / logStrayDirName: <topic>-<partition>.<uuid>-<state>
    renamed = tmp_path / f"orders-0.a5e2e2a1f2ba4e2c8cd3b0e0b1c2d3e4-{state}"
    shutil.copytree(PARTITION / "orders-0", renamed)
    assert topic_partition(str(renamed / "00000000000000000000.log")) == ("orders", 0)
    assert decoder_for_path(f"/logs/__consumer_offsets-3.abc-{state}/00000000000000000000.log") == \
        decoder_for_path("/logs/__consumer_offsets-3/00000000000000000000.log") is not None
    result = kbatch("dump", "--format", "jsonl", str(renamed))
    assert result.code == 0
    assert result.err.count(f"renamed -{state}") == 1 and "read as partition orders-0" in result.err


@pytest.mark.parametrize("name, read", [
    ("orders-3", ("orders", 3)), ("my-topic-12", ("my-topic", 12)), ("t--1", ("t-", 1)),
    ("orders-3.a5e2e2a1f2ba4e2c8cd3b0e0b1c2d3e4-delete", ("orders", 3)), ("orders-3.x-future", ("orders", 3)),
    ("orders-3.x-stray", ("orders", 3)), ("__consumer_offsets-49", ("__consumer_offsets", 49)),
    # LocalLog.parseTopicPartitionName refuses these (KafkaException): no "-", an empty topic or partition,
    # a partition that is no integer; a suffix other than Kafka's three is part of the partition
    ("orders", None), ("-3", None), ("orders-", None), ("orders-x", None), ("orders-3.x-deleted", None),
    ("orders-\u0663", None), ("orders-3.log", None), ("", None),
])
def test_a_partition_directory_name_is_read_as_kafka_reads_it(name, read):
    from kbatch.files.inputs import partition_directory, topic_partition

    assert partition_directory(name) == read
    assert topic_partition(f"/logs/{name}/00000000000000000000.log") == (read or (None, None))


@pytest.mark.parametrize("name, base", [("00000000000000000042.log", 42), ("/d/orders-0/7.log", 7),
                                        ("00000000000000000042.index", None), ("42.log.deleted", None),
                                        (".log", None), ("x42.log", None), ("\u0664\u0662.log", None)])
def test_a_segments_base_offset_is_its_names_number(name, base):
    from kbatch.files.inputs import segment_base_offset

    assert segment_base_offset(name) == base


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"0", b"12 7", b" ", b"\n", b"\r", b"\r\n", b"x" * 9]), max_size=40),
       st.integers(1, 12), st.integers(1, 20))
def test_lines_are_split_as_readline_splits_them_whatever_the_pieces(parts, piece_size, limit):
    from kbatch.partition.sidefile import SideFile
    from kbatch.partition.textfiles import _lines

    data = b"".join(parts)
    lines = list(_lines(SideFile(data), limit, piece_size))
    expected = data.splitlines(keepends=True)   # bytes split at \n, \r and \r\n, as BufferedReader.readLine
    assert [(line.pos, line.size) for line in lines] == [
        (sum(map(len, expected[:n])), len(text)) for n, text in enumerate(expected)]
    for line, text in zip(lines, expected):
        content = text.rstrip(b"\r\n")
        assert line.text == content[:limit] and line.clipped == (len(content) > limit)


def test_an_offset_checkpoint_is_read_once_for_every_partition_and_again_once_changed(tmp_path, monkeypatch):
    """Every partition of a log directory asks of the same checkpoint (replicas, retention, --isolation): read
    whole once (a file of thousands of entries, read again per partition, is quadratic), and read again when it
    is another file or written since."""
    from kbatch.partition import textfiles
    from kbatch.partition.textfiles import checkpoint as read_checkpoint

    partitions = [tmp_path / f"t-{n}" for n in range(50)]
    for directory in partitions:
        directory.mkdir()
    checkpoint = tmp_path / "replication-offset-checkpoint"
    checkpoint.write_text("0\n50\n" + "".join(f"t {n} {100 + n}\n" for n in range(50)))
    reads = []
    monkeypatch.setattr(textfiles, "checkpoint", lambda *args: reads.append(args[0]) or read_checkpoint(*args))
    textfiles._offset_checkpoint.cache_clear()
    assert [textfiles.checkpointed_offset(str(directory), checkpoint.name).offset for directory in partitions] \
        == list(range(100, 150))
    assert len(reads) == 1
    replaced = tmp_path / "new"   # another file renamed into its place, as Kafka writes it (CheckpointFile.write)
    replaced.write_text("0\n1\nt 7 9\n")
    replaced.rename(checkpoint)
    assert textfiles.checkpointed_offset(str(partitions[7]), checkpoint.name).offset == 9
    checkpoint.write_text("0\n1\nt 7 8\n")   # in place, the same size: its time tells
    os.utime(checkpoint, ns=(1, 1))
    assert textfiles.checkpointed_offset(str(partitions[7]), checkpoint.name).offset == 8
    assert len(reads) == 3

"""``kbatch encode-from-json``: dump's JSON back to the same bytes; specs to valid or exactly-broken bytes."""

from __future__ import annotations

import io
import re
import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from kafka.record.memory_records import MemoryRecords

from kbatch.ops.encode import SpecError, encode_document
from kbatch.format.findings import CODES
from kbatch.reading.reader import ReadOptions
from kbatch.reading.summary import FileSummary
from kbatch.ops.verify import VerifyOptions, verify_stream

from .helpers import ROOT, fixture_id, fixture_paths, read_all, schema_validator


def _rel(path) -> str:
    return path.relative_to(ROOT).as_posix()


def _records(data: bytes) -> list[tuple]:
    batches, _ = read_all(data, records=True)
    return [(r.offset, r.timestamp, r.key, r.value, r.headers) for b in batches for r in b.records or []]


@pytest.mark.parametrize("records", [False, True], ids=["listing", "records"])
@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_dump_then_encode_gives_the_same_bytes(path, records, kbatch, tmp_path):
    dumped = kbatch("dump", "--format", "json", *(["--records"] if records else []), _rel(path))
    schema_validator().validate(json.loads(dumped.out))
    out = tmp_path / "copy.log"
    result = kbatch("encode-from-json", "-", "-o", str(out), stdin=dumped.out.encode())
    assert (result.code, result.err) == (0, "")
    assert out.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("path", [p for p in fixture_paths() if "damaged" not in p.name
                                  and "recordbatch_zstd" not in p.name and "control_abort" not in p.name],
                         ids=fixture_id)
def test_edited_records_rederive_into_a_valid_segment(path, kbatch, tmp_path):
    document = json.loads(kbatch("dump", "--format", "json", "--records", _rel(path)).out)
    entries = document["files"][0]["entries"]
    entries[:] = [entry for entry in entries if entry["type"] == "batch"]   # leave a cut-off tail behind
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(document))
    out = tmp_path / "new.log"
    assert kbatch("encode-from-json", "--rederive", str(spec), "-o", str(out)).code == 0
    assert _records(out.read_bytes()) == _records(path.read_bytes())
    assert kbatch("verify-crc", "--quiet", str(out)).code == 0


def test_editing_records_without_removing_the_payload_is_refused(kbatch, tmp_path):
    document = json.loads(kbatch("dump", "--format", "json", "--records", "fixtures/v2-gzip.log").out)
    document["files"][0]["entries"][0]["records"][0]["value"] = {"utf8": "changed"}
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(document))
    result = kbatch("encode-from-json", str(spec), "-o", str(tmp_path / "out.log"))
    assert result.code == 2 and "files[0].entries[0].records" in result.err and "payload" in result.err
    assert not (tmp_path / "out.log").exists()


# -- random specs ----------------------------------------------------------------

_bytes = st.one_of(st.none(), st.binary(max_size=30).map(lambda b: {"hex": b.hex()}),
                   st.text(max_size=20).map(lambda t: {"utf8": t}))
_record = st.fixed_dictionaries({
    "timestamp": st.integers(0, 2**41), "key": _bytes, "value": _bytes,
    "headers": st.lists(st.fixed_dictionaries({"key": st.text(max_size=8).map(lambda t: {"utf8": t}),
                                               "value": _bytes}), max_size=3)})


@st.composite
def _entries(draw):
    entries, offset = [], draw(st.integers(0, 10**6))
    for _ in range(draw(st.integers(1, 4))):
        magic = draw(st.sampled_from([0, 1, 2]))
        codec = draw(st.sampled_from(["none", "gzip", "snappy", "lz4"] + (["zstd"] if magic == 2 else [])))
        count = 1 if magic < 2 and codec == "none" else draw(st.integers(1, 4))
        records = []
        for _ in range(count):
            record = dict(draw(_record), offset=offset)
            offset += draw(st.integers(1, 3))
            if magic == 0:
                record.pop("timestamp")
            if magic < 2:
                record.pop("headers")
            records.append(record)
        entry = {"magic": magic, "codec": codec, "records": records}
        if magic == 2:
            entry["partition_leader_epoch"] = draw(st.integers(-1, 10))
        entries.append(entry)
    return {"kbatch_json_version": 1, "entries": entries}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_entries())
def test_random_specs_encode_dump_and_reencode_to_the_same_bytes(spec):
    from kbatch.reading.reader import SegmentReader
    from kbatch.output.jsonout import batch_dict

    data = encode_document(spec)
    batches = list(SegmentReader(io.BytesIO(data), ReadOptions(records=True, keep_body=True)))
    assert all(not batch.findings for batch in batches)
    dumped = {"kbatch_json_version": 1, "entries": [batch_dict(batch, "auto", True) for batch in batches]}
    assert encode_document(json.loads(json.dumps(dumped))) == data
    # and the records read back are the ones the spec gave
    got = [(r.offset, r.key, r.value) for batch in batches for r in batch.records]
    want = [(r["offset"], _spec_bytes(r["key"]), _spec_bytes(r["value"])) for e in spec["entries"] for r in e["records"]]
    assert got == want


def _spec_bytes(value):
    if value is None:
        return None
    (kind, text), = value.items()
    return text.encode() if kind == "utf8" else bytes.fromhex(text)


@pytest.mark.parametrize("magic,codec", [(2, "none"), (2, "gzip"), (2, "snappy"), (2, "lz4"), (2, "zstd"),
                                         (1, "gzip"), (1, "snappy"), (1, "lz4"), (0, "gzip"), (0, "snappy"),
                                         (0, "lz4"), (1, "none"), (0, "none")])
def test_an_independent_decoder_reads_what_kbatch_encodes(magic, codec):
    count = 1 if codec == "none" and magic < 2 else 3
    records = [{"offset": 40 + n, "key": {"utf8": f"k{n}"}, "value": {"utf8": f"value {n} " * (n + 1) * 50}}
               for n in range(count)]
    if magic:
        for n, record in enumerate(records):
            record["timestamp"] = 1_700_000_000_000 + n
    spec = {"entries": [{"magic": magic, "codec": codec, "records": records,
                         **({"lz4_kafka3160": True} if (magic, codec) == (0, "lz4") else {})}]}
    data = encode_document(spec)
    memory = MemoryRecords(data)
    decoded = []
    while memory.has_next():
        for record in memory.next_batch():
            decoded.append((record.offset, record.key, record.value))
    assert decoded == [(r["offset"], r["key"]["utf8"].encode(), r["value"]["utf8"].encode()) for r in records]


# -- crafted damage: each finding code, at the position it was made -------------------

V = {"timestamp": 1000, "key": None, "value": {"utf8": "v"}}
BATCH = {"records": [dict(V, offset=0), dict(V, offset=1)]}
HEADER = 61


def _batch(**fields):
    return {**BATCH, **fields}


CRAFTED = [
    ("crc-mismatch", [_batch(crc=1)], 21, False),
    ("bad-length", [_batch(batch_length=60), _batch(records=[dict(V, offset=2)])], 8, False),
    ("truncated", [_batch(truncate_to=70)], 0, False),
    ("unknown-magic", [_batch(), {"raw": {"hex": "00" * 8 + "00000040" + "00" * 4 + "07" + "00" * 63}}], 77 + 16, False),
    ("resync", [_batch(), {"raw": {"hex": "0102030405"}}, _batch(records=[dict(V, offset=2)])], 77, False),
    ("zero-tail", [_batch(), {"raw": {"hex": "00" * 100}}], 77, False),
    ("unknown-codec", [_batch(attributes=6)], HEADER, True),
    ("decompress-failed", [_batch(codec="gzip", payload={"hex": "1f8b0800deadbeef"})], HEADER, True),
    ("varint-overflow", [_batch(records=[dict(V, offset=0, offset_delta={"hex": "ffffffffff01"})])], HEADER + 3, True),
    ("record-overrun", [_batch(records=[dict(V, offset=0, value_length=9)])], HEADER + 5, True),
    ("bad-record-length", [_batch(records=[dict(V, offset=0, length=20)])], HEADER, True),
    ("records-count-mismatch", [_batch(count=3)], HEADER + 16, True),
    ("trailing-bytes", [_batch(count=1)], HEADER + 8, True),
    ("bad-control-record", [_batch(is_control=True, records=[dict(V, offset=0, key={"hex": "00"})])], HEADER, True),
    ("negative-length", [_batch(records=[dict(V, offset=0, key_length=-5)])], HEADER, True),
    ("last-offset-delta-mismatch", [_batch(last_offset_delta=0)], 23, True),
    ("offset-delta-order", [_batch(records=[dict(V, offset=5), dict(V, offset=5)])], HEADER + 8, True),
    # DefaultRecord.readFrom adds baseOffset + offsetDelta as Java longs: Long.MAX_VALUE + 1 wraps.
    ("long-overflow", [_batch(base_offset=2**63 - 1, records=[dict(V, offset=2**63 - 1), dict(V, offset=2**63 - 1, offset_delta=1)])],
     HEADER + 8, True),
    ("offset-overlap", [_batch(), _batch(records=[dict(V, offset=1)])], 77, True),
    ("offset-gap", [_batch(), _batch(records=[dict(V, offset=9)])], 77, True),
    ("max-timestamp-mismatch", [_batch(max_timestamp=5)], 35, True),
    ("reserved-bits", [_batch(attributes=0x100)], 21, True),
    # LogValidator.validateBatch: "Invalid sequence number" for a batch with a producerId.
    ("inconsistent-producer-fields", [_batch(producer_id=7, producer_epoch=0)], 43, True),
    ("transactional-without-producer", [_batch(is_transactional=True)], 43, True),
]


def _nested_wrapper() -> dict:
    """A v1 gzip wrapper whose one inner message is itself compressed (Kafka: "Inner messages must not be
    compressed")."""
    import gzip

    inner = gzip.compress(encode_document({"entries": [{"magic": 1, "codec": "gzip",
                                                         "records": [dict(V, offset=0)]}]}), mtime=0)
    key_and_value = "ffffffff" + len(inner).to_bytes(4, "big").hex() + inner.hex()
    return {"magic": 1, "codec": "gzip", "stored_offset": 0, "max_timestamp": 1000, "payload": {"hex": key_and_value}}


CRAFTED.append(("nested-compression", [_nested_wrapper()], 26 + 8, False))  # the wrapper's value
# A v1 gzip wrapper whose message set holds no message (Kafka: "no inner records"): reported at its value.
_EMPTY_SET = __import__("gzip").compress(b"", mtime=0)
CRAFTED.append(("empty-wrapper", [{"magic": 1, "codec": "gzip", "stored_offset": 0, "max_timestamp": 1000,
                                   "payload": {"hex": "ffffffff" + len(_EMPTY_SET).to_bytes(4, "big").hex()
                                               + _EMPTY_SET.hex()}}], 26 + 8, False))
# A v1 message with two bytes after its one-byte value (Kafka reads it and ignores them).
CRAFTED.append(("message-trailing-bytes", [{"magic": 1, "stored_offset": 0, "max_timestamp": 1000,
                                            "payload": {"hex": "ffffffff" "00000001" "41" "2121"}}], 26 + 9, False))
# A batch of the v3 proposal: its magic byte (16) is what Kafka would reject.
CRAFTED.append(("proposed-format", [{"magic": 3, "records": [{"value": {"utf8": "v"}}]}], 16, False))


@pytest.mark.parametrize("code,entries,pos,deep", CRAFTED, ids=[case[0] for case in CRAFTED])
def test_crafted_damage_is_reported_with_exactly_its_code_where_it_was_made(code, entries, pos, deep):
    data = encode_document({"entries": entries})
    summary = FileSummary("-", len(data))
    findings = list(verify_stream(io.BytesIO(data), summary, VerifyOptions(deep=deep)))
    # Bytes that frame no entry are one range, one resync finding, which says what its first bytes read as.
    told = [(finding.code, finding.pos) for finding in findings] + [
        (code, pos) for finding in findings if finding.code == "resync"
        for code, pos in re.findall(r"as an entry header: ([a-z-]+), \w+ at pos (\d+)", finding.actual)]
    assert (code, pos) in [(told_code, int(told_pos)) for told_code, told_pos in told], told
    assert summary.damaged == (CODES[code][0].value == "error")


def test_every_finding_code_can_be_crafted():
    crafted = {case[0] for case in CRAFTED}
    by_other_means = {"decompress-too-large",     # tests/test_codecs.py (a cap below the data)
                      "inner-magic-mismatch", "bad-wrapper-offset", "wrapper-offset-zero",  # test_reader.py
                      "not-all-kept",               # test_reader.py (a wrapper bomb)
                      "split-handover",            # not about bytes: tests/test_scan.py
                      "below-segment-base", "beyond-segment-range",   # a file name: tests/test_kafka_fidelity.py
                      "bad-internal-record", "unknown-record-version",  # tests/test_internal.py (fixtures
                      "internal-trailing-bytes",                        # under fixtures/internal/damaged)
                      "bad-kraft-record", "bad-snapshot", "snapshot-without-footer",   # KRaft's rules, and a
                      "record-version-above-schema", "tagged-field-size-mismatch",     # message's: test_messages_table.py
                      "offset-outlier",            # three batches' offsets: tests/test_outlier.py
                      "control-not-end-marker", "marker-not-believed",   # tests/test_markers.py
                      "truncated-while-reading",   # a file cut while read: tests/test_shrinking.py
                      # a producer's batches against each other: tests/test_producers.py
                      "producer-epoch-backwards", "producer-sequence-not-reset", "producer-sequence-repeat",
                      "producer-sequence-gap", "producer-txn-state", "duplicate-records",
                      # captured traffic: tests/test_capture_batches.py
                      "capture-problem", "bad-kafka-message", "unknown-api-version", "version-not-advertised",
                      "partial-batch",
                      "topic-refused",              # a topic name Kafka refuses: tests/test_pcap_refused_topic.py
                      "bad-topic-config"}           # a ConfigRecord's value: tests/test_retention.py
    from .test_partition_crosscheck import PARTITION_CODES   # the files beside a segment: tests/test_partition_*
    assert set(CODES) == crafted | by_other_means | PARTITION_CODES


# -- bad input --------------------------------------------------------------------


@pytest.mark.parametrize("document,message", [
    ({"entries": [{"records": [{"key": 17}]}]}, 'entries[0].records[0].key: expected {"utf8"|"hex"|"base64"} or null, got 17'),
    ({"entries": [{"magic": 5}]}, "entries[0].magic: expected an integer in 0..3, got 5"),
    ({"entries": [{"codec": "brotli"}]}, "entries[0].codec: expected none, gzip, snappy, lz4 or zstd, got \"brotli\""),
    ({"entries": [{"magic": 1, "codec": "zstd"}]}, "entries[0].codec: expected none, gzip, snappy, lz4, got \"zstd\""),
    ({"entries": [{"crc": "abc"}]}, "entries[0].crc: expected an integer in 0..4294967295, got \"abc\""),
    ({"entries": [{"recods": []}]}, "entries[0].recods: expected one of"),
    ({"entries": [{"records": [{"headers": [{"value": None}]}]}]}, "entries[0].records[0].headers[0]: expected"),
    ({"entries": [{"raw": {"hex": "zz"}}]}, "entries[0].raw: expected valid hex text"),
    ({"files": [{"entries": []}, {"entries": []}]}, "files: expected exactly one file"),
    ({"kbatch_json_version": 2, "entries": []}, "kbatch_json_version: expected 1, got 2"),
    # A v0/v1 message has no headers and no v2 record fields: refused, never dropped silently.
    ({"entries": [{"magic": 0, "records": [dict(V, headers=[{"key": {"utf8": "h"}, "value": None}])]}]},
     "entries[0].records[0].headers: expected no headers (a magic 0 message has none; headers need magic 2)"),
    ({"entries": [{"magic": 1, "codec": "gzip", "records": [dict(V), dict(V, headers=[{"key": {"utf8": "h"}}])]}]},
     "entries[0].records[1].headers: expected no headers (a magic 1 message has none"),
    ({"entries": [{"magic": 1, "records": [dict(V, offset_delta=3)]}]},
     "entries[0].records[0].offset_delta: expected no offset_delta (a magic 1 message has none)"),
    # Frame options belong to lz4 and zstd, each its own.
    ({"entries": [{"codec": "gzip", "frame": {"content_size": True}, "records": [dict(V)]}]},
     "entries[0].frame: expected frame options of an lz4 or zstd entry"),
    ({"entries": [{"codec": "zstd", "frame": {"block_size": 65536}, "records": [dict(V)]}]},
     "entries[0].frame.block_size: expected content_size or single_segment or window_descriptor"),
    ({"entries": [{"codec": "lz4", "frame": {"block_size": 1000}, "records": [dict(V)]}]},
     "entries[0].frame.block_size: expected 65536 or 262144 or 1048576 or 4194304, got 1000"),
])
def test_bad_json_names_the_path_and_writes_nothing(document, message, kbatch, tmp_path):
    with pytest.raises(SpecError) as caught:
        encode_document(document)
    assert message in str(caught.value)
    out = tmp_path / "out.log"
    document = {"kbatch_json_version": 1, **document}
    result = kbatch("encode-from-json", "-", "-o", str(out), stdin=json.dumps(document).encode())
    assert result.code == 2 and message in result.err and "Traceback" not in result.err
    assert not out.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("text,message", [
    # No version: a JSON file of some other shape must not become an empty output and exit 0.
    ('{"entries": []}', "kbatch_json_version: expected 1 (the document's format version"),
    ('[]', 'expected an object {"kbatch_json_version": 1'),
    ('{"kbatch_json_version": 1, "entries": [], "batches": []}', "batches: expected one of entries, files"),
    ("[" * 100_000 + "]" * 100_000, "the JSON nests too deeply"),
    ('{"kbatch_json_version": 1, "entries": [{"records": [{"key": ' + "[" * 500 + "]" * 500 + "}]}]}",
     "entries[0].records[0].key: expected"),
])
def test_a_spec_that_is_no_kbatch_document_fails_cleanly_and_writes_nothing(text, message, kbatch, tmp_path):
    out = tmp_path / "out.log"
    result = kbatch("encode-from-json", "-", "-o", str(out), stdin=text.encode())
    assert result.code == 2 and message in result.err, result.err
    assert "internal error" not in result.err and "Traceback" not in result.err
    assert list(tmp_path.iterdir()) == []


def test_not_json_and_stdout_and_hex(kbatch, tmp_path):
    result = kbatch("encode-from-json", "-", "-o", "-", stdin=b"{not json")
    assert result.code == 2 and "is not JSON: line 1 column 2" in result.err
    result = kbatch("encode-from-json", "-", "-o", "-", stdin=b'{"records": "\x1b[31m"}')
    assert result.code == 2
    assert result.err.endswith("is not JSON: line 1 column 14: Invalid control character\n"), result.err
    spec = json.dumps({"records": [dict(V, offset=0)]}).encode()
    result = kbatch("encode-from-json", "--batch", "--hex", "-", "-o", "-", stdin=spec)
    assert result.code == 0
    data = bytes.fromhex(result.out.strip())
    assert _records(data) == [(0, 1000, None, b"v", [])]


def test_output_replaces_atomically_and_leaves_no_temporary_files(kbatch, tmp_path):
    out = tmp_path / "out.log"
    out.write_bytes(b"old")
    spec = json.dumps({"kbatch_json_version": 1, "entries": [{"records": [dict(V, offset=0)]}]}).encode()
    assert kbatch("encode-from-json", "-", "-o", str(out), stdin=spec).code == 0
    assert out.read_bytes() != b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["out.log"]


def test_the_small_varint_table_is_the_declarations_encoding():
    """The encoder looks small varints up; each entry is what the Varint declaration builds and parses back."""
    from kbatch.ops.encode import _SMALL_VARINTS, _varint_bytes
    from kbatch.format.layouts import Varint, Varlong

    for value in range(-(1 << 13), 1 << 13):
        data = _varint_bytes(value)
        assert data == Varint.build(value) == Varlong.build(value) and Varint.parse(data) == value
        assert _varint_bytes(value) is data   # looked up the second time
    for value in (-(1 << 13) - 1, 1 << 13, 2**31 - 1, -(2**31)):
        assert _varint_bytes(value) == Varint.build(value)
    assert len(_SMALL_VARINTS) == 1 << 14 and set(_SMALL_VARINTS) == set(range(-(1 << 13), 1 << 13))


# Wrong values of every JSON type, and values of the right type that cannot be what the field holds.
_WRONG = [None, "x", [], {}, 1.5, True, -1, 2**70, {"hex": "zz"}, [None], [1], [{}], {"utf8": 1}]


def _every_field(value, path=()):
    """The path of every value in a dump's JSON (the first two items of each list)."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _every_field(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value[:2]):
            yield from _every_field(item, path + (index,))


@pytest.mark.parametrize("name", ["v2-none", "v2-txn-commit", "v1-none", "v0-none"])
def test_every_field_of_a_dump_is_type_checked_with_its_json_path(kbatch, name):
    """A wrong value anywhere in a dump (`"records": null` under --rederive was a TypeError) is a SpecError
    naming its JSON path, or bytes: never another exception."""
    import copy

    from kbatch.ops.encode import SpecError, check_payload_matches_records, encode_document, entries_of

    document = json.loads(kbatch("dump", "-r", "--format", "json", f"fixtures/{name}.log", expect=0).out)
    for path in list(_every_field(document))[1:]:
        for wrong in _WRONG:
            edited = copy.deepcopy(document)
            parent = edited
            for step in path[:-1]:
                parent = parent[step]
            parent[path[-1]] = wrong
            for rederive in (False, True):
                try:
                    if not rederive:
                        entries, at = entries_of(edited, single_batch=False, require_version=True)
                        for index, entry in enumerate(entries):
                            check_payload_matches_records(entry, f"{at}[{index}]")
                    encode_document(edited, single_batch=False, rederive=rederive, require_version=True)
                except SpecError as error:   # where: a JSON path from the document's top
                    assert str(error).startswith(("files", "kbatch_json_version", "(document)")), (path, wrong)


def test_rederive_of_a_batch_with_records_null_keeps_its_payload(kbatch, tmp_path):
    document = json.loads(kbatch("dump", "--format", "json", "fixtures/v2-gzip.log").out)
    for entry in document["files"][0]["entries"]:
        entry["records"] = None
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(document))
    result = kbatch("encode-from-json", "--rederive", str(spec), "-o", str(tmp_path / "out.log"))
    assert (result.code, result.err) == (0, "")
    assert (tmp_path / "out.log").read_bytes() == (ROOT / "fixtures/v2-gzip.log").read_bytes()


INTERNAL_SEGMENTS = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "fixtures" / "internal").rglob("*")
                           if path.suffix in (".log", ".checkpoint"))


@pytest.mark.parametrize("segment", INTERNAL_SEGMENTS)
def test_a_dump_of_an_internal_topic_encodes_back_byte_for_byte(kbatch, tmp_path, segment):
    """Its records' `decoded` view was refused as an unknown key (unnamed); it is a view of key and value."""
    spec = tmp_path / "spec.json"
    spec.write_text(kbatch("dump", "-r", "--format", "json", segment).out)
    assert '"decoded"' in spec.read_text() or "/__" not in segment
    result = kbatch("encode-from-json", str(spec), "-o", str(tmp_path / "out.log"))
    assert (result.code, result.err) == (0, "")
    assert (tmp_path / "out.log").read_bytes() == (ROOT / segment).read_bytes()


def test_an_edit_of_the_decoded_view_is_refused_naming_the_field(kbatch, tmp_path):
    segment = "fixtures/internal/__consumer_offsets-12/00000000000000000000.log"
    document = json.loads(kbatch("dump", "-r", "--format", "json", segment).out)
    document["files"][0]["entries"][0]["records"][0]["decoded"]["value"]["data"]["offset"] = 1
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(document))
    result = kbatch("encode-from-json", str(spec), "-o", str(tmp_path / "out.log"))
    assert result.code == 2 and not (tmp_path / "out.log").exists()
    assert "files[0].entries[0].records[0].decoded.value.data.offset: expected 1200, what the key and value " \
           "bytes hold" in result.err and "got 1" in result.err


def test_an_unknown_key_is_named(kbatch, tmp_path):
    document = json.loads(kbatch("dump", "--format", "json", "fixtures/v2-none.log").out)
    document["files"][0]["entries"][0]["colour"] = "blue"
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(document))
    result = kbatch("encode-from-json", str(spec), "-o", str(tmp_path / "out.log"))
    assert result.code == 2 and 'got <the unknown key "colour">' in result.err

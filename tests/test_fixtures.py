"""kbatch decodes every shipped fixture to what the independent encoder was given.

Our fixtures (fixtures/*.log) were built with kafka-python and bytes worked by
hand; their sidecars hold the records that went in and the damage that was
done.  The vectors (fixtures/vectors/*.bin) are record sets captured from real
brokers by other clients' test suites, with the decode those clients agree on.
"""

from __future__ import annotations

import pytest

from kbatch.format.findings import Finding, Severity

from .helpers import FIXTURES, fixture_id, read_all, sidecar

OUR_FIXTURES = sorted(FIXTURES.glob("*.log"))
VECTORS = sorted((FIXTURES / "vectors").glob("*.bin"))


def _bytes(value) -> str | None:
    return None if value is None else value["hex"]


def _hex(data: bytes | None) -> str | None:
    return None if data is None else data.hex()


def _record_view(record) -> dict:
    view = {"offset": record.offset, "timestamp": record.timestamp, "key": _hex(record.key),
            "value": _hex(record.value), "headers": [[key.decode(), _hex(value)] for key, value in record.headers]}
    if record.control is not None:
        view["control"] = {"type": record.control.type, "coordinator_epoch": record.control.coordinator_epoch}
    return view


def _expected_record_view(record: dict) -> dict:
    view = {"offset": record["offset"], "timestamp": record["timestamp"], "key": _bytes(record["key"]),
            "value": _bytes(record["value"]), "headers": [[key, _bytes(value)] for key, value in record["headers"]]}
    if "control" in record:
        view["control"] = record["control"]
    return view


def test_there_are_fixtures_of_every_magic_and_codec():
    pairs = {(entry["magic"], entry["codec"]) for path in OUR_FIXTURES
             for entry in sidecar(path)["expected"]["entries"]}
    for magic, codecs in ((0, "none gzip snappy lz4"), (1, "none gzip snappy lz4"), (2, "none gzip snappy lz4 zstd")):
        for codec in codecs.split():
            assert (magic, codec) in pairs


@pytest.mark.parametrize("path", OUR_FIXTURES, ids=fixture_id)
def test_fixture_decodes_to_what_went_in(path):
    expected = sidecar(path)["expected"]
    batches, findings = read_all(path.read_bytes(), records=True)
    by_pos = {batch.pos: batch for batch in batches}
    for entry in expected["entries"]:
        batch = by_pos.get(entry["pos"])
        assert batch is not None, f"no batch found at {entry['pos']}"
        assert (batch.size, batch.magic, batch.codec, batch.base_offset, batch.last_offset, batch.crc_valid) == \
            (entry["size"], entry["magic"], entry["codec"], entry["base_offset"], entry["last_offset"],
             entry["crc_valid"])
        assert [_record_view(record) for record in batch.records] == \
            [_expected_record_view(record) for record in entry["records"]]
    if not sidecar(path)["damaged"]:
        assert len(batches) == len(expected["entries"])


@pytest.mark.parametrize("path", OUR_FIXTURES, ids=fixture_id)
def test_fixture_damage_is_found_where_it_was_done(path):
    expected = {(finding["code"], finding["entry_pos"]) for finding in sidecar(path)["expected"]["findings"]}
    _, findings = read_all(path.read_bytes(), records=True)
    found = {(finding.code, finding.entry_pos) for finding in findings}
    assert expected <= found
    # and nothing else is called damage, nor anywhere else
    damage_at = {entry_pos for _, entry_pos in expected}
    assert {finding.entry_pos for finding in findings if finding.severity is Severity.ERROR} <= damage_at
    assert any(finding.is_damage for finding in findings) == sidecar(path)["damaged"]


def _vector_records(vector: dict) -> list[dict]:
    return [{"offset": record["offset"], "timestamp": record["timestamp"], "key": _bytes(record["key"]),
             "value": _bytes(record["value"]),
             "headers": [[key, _bytes(value) if isinstance(value, dict) or value is None else value.encode().hex()]
                         for key, value in record["headers"]]}
            for batch in vector["batches"] for record in batch["records"]]


@pytest.mark.parametrize("path", VECTORS, ids=fixture_id)
def test_real_broker_vector_decodes_as_other_clients_agree(path):
    meta = sidecar(path)
    vector = meta["vector_expected"]
    batches, findings = read_all(path.read_bytes(), records=True)
    got = [{key: value for key, value in _record_view(record).items() if key != "control"}
           for batch in batches for record in batch.records]
    assert got == _vector_records(vector)
    assert [(batch.pos, batch.size, batch.crc, batch.crc_valid) for batch in batches] == \
        [(batch["file_pos"], batch["size"], batch["crc"], batch["crc_valid"]) for batch in vector["batches"]]
    codes = {finding.code for finding in findings}
    assert ("truncated" in codes) == bool(vector["trailing_bytes"])
    broken = meta["status"].startswith("corrupt") or not all(batch["crc_valid"] for batch in vector["batches"])
    if broken:
        assert codes - {"truncated"}, "a vector known to be broken must produce a finding"
    else:
        assert codes <= {"truncated"}


# Every header field the sidecars record, as the reader names it on a Batch.  Values in a sidecar come
# from the builder's inputs and struct.unpack of the written bytes (fixtures/make_fixtures.py), not kbatch.
_V2_HEADER = {
    "base_offset": "offset_field", "batch_length": "length_field", "partition_leader_epoch": "partition_leader_epoch",
    "magic": "magic", "crc": "crc", "attributes": "attributes", "codec": "codec", "timestamp_type": "timestamp_type",
    "transactional": "is_transactional", "control": "is_control", "last_offset_delta": "last_offset_delta",
    "base_timestamp": "base_timestamp", "max_timestamp": "max_timestamp", "producer_id": "producer_id",
    "producer_epoch": "producer_epoch", "base_sequence": "base_sequence", "records_count": "count",
}
_LEGACY_HEADER = {"offset": "offset_field", "message_size": "length_field", "crc": "crc", "magic": "magic",
                  "attributes": "attributes", "codec": "codec", "timestamp": "base_timestamp",
                  "timestamp_type": "timestamp_type"}
# How the builder compressed the records (which bytes a codec wrote), not a field of the header.
_ABOUT_THE_PAYLOAD = {"compressed_by_hand", "lz4_frame_header", "xerial_blocks"}


def _stored_inner_offsets(batch, data: bytes) -> list[int]:
    """The offsets a wrapper's inner messages carry as stored (v1: relative), read from its inflated value."""
    import io

    from kbatch.format.codecs import Decompressor
    from kbatch.reading.reader import ReadOptions, SegmentReader

    value = data[batch.payload_pos:batch.payload_pos + batch.payload_size]
    inner = Decompressor().decompress(batch.attributes & 0x07, value, batch.magic)
    return [item.offset_field for item in SegmentReader(io.BytesIO(inner), ReadOptions(), nested_magic=batch.magic)
            if not isinstance(item, Finding)]


@pytest.mark.parametrize("path", OUR_FIXTURES, ids=fixture_id)
def test_every_header_field_is_what_the_sidecar_says(path):
    data = path.read_bytes()
    batches, _ = read_all(data, records=True)
    by_pos = {batch.pos: batch for batch in batches}
    header_fields = sidecar(path)["header_fields"]
    for fields in header_fields:
        batch = by_pos.get(fields["pos"])
        if batch is None:
            assert sidecar(path)["damaged"], f"no entry read at {fields['pos']}"
            continue
        names = _V2_HEADER if fields["magic"] == 2 else _LEGACY_HEADER
        unchecked = set(fields) - set(names) - _ABOUT_THE_PAYLOAD - {"pos", "has_delete_horizon", "inner_offsets_stored"}
        assert not unchecked, f"sidecar fields no test compares: {unchecked}"
        got = {name: getattr(batch, attribute) for name, attribute in names.items() if name in fields}
        assert got == {name: fields[name] for name in got}, f"entry at {fields['pos']}"
        if fields["magic"] == 2:
            horizon = fields["base_timestamp"] if fields["has_delete_horizon"] else None
            assert batch.delete_horizon_ms == horizon
        else:
            assert batch.max_timestamp == fields.get("timestamp")
            if fields["magic"] == 0:
                assert batch.timestamp_type == "NoTimestampType"
        if "inner_offsets_stored" in fields:
            assert _stored_inner_offsets(batch, data) == fields["inner_offsets_stored"]
    # no entry the reader found goes without its sidecar fields, but a damaged one the builder did not list
    listed = {fields["pos"] for fields in header_fields}
    assert all(batch.is_damaged for batch in batches if batch.pos not in listed)


def test_a_fixture_holds_the_delete_horizon_bit():
    """KIP-534: baseTimestamp is the delete horizon and record timestamps are taken from it."""
    path = FIXTURES / "v2-delete-horizon.log"
    fields = [entry for entry in sidecar(path)["header_fields"] if entry["has_delete_horizon"]]
    assert len(fields) == 2 and {entry["codec"] for entry in fields} == {"none", "gzip"}
    batches, findings = read_all(path.read_bytes(), records=True)
    assert findings == []
    marked = [batch for batch in batches if batch.delete_horizon_ms is not None]
    assert [batch.delete_horizon_ms for batch in marked] == [entry["base_timestamp"] for entry in fields]
    for batch in marked:   # every record stamped before the horizon, the batch's maxTimestamp the largest
        assert all(record.timestamp < batch.delete_horizon_ms for record in batch.records)
        assert max(record.timestamp for record in batch.records) == batch.max_timestamp

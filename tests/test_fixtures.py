"""kbatch decodes every shipped fixture to what the independent encoder was given.

Our fixtures (fixtures/*.log) were built with kafka-python and bytes worked by
hand; their sidecars hold the records that went in and the damage that was
done.  The vectors (fixtures/vectors/*.bin) are record sets captured from real
brokers by other clients' test suites, with the decode those clients agree on.
"""

from __future__ import annotations

import pytest

from kbatch.findings import Severity

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

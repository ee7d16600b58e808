"""The compiled reader of a message's partitions (kbatch.kernels.partitions) with its programs
(kbatch.messages.programs) against the straight-line readers and the generic decoder: every version of the
messages it reads, well-formed bytes (a tag now and then) and damaged; where it reads a message, the rows are
those the readers' fields give, and where the readers or the decoder refuse the bytes, it reads nothing.
(tests/conftest.py holds the two to each other on every capture the tests read, too.)"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kbatch.capture import batches
from kbatch.messages import programs, readers
from kbatch.messages.decoder import MessageError
from kbatch.messages.schemas import SCHEMAS
from tests.test_messages_readers import FIX, SETTINGS, damage, messages

CASES = [(name, version) for name in programs.WANTED
         for version in range(SCHEMAS[name].valid_range[0], SCHEMAS[name].valid_range[1] + 1)]


def _compiled(name: str, version: int, data: bytes):
    read = programs.reader(programs.program(name, version)).rows(data, 0)
    return None if read is None or read[0] != len(data) else (read[1], read[2])


def _from_fields(name: str, version: int, data: bytes):
    """The rows from the fields the readers (else the generic decoder) read; None where the bytes are refused."""
    try:
        return programs.rows_of(name, *batches._body(name, data, version, 0))
    except MessageError:
        return None


def test_every_version_of_the_messages_read_has_a_program():
    assert all(programs.program(name, version) is not None for name, version in CASES)
    assert programs.program("MetadataResponse", 12) is None and programs.program("ProduceRequest", 99) is None


@pytest.mark.parametrize(("name", "version"), CASES)
@SETTINGS
@given(data=st.data())
def test_a_well_formed_message_gives_the_rows_its_fields_give(name, version, data):
    raw = data.draw(messages(name, version))
    compiled = _compiled(name, version, raw)
    # a message with a tag is left to the readers (and they to the generic decoder); every other is read
    assert (compiled is None) == (readers.read(name, version, raw, 0) is None)
    assert compiled is None or compiled == _from_fields(name, version, raw)


@pytest.mark.parametrize(("name", "version"), CASES)
@SETTINGS
@given(data=st.data())
def test_damaged_bytes_are_left_to_the_readers_or_give_the_rows_they_give(name, version, data):
    raw = data.draw(messages(name, version))
    damaged = damage(raw, data)
    compiled = _compiled(name, version, damaged)
    assert compiled is None or compiled == _from_fields(name, version, damaged)


def test_a_produce_requests_rows_are_its_partitions_with_their_records_where_they_lie():
    """Two topics, three partitions (one null, one empty Records field), read at v8 and v13 (topic ids)."""
    ids = ("AAAAAAAAAAAAAAAAAAAAAA", "_w8AAAAAAAAAAAAAAAAAAA")
    for version, key, topics in ((8, "name", ("orders", "caf\u00e9")), (13, "topicId", ids)):
        raw = FIX.Writer("ProduceRequest", version).message({
            "transactionalId": None, "acks": 1, "timeoutMs": 30000,
            "topicData": [{key: topics[0], "partitionData": [{"index": 3, "records": b"abc"}, {"index": 4, "records": None}]},
                          {key: topics[1], "partitionData": [{"index": 0, "records": b""}]}]})
        top, rows = _compiled("ProduceRequest", version, raw)
        name, topic_id = (topics, (None, None)) if key == "name" else ((None, None), topics)
        at = raw.index(b"abc")
        assert top[0] == 1 and rows == [(1, name[0], topic_id[0], 3, at, 3), (1, name[0], topic_id[0], 4, None, -1),
                                        (1, name[1], topic_id[1], 0, rows[2][4], 0)]
        assert (top, rows) == _from_fields("ProduceRequest", version, raw)
        view = memoryview(raw)
        assert batches._records_of(view, at, 3) == b"abc" and batches._records_of(view, None, -1) is None


def test_lengths_and_counts_of_two_varint_bytes_and_more_are_read_as_the_readers_read_them():
    """A flexible Produce (v9) whose topic name (200 characters), partition count (130) and Records (300 bytes)
    take compact lengths of two varint bytes; a name of 20,000 characters, three."""
    for name in ("t" * 200, "\u00e9" * 10_000):
        raw = FIX.Writer("ProduceRequest", 9).message({
            "transactionalId": None, "acks": 1, "timeoutMs": 30000,
            "topicData": [{"name": name, "partitionData": [{"index": index, "records": bytes(300)}
                                                           for index in range(130)]}]})
        read = _compiled("ProduceRequest", 9, raw)
        assert read is not None and len(read[1]) == 130 and read[1][129][1] == name and read[1][129][5] == 300
        assert read == _from_fields("ProduceRequest", 9, raw)


def test_a_message_cut_inside_its_last_topic_id_is_not_read():
    raw = FIX.Writer("ProduceRequest", 13).message({
        "transactionalId": None, "acks": 1, "timeoutMs": 30000,
        "topicData": [{"topicId": "AAAAAAAAAAAAAAAAAAAAAA", "partitionData": []}]})
    at = raw.index(bytes(16))
    assert _compiled("ProduceRequest", 13, raw) is not None
    assert programs.reader(programs.program("ProduceRequest", 13)).rows(raw[:at + 15], 0) is None

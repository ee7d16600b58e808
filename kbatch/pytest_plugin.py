"""kbatch's pytest plugin, registered through the ``pytest11`` entry point: installing kbatch is enough.

It does nothing until used, and costs pytest's start-up nothing (it imports no part of kbatch until a
test asks):

* the ``kafka_snapshot`` fixture: a syrupy snapshot of Kafka bytes, kept as reviewable text
  (kbatch.testing.extension);
* ``assert a == b`` on two byte strings that both read as Kafka record batches without damage explains
  itself field by field, as kbatch diff does; any other comparison keeps pytest's own message.
"""

from __future__ import annotations

import pytest

# Larger inputs keep pytest's message: reading them would cost more than a failing assert should.  What it
# costs is a walk over the records of both sides (three of them) more than over their bytes, so both are
# bounded: the records by their batches' headers, read first.
EXPLAINED_UP_TO = 64 * 1024 * 1024
EXPLAINED_RECORDS = 10_000


@pytest.fixture
def kafka_snapshot(request):
    """A syrupy snapshot of Kafka bytes (a segment, a record set, a batch): ``assert data == kafka_snapshot``."""
    try:
        snapshot = request.getfixturevalue("snapshot")
    except pytest.FixtureLookupError:
        pytest.fail("kafka_snapshot keeps its snapshots with syrupy, which is not installed (pip install syrupy)",
                    pytrace=False)
    from kbatch.testing.extension import KafkaSnapshotAssertion, KafkaSnapshotExtension

    assertion = snapshot.use_extension(KafkaSnapshotExtension)
    assertion.__class__ = KafkaSnapshotAssertion   # (its repr: a summary, not the whole hex dump)
    return assertion


def pytest_assertrepr_compare(config, op, left, right):
    if op != "==" or not isinstance(left, (bytes, bytearray, memoryview)) \
            or not isinstance(right, (bytes, bytearray, memoryview)):
        return None
    if max(len(left), len(right)) > EXPLAINED_UP_TO:
        return None
    from kbatch.render.snapshot import explain, reads_as_kafka

    if not (reads_as_kafka(left, EXPLAINED_RECORDS) and reads_as_kafka(right, EXPLAINED_RECORDS)):
        return None
    from kbatch.output.inert import inert_where_a_runner_reads

    # (what a record holds is shown: in a CI runner's job, never as the runner's command)
    return inert_where_a_runner_reads(explain(left, right, "left", "right")) or None

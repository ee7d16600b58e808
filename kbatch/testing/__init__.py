"""kbatch in the tests of a Kafka client, proxy, connector or broker: checks of Kafka bytes that say which
field changed, not which byte.

    from kbatch.testing import assert_valid, describe

    assert_valid(produce_request_records)          # raises with verify-crc --deep's findings
    print(describe(fetch_response_records))         # the batches and records, field by field

With pytest (the plugin comes with kbatch: kbatch.pytest_plugin), a test compares bytes with a golden
text kept beside it, written by ``pytest --snapshot-update`` (syrupy):

    def test_encoder(kafka_snapshot):
        assert encode_batch(...) == kafka_snapshot

and ``assert a == b`` on two record sets shows what kbatch diff shows.  The syrupy extension itself is
:class:`KafkaSnapshotExtension` (loaded when first asked for: syrupy is needed only by who uses it).
"""

from __future__ import annotations

import io

from kbatch.format.findings import Finding
from kbatch.reading.model import Batch
from kbatch.render.snapshot import describe as _describe
from kbatch.render.snapshot import as_bytes, explain, reads_as_kafka, snapshot_bytes

# (KafkaSnapshotExtension is not in it: a star import must not need syrupy)
__all__ = ["KafkaBytesError", "assert_valid", "describe", "explain", "reads_as_kafka", "snapshot_bytes"]


class KafkaBytesError(AssertionError):
    """Kafka bytes that do not verify; ``findings`` holds every finding (damage, warnings and notes)."""

    def __init__(self, message: str, findings: list[Finding]):
        super().__init__(message)
        self.findings = findings


def describe(data) -> str:
    """The text a Kafka snapshot stores: every batch and record with its fields, findings, then the bytes
    in hex (kbatch.render.snapshot)."""
    return _describe(as_bytes(data))


def assert_valid(data, deep: bool = True) -> list[Finding]:
    """Raise :class:`KafkaBytesError` when ``data`` holds damage: its findings, worded as
    ``kbatch verify-crc --deep`` words them (without ``deep``, framing and CRCs only).  Returns every
    finding (warnings and notes too) when there is no damage."""
    from kbatch.output.values import finding_text
    from kbatch.render.verify import finding_marker
    from kbatch.reading.summary import FileSummary
    from kbatch.ops.verify import VerifyOptions, verify_stream

    data = as_bytes(data)
    summary = FileSummary("<bytes>", len(data))
    batches: dict[int, Batch] = {}   # position in the bytes -> the batch there
    findings = list(verify_stream(io.BytesIO(data), summary, VerifyOptions(deep=deep),
                                  on_batch=lambda batch: batches.__setitem__(batch.pos, batch)))
    if not summary.damaged:
        return findings
    lines = [f"{finding_marker(finding)}{finding_text(finding, batches.get(finding.entry_pos))}"
             for finding in findings]
    raise KafkaBytesError(f"Kafka bytes damaged ({len(data)} bytes, {summary.batches} batches, "
                          f"{summary.errors} errors):\n" + "\n".join(lines), findings)


def __getattr__(name: str):
    if name == "KafkaSnapshotExtension":   # imports syrupy
        from kbatch.testing.extension import KafkaSnapshotExtension

        return KafkaSnapshotExtension
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

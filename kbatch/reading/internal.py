"""Read the records of an internal topic's batch with its decoder; what does not read becomes a finding."""

from __future__ import annotations

from collections.abc import Iterable

from kbatch.reading.invariants import _record_finding
from kbatch.reading.model import Batch, Record
from kbatch.messages.topics import decode


def decode_batch(batch: Batch, decoder: str | None, kafka_version: str | None = None) -> None:
    """Set ``record.decoded`` on every data record of ``batch``; add a finding for each problem.  With
    ``kafka_version``, values Kafka changed in place are read with that release's layout
    (:func:`kbatch.messages.topics.decode`).

    Control batches are left to the control record decoder (a transactional offset commit ends with a
    COMMIT marker, which is no offset key).  In ``__cluster_metadata`` every record, control ones too, is
    also held to KRaft's framing rules (:mod:`.kraft`).
    """
    records = batch.records
    if decoder is None or decoder == "none" or not records:
        return
    if decoder == "metadata":
        _kraft_rules(batch, records)
    if batch.is_control:
        return
    for index, record in enumerate(records):
        decoded = decode(decoder, record.key, record.value, kafka_version)
        record.decoded = decoded
        for problem in decoded.problems:
            batch.findings.append(_record_finding(
                batch, record.pos, record.size, problem.code, f"records[{index}].{problem.field}", problem.expected,
                f"{problem.actual} (byte {problem.pos} of the {problem.part})"))


def _kraft_rules(batch: Batch, records: Iterable[Record]) -> None:
    from kbatch.reading.kraft import record_refusal
    for index, record in enumerate(records):
        refusal = record_refusal(batch, record)
        # a data record's missing or empty value is the metadata decoder's finding already
        if refusal is not None and not (refusal[0] == "value" and not batch.is_control):
            field, expected, found, kafka = refusal
            batch.findings.append(_record_finding(batch, record.pos, record.size, "bad-kraft-record",
                                                  f"records[{index}].{field}", expected, f"{found} ({kafka})"))

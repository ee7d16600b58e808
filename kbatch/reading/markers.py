"""Which control batches end a transaction: the one rule ``txn``, ``scan`` and the partition cross-checks share.

A broker rebuilding its producer state (ProducerStateManager, ProducerAppendInfo.append) reads a control
batch of a producer as an end transaction marker: EndTransactionMarker.deserialize(record) takes its first
record, and throws (IllegalArgumentException, "Invalid control record type for end transaction marker") on
any type but ABORT and COMMIT.  Its log recovery (LogSegment.recover) drops a batch whose CRC fails, and all
after it.  So kbatch believes a marker only when its CRC holds and its record reads as ABORT or COMMIT; any
other is reported with what it would say if it were believed, and the transaction it would end is of
unknown outcome.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from kbatch.reading.model import Batch, ControlMarker

END_TYPES = ("ABORT", "COMMIT")


class EndMarker(NamedTuple):
    """A producer's control batch, as an end of its transaction."""

    marker: ControlMarker | None    # its first record as decoded (None: it does not read)
    doubt: str | None = None        # why it is not believed; None: it ends the transaction as marker.type

    @property
    def trusted(self) -> bool:
        return self.doubt is None

    @property
    def believed(self) -> ControlMarker | None:
        """The marker when it is believed (a believed one always read); None when it is not."""
        return self.marker if self.trusted else None

    @property
    def outcome(self) -> str:
        """COMMIT or ABORT when believed, else UNKNOWN."""
        return self.marker.type if self.trusted and self.marker is not None else "UNKNOWN"

    @property
    def if_believed(self) -> str | None:
        """What the marker would say if it were believed (None: not even that can be read)."""
        if self.marker is None or self.marker.type not in END_TYPES:
            return None
        return self.marker.type


def end_marker(batch: Batch) -> EndMarker | None:
    """The control batch ``batch`` (its records loaded) as an end marker; None for an empty control batch
    (its transaction was cleaned from the log: ProducerAppendInfo.append appends nothing)."""
    records = batch.record_list
    if records is not None and not records and batch.crc_valid:
        return None
    marker = records[0].control if records else None
    if not batch.crc_valid:
        return EndMarker(marker, f"its CRC fails (stored {batch.crc}, computed {batch.computed_crc}): "
                                 "a broker's recovery drops it")
    if marker is None:
        return EndMarker(None, "its control record does not read")
    if marker.type not in END_TYPES:
        return EndMarker(marker, f"{_a(marker.type)} control record is no end transaction marker "
                                 "(a broker's EndTransactionMarker.deserialize throws on it)")
    if marker.coordinator_epoch is None or (marker.value_version is not None and marker.value_version < 0):
        return EndMarker(marker, f"its {marker.type} value does not read")
    return EndMarker(marker)


def _a(word: str) -> str:
    """``word`` after its indefinite article, as it is read aloud ("an ABORT", "a COMMIT", "an UNKNOWN(5)")."""
    return f"{'an' if word[:1].upper() in 'AEIOU' else 'a'} {word}"


class _Placed(Protocol):
    """A batch as far as a report places it (kbatch.walk.headers.BatchHeader has no more of it)."""

    @property
    def base_offset(self) -> int: ...

    @property
    def pos(self) -> int: ...


def describe(marker: EndMarker, batch: Batch | _Placed) -> str:
    """One line for a report: where the marker is, why it is not believed, what it would say."""
    read = marker.marker
    if read is None:   # its records were not walked: its key was never read, whatever its bytes hold
        would = "its records do not decode as its header describes them, so what it would say is not known"
    elif read.type in END_TYPES:
        would = f"if believed, {_a(read.type)} (coordinator epoch {read.coordinator_epoch})"
    else:
        would = f"its record reads {read.type}, which ends no transaction"
    return f"the marker at offset {batch.base_offset} (pos {batch.pos}) is not believed: {marker.doubt}; {would}"

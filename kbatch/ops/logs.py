"""A partition's logs batch by batch, for the commands that replay them (txn, offsets, producers).

Each of those reads every batch of the files it is given, in order, hands it to what replays it, and keeps
the damage it met; what a damaged range held is not seen, and the replay goes on after it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable

from kbatch.files.inputs import topic_partition
from kbatch.format.codecs import Decompressor
from kbatch.format.findings import Finding
from kbatch.reading.model import Batch
from kbatch.reading.reader import ReadOptions, SegmentReader, open_input
from kbatch.reading.v2 import load_records
from kbatch.reading.summary import FileSummary
from kbatch.walk.engine import each, entries


def partition_key(path: str) -> str:
    """The partition a segment belongs to: its directory when named TOPIC-N (two log directories may each
    hold one), else the file itself."""
    topic, _ = topic_partition(path)
    return os.path.dirname(path) if topic is not None else path


@dataclass
class Replayed:
    """What a replay met: every finding as (path, finding), the files it could not open (path, error), and
    whether any damage was found."""

    findings: list[tuple[str, Finding]] = field(default_factory=list)
    unreadable: list[tuple[str, Exception | str]] = field(default_factory=list)
    damaged: bool = False


def replay(files: list[str], options: ReadOptions, add: Callable[[str, Batch], None],
           wants_records: Callable[[str, Batch], bool] | None = None) -> Replayed:
    """Every batch of every file, in order, to ``add(path, batch)`` (before its findings are collected, so a
    replay may add its own, as an internal topic's record decoder does).

    With ``wants_records(path, batch)``, only the v2 batches it names have their records decoded (a replay that needs a
    batch's header alone, and the records of a few, costs a header a batch, not a record object a record).
    """
    if wants_records is not None:
        options = options._replace(records=False, keep_body=True)
        decompressor = Decompressor(options.decompressed_limit)
    replayed = Replayed()
    for path in files:
        try:
            stream = open_input(path)
        except (OSError, ValueError) as error:
            replayed.unreadable.append((path, error))
            continue
        summary = FileSummary(path, 0)

        def region(finding: Finding, path=path, summary=summary) -> None:
            summary.add_finding(finding)
            replayed.findings.append((path, finding))

        def batch(batch: Batch, path=path, summary=summary) -> None:
            if wants_records is not None:
                if batch.magic == 2 and wants_records(path, batch):
                    load_records(batch, batch.body, decompressor)
                batch.body = None
            add(path, batch)
            summary.add_batch(batch)
            replayed.findings.extend((path, finding) for finding in batch.findings)

        with stream:
            each(entries(SegmentReader(stream, options)), batch, region)
        replayed.damaged = replayed.damaged or summary.damaged
    return replayed

"""``verify-crc --deep`` / ``--index-only`` on partition directories: the cross-checks, reported per partition."""

from __future__ import annotations

import glob
import os

from ..summary import FileSummary
from .crosscheck import PartitionCheck


def partition_directories(paths) -> list[str]:
    """The partition directories the arguments name: one holding segments, or each such under a log directory."""
    found = []
    for path in paths:
        if not os.path.isdir(path):
            continue
        if glob.glob(os.path.join(glob.escape(path), "*.log")):
            found.append(path)
            continue
        for root, directories, _ in os.walk(path):
            directories.sort()
            if glob.glob(os.path.join(glob.escape(root), "*.log")):
                found.append(root)
    return found


def verify_partitions(paths, sink, *, index_only: bool, decompressed_limit: int) -> list[FileSummary]:
    """Cross-check every partition directory in ``paths``; each finding goes to ``sink`` with its file.

    With ``index_only`` the damage the walk meets in the logs is reported too (the logs themselves are
    not verified record by record); otherwise the caller has verified them already.
    """
    summaries = []
    for directory in partition_directories(paths):
        check = PartitionCheck(directory, decompressed_limit=decompressed_limit)
        summary = FileSummary(directory.rstrip("/") + "/ (cross-checks)", 0)
        for located in check.run():
            summary.add_finding(located.finding)
            sink.finding(located.path, located.finding)
        if index_only:   # the logs were verified by no one else: their counts and damage are this row's
            for located in check.log_findings:
                summary.add_finding(located.finding)
                sink.finding(located.path, located.finding)
            summary.batches, summary.records, summary.size = check.batches, check.records, check.bytes
        sink.file_done(summary)
        summaries.append(summary)
    return summaries

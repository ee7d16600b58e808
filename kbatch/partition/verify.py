"""``verify-crc --deep`` / ``--index-only`` on partition directories: the cross-checks, reported per partition."""

from __future__ import annotations

import os

from kbatch.reading.summary import FileSummary
from kbatch.files.inputs import partition_directories
from kbatch.files.kinds import LOG, META_PROPERTIES, OFFSET_CHECKPOINT, OFFSET_CHECKPOINTS, kind_of


class WalkedLogs:
    """The cross-checks of partition directories fed by the walks that verify their logs (``verify-crc --deep``):
    each walk hands its log's batch headers over as it goes (:meth:`headers_for`, :meth:`walked`), and the check
    holds the files beside that log against each at once, so that a log is read once, not a second time by
    the check.

    A partition's logs must be walked in its segments' order, each once; a partition whose logs come otherwise
    (named in another order, or twice) is checked on its own afterwards, reading its logs itself.  Memory
    holds no batch: only the checks' state and their findings (told after every file's, as before).
    """

    def __init__(self, directories, decompressed_limit: int):
        from kbatch.partition.crosscheck import PartitionCheck

        self.checks = {directory: PartitionCheck(directory, decompressed_limit=decompressed_limit,
                                                 segments_verified=True) for directory in directories}
        self.fed = dict.fromkeys(self.checks, 0)                # segments fed so far
        self.found: dict[str, list] = {directory: [] for directory in self.checks}
        self.directory_of = {_same_file(segment.log): directory for directory, check in self.checks.items()
                             for segment in check.segments}

    def headers_for(self, path: str):
        """A :class:`kbatch.walk.headers.Headers` for the walk of ``path`` to hand its batches' headers to, when it
        is the next log a partition's check wants; else None (and a partition whose log comes out of turn is
        checked on its own)."""
        from kbatch.walk.headers import Headers

        directory = self.directory_of.get(_same_file(path))
        if directory is None or directory not in self.fed:
            return None
        check, number = self.checks[directory], self.fed[directory]
        if number >= len(check.segments) or _same_file(check.segments[number].log) != _same_file(path):
            del self.fed[directory]   # out of turn: its check reads its logs itself
            return None
        found = self.found[directory]
        found += check.begin(number)
        return Headers(lambda batch: found.extend(check.take(batch)))

    def walked(self, path: str, size: int) -> None:
        """The walk of ``path`` (given :meth:`headers_for`'s Headers) ended, the log ``size`` bytes."""
        directory = self.directory_of[_same_file(path)]
        if directory in self.fed:
            self.found[directory] += self.checks[directory].finish(size)
            self.fed[directory] += 1

    def findings(self, directory: str):
        """Every finding of the partition's check when every log of it was walked in turn; else None."""
        check = self.checks.get(directory)
        if check is None or self.fed.get(directory) != len(check.segments):
            return None
        return self.found.pop(directory) + list(check.end())


def _same_file(path: str) -> str:
    return os.path.normpath(os.path.abspath(path))


def verify_partitions(paths, sink, *, index_only: bool, decompressed_limit: int,
                      walked: WalkedLogs | None = None) -> list[FileSummary]:
    """Cross-check every partition directory in ``paths``; each finding goes to ``sink`` with its file.

    With ``index_only`` the damage the walk meets in the logs is reported too (the logs themselves are
    not verified record by record); otherwise the caller has verified them already, and ``walked`` holds
    the checks its walks fed (those it did not are made here, reading the logs).
    """
    from kbatch.partition.crosscheck import PartitionCheck   # here: naming a lone segment must not load the cross-checks

    summaries = []
    for directory in partition_directories(paths):
        check = PartitionCheck(directory, decompressed_limit=decompressed_limit, segments_verified=not index_only)
        summary = FileSummary(directory.rstrip("/") + "/ (cross-checks)", 0, cross_check=True)
        fed = walked.findings(directory) if walked is not None else None
        for located in check.run() if fed is None else fed:
            summary.add_finding(located.finding)
            sink.finding(located.path, located.finding)
        if index_only:   # the logs were verified by no one else: their counts and damage are this row's
            for located in check.log_findings:
                summary.add_finding(located.finding)
                sink.finding(located.path, located.finding)
            summary.batches, summary.records, summary.size = check.batches, check.records, check.bytes
        sink.file_done(summary)
        summaries.append(summary)
    for directory in log_directories(paths):
        summary = FileSummary(directory.rstrip("/") + "/ (log directory files)", 0, cross_check=True)
        for path, finding in log_directory_findings(directory):
            summary.add_finding(finding)
            sink.finding(path, finding)
        sink.file_done(summary)
        summaries.append(summary)
    return summaries


# The files of a log directory read on their own, by name, with the kind each is read as.
LOG_DIRECTORY_FILES = {name: OFFSET_CHECKPOINT for name in OFFSET_CHECKPOINTS} | {"meta.properties": META_PROPERTIES}


def log_directories(paths) -> list[str]:
    """The log directories among the directory arguments: those holding an offset checkpoint or meta.properties
    (LogManager writes them once per log directory).  A partition directory named alone does not bring its
    parent's."""
    candidates = dict.fromkeys(os.path.normpath(path) for path in paths if os.path.isdir(path))
    return [directory for directory in candidates
            if any(os.path.isfile(os.path.join(directory, name)) for name in LOG_DIRECTORY_FILES)]


def log_directory_findings(directory: str):
    """(path, finding) for each finding of a log directory's offset checkpoints and meta.properties, each read
    on its own."""
    from kbatch.partition.sidecars import Entry, Header, read_sidecar

    for name, kind in sorted(LOG_DIRECTORY_FILES.items()):
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as stream:
            for item in read_sidecar(kind, stream):
                for finding in item.findings if isinstance(item, (Entry, Header)) else [item]:
                    yield path, finding


def directories_of(segment_paths) -> list[str]:
    """The partition directories local segments lie in (remote ones are not cross-checked)."""
    return sorted({os.path.dirname(path) or "." for path in segment_paths
                   if "://" not in path and kind_of(path) == LOG})

"""What one pass over a file adds up to: counts of entries, records, bytes and findings."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from kbatch.format.findings import Finding
from kbatch.reading.model import Batch


@dataclass
class FileSummary:
    path: str
    size: int
    batches: int = 0
    records: int = 0
    batch_bytes: int = 0
    findings: Counter = field(default_factory=Counter)
    errors: int = 0
    size_now: int | None = None   # where a read found the file's end, when it was cut while it was read
    cross_check: bool = False     # a row of a partition's (or a log directory's) cross-checks: no file of its own


    def add_batch(self, batch: Batch) -> None:
        self.batches += 1
        self.records += max(batch.count or 0, 0)
        self.batch_bytes += batch.size
        for finding in batch.findings:
            self.add_finding(finding)

    def add_summary(self, other: FileSummary) -> None:
        """Count in what a walk over another part of the same file counted."""
        self.batches += other.batches
        self.records += other.records
        self.batch_bytes += other.batch_bytes
        self.findings.update(other.findings)
        self.errors += other.errors
        if other.size_now is not None and self.size_now is None:
            self.size_now = other.size_now

    def add_finding(self, finding: Finding) -> None:
        self.findings[finding.code] += 1
        self.errors += finding.is_damage
        if finding.code == "truncated-while-reading":
            self.size_now = finding.pos   # where the file ends now

    @property
    def damaged(self) -> bool:
        return self.errors > 0

    def as_dict(self) -> dict:
        return {"file": self.path, "size": self.size, "batch_count": self.batches, "record_count": self.records,
                "batch_bytes": self.batch_bytes, "findings": dict(sorted(self.findings.items())),
                "errors": self.errors, "damaged": self.damaged,
                **({"size_changed": {"opened": self.size, "ended_at": self.size_now}} if self.size_now is not None else {})}

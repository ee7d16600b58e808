"""pytest set-up: text snapshots (one readable file per snapshot)."""

from __future__ import annotations

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode


class TextSnapshot(SingleFileSnapshotExtension):
    """One readable text file per snapshot."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"


@pytest.fixture
def text_snapshot(snapshot):
    return snapshot.use_extension(TextSnapshot)


class JsonSnapshot(TextSnapshot):
    file_extension = "json"


class JsonlSnapshot(TextSnapshot):
    file_extension = "jsonl"


@pytest.fixture
def json_snapshot(snapshot):
    return snapshot.use_extension(JsonSnapshot)


@pytest.fixture
def jsonl_snapshot(snapshot):
    return snapshot.use_extension(JsonlSnapshot)


@pytest.fixture
def kbatch(capsys, monkeypatch):
    """Run the kbatch command line in-process, as a user would from the repository root."""
    from .helpers import ROOT, run_kbatch

    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("KBATCH_DEBUG", raising=False)

    def run(*args: str, stdin: bytes | None = None):
        return run_kbatch(list(args), capsys, monkeypatch, stdin)

    return run

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

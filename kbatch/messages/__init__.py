"""Kafka's own messages: the records of its internal topics, control records, the schema registry's frame.

Which decoder a segment's records call for is said here, from its path alone, so that a command learns it
without loading the schemas; the decoders are in :mod:`.topics`.
"""

from __future__ import annotations

import os

from kbatch.files.inputs import partition_directory

DECODERS = ("offsets", "transactions", "metadata", "share", "remote", "none")

# The partition directory a segment sits in names its topic: <topic>-<partition>.
TOPIC_DECODERS = {"__consumer_offsets": "offsets", "__transaction_state": "transactions",
                  "__cluster_metadata": "metadata", "__share_group_state": "share",
                  "__remote_log_metadata": "remote"}


def decoder_for_path(path: str) -> str | None:
    """The decoder a segment's partition directory calls for (``__consumer_offsets-12/…log``), if any."""
    parts = _path_parts(path)
    if parts[-1:] == ["bootstrap.checkpoint"]:   # KRaft's bootstrap snapshot (BootstrapDirectory)
        return "metadata"
    partition = partition_directory(parts[-2]) if len(parts) > 1 else None
    return TOPIC_DECODERS.get(partition[0]) if partition else None


def _path_parts(path: str) -> list[str]:
    """A path's names, as pathlib.PurePath parts them here without its import (every run asks, few use
    pathlib): "." and empty names dropped, ".." kept; on Windows "/" separates too, after any drive."""
    if os.name == "nt":
        path = os.path.splitdrive(path)[1].replace("/", "\\")
    return [part for part in path.split(os.sep) if part not in ("", ".")]

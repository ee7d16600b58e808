"""Kafka's own messages: the records of its internal topics, control records, the schema registry's frame.

Which decoder a segment's records call for is said here, from its path alone, so that a command learns it
without loading the schemas; the decoders are in :mod:`.topics`.
"""

from __future__ import annotations

import os
import re

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
    directory = parts[-2] if len(parts) > 1 else ""
    # A partition directory renamed <topic>-<partition>.<id>-delete/-future/-stray (LocalLog) holds the same.
    directory = re.sub(r"^(\S+-\S+)\.\S+-(?:delete|future|stray)$", r"\1", directory)
    match = re.fullmatch(r"(.+)-(\d+)", directory)
    return TOPIC_DECODERS.get(match.group(1)) if match else None


def _path_parts(path: str) -> list[str]:
    """A path's names, as pathlib.PurePath parts them here without its import (every run asks, few use
    pathlib): "." and empty names dropped, ".." kept; on Windows "/" separates too, after any drive."""
    if os.name == "nt":
        path = os.path.splitdrive(path)[1].replace("/", "\\")
    return [part for part in path.split(os.sep) if part not in ("", ".")]

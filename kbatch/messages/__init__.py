"""Kafka's own messages: the records of its internal topics, control records, the schema registry's frame.

Which decoder a segment's records call for is said here, from its path alone, so that a command learns it
without loading the schemas; the decoders are in :mod:`.topics`.
"""

from __future__ import annotations

import re
from pathlib import PurePath

DECODERS = ("offsets", "transactions", "metadata", "share", "none")

# The partition directory a segment sits in names its topic: <topic>-<partition>.
TOPIC_DECODERS = {"__consumer_offsets": "offsets", "__transaction_state": "transactions",
                  "__cluster_metadata": "metadata", "__share_group_state": "share"}


def decoder_for_path(path: str) -> str | None:
    """The decoder a segment's partition directory calls for (``__consumer_offsets-12/…log``), if any."""
    if PurePath(path).name == "bootstrap.checkpoint":   # KRaft's bootstrap snapshot (BootstrapDirectory)
        return "metadata"
    parent = PurePath(path).parent.name
    match = re.fullmatch(r"(.+)-(\d+)", parent)
    return TOPIC_DECODERS.get(match.group(1)) if match else None

"""Which partition of ``__consumer_offsets`` or ``__transaction_state`` coordinates a name (``kbatch offsets
--where``, ``--transactional-id``), as a line of text or of JSON (no table: Rich is not loaded for it)."""

from __future__ import annotations

import json
from typing import Iterable, Iterator

from kbatch.ops.offsets import coordinator_partition
from kbatch.output.visible import visible


def coordinator_lines(groups: Iterable[str], transactional_ids: Iterable[str], partitions: int,
                      output_format: str) -> Iterator[str]:
    """Kafka's hash of each name (kbatch.ops.offsets.coordinator_partition): the partition to open, a line each."""
    for kind, topic, names in (("group", "__consumer_offsets", groups),
                               ("transactional_id", "__transaction_state", transactional_ids)):
        for name in names:
            partition = coordinator_partition(name, partitions)
            if output_format == "jsonl":
                from kbatch.output.jsonout import coordinator_partition_dict

                yield json.dumps(coordinator_partition_dict(kind, name, topic, partition, partitions),
                                 ensure_ascii=False)
            else:
                yield f"{kind.replace('_', ' ')} {visible(name)}: {topic}-{partition} (of {partitions} partitions)"

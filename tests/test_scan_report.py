"""The scan report's rendering: one table where it fits the terminal, a block per partition where not."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from kbatch.render.scan import render_report


def _partition(topic, partition, **fields):
    row = {"topic": topic, "partition": partition, "segments": 2, "batches": 8, "records": 22, "bytes": 5684,
           "compression_ratio": None, "corrupt_batches": 0, "offset_gaps": [], "offset_overlaps": [],
           "first_timestamp": 1700000000000, "last_timestamp": 1700000000302, "producers": 0,
           "producer_breaks": {}, "open_transactions": [], "cross_checks": None}
    return {**row, **fields}


RESULT = {
    "out": "/tmp/scan", "tables": ["batches", "findings"], "segments": 5, "bytes": 14515,
    "damaged_segments": ["logs/payments-0/00000000000000000000.log"], "failed_cross_checks": [],
    "partitions": [_partition("payments", 0, corrupt_batches=1, offset_overlaps=[{}], compression_ratio=3.37,
                              producers=3, producer_breaks={"producer-epoch-backwards": 1, "producer-sequence-gap": 2}),
                   _partition("a-rather-long-topic-name", 12, open_transactions=[4009, 4010]),
                   _partition(None, None, first_timestamp=None, last_timestamp=None)],
}


def _render(width: int) -> list[str]:
    out = io.StringIO()
    render_report(Console(file=out, width=width, color_system=None, highlight=False), RESULT)
    return out.getvalue().splitlines()


@pytest.mark.parametrize("width", [60, 80, 100, 120])
def test_a_narrow_terminal_gets_a_block_per_partition(width):
    lines = _render(width)
    text = "\n".join(lines)
    assert max(map(len, lines)) <= width
    assert "topic-partition" not in text
    for name in ("payments-0", "a-rather-long-topic-name-12"):
        assert any(line.startswith(name + " ") for line in lines), name
    words = text.split()
    for fields in (["corrupt", "1,"], ["overlaps", "1,"], ["ratio", "3.37"], ["txns", "4009,", "4010"],
                   ["producers", "3", "(3", "rule", "breaks),"], ["producers", "0,", "open"],
                   ["2023-11-14T22:13:20.000Z", "to", "2023-11-14T22:13:20.302Z"], ["no", "timestamps"]):
        assert any(words[i:i + len(fields)] == fields for i in range(len(words))), fields
    assert "1 damaged segment(s):" in text


def test_a_wide_one_gets_the_table():
    lines = _render(200)
    assert any("topic-partition" in line for line in lines) and max(map(len, lines)) <= 200
    assert any("payments-0" in line and "3.37" in line for line in lines)

"""What a person sees at a terminal: the dump table's layout, the batch headings, the words."""

from __future__ import annotations

import json
import re

import pytest

from kbatch.render.values import counted

from .helpers import FIXTURES


def _batches(kbatch, path: str) -> list[dict]:
    lines = [json.loads(line) for line in kbatch("dump", "--format", "jsonl", path).out.splitlines()]
    return [line for line in lines if line["type"] == "batch"]


@pytest.mark.parametrize("name", ["v2-txn-commit.log", "v2-idempotent.log", "mixed-v0-v1-v2.log",
                                  "v2-logappendtime.log"])
def test_records_headings_keep_every_header_field(name, kbatch):
    """`dump --records` shows a batch's producer fields, leader epoch and timestamp type, as the table does."""
    out = kbatch("dump", "--records", f"fixtures/{name}").out
    for batch in _batches(kbatch, f"fixtures/{name}"):
        heading = re.search(rf"^batch @ pos {batch['pos']} .*\n.*", out, re.M).group(0)
        assert batch["timestamp_type"] in heading
        if batch["magic"] == 2:
            assert f"leader epoch {batch['partition_leader_epoch']}" in heading
            assert f"{batch['producer_id']}/{batch['producer_epoch']}/{batch['base_sequence']}" in heading
        if batch["is_transactional"]:
            assert "txn" in heading


def test_counts_are_in_the_singular_when_one(kbatch, tmp_path):
    assert [counted(n, "byte") for n in (0, 1, 2)] == ["0 bytes", "1 byte", "2 bytes"]
    assert [counted(n, "batch") for n in (0, 1, 2)] == ["0 batches", "1 batch", "2 batches"]
    one = _batches(kbatch, "fixtures/v2-none.log")[0]
    segment = tmp_path / "one.log"
    segment.write_bytes((FIXTURES / "v2-none.log").read_bytes()[:one["size"]])
    assert f"{segment}: 1 batch, {one['count']} records," in kbatch("dump", str(segment)).out
    segment.write_bytes(b"\x01")
    out = kbatch("dump", str(segment)).out
    assert out.startswith(f"{segment} (1 byte)") and f"{segment}: 0 batches, 0 records, 1 byte;" in out

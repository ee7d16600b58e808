"""The three-broker cluster's unclean election (tests/divergence.py) held to what it says it made, read with
kbatch: the copies taken before the old leader came back disagree as the scenario says, and after it broker 1
holds what the new leader wrote where its own acknowledged records were."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.real_kafka


def _records(kbatch, log_dir, partition="diverged-0") -> list[tuple[int, str]]:
    result = kbatch("dump", "--records", "--format", "jsonl", str(log_dir / partition))
    assert result.code == 0, result.err
    out = []
    for line in result.out.splitlines():
        entry = json.loads(line)
        for record in entry.get("records") or []:
            out.append((record["offset"], record["value"]["utf8"]))
    return out


def test_the_copies_disagree_as_made(three_brokers_diverged, kbatch):
    facts = three_brokers_diverged.facts
    assert facts["acked_by_all"] == list(range(10))
    assert facts["acked_by_lone_leader"] == list(range(10, 20))
    one, two, three = three_brokers_diverged.copies
    before = [(i, f"before {i}") for i in range(10)]
    assert _records(kbatch, one) == before + [(10 + i, f"lone {i}") for i in range(10)]
    assert _records(kbatch, two) == before + [(10 + i, f"after {i}") for i in range(5)]
    assert _records(kbatch, three) == before


def test_after_the_election_the_old_leader_truncated_and_followed(three_brokers_diverged, kbatch):
    facts = three_brokers_diverged.facts
    assert facts["acked_after_election"] == list(range(10, 15))
    assert 10 in facts["truncated_to"]["1"]   # broker 1's server.log: "Truncating to offset 10"
    expected = [(i, f"before {i}") for i in range(10)] + [(10 + i, f"after {i}") for i in range(5)]
    assert [tuple(pair) for pair in facts["consumed_after"]] == expected
    for copy in three_brokers_diverged.after:
        assert _records(kbatch, copy) == expected


def _epochs(log_dir, partition="diverged-0") -> list[tuple[int, int]]:
    """A copy's leader-epoch-checkpoint: a version line, a count line, then "epoch start-offset" lines."""
    lines = (log_dir / partition / "leader-epoch-checkpoint").read_text().split("\n")
    return [tuple(map(int, line.split())) for line in lines[2:] if line.strip()]


def test_every_copy_is_whole_and_only_the_new_leader_began_an_epoch_at_10(three_brokers_diverged, kbatch):
    """The divergence is in what the copies hold, not in damage: verify-crc finds every batch whole; the
    epoch files say which copy the election moved on (broker 2's newer epoch begins at offset 10)."""
    for copy in (*three_brokers_diverged.copies, *three_brokers_diverged.after):
        result = kbatch("verify-crc", str(copy / "diverged-0"))
        assert result.code == 0, (copy, result.out, result.err)
    one, two, three = map(_epochs, three_brokers_diverged.copies)
    assert one == three == [(0, 0)]
    assert two[0] == (0, 0) and two[-1][1] == 10 and two[-1][0] > 0

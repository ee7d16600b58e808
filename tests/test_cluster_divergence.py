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

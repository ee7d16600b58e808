"""kbatch replicas held to what a real three-broker cluster did after an unclean election.

The fixture ``three_brokers_diverged`` (tests/conftest.py) copies each broker's log directory at the moment of
interest and records what the brokers and clients saw (``facts``): the offset each broker logged truncating to,
the offsets the producer's callbacks acknowledged, and those a consumer read after recovery.
"""

from __future__ import annotations

import os

import pytest

from kbatch.ops.replicas import compare

pytestmark = pytest.mark.real_kafka


@pytest.fixture
def diverged(three_brokers_diverged):
    return three_brokers_diverged


def _report(diverged):
    directories = [os.path.join(str(copy), f"{diverged.topic}-{diverged.partition}") for copy in diverged.copies]
    return compare(directories)


def test_truncation_offsets_are_the_brokers(diverged):
    """Each copy is truncated, by Kafka's rule as kbatch follows it, to the offset its broker's server.log says it
    truncated to when it came back and followed the new leader (broker 2, epoch 1)."""
    report = _report(diverged)
    assert os.path.basename(os.path.dirname(report.copies[report.leader].path)) == "broker-2"
    truncated = diverged.facts["truncated_to"]
    assert truncated["1"] == [10]
    for copy in report.copies:
        broker = os.path.basename(os.path.dirname(copy.path)).removeprefix("broker-")
        if truncated.get(broker):
            assert copy.truncate_to == truncated[broker][-1], (broker, copy.rounds)


def test_lost_records_are_those_the_lone_leader_acknowledged(diverged):
    """What only broker 1 holds is what it acknowledged alone (acks=1) and the cluster lost: no consumer reads
    those records after the election."""
    report = _report(diverged)
    facts = diverged.facts
    only_one = set()
    for index, copy in enumerate(report.copies):
        if os.path.basename(os.path.dirname(copy.path)) == "broker-1":
            for each in report.held_only_by(index):
                only_one.update(range(each.base_offset, each.last_offset + 1))
    assert only_one == set(facts["acked_by_lone_leader"])
    consumed = {value for _, value in facts["consumed_after"]}
    assert not consumed & {f"lone {i}" for i in range(10)}


def test_cli_exit_status_on_diverged_copies(diverged, kbatch):
    directories = [os.path.join(str(copy), f"{diverged.topic}-{diverged.partition}") for copy in diverged.copies]
    result = kbatch("replicas", *directories)
    assert result.code == 1
    assert "electing" in result.out

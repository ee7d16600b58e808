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
def diverged(request):
    try:
        return request.getfixturevalue("three_brokers_diverged")
    except pytest.FixtureLookupError:
        pytest.skip("the three-broker harness (fixture three_brokers_diverged) is not in this tree")


def _report(diverged):
    directories = [os.path.join(str(copy), f"{diverged.topic}-{diverged.partition}") for copy in diverged.copies]
    return compare(directories)


def test_truncation_offsets_are_the_brokers(diverged):
    report = _report(diverged)
    truncated = diverged.facts["truncated_to"]
    for copy in report.copies:
        broker = os.path.basename(os.path.dirname(copy.path))
        if broker in truncated:
            assert copy.truncate_to == truncated[broker], (broker, copy.rounds)


def test_lost_records_are_those_acknowledged_and_not_consumed(diverged):
    report = _report(diverged)
    leader = report.copies[report.leader]
    acked, consumed = set(diverged.facts["acked"]), set(diverged.facts["consumed_after"])
    # what the winning copy holds up to its end is what a consumer reads afterwards
    assert consumed <= set(range(leader.log_start_offset or 0, leader.log_end_offset))
    lost_by_kbatch = set()
    for index in range(len(report.copies)):
        for each in report.held_only_by(index):
            lost_by_kbatch.update(range(each.base_offset, each.last_offset + 1))
    assert (acked - consumed) <= lost_by_kbatch


def test_cli_exit_status_on_diverged_copies(diverged, kbatch):
    directories = [os.path.join(str(copy), f"{diverged.topic}-{diverged.partition}") for copy in diverged.copies]
    result = kbatch("replicas", *directories)
    assert result.code == 1
    assert "electing" in result.out

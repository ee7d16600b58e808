"""``kbatch txn``: the transactions of a partition, read from its log (and the coordinator's)."""

from __future__ import annotations

import json

from .helpers import FIXTURES, ROOT

TXN = FIXTURES / "internal" / "txn"
DATA = TXN / "payments-0" / "00000000000000000000.log"
COORDINATOR = TXN / "__transaction_state-0" / "00000000000000000000.log"


def _rel(path) -> str:
    return path.relative_to(ROOT).as_posix()


def _lines(result) -> list[dict]:
    return [json.loads(line) for line in result.out.splitlines()]


def test_every_transaction_and_how_it_ended(kbatch):
    result = kbatch("txn", "--format", "jsonl", _rel(TXN))
    assert result.code == 0 and result.err == ""
    side = json.loads(DATA.with_suffix(".json").read_text())
    found = [line for line in _lines(result) if line["type"] == "transaction"]
    assert [{key: txn[key] for key in want} for txn, want in zip(found, side["transactions"])] == \
        side["transactions"]
    assert len(found) == len(side["transactions"])
    (partition,) = [line for line in _lines(result) if line["type"] == "partition"]
    assert partition["last_stable_offset"] == side["last_stable_offset"] == 9
    assert (partition["committed"], partition["aborted"], partition["empty"], partition["open"]) == (2, 1, 1, 2)
    coordinator = {line["transactional_id"]: line for line in _lines(result) if line["type"] == "coordinator"}
    assert sorted(coordinator) == ["tx-a", "tx-b", "tx-c", "tx-d", "tx-e"]    # tx-old: a tombstone
    assert coordinator["tx-e"]["state"] == "CompleteAbort"                     # the last word wins


def test_without_the_coordinator_nothing_is_called_hanging(kbatch):
    found = [line for line in _lines(kbatch("txn", "--format", "jsonl", _rel(DATA))) if line["type"] == "transaction"]
    assert [txn["outcome"] for txn in found] == ["COMMIT", "ABORT", "COMMIT", "OPEN", "OPEN"]
    assert not any(txn["hanging"] or txn["transactional_id"] for txn in found)


def test_the_table_names_what_holds_the_last_stable_offset(kbatch, text_snapshot):
    result = kbatch("txn", _rel(TXN))
    assert result.code == 0
    assert "last stable offset held at 9" in result.out
    assert "--topic payments --partition 0 --start-offset 9" in result.out
    assert "HANGING" in result.out and result.out.count("HANGING") == 1
    assert result.out == text_snapshot


def test_the_jsonl_is_pinned(kbatch, jsonl_snapshot):
    assert kbatch("txn", "--format", "jsonl", _rel(TXN)).out == jsonl_snapshot


def test_damage_is_reported_and_sets_the_exit_status(kbatch):
    result = kbatch("txn", "--format", "jsonl", "fixtures/damaged-truncated-tail.log")
    assert result.code == 1 and "Traceback" not in result.out + result.err
    assert any(line["type"] == "finding" and line["code"] == "truncated" for line in _lines(result))


def test_a_transactional_offset_commit_is_a_transaction_of_the_offsets_topic(kbatch):
    path = FIXTURES / "internal" / "__consumer_offsets-12" / "00000000000000000000.log"
    (txn,) = [line for line in _lines(kbatch("txn", "--format", "jsonl", _rel(path))) if line["type"] == "transaction"]
    assert (txn["producer_id"], txn["outcome"], txn["first_offset"], txn["marker_offset"]) == (7001, "COMMIT", 8, 9)

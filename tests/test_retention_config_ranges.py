"""kbatch retention: a topic config LogConfig's ConfigDef refuses as out of range (its Range and ValidList
validators, Kafka's storage/.../log/LogConfig.java) is read as one it cannot parse: a bad-topic-config finding
in a ConfigRecord, its topic's verdicts unknown; a usage error on the command line."""

from __future__ import annotations

import os

import pytest

from .test_retention import DAY, NOW, _checkpoint, _metadata_log, _partition, _verdicts

OLD = [(0, [(0, NOW - 30 * DAY)]), (1, [(1, NOW - 20 * DAY)])]

AT_LEAST = "(LogConfig: ConfigDef.Range.atLeast)"
BETWEEN = "between 0 and 1, inclusive (LogConfig: ConfigDef.Range.between)"
POLICY = "compact or delete (LogConfig: ValidList.in)"

# (config, a value just past its range, what Kafka expects, the value at its bound, which the broker runs with)
REFUSED = [
    ("retention.ms", "-2", f"at least -1 {AT_LEAST}", "-1"),
    ("min.compaction.lag.ms", "-1", f"at least 0 {AT_LEAST}", "0"),
    ("max.compaction.lag.ms", "0", f"at least 1 {AT_LEAST}", "1"),
    ("local.retention.ms", "-3", f"at least -2 {AT_LEAST}", "-2"),
    ("local.retention.bytes", "-3", f"at least -2 {AT_LEAST}", "-2"),
    ("min.cleanable.dirty.ratio", "1.0000001", BETWEEN, "1"),
    ("min.cleanable.dirty.ratio", "-1e-9", BETWEEN, "-0.0"),
    ("min.cleanable.dirty.ratio", "Infinity", BETWEEN, "0"),
    # ValidList refuses an empty part ("values must not be empty"); the empty list, and a duplicate, it takes
    ("cleanup.policy", "compact,", POLICY, ""),
    ("cleanup.policy", "delete, ,compact", POLICY, "delete , delete"),
]


def _findings(lines) -> list[tuple]:
    return [(line["code"], line["field"], line["expected"], line["actual"]) for line in lines
            if line["type"] == "finding"]


def _segments(lines) -> list[tuple[str, str]]:
    return [(os.path.basename(os.path.dirname(line["path"])), line["verdict"]) for line in lines
            if line["type"] == "segment"]


@pytest.mark.parametrize("name, value, expected, bound", REFUSED)
def test_a_config_record_out_of_range_is_a_finding_and_its_topic_unknown(tmp_path, kbatch, name, value, expected,
                                                                           bound):
    _metadata_log(tmp_path, [("orders", name, value), ("payments", name, bound)])
    _partition(tmp_path, "orders-0", OLD)
    _partition(tmp_path, "payments-0", OLD)
    _checkpoint(tmp_path, "replication-offset-checkpoint", {"orders-0": 2, "payments-0": 2})
    lines = _verdicts(kbatch, str(tmp_path), expect=1)
    assert _findings(lines) == [("bad-topic-config", f"ConfigRecord at offset 0: topic 'orders', {name}", expected,
                                 repr(value))]
    segments = _segments(lines)
    assert segments[:2] == [("orders-0", "unknown")] * 2
    # the value at the bound is the broker's: that topic is judged
    assert [topic for topic, verdict in segments[2:] if verdict != "unknown"] == ["payments-0"] * 2
    assert [line["reasons"] for line in lines if line["type"] == "segment"][0] == [
        f"its topic's config cannot be read: ConfigRecord at offset 0: topic 'orders', {name} (a bad-topic-config "
        "finding)"]


@pytest.mark.parametrize("name, value, expected, bound", REFUSED)
def test_a_config_out_of_range_on_the_command_line_is_a_usage_error(tmp_path, kbatch, name, value, expected, bound):
    directory = _partition(tmp_path, "orders-0", OLD, high_watermark=2)
    result = kbatch("retention", "--now", str(NOW), "--config", f"{name}={value}", str(directory), expect=2)
    assert f"{name} holds {value!r}: expected {expected}" in result.err
    assert result.out == ""
    assert kbatch("retention", "--now", str(NOW), "--config", f"{name}={bound}", str(directory), expect=0).out


def test_retention_ms_below_minus_one_is_never_kept_for_ever(tmp_path, kbatch):
    """retention.ms -2 was taken as "kept for ever" (any negative value), a config the broker refuses to run
    with; and one --config in range over the record's value makes the topic judged."""
    _metadata_log(tmp_path, [("orders", "retention.ms", "-2")])
    _partition(tmp_path, "orders-0", OLD, high_watermark=2)
    lines = _verdicts(kbatch, str(tmp_path), expect=1)
    assert {verdict for _, verdict in _segments(lines)} == {"unknown"}
    assert not any("kept for ever" in reason for line in lines if line["type"] == "segment"
                   for reason in line["reasons"])
    lines = _verdicts(kbatch, "--config", "retention.ms=-1", str(tmp_path))
    assert _findings(lines) == []
    assert [line["reasons"] for line in lines if line["type"] == "segment"][0] == ["retention.ms is -1: kept for ever"]


def test_a_negative_min_compaction_lag_is_not_read_as_none(tmp_path, kbatch):
    """min.compaction.lag.ms -1 was read as 0 and the cleaner judged; Kafka refuses it (atLeast(0)), and the
    other topics of the log directory are still judged."""
    _metadata_log(tmp_path, [("orders", "cleanup.policy", "compact"), ("orders", "min.compaction.lag.ms", "-1"),
                             ("payments", "cleanup.policy", "compact"), ("payments", "retention.bytes", "-100")])
    _partition(tmp_path, "orders-0", OLD)
    _partition(tmp_path, "payments-0", OLD)
    _checkpoint(tmp_path, "replication-offset-checkpoint", {"orders-0": 2, "payments-0": 2})
    lines = _verdicts(kbatch, str(tmp_path), expect=1)
    assert _findings(lines) == [("bad-topic-config", "ConfigRecord at offset 1: topic 'orders', min.compaction.lag.ms",
                                 f"at least 0 {AT_LEAST}", "'-1'")]
    assert _segments(lines) == [("orders-0", "unknown")] * 2 + [("payments-0", "kept")] * 2
    # retention.bytes has no validator ("can be negative"): payments is judged, and cleaned
    (cleaning,) = [line for line in lines if line["type"] == "cleaning"]
    assert cleaning["partition"].endswith("payments-0")

"""Copies of one partition that disagree, made by a real three-broker cluster (tests/real_kafka.Cluster):
the scenario of an unclean leader election, run step by step, and what the brokers and clients did.

1. Topic ``diverged``, one partition on brokers 1, 2, 3 (1 the leader), min.insync.replicas 1. A producer
   with acks=all writes records 0-9: every copy holds them.
2. Brokers 2 and 3 stop. Broker 1, alone in the ISR, takes records 10-19 (acks=1, and acknowledged).
3. Broker 1 stops.
4. Broker 2 starts; an unclean election (kafka-leader-election.sh --election-type unclean) makes it the
   leader of a new epoch, and it takes records 10-14 of its own (values "after ..."), acknowledged. It stops,
   and every broker's log directory is copied now (``copies``): what an operator finds before the old leader
   comes back. Broker 2 starts again and leads.
5. Brokers 1 and 3 start and follow broker 2: broker 1 truncates its records 10-19 away (its server.log
   says to which offset) and copies broker 2's. The log directories are copied again (``after``).
6. A consumer reads the partition from the start.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

from .helpers import copy_unless_gone

TOPIC = "diverged"
TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"
LEADER_ELECTION = "org.apache.kafka.tools.LeaderElectionCommand"


def _leader(cluster) -> tuple[int, list[int]]:
    """The partition's leader and ISR (-1: none), from a broker's metadata as kafka-topics.sh --describe has
    them (Admin.describeTopics: a Metadata request), asked by a Python client: a JVM a poll cost seconds."""
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError

    try:
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=10000)
        try:
            [topic] = admin.describe_topics([TOPIC])
        finally:
            admin.close()
    except KafkaError:   # no broker serves yet (a restarted one's server.log says "started" from before)
        return -1, []
    for partition in topic["partitions"]:   # none while the brokers do not know the new topic yet
        if partition["partition_index"] == 0:
            return partition["leader_id"], list(partition["isr_nodes"])
    return -1, []


def _wait_for(condition, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.3)


def _produce(bootstrap: str, values: list[str], acks) -> list[int]:
    """The offsets the broker acknowledged, in order."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=acks, retries=0, linger_ms=0,
                             max_in_flight_requests_per_connection=1)
    try:
        return [producer.send(TOPIC, value.encode(), partition=0).get(timeout=30).offset for value in values]
    finally:
        producer.close()


def _consume(bootstrap: str) -> list[tuple[int, str]]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        partition = TopicPartition(TOPIC, 0)
        consumer.assign([partition])
        consumer.seek_to_beginning(partition)
        end = consumer.end_offsets([partition])[partition]   # (read up to it: an idle wait would cost seconds)
        consumed: list[tuple[int, str]] = []
        deadline = time.monotonic() + 30
        while consumer.position(partition) < end and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                consumed += [(record.offset, record.value.decode()) for record in records]
        return consumed
    finally:
        consumer.close()


def _copy(cluster, into: Path) -> list[Path]:
    copies = []
    for node_id, broker in cluster.brokers.items():
        target = into / f"broker-{node_id}"
        shutil.copytree(broker.log_dir, target, copy_function=copy_unless_gone)   # (brokers running)
        copies.append(target)
    return copies


def _truncations(broker) -> list[int]:
    """The offsets a broker's log says it truncated the partition to."""
    text = broker.server_log.read_text(errors="replace") if broker.server_log.exists() else ""
    return [int(offset) for offset in re.findall(
        rf"\[UnifiedLog partition={TOPIC}-0, dir=[^\]]*\] Truncating to offset (\d+)", text)]


def run(cluster, home: Path) -> dict:
    """The scenario above; the facts, also written to ``home / "facts.json"``."""
    cluster.start(1, 2, 3)
    cluster.tool(TOPIC_COMMAND, "--bootstrap-server", cluster.bootstrap, "--create", "--topic", TOPIC,
                 "--replica-assignment", "1:2:3", "--config", "min.insync.replicas=1")
    _wait_for(lambda: _leader(cluster) == (1, [1, 2, 3]), "broker 1 to lead with every replica in sync")
    acked_all = _produce(cluster.bootstrap, [f"before {i}" for i in range(10)], "all")
    _wait_for(lambda: _leader(cluster)[1] == [1, 2, 3], "the ISR to hold all three")
    cluster.stop(2, 3)
    _wait_for(lambda: _leader(cluster) == (1, [1]), "broker 1 alone in the ISR")
    acked_lone = _produce(cluster.brokers[1].bootstrap, [f"lone {i}" for i in range(10)], 1)
    cluster.stop(1)
    cluster.start(2)
    cluster.tool(LEADER_ELECTION, "--bootstrap-server", cluster.brokers[2].bootstrap, "--election-type", "unclean",
                 "--topic", TOPIC, "--partition", "0", check=False)
    _wait_for(lambda: _leader(cluster)[0] == 2, "broker 2 to lead after the unclean election")
    acked_after = _produce(cluster.brokers[2].bootstrap, [f"after {i}" for i in range(5)], 1)
    cluster.stop(2)
    copies = _copy(cluster, home / "copies")
    cluster.start(2)
    _wait_for(lambda: _leader(cluster)[0] == 2, "broker 2 to lead again")
    cluster.start(1, 3)
    _wait_for(lambda: len(_leader(cluster)[1]) == 3, "all three back in the ISR", timeout=90)
    consumed = _consume(cluster.bootstrap)
    cluster.stop_all()
    after = _copy(cluster, home / "after")
    facts = {
        "topic": TOPIC, "partition": 0, "leader_before": 1, "leader_after": 2,
        "acked_by_all": acked_all, "acked_by_lone_leader": acked_lone, "acked_after_election": acked_after,
        "truncated_to": {str(node_id): _truncations(broker) for node_id, broker in cluster.brokers.items()},
        "consumed_after": consumed,
    }
    (home / "facts.json").write_text(json.dumps(facts, indent=1))
    return {"copies": copies, "after": after, "facts": facts}

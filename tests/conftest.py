"""pytest set-up: text snapshots (one readable file per snapshot)."""

from __future__ import annotations

import io
import os
import sys

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode


from kbatch.kernels._load import pure_python_wanted

# What the tests pin is written to a pipe, at a pipe's width: a COLUMNS or LINES from the shell that runs
# them (or the 80x24 that pytest-xdist's workers are given) would wrap it, and so would the terminal a pipe
# takes its width from (kbatch.render.plain.pipe_width: pytest's capture stands in for stderr and stdin).
# Tests of a width set their own.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)

if pure_python_wanted():
    # KBATCH_PURE_PYTHON=1 pytest ...: every kernel loads as plain Python, and on kbatch's own stand-in for
    # Cython's names, as where Cython is not installed.
    sys.modules["cython"] = None


class TextSnapshot(SingleFileSnapshotExtension):
    """One readable text file per snapshot."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"


@pytest.fixture
def text_snapshot(snapshot):
    return snapshot.use_extension(TextSnapshot)


class JsonSnapshot(TextSnapshot):
    file_extension = "json"


class JsonlSnapshot(TextSnapshot):
    file_extension = "jsonl"


@pytest.fixture
def json_snapshot(snapshot):
    return snapshot.use_extension(JsonSnapshot)


@pytest.fixture
def jsonl_snapshot(snapshot):
    return snapshot.use_extension(JsonlSnapshot)


@pytest.fixture
def kbatch(capsys, monkeypatch):
    """Run the kbatch command line in-process, as a user would from the repository root."""
    from .helpers import ROOT, run_kbatch

    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("COLUMNS", raising=False)
    if sys.stdin is not None and sys.stdin.isatty():   # pytest -s: a pipe would take the terminal's width
        monkeypatch.setattr(sys, "stdin", io.StringIO())
    monkeypatch.delenv("KBATCH_DEBUG", raising=False)

    def run(*args: str, stdin: bytes | None = None, expect: int | None = None):
        """kbatch on ``args``; with ``expect``, its exit status is asserted to be that one."""
        return run_kbatch(list(args), capsys, monkeypatch, stdin, expect)

    return run


# -- a real Kafka broker (tests/real_kafka.py), for the tests marked real_kafka ----------------------------

@pytest.fixture(scope="session")
def real_kafka(request, tmp_path_factory):
    """A KRaft broker of tests/kafka/pom.xml's Kafka, after tests/kafka/Workload.java has run against it.

    Its log directory is copied while it runs (``live``), then it is stopped cleanly and its log directory
    is ``stopped``; the broker object stays usable for Kafka's tools and to be started again; ``workload`` is
    what the workload printed (the proxy's cuts, a consumer's reading, DescribeProducers). Without Java
    or Maven the tests are skipped, except in CI (CI=true), where that is a failure.
    """
    import shutil
    import time
    from types import SimpleNamespace

    from .helpers import copy_unless_gone

    from .helpers import say
    from .real_kafka import POM, Broker, LoopbackCapture, kafka_version

    say(request, f"starting a Kafka {kafka_version(POM)} broker and its workload (the first run fetches its jars "
                 "with Maven, about a minute more)...")
    jars = _kafka_jars_or_skip(POM)
    home = tmp_path_factory.mktemp("kafka")
    broker = Broker(jars, home / "broker")
    # the clients' traffic with the broker, captured while they run (kbatch pcap: tests/test_real_kafka_pcap.py)
    no_capture = LoopbackCapture.unavailable()
    capture = None if no_capture else LoopbackCapture(home / "traffic.pcap", broker.port)
    if capture is not None:
        capture.start()
    broker.start()
    try:
        workload = broker.run_workload()
        _produce_with_kafka_python(broker.bootstrap)
        if capture is not None:
            capture.stop()
        # The cleaner compacts the compacted topic's rolled segments and records it in its checkpoint.
        deadline = time.monotonic() + 60
        checkpoint = broker.log_dir / "cleaner-offset-checkpoint"
        while "compacted 0" not in (checkpoint.read_text() if checkpoint.exists() else ""):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the log cleaner did not run:\n{broker.log_tail()}")
            time.sleep(0.2)
        # ... and the compacted transactions up to the last one, past the aborted eleventh (offsets 210-230).
        while _checkpointed(checkpoint, "compacted-txn") < 231:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the log cleaner did not clean compacted-txn:\n{broker.log_tail()}")
            time.sleep(0.2)
        # ... and pinned, as far as its open transaction lets it.
        while _checkpointed(checkpoint, "pinned") < 0:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the log cleaner did not clean pinned:\n{broker.log_tail()}")
            time.sleep(0.2)
        # DeleteRecords moved trimmed's log start offset to 25, and the deleted topic's directory is renamed.
        while _checkpointed(broker.log_dir / "log-start-offset-checkpoint", "trimmed") != 25 \
                or not list(broker.log_dir.glob("doomed-0.*-delete")):
            if time.monotonic() > deadline:
                raise RuntimeError(f"no log start offset for trimmed, or no doomed-0 -delete directory:\n"
                                   f"{broker.log_tail()}")
            time.sleep(0.2)
        # Tiered storage copies the tiered topic's rolled segments out and records it.
        remote_log = broker.log_dir / "__remote_log_metadata-0" / f"{0:020d}.log"
        while not remote_log.exists() or remote_log.stat().st_size == 0:
            if time.monotonic() > deadline:
                raise RuntimeError(f"tiered storage copied no segment:\n{broker.log_tail()}")
            time.sleep(0.2)
        # kafka-consumer-groups.sh rewinds the classic group, stopped by now, on one partition: what kbatch offsets
        # calls a rewind; what the tool then describes is where the group stands.
        reset_at = int(time.time() * 1000)
        broker.java(CONSUMER_GROUPS, "--bootstrap-server", broker.bootstrap, "--group", "classic-group",
                    "--topic", "codec-gzip:0", "--reset-offsets", "--to-offset", "3", "--execute")
        group_described = broker.java(CONSUMER_GROUPS, "--bootstrap-server", broker.bootstrap, "--describe",
                                      "--group", "classic-group", "--offsets").stdout
        live = home / "live"
        shutil.copytree(broker.log_dir, live, copy_function=copy_unless_gone)
        transactions = broker.java("org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server",
                                   broker.bootstrap, "describe", "--transactional-id", "txn-b").stdout
        hanging = broker.java("org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server",
                              broker.bootstrap, "find-hanging", "--broker-id", "1").stdout
    except BaseException:
        broker.stop()
        if capture is not None:
            capture.stop()
        print(broker.log_tail())
        raise
    broker.stop()
    say(request, f"the Kafka {kafka_version(POM)} broker's log directory is ready")
    yield SimpleNamespace(broker=broker, live=live, stopped=broker.log_dir, transactions=transactions,
                          hanging=hanging, workload=workload, reset_at=reset_at, group_described=group_described,
                          capture=None if capture is None else capture.path, no_capture=no_capture)
    broker.stop()


CONSUMER_GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"   # kafka-consumer-groups.sh


def _checkpointed(path, topic: str) -> int:
    """The offset an offset checkpoint file of the broker's holds for partition 0 of ``topic`` (-1: none yet)."""
    import re

    text = path.read_text() if path.exists() else ""
    found = re.search(rf"^{re.escape(topic)} 0 (\d+)$", text, re.M)
    return int(found[1]) if found else -1


@pytest.fixture(scope="session")
def real_kafka_40(tmp_path_factory):
    """A Kafka 4.0 broker (tests/kafka40/pom.xml), stopped cleanly after tests/kafka40/ShareWorkload.java ran
    against it: its ``log_dir`` holds the share-group records 4.0 writes, and it runs its own release's tools."""
    from .real_kafka import KAFKA_40_POM, Kafka40Broker

    broker = Kafka40Broker(_kafka_jars_or_skip(KAFKA_40_POM), tmp_path_factory.mktemp("kafka40") / "broker")
    broker.start()
    try:
        broker.run_workload()
    except BaseException:
        print(broker.log_tail())
        raise
    finally:
        broker.stop()
    return broker


@pytest.fixture(scope="session")
def three_brokers_diverged(request, tmp_path_factory):
    """Copies of one partition on three brokers after an unclean leader election (tests/divergence.py):
    ``copies`` (the log directories as the brokers left them before the election), ``after`` (once the
    brokers followed the new leader), ``topic``, ``partition`` and ``facts`` (what the clients and the
    brokers did)."""
    from types import SimpleNamespace

    from . import divergence
    from .helpers import say
    from .real_kafka import POM, Cluster

    say(request, "starting a Kafka controller and three brokers, and an unclean leader election (about two "
                 "minutes)...")
    home = tmp_path_factory.mktemp("cluster")
    cluster = Cluster(_kafka_jars_or_skip(POM), home / "nodes")
    try:
        made = divergence.run(cluster, home)
    except BaseException:
        for node in (cluster.controller, *cluster.brokers.values()):
            print(node.home.name, node.log_tail(30))
        raise
    finally:
        cluster.stop_all()
    return SimpleNamespace(topic=divergence.TOPIC, partition=0, **made)


def _kafka_jars_or_skip(pom):
    """The pom's jars; without Java or Maven a skip, except in CI (CI=true), where that is a failure."""
    import os

    from .real_kafka import Unavailable, kafka_jars

    try:
        return kafka_jars(pom)
    except Unavailable as reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the real_kafka tests: {reason}")
        pytest.skip(str(reason))


def _produce_with_kafka_python(bootstrap: str) -> None:
    """A Python producer's batches as the broker stores them (topic "python", created on first use), then read
    back by a Python consumer without a group.  Both speak the versions of Kafka 2.5 (Produce v8, Fetch v11):
    older versions on the wire, and ones Wireshark's dissector knows (tests/test_real_kafka_pcap.py)."""
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    producer = KafkaProducer(bootstrap_servers=bootstrap, compression_type="lz4", enable_idempotence=True,
                             linger_ms=5, api_version=(2, 5))
    for i in range(100):
        producer.send("python", key=None if i % 5 == 0 else f"key-{i}".encode(), value=f"value {i}".encode(),
                      headers=[("h", b"x")] if i % 2 else [])
        if i % 25 == 24:
            producer.flush()
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, api_version=(2, 5), enable_auto_commit=False,
                             consumer_timeout_ms=10000)
    consumer.assign([TopicPartition("python", 0)])
    consumer.seek_to_beginning()
    for read, _ in enumerate(consumer, 1):
        if read == 100:
            break
    consumer.close()


# -- a real headless browser (tests/browser.py), for the pages kbatch map writes ----------------------------

@pytest.fixture(scope="session")
def headless_browser():
    """Debian's chromium, installed by apt-get when it is missing and we are root (README's test command sets
    nothing else up). Without it the tests are skipped, except in CI (CI=true), where that is a failure."""
    import os

    from .browser import Browser, Unavailable, find_or_install

    try:
        return Browser(find_or_install())
    except Unavailable as reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser tests: {reason}")
        pytest.skip(str(reason))


@pytest.fixture(scope="session")
def spark(request, tmp_path_factory):
    """One local Spark session for every test that reads through the kbatch data source."""
    from kbatch.spark.session import spark_session

    from .helpers import say

    say(request, "starting a local Spark session (its JVM takes 10-30 s)...")
    log = tmp_path_factory.mktemp("spark") / "spark.log"
    session = spark_session("local[2]", log_path=str(log))
    yield session
    session.stop()


# -- two workers (pytest-xdist, --dist loadgroup in pyproject.toml) ----------------------------------------
# A test that starts a service of its own shares the worker of every other test of that service: one broker,
# one Spark session, one browser install a run, as without workers.  The rest is spread by load.
_SERVICE_GROUPS = {"real_kafka": "kafka", "real_kafka_40": "kafka", "spark": "spark", "remote": "spark",
                   "cluster": "spark-cluster", "headless_browser": "browser", "three_brokers_diverged": "kafka-cluster"}


def pytest_itemcollected(item):
    # (as each test is collected: pytest-xdist reads the group in its own pytest_collection_modifyitems)
    groups = {_SERVICE_GROUPS[name] for name in item.fixturenames if name in _SERVICE_GROUPS}
    if groups:
        item.add_marker(pytest.mark.xdist_group(min(groups)))


def pytest_collection_modifyitems(items):
    # The tools' tests (mypy, a C compiler: 5-15 s each) first: workers take tests in this order, and one of those
    # last kept a worker busy for seconds after the other had nothing left.
    items.sort(key=lambda item: item.path.name != "test_tools.py")


# -- every capture a test reads, read both ways --------------------------------------------------------------

@pytest.fixture(autouse=True)
def _plain_capture_agrees(monkeypatch):
    """Each capture a test reads (kbatch.capture.batches.CaptureReader.read) is first read to its requests,
    responses and problems twice -- with the compiled loop over its common case (kbatch.kernels.plaincapture,
    compiled or, with KBATCH_PURE_PYTHON=1, as plain Python) and with the generators it stands for alone -- and
    the two must agree, to the last packet count."""
    batches = sys.modules.get("kbatch.capture.batches")
    if batches is None:
        try:
            from kbatch.capture import batches
        except ImportError:   # (no dpkt)
            return
    from tests.plain_capture import read_both_ways

    original = batches.CaptureReader.read

    def read(self, stream):
        start = stream.tell()
        data = stream.read()
        stream.seek(start)
        plain, generators = read_both_ways(data, self.ports)
        assert plain == generators
        return original(self, stream)

    monkeypatch.setattr(batches.CaptureReader, "read", read)


@pytest.fixture(autouse=True)
def _partitions_agree(monkeypatch):
    """Each Produce request and response and each (Share)Fetch response a test reads
    (kbatch.capture.batches._partitions) is read by the compiled reader of its partitions
    (kbatch.kernels.partitions, compiled or, with KBATCH_PURE_PYTHON=1, as plain Python) and its rows held to the
    ones the readers' (or the generic decoder's) fields give, wherever the reader reads it."""
    batches = sys.modules.get("kbatch.capture.batches")
    if batches is None:
        try:
            from kbatch.capture import batches
        except ImportError:   # (no dpkt)
            return
    from kbatch.messages import programs

    original = batches._partitions

    def partitions(name, data, version, start):
        written = programs.program(name, version)
        read = None if written is None else programs.reader(written).rows(data, start)
        if read is not None and read[0] == len(data):
            assert (read[1], read[2]) == programs.rows_of(name, *batches._body(name, data, version, start))
        return original(name, data, version, start)

    monkeypatch.setattr(batches, "_partitions", partitions)

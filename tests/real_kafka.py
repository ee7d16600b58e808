"""A real Kafka for the tests: the jars of tests/kafka/pom.xml, a KRaft broker started on them, Kafka's tools
(and a Kafka 4.0 broker of tests/kafka40/pom.xml, for the share-group records 4.1 changed in place).

Everything kbatch is otherwise tested on was written by a client library's builder or by code of ours that
imitates the broker, which agrees with our reading of Kafka by construction. Here Apache Kafka itself, from
Maven Central, writes the log directories and its own DumpLogSegments reads them.

The jars are copied once into a cache (KBATCH_KAFKA_CACHE, else ~/.cache/kbatch) by
`mvn dependency:copy-dependencies`, in a folder named after the pom's hash, and run with plain `java -cp`.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

KAFKA_DIR = Path(__file__).resolve().parent / "kafka"
POM = KAFKA_DIR / "pom.xml"
KAFKA_40_DIR = KAFKA_DIR.with_name("kafka40")
KAFKA_40_POM = KAFKA_40_DIR / "pom.xml"


def kafka_version(pom: Path) -> str:
    return re.search(r"<kafka.version>([^<]+)</kafka.version>", pom.read_text()).group(1)


class Unavailable(Exception):
    """Java or Maven is missing, or the jars could not be had: the reason, for a skip (or CI's failure)."""


def missing_tools() -> str | None:
    for tool in ("java", "javac", "mvn"):
        if shutil.which(tool) is None:
            return f"{tool} is not on PATH (the real_kafka tests need Java 17 and Maven)"
    return None


def kafka_jars(pom: Path = POM) -> Path:
    """The folder of the jars of the pom's Kafka, copied from Maven Central the first time."""
    reason = missing_tools()
    if reason:
        raise Unavailable(reason)
    version = kafka_version(pom)
    cache = Path(os.environ.get("KBATCH_KAFKA_CACHE") or Path.home() / ".cache" / "kbatch")
    folder = cache / f"kafka-{version}-{hashlib.sha256(pom.read_bytes()).hexdigest()[:12]}"
    if (folder / ".complete").exists():
        return folder
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    result = subprocess.run(["mvn", "-q", "-B", "-f", str(pom), "dependency:copy-dependencies",
                             f"-DoutputDirectory={partial}", "-DincludeScope=runtime"],
                            capture_output=True, text=True, timeout=900)
    if result.returncode != 0:
        raise Unavailable(f"mvn could not copy Kafka {version}'s jars: {result.stdout[-2000:]}{result.stderr[-2000:]}")
    (partial / ".complete").touch()
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    return folder


def classpath(jars: Path) -> str:
    return str(jars / "*")


# Every JVM here lives for one short test run: compiled by C1 alone and collected by the serial collector, it
# spends a fraction of the CPU C2's compiler threads and G1 take on two cores (JIT options: what Kafka writes and
# reads does not change).
SHORT_LIVED_JVM = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# A single KRaft node, broker and controller at once, on loopback. Internal topics get one replica and few
# partitions (the tests read every file of the log directory), and the cleaner and the log roll run often
# enough to act within a test session; log-start-offset-checkpoint is written every half second (not every
# minute), and a deleted topic's -delete directory (and each segment file the cleaner or retention replaced,
# renamed *.deleted) stays an hour, past the session. A second listener, PROXIED, advertises the port of a
# proxy the workload runs in front of it (tests/kafka/Workload.java's CuttingProxy): a client that bootstraps
# through the proxy is told to connect to it again, so every request it makes passes the proxy. Share and
# streams group members heartbeat every half second (5 s by default: a member waits a heartbeat for its
# assignment), as Kafka's own tests of them set it.
KRAFT_NODE = """\
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:{controller_port}
listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port},PROXIED://127.0.0.1:{proxied_port}
advertised.listeners=PLAINTEXT://127.0.0.1:{port},PROXIED://127.0.0.1:{proxy_port}
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,PROXIED:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs={log_dir}
num.partitions=1
offsets.topic.num.partitions=3
offsets.topic.replication.factor=1
transaction.state.log.num.partitions=2
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.num.partitions=2
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
log.cleaner.backoff.ms=200
log.retention.check.interval.ms=500
log.initial.task.delay.ms=100
metadata.log.max.record.bytes.between.snapshots=2000
metadata.log.max.snapshot.interval.ms=1000
log.flush.start.offset.checkpoint.interval.ms=500
log.segment.delete.delay.ms=3600000
group.share.heartbeat.interval.ms=500
group.share.min.heartbeat.interval.ms=500
group.streams.heartbeat.interval.ms=500
group.streams.min.heartbeat.interval.ms=500
group.streams.initial.rebalance.delay.ms=0
"""

# Tiered storage, its remote store a folder (tests/kafka/FolderRemoteStorage.java).
TIERED_STORAGE = """\
remote.log.storage.system.enable=true
remote.log.storage.manager.class.name=FolderRemoteStorage
rsm.config.folder={remote_dir}
remote.log.metadata.manager.listener.name=PLAINTEXT
rlmm.config.remote.log.metadata.topic.replication.factor=1
rlmm.config.remote.log.metadata.topic.num.partitions=1
remote.log.manager.task.interval.ms=300
"""

# Share groups in Kafka 4.0: early access, off unless the share protocol is listed (ShareGroupConfig), and
# their requests are "latestVersionUnstable" (ShareGroupHeartbeatRequest.json, ...), so served only with
# unstable API versions on. As the 4.0 branch's ShareConsumerTest sets them.
SHARE_GROUPS_40 = """\
group.coordinator.rebalance.protocols=classic,consumer,share
group.share.enable=true
unstable.api.versions.enable=true
"""

LOG4J2 = """\
Configuration:
  Appenders:
    File:
      name: file
      fileName: "{log_file}"
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: INFO
      AppenderRef:
        ref: file
"""


class Broker:
    """A Kafka broker in a folder of its own: format, start, wait until it serves, stop cleanly."""

    PROPERTIES = KRAFT_NODE + TIERED_STORAGE
    PLUGINS = (KAFKA_DIR / "FolderRemoteStorage.java",)   # compiled against the broker's jars, on its class path
    WORKLOAD = KAFKA_DIR / "Workload.java"
    DUMP_LOG_SEGMENTS = "org.apache.kafka.tools.DumpLogSegments"

    def __init__(self, jars: Path, home: Path, classes: Path | None = None):
        """``classes``: the plugins as another broker on the same jars compiled them (javac takes seconds)."""
        self.jars = jars
        self.home = home
        self.log_dir = home / "logs"
        self.port = free_port()
        self.controller_port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.proxied_port, self.proxy_port = free_port(), free_port()   # the PROXIED listener, and its proxy's
        self.server_log = home / "server.log"
        self.process: subprocess.Popen | None = None
        home.mkdir(parents=True, exist_ok=True)
        self.config = home / "server.properties"
        self.config.write_text(self.PROPERTIES.format(port=self.port, controller_port=self.controller_port,
                                                      proxied_port=self.proxied_port, proxy_port=self.proxy_port,
                                                      log_dir=self.log_dir, remote_dir=home / "remote"))
        self.classes = classes or home / "classes"
        if self.PLUGINS and not self.classes.exists():
            subprocess.run(["javac", *(f"-J{option}" for option in SHORT_LIVED_JVM), "-nowarn", "-cp", classpath(jars),
                            "-d", str(self.classes),
                            *map(str, self.PLUGINS)], check=True, capture_output=True, timeout=120)
        (home / "log4j2.yaml").write_text(LOG4J2.format(log_file=self.server_log))

    def java(self, main: str, *args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess:
        """Run one of Kafka's Java programs on the broker's jars."""
        result = subprocess.run(["java", "-Xmx512m", *SHORT_LIVED_JVM, "-cp", classpath(self.jars), main, *args],
                                capture_output=True, text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise RuntimeError(f"{main} {' '.join(args)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
        return result

    def start(self) -> None:
        if not (self.log_dir / "meta.properties").exists():
            self.java("kafka.tools.StorageTool", "format", "-t", str(uuid.uuid4()).replace("-", "")[:22],
                      "-c", str(self.config))
        out = open(self.home / "stdout.log", "ab")
        self.process = subprocess.Popen(
            ["java", "-Xmx768m", *SHORT_LIVED_JVM, f"-Dlog4j2.configurationFile={self.home / 'log4j2.yaml'}",
             "-cp", f"{classpath(self.jars)}{os.pathsep}{self.classes}", "kafka.Kafka", str(self.config)],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self._wait_until_serving()

    def _wait_until_serving(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the broker exited with {self.process.returncode}:\n{self.log_tail()}")
            if self.server_log.exists() and "Kafka Server started" in self.server_log.read_text(errors="replace"):
                return
            time.sleep(0.2)
        raise RuntimeError(f"the broker did not start in {timeout} s:\n{self.log_tail()}")

    def stop(self) -> None:
        """A clean shutdown (SIGTERM): the broker trims the active segment's indexes and writes its checkpoints."""
        if self.process is None or self.process.poll() is not None:
            return
        self._wait_for_tiered_storage()
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def _wait_for_tiered_storage(self, timeout: float = 90) -> None:
        """Until tiered storage's metadata manager has its topic.  Stopped before, the broker hangs after its
        logs are closed: TopicBasedRemoteLogMetadataManager.close joins the thread that initializes it, which
        cannot reach the closed listeners and retries for two minutes (initializationRetryMaxTimeoutMs)."""
        if "remote.log.storage.system.enable=true" not in self.config.read_text():
            return
        deadline = time.monotonic() + timeout
        while "Initialized topic-based RLMM resources successfully" not in (
                self.server_log.read_text(errors="replace") if self.server_log.exists() else ""):
            if self.process.poll() is not None or time.monotonic() > deadline:
                return   # stopped as it is: stop() kills it if it hangs
            time.sleep(0.2)

    def log_tail(self, lines: int = 60) -> str:
        text = self.server_log.read_text(errors="replace") if self.server_log.exists() else ""
        stdout = self.home / "stdout.log"
        text += stdout.read_text(errors="replace") if stdout.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def run_workload(self) -> str:
        """The broker's workload (tests/kafka/Workload.java) against it, with the Java clients of its release; what
        it printed. It is given the bootstrap address, the PROXIED listener's and the port to run its proxy on."""
        result = subprocess.run(["java", "-Xmx512m", *SHORT_LIVED_JVM, "-cp", classpath(self.jars), str(self.WORKLOAD),
                                 self.bootstrap, f"127.0.0.1:{self.proxied_port}", str(self.proxy_port)],
                                capture_output=True, text=True, timeout=300)
        if result.returncode != 0 or "workload done" not in result.stdout:
            raise RuntimeError(f"the workload failed ({result.returncode}):\n{result.stdout[-3000:]}\n"
                               f"{result.stderr[-5000:]}\n{self.log_tail()}")
        return result.stdout

    def dump_log_segments(self, *args: str) -> str:
        """Kafka's own kafka-dump-log.sh (DumpLogSegments) on files of this broker's log directory."""
        return self.java(self.DUMP_LOG_SEGMENTS, *args, timeout=300).stdout


class Kafka40Broker(Broker):
    """A Kafka 4.0 broker (tests/kafka40/pom.xml's jars) with share groups on, and no tiered storage: its
    workload, tests/kafka40/ShareWorkload.java, has a share group consume and acknowledge a topic."""

    PROPERTIES = KRAFT_NODE + SHARE_GROUPS_40
    PLUGINS = ()
    WORKLOAD = KAFKA_40_DIR / "ShareWorkload.java"
    DUMP_LOG_SEGMENTS = "kafka.tools.DumpLogSegments"   # in Scala, in core, until 4.3 moved it to tools


# -- three brokers and a controller, for copies of a partition that disagree (kbatch replicas) ---------------

# A KRaft controller alone: the brokers can then stop and start while the quorum stays. A stopped broker's
# session ends 1.5 s after its last heartbeat (9 s by default): until then the controller refuses the
# same node's registration when it starts again (ClusterControlManager.registerBroker).
CLUSTER_CONTROLLER = """\
process.roles=controller
node.id=0
controller.quorum.voters=0@127.0.0.1:{controller_port}
listeners=CONTROLLER://127.0.0.1:{controller_port}
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT
log.dirs={log_dir}
broker.session.timeout.ms=1500
"""

# A broker of the cluster. The internal topics have one replica (no test reads them here); a follower drops
# out of the ISR quickly when it falls behind.
CLUSTER_BROKER = """\
process.roles=broker
node.id={node_id}
controller.quorum.voters=0@127.0.0.1:{controller_port}
listeners=PLAINTEXT://127.0.0.1:{port}
advertised.listeners=PLAINTEXT://127.0.0.1:{port}
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs={log_dir}
num.partitions=1
offsets.topic.num.partitions=1
offsets.topic.replication.factor=1
transaction.state.log.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
replica.lag.time.max.ms=2000
broker.heartbeat.interval.ms=300
"""


class ClusterNode(Broker):
    """One node of :class:`Cluster`: formatted with the cluster's id, its config made by the cluster."""

    PLUGINS = ()

    def __init__(self, jars: Path, home: Path, properties: str, cluster_id: str):
        self.PROPERTIES = properties
        self.cluster_id = cluster_id
        super().__init__(jars, home)

    def start(self) -> None:
        if not (self.log_dir / "meta.properties").exists():
            self.java("kafka.tools.StorageTool", "format", "-t", self.cluster_id, "-c", str(self.config))
        out = open(self.home / "stdout.log", "ab")
        self.process = subprocess.Popen(
            ["java", "-Xmx384m", *SHORT_LIVED_JVM, f"-Dlog4j2.configurationFile={self.home / 'log4j2.yaml'}",
             "-cp", classpath(self.jars), "kafka.Kafka", str(self.config)],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_until_serving(self) -> None:
        self._wait_until_serving()


class Cluster:
    """A controller (node 0) and three brokers (nodes 1, 2, 3) on loopback, each in a folder of its own."""

    BROKERS = (1, 2, 3)

    def __init__(self, jars: Path, home: Path):
        self.jars = jars
        cluster_id = str(uuid.uuid4()).replace("-", "")[:22]
        controller_port = free_port()
        self.controller = ClusterNode(jars, home / "controller", CLUSTER_CONTROLLER.replace(
            "{controller_port}", str(controller_port)), cluster_id)
        self.brokers = {}
        for node_id in self.BROKERS:
            properties = CLUSTER_BROKER.replace("{controller_port}", str(controller_port)).replace(
                "{node_id}", str(node_id))
            self.brokers[node_id] = ClusterNode(jars, home / f"broker-{node_id}", properties, cluster_id)
        self.bootstrap = ",".join(broker.bootstrap for broker in self.brokers.values())

    def start(self, *node_ids: int) -> None:
        """Start the brokers named (the controller first, when it is not running), and wait until they serve."""
        nodes = [self.brokers[node_id] for node_id in node_ids]
        if self.controller.process is None:
            self.controller.start()
            deadline = time.monotonic() + 90
            while "Kafka Server started" not in (self.controller.server_log.read_text(errors="replace")
                                                 if self.controller.server_log.exists() else ""):
                if time.monotonic() > deadline or self.controller.process.poll() is not None:
                    raise RuntimeError(f"the controller did not start:\n{self.controller.log_tail()}")
                time.sleep(0.2)
        for node in nodes:
            node.start()
        for node in nodes:
            node.wait_until_serving()

    def stop(self, *node_ids: int) -> None:
        for node_id in node_ids:
            self.brokers[node_id].stop()

    def stop_all(self) -> None:
        for broker in self.brokers.values():
            broker.stop()
        self.controller.stop()

    def tool(self, main: str, *args: str, check: bool = True) -> str:
        return self.controller.java(main, *args, check=check).stdout


# -- what the workload printed ---------------------------------------------------------------------------------

def producer_states(workload_output: str) -> dict[str, list[tuple[int, int, int, int]]]:
    """The partition leader's DescribeProducers, as tests/kafka/Workload.java printed it at its end: for each
    partition ("restarted-0", ...), each active producer's (producer id, epoch, last sequence, first offset of
    its open transaction or -1)."""
    states: dict[str, list[tuple[int, int, int, int]]] = {}
    for line in workload_output.splitlines():
        if line.startswith("producer-state "):
            _, partition, *numbers = line.split()
            states.setdefault(partition, []).append(tuple(int(number) for number in numbers))
    return states


class LoopbackCapture:
    """``tcpdump -i lo -w FILE port P``: the broker's loopback traffic while its clients run (kbatch pcap's
    real traffic).  tcpdump (and tshark, to read the capture too) installed with apt-get when missing."""

    def __init__(self, path: Path, port: int):
        self.path, self.port = path, port
        self.process: subprocess.Popen | None = None
        self.said = path.with_suffix(".tcpdump.log")

    @staticmethod
    def unavailable() -> str | None:
        """Why no capture can be made or read here, or None."""
        if shutil.which("tcpdump") is None or shutil.which("tshark") is None:
            from .debian import apt_install

            failed = apt_install("tcpdump", "tshark")
            if shutil.which("tcpdump") is None or shutil.which("tshark") is None:
                return failed or "apt-get installed tcpdump and tshark, and they are not on PATH"
        return None

    def start(self, timeout: float = 30) -> None:
        # -U: each packet written as it comes, so the file is whole once tcpdump ends; -B: a 64 MiB kernel
        # buffer (2 MiB by default), so that a loaded machine's tcpdump drops no packet of the clients' bursts
        # (a gap in a stream, which Kafka's own parsers then read across: seen with three test workers)
        self.process = subprocess.Popen(["tcpdump", "-i", "lo", "-U", "-B", "65536", "-w", str(self.path),
                                         "port", str(self.port)],
                                        stdout=subprocess.DEVNULL, stderr=open(self.said, "wb"),
                                        start_new_session=True)
        deadline = time.monotonic() + timeout
        while "listening on" not in self.said.read_text(errors="replace"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"tcpdump did not start: {self.said.read_text(errors='replace')}")
            time.sleep(0.1)
        time.sleep(1)   # "listening" is said before the filter is attached

    def stop(self) -> str:
        """End the capture (SIGINT: tcpdump writes what it has and says how many packets); what it said.

        tcpdump reads the kernel's buffer behind the traffic, and what it has not read when it is stopped is
        lost without a count: it is stopped once its file has not grown for a second."""
        if self.process is not None and self.process.poll() is None:
            deadline, size, still_since = time.monotonic() + 30, -1, time.monotonic()
            while time.monotonic() < deadline and time.monotonic() - still_since < 1:
                now = self.path.stat().st_size if self.path.exists() else 0
                if now != size:
                    size, still_since = now, time.monotonic()
                time.sleep(0.1)
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        return self.said.read_text(errors="replace")

"""kbatch scan on a real Spark standalone cluster (a master and a worker of two cores on 127.0.0.1), not only local mode.

The cluster comes from the installed PySpark (bin/spark-class), runs for this module and is stopped after.
The scan is given a relative path, as a user types it: executors work in directories of their own, so the
driver must hand them absolute ones.  Its tables must equal local mode's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from .helpers import ROOT, free_port, say

pyspark = pytest.importorskip("pyspark")
pq = pytest.importorskip("pyarrow.parquet")

SPARK_HOME = Path(pyspark.__file__).parent
KBATCH = Path(sys.executable).parent / "kbatch"
# The cluster's JVMs (master, workers, and the executors through the scan's spark-defaults.conf) compile with
# C1 alone and collect with the serial collector: each lives for one short test, which C2 only slows (the
# cluster's scan of fixtures/logdir 35 -> 25 s).  A JIT option: the tables cannot differ.
SHORT_LIVED_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as answer:
            return json.load(answer).get("aliveworkers", 0)
    except OSError:
        return 0


@pytest.fixture(scope="module")
def cluster(request, tmp_path_factory):
    say(request, "starting a Spark standalone cluster (a master and a worker, up to a minute)...")
    work = tmp_path_factory.mktemp("cluster")
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": sys.executable, "SPARK_NO_DAEMONIZE": "1", "SPARK_DAEMON_JAVA_OPTS": SHORT_LIVED_JVM}
    conf = work / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text(f"spark.executor.extraJavaOptions {SHORT_LIVED_JVM}\n")
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    port, ui_port = free_port(), free_port()
    url = f"spark://127.0.0.1:{port}"
    log = open(work / "cluster.log", "wb")
    processes = [subprocess.Popen([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                   "--port", str(port), "--webui-port", str(ui_port)],
                                  env=env, stdout=log, stderr=subprocess.STDOUT, cwd=work)]
    try:
        # One worker of two cores: its executor runs the tasks two at a time, in a working directory of its own (a
        # second worker would add two JVMs, ~10 CPU-s of the suite, and show nothing more of kbatch's).
        worker_dir = work / "worker"
        worker_dir.mkdir()
        processes.append(subprocess.Popen(
            [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--cores", "2",
             "--memory", "1g", "--webui-port", str(free_port()), "--work-dir", str(worker_dir)],
            env=env, stdout=log, stderr=subprocess.STDOUT, cwd=worker_dir))
        deadline = time.monotonic() + 180
        while _alive_workers(ui_port) < 1:
            assert time.monotonic() < deadline, (work / "cluster.log").read_text()[-3000:]
            assert all(process.poll() is None for process in processes), (work / "cluster.log").read_text()[-3000:]
            time.sleep(1)
        yield url, conf
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        log.close()


def _scan(out: Path, *extra: str, conf: Path) -> subprocess.CompletedProcess:
    # Run from the repository with a relative path, the way the relative-path bug showed.
    env = {**os.environ, "SPARK_CONF_DIR": str(conf)}
    return subprocess.run([str(KBATCH), "scan", "fixtures/logdir", "--out", str(out), "--records",
                           "--format", "json", *extra], cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)


def _rows(out: Path, level: str) -> list:
    table = pq.read_table(out / level).to_pylist()
    return sorted((json.dumps(row, sort_keys=True, default=repr) for row in table))


@pytest.mark.cluster
def test_scan_on_a_standalone_cluster_gives_local_modes_tables(cluster, tmp_path, kbatch, spark):
    url, conf = cluster
    on_cluster = _scan(tmp_path / "cluster", "--master", url, conf=conf)
    assert on_cluster.returncode == 1, on_cluster.stderr[-3000:]   # fixtures/logdir holds a damaged segment
    local = kbatch("scan", "fixtures/logdir", "--out", str(tmp_path / "local"), "--records", "--format", "json")
    assert local.code == 1, local.err   # (in this process, on the local session the scan tests share)
    assert json.loads(on_cluster.stdout)["partitions"] == json.loads(local.out)["partitions"]
    for level in ("batches", "records", "findings"):
        rows = _rows(tmp_path / "cluster", level)
        assert rows == _rows(tmp_path / "local", level)
        assert rows or level == "findings"
    assert str(ROOT / "fixtures" / "logdir") in _rows(tmp_path / "cluster", "batches")[0]


def test_an_executor_side_error_reads_as_its_last_line():
    """What Spark raises carries the Python worker's traceback; the user gets its last error line."""
    from kbatch.spark.scan import spark_error_line

    captured = type("PythonException", (Exception,), {"__module__": "pyspark.errors.exceptions.captured"})
    error = captured("\n  An exception was thrown from the Python worker. Please see the stack trace below.\n"
                     "Traceback (most recent call last):\n"
                     '  File "/x/kbatch/spark/source.py", line 138, in read\n'
                     "    yield from rows(file_range, self)\n"
                     "FileNotFoundError: [Errno 2] No such file or directory: 'fixtures/logdir/a-0/0.log'\n")
    assert spark_error_line(error) == ("FileNotFoundError: [Errno 2] No such file or directory: "
                                       "'fixtures/logdir/a-0/0.log'")
    assert spark_error_line(ValueError("ours")) is None

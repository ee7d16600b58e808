"""kbatch through Spark Connect: the data source and ``kbatch scan`` with ``SPARK_REMOTE``.

A Spark Connect server is started from the installed PySpark (sbin/start-connect-server.sh) on
127.0.0.1 for this module and stopped after; its Python workers run this interpreter, which has
kbatch installed (the client sends the data source class by name: the server must import it).  The
client needs PySpark's ``connect`` extras (grpcio, protobuf, ...); without them, or without a server
that starts, the test is skipped.  The scan through Connect runs as a subprocess, as a user runs it: a
Spark Connect session switches the whole Python process to Connect mode (pyspark sets
SPARK_CONNECT_MODE_ENABLED in os.environ), which the local session of the other tests must not inherit.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .helpers import ROOT, free_port

pyspark = pytest.importorskip("pyspark")
pytest.importorskip("grpc", reason="Spark Connect's client needs pyspark[connect]")
pq = pytest.importorskip("pyarrow.parquet")

from kbatch.spark.session import _LOCAL_JVM, _worker_python  # noqa: E402  (PySpark present: checked above)

SPARK_HOME = Path(pyspark.__file__).parent
KBATCH = Path(sys.executable).parent / "kbatch"


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    work = tmp_path_factory.mktemp("connect")
    port = free_port()
    # The server runs as kbatch's own local sessions do: C1 and the serial collector in its JVM, its Python
    # workers importing the installed PySpark, not its zipped copy (kbatch/spark/session.py says why).
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": _worker_python(str(work)), "SPARK_NO_DAEMONIZE": "1", "SPARK_LOG_DIR": str(work),
           "SPARK_PID_DIR": str(work)}
    env.pop("SPARK_REMOTE", None)
    log = open(work / "server.log", "wb")
    # Its own process group: the script, spark-submit and the JVM are stopped together.
    server = subprocess.Popen(
        [str(SPARK_HOME / "sbin" / "start-connect-server.sh"), "--master", "local[2]",
         "--conf", "spark.connect.grpc.binding.address=127.0.0.1", "--conf", f"spark.connect.grpc.binding.port={port}",
         "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
         "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.session.timeZone=UTC",
         "--conf", f"spark.driver.extraJavaOptions={_LOCAL_JVM}"],
        env=env, stdout=log, stderr=subprocess.STDOUT, cwd=work, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while not _listening(port):
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.skip("the Spark Connect server did not start: "
                            + (work / "server.log").read_text(errors="replace")[-2000:])
            time.sleep(1)
        yield f"sc://127.0.0.1:{port}"
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
        log.close()


def _scan_through(remote: str, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(KBATCH), "scan", "fixtures/logdir", "--out", str(out), "--records", "--deep",
                           "--format", "json"], cwd=ROOT, env={**os.environ, "SPARK_REMOTE": remote},
                          capture_output=True, text=True, timeout=600)


def _rows(out: Path, level: str) -> list:
    return sorted(json.dumps(row, sort_keys=True, default=repr) for row in pq.read_table(out / level).to_pylist())


@pytest.mark.connect
def test_scan_through_spark_connect_gives_local_modes_tables(remote, tmp_path, kbatch, spark):
    through = _scan_through(remote, tmp_path / "connect")
    assert through.returncode == 1, through.stderr[-3000:]   # fixtures/logdir holds a damaged segment
    assert f"Spark Connect at {remote}" in through.stderr
    local = kbatch("scan", "fixtures/logdir", "--out", str(tmp_path / "local"), "--records", "--deep",
                   "--format", "json")   # in this process, on the local session the scan tests share
    assert local.code == 1, local.err
    assert json.loads(through.stdout)["partitions"] == json.loads(local.out)["partitions"]
    for level in ("batches", "records", "findings"):
        rows = _rows(tmp_path / "connect", level)
        assert rows == _rows(tmp_path / "local", level) and rows, level

"""``kbatch scan s3a://...``: a tree on an S3 endpoint read through Spark's own Hadoop S3A connector.

An S3 endpoint (moto's server mode) runs on 127.0.0.1 for this module, holding a copy of a tree of
fixtures.  The scan runs as a subprocess, as a user runs it, with the ``hadoop-aws`` jar of the Hadoop
release PySpark ships (Spark fetches it from Maven Central through ``--packages``, once) and its
``fs.s3a.*`` settings pointing at the endpoint: Spark lists the bucket and reads the bytes
(kbatch.spark.hadoop), nothing is copied to local disk first.  Its tables and report must be those of a
scan of the same tree on local disk, file for file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import FIXTURES, ROOT

pyspark = pytest.importorskip("pyspark")
pq = pytest.importorskip("pyarrow.parquet")
moto_server = pytest.importorskip("moto.server", reason="the S3 endpoint is moto's server (the dev extra)")
boto3 = pytest.importorskip("boto3")

KBATCH = Path(sys.executable).parent / "kbatch"
BUCKET = "kbatch"
# logdir holds a damaged segment; a directory whose name begins with "_" is one Spark's own listing passes over.
TREE = {"logdir": FIXTURES / "logdir",
        "internal/__transaction_state-0": FIXTURES / "internal" / "txn" / "__transaction_state-0"}


def hadoop_version() -> str:
    """The Hadoop release PySpark ships (its hadoop-client-api jar): hadoop-aws must be the same."""
    [jar] = (Path(pyspark.__file__).parent / "jars").glob("hadoop-client-api-*.jar")
    return jar.stem.removeprefix("hadoop-client-api-")


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """The tree on local disk, and the same on the S3 endpoint: (local root, s3a:// URI, the endpoint)."""
    root = tmp_path_factory.mktemp("s3") / "tree"
    for name, source in TREE.items():
        shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("README*"))
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
                          aws_secret_access_key="testing")
        s3.create_bucket(Bucket=BUCKET)
        for path in sorted(root.rglob("*")):
            if path.is_file():
                s3.upload_file(str(path), BUCKET, f"tree/{path.relative_to(root)}")
        yield root, f"s3a://{BUCKET}/tree", endpoint
    finally:
        server.stop()


def _scan(path: str, out: Path | str, submit_args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYSPARK_SUBMIT_ARGS": submit_args}
    env.pop("SPARK_REMOTE", None)
    return subprocess.run([str(KBATCH), "scan", path, "--out", str(out), "--records", "--format", "json"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)


def _s3_file_system(endpoint: str):
    from pyarrow import fs

    return fs.S3FileSystem(endpoint_override=endpoint, scheme="http", access_key="testing", secret_key="testing",
                           region="us-east-1")


def _s3a_settings(endpoint: str) -> str:
    """spark-submit's arguments for S3A on the endpoint (as a user passes them to spark-submit or pyspark)."""
    settings = {"endpoint": endpoint, "endpoint.region": "us-east-1", "path.style.access": "true",
                "connection.ssl.enabled": "false", "access.key": "testing", "secret.key": "testing"}
    return " ".join([f"--packages org.apache.hadoop:hadoop-aws:{hadoop_version()}",
                     *(f"--conf spark.hadoop.fs.s3a.{name}={value}" for name, value in settings.items()),
                     "pyspark-shell"])


def _rows(out: Path | str, level: str, files: dict[str, str], filesystem=None) -> list[str]:
    """A table's rows, each file named as on local disk (``files``: the S3 names to local ones)."""
    rows = pq.read_table(f"{out}/{level}", filesystem=filesystem).to_pylist()
    for row in rows:
        row["file"] = files.get(row["file"], row["file"])
    return sorted(json.dumps(row, sort_keys=True, default=repr) for row in rows)


@pytest.mark.s3
def test_a_tree_on_s3_scans_through_s3a_to_the_local_trees_tables(tree, tmp_path, kbatch, spark):
    root, uri, endpoint = tree
    # The tables go to the endpoint too, through S3A: pyarrow opens no s3a:// URI, so Spark's writer writes them.
    through = _scan(uri, f"s3a://{BUCKET}/out", _s3a_settings(endpoint))
    assert through.returncode == 1, through.stderr[-3000:]   # the damaged segment, found on S3 too
    assert "read through Spark's Hadoop file systems" in through.stderr
    assert not (ROOT / "s3a:").exists()   # (no local directory named after the URI)
    s3 = _s3_file_system(endpoint)
    # (the local tree in this process, on the local session the scan tests share)
    local = kbatch("scan", str(root), "--out", str(tmp_path / "local"), "--records", "--format", "json")
    assert local.code == 1, local.err
    report, local_report = json.loads(through.stdout), json.loads(local.out)
    segments = sorted(str(path) for path in root.rglob("*.log"))
    files = {f"{uri}/{Path(path).relative_to(root)}": path for path in segments}
    assert report["segments"] == local_report["segments"] == len(segments) > 5
    assert report["bytes"] == local_report["bytes"]
    assert [files[path] for path in report["damaged_segments"]] == local_report["damaged_segments"]
    as_local = json.loads(json.dumps(report["partitions"]).replace(uri, str(root)))
    assert as_local == local_report["partitions"]
    for level in ("batches", "findings"):
        rows = _rows(f"{BUCKET}/out", level, files, s3)
        assert rows == _rows(tmp_path / "local", level, files) and rows, level
    # A remote segment's partition directory is not listed: visible_to_read_committed is null (as for s3://).
    records = [json.loads(row) for row in _rows(f"{BUCKET}/out", "records", files, s3)]
    local_records = [json.loads(row) for row in _rows(tmp_path / "local", "records", files)]
    assert {row.pop("visible_to_read_committed") for row in records} == {None}
    assert {row.pop("visible_to_read_committed") for row in local_records} >= {True}
    assert records == local_records and len(records) > 50

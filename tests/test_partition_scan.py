"""``kbatch scan --deep``: each partition directory's cross-checks as rows of the findings table and in the report."""

from __future__ import annotations

import json
import shutil

from .test_output_schema import assert_a_document_of_the_schema
from .test_partition_crosscheck import BUILDER, CLEAN


def test_scan_deep_reports_cross_checks_per_partition(tmp_path, kbatch, spark):
    logs = tmp_path / "logs"
    shutil.copytree(CLEAN, logs / "orders-0")
    shutil.copytree(CLEAN, logs / "payments-0")
    BUILDER.INJECTIONS["txnindex-lost"][0](logs / "payments-0")
    out = tmp_path / "scan"
    result = kbatch("scan", "--deep", str(logs), "--out", str(out), "--format", "json")
    report = json.loads(result.out)
    assert_a_document_of_the_schema(report, "scan_document")
    assert result.code == 1 and report["damaged_segments"] == []   # the segments' bytes are intact
    assert report["failed_cross_checks"] == ["payments-0"]
    checks = {row["topic"]: row["cross_checks"] for row in report["partitions"]}
    assert checks["orders"] == {"errors": 0, "warnings": 0, "findings": {"zero-tail": 2}}
    assert checks["payments"]["errors"] == 1 and checks["payments"]["findings"]["txnindex-missing"] == 1

    rows = spark.read.parquet(str(out / "findings")).where("code = 'txnindex-missing'").collect()
    assert [(row.file.rsplit("/", 1)[-1], row.partition, row.pos) for row in rows] == [
        ("00000000000000000027.log", 0, 742)]

    table = kbatch("scan", "--deep", str(logs), "--out", str(tmp_path / "again"))
    assert "1 txnindex-missing" in table.out and "payments-0: its indexes" in table.out


def test_scan_without_deep_does_not_cross_check(tmp_path, kbatch, spark):
    result = kbatch("scan", str(CLEAN), "--out", str(tmp_path / "scan"), "--format", "json")
    report = json.loads(result.out)
    assert_a_document_of_the_schema(report, "scan_document")
    assert result.code == 0 and report["failed_cross_checks"] == []
    assert [row["cross_checks"] for row in report["partitions"]] == [None]

"""kbatch on Spark: the data source's tables agree row for row with dump and verify-crc; splits change nothing."""

from __future__ import annotations

import json
import os
import pkgutil
import shutil
import sys

import pytest

from kbatch.output.columns import BATCH, FINDING, FINDING_OFFSETS

from .helpers import FIXTURES, ROOT, expected_status, sidecar
from .test_output_schema import assert_a_document_of_the_schema

pytest.importorskip("pyspark")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("kbatch scan needs Java", allow_module_level=True)

INPUTS = sorted(FIXTURES.glob("*.log")) + sorted((FIXTURES / "vectors").glob("*.bin"))
# The keys dump and verify-crc write that the Spark tables do not hold (the declaration says which).
NOT_IN_SPARK = {column.name for column in BATCH + FINDING + FINDING_OFFSETS if not column.spark}




def _load(spark, level: str, paths, **options):
    reader = spark.read.format("kbatch").option("level", level).option("paths", json.dumps([str(p) for p in paths]))
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return [row.asDict(recursive=True) for row in reader.load().collect()]


def _by_file(rows: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for row in rows:
        out.setdefault(row["file"], []).append(row)
    for file_rows in out.values():
        file_rows.sort(key=lambda row: (row.get("pos"), row.get("entry_pos"), row.get("code")))
    return out


def test_batches_table_is_what_dump_says(spark, kbatch):
    rows = _by_file(_load(spark, "batches", INPUTS))
    for path in INPUTS:
        dumped = [json.loads(line) for line in kbatch("dump", "--format", "jsonl", str(path),
                                                      expect=expected_status(path, records=False)).out.splitlines()]
        expected = [{**{k: v for k, v in line.items() if k not in NOT_IN_SPARK and k != "findings"},
                     "finding_count": len(line["findings"])}
                    for line in dumped if line["type"] == "batch"]
        got = [{k: v for k, v in row.items() if k not in ("topic", "partition", "damaged")}
               for row in rows.get(str(path), [])]
        assert got == expected, path.name


@pytest.mark.parametrize("deep", [False, True], ids=["crc", "deep"])
def test_findings_table_is_what_verify_crc_says(spark, kbatch, deep):
    rows = _by_file(_load(spark, "findings", INPUTS, deep=str(deep).lower()))
    for path in INPUTS:
        out = kbatch("verify-crc", "--format", "jsonl", *(["--deep"] if deep else []), str(path),
                     expect=expected_status(path, records=deep, offsets=deep)).out
        expected = sorted(({k: v for k, v in line.items() if k not in NOT_IN_SPARK} for line in map(json.loads, out.splitlines())
                           if line["type"] == "finding"), key=lambda row: (row["pos"], row["entry_pos"], row["code"]))
        got = [{k: v for k, v in row.items() if k not in ("topic", "partition")} for row in rows.get(str(path), [])]
        assert got == expected, path.name


def test_records_table_holds_every_record(spark, kbatch):
    rows = _by_file(_load(spark, "records", [FIXTURES / "v2-headers.log", FIXTURES / "v2-txn-commit.log"]))
    headers = sorted(rows[str(FIXTURES / "v2-headers.log")], key=lambda row: row["offset"])
    expected = [record for entry in sidecar(FIXTURES / "v2-headers.log")["expected"]["entries"]
                for record in entry["records"]]

    def hex_or_none(data):
        return None if data is None else bytes(data).hex()

    assert [(row["offset"], row["timestamp"], hex_or_none(row["key"]), hex_or_none(row["value"]),
             [[bytes(header["key"]).decode(), hex_or_none(header["value"])] for header in row["headers"]])
            for row in headers] == \
        [(record["offset"], record["timestamp"], record["key"] and record["key"]["hex"],
          record["value"] and record["value"]["hex"],
          [[key, value and value["hex"]] for key, value in record["headers"]]) for record in expected]
    control = [row for row in rows[str(FIXTURES / "v2-txn-commit.log")] if row["is_control"]]
    assert [(row["control_type"], row["coordinator_epoch"]) for row in control] == [("COMMIT", 7)]


def test_records_table_carries_what_dump_decodes(spark, kbatch):
    internal = FIXTURES / "internal"
    paths = [internal / "__consumer_offsets-12" / "00000000000000000000.log",
             internal / "__cluster_metadata-0" / "00000000000000000000.log",
             internal / "registry" / "payments-1" / "00000000000000000000.log"]
    rows = _by_file(_load(spark, "records", paths))
    decoded = registry = control = 0
    for path in paths:
        lines = kbatch("dump", "-r", "--format", "jsonl", str(path), expect=0).out.splitlines()
        dumped = {record["offset"]: record for line in lines for record in json.loads(line).get("records", [])}
        for row in rows[str(path)]:
            want = dumped[row["offset"]]
            got_key, got_value = (None if row[name] is None else json.loads(row[name])
                                  for name in ("decoded_key", "decoded_value"))
            if "decoded" in want:
                decoded += 1
                assert (row["decoder"], got_key, got_value) == (want["decoded"]["decoder"], want["decoded"]["key"],
                                                                want["decoded"]["value"])
            else:
                assert (row["decoder"], got_key, got_value) == (None, None, None)
            ids = want.get("schema_registry") or {"key": None, "value": None}
            registry += ids["value"] is not None
            assert (row["key_schema_id"], row["value_schema_id"]) == (ids["key"], ids["value"])
            data = want["control"]["data"] if want["control"] else None
            control += data is not None
            assert (None if row["control_data"] is None else json.loads(row["control_data"])) == data
    assert (decoded, registry, control) == (22, 3, 3)


def test_records_from_the_decoders_columns_are_the_rows_of_record_objects(spark, monkeypatch):
    """The records level builds Arrow arrays from the decoder's columns; the rows must be those of Record
    objects, on every input, with batches cut into many small chunks and Arrow batches of a few rows."""
    import kbatch.reading.records
    from kbatch.reading.model import Batch
    from kbatch.reading.reader import ReadOptions, SegmentReader
    from kbatch.messages import decoder_for_path
    from kbatch.files.inputs import topic_partition
    from kbatch.spark import source
    from kbatch.spark.source import FileRange, KbatchReader, SegmentPartition, record_rows

    chunks = kbatch.reading.records.record_chunks
    monkeypatch.setattr(kbatch.reading.records, "record_chunks", lambda batch, chunk: chunks(batch, chunk=3))
    monkeypatch.setattr(source, "ARROW_ROWS", 5)
    columnar = []
    monkeypatch.setattr(source.ColumnarRecords, "flush", lambda self, flush=source.ColumnarRecords.flush:
                        columnar.append(self.rows) or flush(self))
    reader = KbatchReader({"level": "records"}, spark.createDataFrame([], source.RECORD_SCHEMA).schema)
    for path in INPUTS + sorted((FIXTURES / "internal").rglob("*.log")):
        size = path.stat().st_size
        got = [row for batch in reader.read(SegmentPartition([FileRange(str(path), 0, size, size)]))
               for row in batch.to_pylist()]
        assert all(batch_rows <= 5 for batch_rows in columnar)
        with open(path, "rb") as stream:
            batches = [item for item in SegmentReader(stream, ReadOptions(records=True)) if isinstance(item, Batch)]
        topic, partition = topic_partition(str(path))
        committed = source.committed_view_of(str(path), reader.decompressed_limit)
        expected = [row for batch in batches for row in record_rows(
            str(path), topic, partition, batch, batch.records or [], decoder_for_path(str(path)),
            source.visible_to_read_committed(committed, batch))]
        assert [tuple(row.values()) for row in got] == [
            row[:12] + ([{"key": key, "value": value} for key, value in row[12]],) + row[13:] for row in expected
        ], path.name
    assert sum(columnar) > 1000   # most records went by the columns


def test_the_records_table_holds_every_record_of_a_batch_past_what_objects_hold(spark, tmp_path):
    """Record objects stop at MAX_HELD a batch; the columns hold every record (and sequences wrap as Kafka's do)."""
    from kbatch.format.findings import MAX_HELD
    from kbatch.reading.model import increment_sequence
    from kbatch.spark import source
    from kbatch.spark.source import FileRange, KbatchReader, SegmentPartition

    from . import handmade

    count = MAX_HELD + 5
    path = tmp_path / "big-0" / "00000000000000000000.log"
    path.parent.mkdir()
    path.write_bytes(handmade.batch(0, [(None, b"v")] * count, producer_id=7, producer_epoch=0,
                                    base_sequence=2**31 - 3))
    reader = KbatchReader({"level": "records"}, spark.createDataFrame([], source.RECORD_SCHEMA).schema)
    size = path.stat().st_size
    batches = list(reader.read(SegmentPartition([FileRange(str(path), 0, size, size)])))
    assert all(batch.num_rows <= source.ARROW_ROWS for batch in batches)
    offsets = [offset for batch in batches for offset in batch.column("offset").to_pylist()]
    sequences = [sequence for batch in batches for sequence in batch.column("sequence").to_pylist()]
    assert offsets == list(range(count))
    assert sequences == [increment_sequence(2**31 - 3, delta) for delta in range(count)]
    assert sequences[:4] == [2**31 - 3, 2**31 - 2, 2**31 - 1, 0]
    assert batches[-1].column("value").to_pylist()[-1] == b"v" and batches[-1].column("key").null_count


SPLIT_INPUTS = [FIXTURES / "vectors" / "kafkajs_fetch_v4_mixed_magic1_magic2.bin",
                FIXTURES / "logdir" / "orders-0" / "00000000000000000000.log",   # splits at its .index positions
                FIXTURES / "damaged-garbage-between.log", FIXTURES / "damaged-bad-length.log"]


@pytest.fixture(scope="module")
def unsplit_rows(spark):
    """The rows of SPLIT_INPUTS read whole, by level: read once for every cut compared with them."""
    return {level: _load(spark, level, SPLIT_INPUTS) for level in ("batches", "findings", "records")}


# Cut every 300 bytes (a range for nearly every entry), the ranges go to a few tasks, packed as Spark packs
# files (a task reads its ranges one by one, each as it would alone: a task each, ~170 of them, cost most of
# the suite's time); cut every 4096 or 20000 bytes, each range is a task of its own.
@pytest.mark.parametrize("split_bytes, task_bytes", [(300, None), (4096, 4096), (20000, 20000)],
                         ids=["300-packed", "4096", "20000"])
def test_a_split_segment_gives_exactly_the_rows_of_an_unsplit_one(spark, unsplit_rows, split_bytes, task_bytes):
    from kbatch.spark.source import KbatchReader

    inputs = SPLIT_INPUTS
    cut = {"splitBytes": split_bytes, **({"maxPartitionBytes": task_bytes} if task_bytes else {})}
    tasks = KbatchReader({"level": "batches", "paths": json.dumps([str(p) for p in inputs]), **cut}, None).partitions()
    ranges = sum(len(task.ranges) for task in tasks)
    assert ranges > len(inputs) and (len(tasks) < ranges / 10 if task_bytes is None else len(tasks) == ranges)
    for level, whole in unsplit_rows.items():
        split = _load(spark, level, inputs, **cut)
        handovers = [row for row in split if row.get("code") == "split-handover"]
        def key(row):
            return json.dumps(row, sort_keys=True, default=str)
        assert sorted(map(key, [row for row in split if row.get("code") != "split-handover"])) == \
            sorted(map(key, whole)), (level, split_bytes, handovers)


def test_camel_case_options_take_effect_under_spark(spark):
    """Spark hands a data source its options lower-cased (splitbytes): each option named in the README
    must still cut, pack and limit as it does when the reader is called directly."""
    segment = FIXTURES / "logdir" / "orders-0" / "00000000000000000000.log"

    def frame(level, path, **options):
        reader = spark.read.format("kbatch").option("level", level).option("paths", json.dumps([str(path)]))
        for key, value in options.items():
            reader = reader.option(key, str(value))
        return reader.load()

    from kbatch.spark.source import KbatchReader

    cut = {"splitBytes": 300, "maxPartitionBytes": 300}
    direct = KbatchReader({"level": "batches", "paths": str(segment), **cut}, None).partitions()
    assert frame("batches", segment).rdd.getNumPartitions() == 1
    assert frame("batches", segment, **cut).rdd.getNumPartitions() == len(direct) > 1
    two_files = FIXTURES / "logdir" / "orders-0"
    assert frame("batches", two_files, minPartitions=1).rdd.getNumPartitions() == 1
    assert frame("batches", two_files, minPartitions=1, maxPartitionBytes=1).rdd.getNumPartitions() == 2
    assert frame("batches", two_files, minPartitions=1, openCostInBytes=2**30).rdd.getNumPartitions() == 2
    findings = frame("findings", FIXTURES / "v2-gzip.log", deep="true", maxDecompressedBytes=10).collect()
    assert {row.code for row in findings} == {"decompress-too-large"}


def test_split_ranges_start_where_entries_start():
    from kbatch.reading.reader import SegmentReader
    from kbatch.spark.source import split_segment

    path = FIXTURES / "vectors" / "kafkajs_fetch_v4_mixed_magic1_magic2.bin"
    ranges = split_segment(str(path), path.stat().st_size, 10_000)
    assert len(ranges) > 10 and ranges[0].start == 0 and ranges[-1].stop == path.stat().st_size
    with open(path, "rb") as stream:
        starts = {item.pos for item in SegmentReader(stream)}
    assert all(r.start in starts for r in ranges)
    assert all(a.stop == b.start for a, b in zip(ranges, ranges[1:]))


def test_a_range_starts_where_verify_crc_in_parts_starts_a_part(tmp_path):
    """The cut is walk/parts' own: a range begins where a part cut at the same place begins (part_start), not at
    an offset index's word, which may be damaged (here every entry of the .index beside the segment names a
    position inside a record, one of them negative as a signed int32 reads it)."""
    from kbatch.reading.reader import SegmentReader
    from kbatch.spark.source import split_segment
    from kbatch.walk.parts import part_start

    source = FIXTURES / "vectors" / "kafkajs_fetch_v4_mixed_magic1_magic2.bin"
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(source.read_bytes())
    size = path.stat().st_size
    (tmp_path / "00000000000000000000.index").write_bytes(
        b"".join(n.to_bytes(4, "big") + (p).to_bytes(4, "big", signed=True) for n, p in
                 enumerate([7, 10_001, 20_003, -5])))
    ranges = split_segment(str(path), size, 10_000)
    with open(path, "rb") as stream:
        reader = SegmentReader(stream)
        expected = [0] + [start for cut in range(10_000, size, 10_000)
                          if (start := part_start(reader, cut, min(cut + 10_000, size))) is not None]
    assert [r.start for r in ranges] == expected and len(expected) > 10


def test_many_small_files_are_packed_into_few_tasks():
    from kbatch.spark.source import FileRange, pack

    ranges = [FileRange(f"/x/{n}.log", 0, 1000, 1000) for n in range(2000)]
    partitions = pack(ranges, 128 * 2**20, 2**20, 2)
    assert len(partitions) <= 16 and sum(len(p.ranges) for p in partitions) == 2000
    assert len(pack(ranges[:4], 128 * 2**20, 2**20, 2)) == 2   # few files still spread over the cores


def test_local_tiny_segments_are_packed_into_fewer_tasks_than_remote_ones(tmp_path):
    from kbatch.spark.scan import LOCAL_OPEN_COST, _partitions

    files = []
    for n in range(600):   # (at 1 MiB a file, more than two tasks of 128 MiB)
        files.append(str(tmp_path / f"t-0/{n:020d}.log"))
        os.makedirs(os.path.dirname(files[-1]), exist_ok=True)
        with open(files[-1], "wb") as out:
            out.write(bytes(900))
    default = _partitions(files, 0, [], None)
    local = _partitions(files, 0, [], None, {"openCostInBytes": str(LOCAL_OPEN_COST), "deep": "false"})
    assert len(local) < len(default)
    assert sorted(r.path for p in local for r in p.ranges) == sorted(r.path for p in default for r in p.ranges)


def test_the_worker_launcher_takes_only_the_zipped_pyspark_off_the_path(tmp_path):
    import glob
    import subprocess
    import sys

    import pyspark

    from kbatch.spark.session import _worker_python

    zips = glob.glob(os.path.join(os.path.dirname(os.path.realpath(pyspark.__file__)), "python", "lib", "*.zip"))
    launcher = _worker_python(str(tmp_path))
    if not zips:
        assert launcher == sys.executable
        pytest.skip("this PySpark has no zipped copy of itself (not a pip install)")
    others = ["/a dir/with spaces", "/b*", "/c"]   # (kept as they are: no word splitting, no globbing)
    path = ":".join([zips[0], others[0], *zips[1:], *others[1:]])
    shown = subprocess.run([launcher, "-c", "import os, sys; print(os.environ['PYTHONPATH']); print(sys.executable)"],
                           env={**os.environ, "PYTHONPATH": path}, capture_output=True, text=True, check=True)
    assert shown.stdout.splitlines() == [":".join(others), sys.executable]


def test_a_local_sessions_python_workers_import_the_installed_pyspark(spark):
    import pyspark

    if not os.path.exists(os.path.join(os.path.dirname(pyspark.__file__), "python", "lib", "pyspark.zip")):
        pytest.skip("this PySpark has no zipped copy of itself (not a pip install)")

    def where(batches):
        import pyarrow as pa
        import pyspark

        for _ in batches:
            yield pa.RecordBatch.from_pydict({"file": [pyspark.__file__]})

    files = {row.file for row in spark.range(2).mapInArrow(where, "file string").collect()}
    assert files == {pyspark.__file__}


def test_a_local_sessions_workers_are_forked_by_a_daemon_that_imported_the_tables_writer(spark, tmp_path):
    import sys

    from kbatch.spark.session import _worker_python

    if _worker_python(str(tmp_path)) == sys.executable or not sys.platform.startswith("linux"):
        pytest.skip("no launcher here (PySpark without its zipped copy), or no /proc")

    def daemon(batches):
        import pyarrow as pa

        with open(f"/proc/{os.getppid()}/cmdline", "rb") as source:
            command = source.read().decode()
        with open(f"/proc/{os.getppid()}/maps") as source:   # a module imported is a library mapped
            libraries = {line.split()[-1] for line in source if ".so" in line}
        for _ in batches:
            yield pa.RecordBatch.from_pydict({
                "command": [command],
                "parquet": [any(os.path.basename(path).startswith("libparquet") for path in libraries)],
                # (pyarrow imports pandas at a task's first pa.array of a Python list)
                "pandas": [any(f"{os.sep}pandas{os.sep}_libs{os.sep}" in path for path in libraries)]})

    rows = spark.range(2).mapInArrow(daemon, "command string, parquet boolean, pandas boolean").collect()
    assert all("kbatch.spark.daemon" in row.command and row.parquet and row.pandas for row in rows)


def test_the_launcher_runs_pysparks_own_daemon_where_the_workers_path_has_no_kbatch(tmp_path):
    import struct
    import subprocess
    import sys

    from kbatch.spark.session import DAEMON_MODULE, _worker_python

    launcher = _worker_python(str(tmp_path))
    if launcher == sys.executable:
        pytest.skip("no launcher here (PySpark without its zipped copy)")
    shadow = tmp_path / "shadow" / "kbatch"   # a kbatch first on the path that does not import
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('not this kbatch')\n")
    env = {**os.environ, "PYTHONPATH": str(shadow.parent)}
    # PySpark's daemon writes the port it listens on, then stops when its input ends.
    started = subprocess.run([launcher, "-m", DAEMON_MODULE], env=env, cwd=tmp_path, stdin=subprocess.DEVNULL,
                             capture_output=True, timeout=60)
    assert len(started.stdout) == 4 and struct.unpack(">i", started.stdout)[0] > 0, started.stderr.decode()
    # (where kbatch does import, the same: kbatch's daemon is PySpark's, its modules imported first)
    started = subprocess.run([launcher, "-m", DAEMON_MODULE], cwd=os.getcwd(), stdin=subprocess.DEVNULL,
                             capture_output=True, timeout=60)
    assert len(started.stdout) == 4 and struct.unpack(">i", started.stdout)[0] > 0, started.stderr.decode()


def test_spark_finds_the_data_source_by_its_module_name():
    import pyspark_kbatch

    assert "pyspark_kbatch" in {module.name for module in pkgutil.iter_modules()}
    assert pyspark_kbatch.DefaultSource.name() == "kbatch"


def test_scan_writes_tables_and_flags_the_damage(tmp_path, kbatch, spark):
    out = tmp_path / "scan"
    result = kbatch("scan", "fixtures/logdir", "--out", str(out), "--records", "--format", "json")
    assert result.code == 1
    report = json.loads(result.out)
    assert_a_document_of_the_schema(report, "scan_document")
    assert {name for name in os.listdir(out) if not name.startswith(".")} >= {"batches", "findings", "records"}
    by_partition = {(row["topic"], row["partition"]): row for row in report["partitions"]}
    assert report["damaged_segments"] == ["fixtures/logdir/payments-0/00000000000000000000.log"]
    assert by_partition[("orders", 0)]["offset_gaps"][0]["from"] == 11
    assert by_partition[("orders", 0)]["offset_gaps"][0]["to"] == 99
    assert by_partition[("payments", 0)]["offset_overlaps"]
    assert by_partition[("orders", 2)]["open_transactions"] == [4009]
    assert by_partition[("orders", 1)]["open_transactions"] == []
    assert by_partition[("orders", 0)]["compression_ratio"] > 1
    # kbatch producers finds no rule broken there, and a damaged batch (payments-0's) breaks none either
    assert {row["producer_breaks"] == {} for row in report["partitions"]} == {True}
    assert sum(row["segments"] for row in report["partitions"]) == 10
    table = kbatch("scan", "fixtures/logdir", "--out", str(tmp_path / "again"))
    assert "damaged segment" in table.out and "payments-0/00000000000000000000.log" in table.out


def test_a_clean_sweep_reports_no_damage(tmp_path, kbatch, spark):
    result = kbatch("scan", "fixtures/logdir/orders-0", "fixtures/logdir/orders-1", "--out", str(tmp_path / "scan"),
                    "--format", "json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["damaged_segments"] == [] and {row["topic"] for row in report["partitions"]} == {"orders"}


def test_spark_writes_the_rows_the_executors_write_where_only_hadoop_reaches_the_tables(tmp_path, kbatch, spark):
    """With --out on a file system only Hadoop's clients open (s3a://: tests/test_scan_s3.py), Spark's writer
    writes the frames _read_locally reads: the rows the executors' own writer writes, level by level."""
    import glob

    from kbatch.spark.scan import _read_locally
    from kbatch.spark.source import SCHEMAS

    out = tmp_path / "scan"
    kbatch("scan", "fixtures/logdir", "--out", str(out), "--records", expect=1)
    paths = sorted(glob.glob(str(ROOT / "fixtures/logdir/*/*.log")))
    for level in ("batches", "records", "findings"):
        schema = spark.createDataFrame([], SCHEMAS[level]).schema
        frame = _read_locally(spark, paths, 4096, paths[:1], {"deep": "false", "decompress": "true"}, level, schema)
        rows = sorted(json.dumps(row.asDict(), sort_keys=True, default=repr) for row in frame.collect())
        written = sorted(json.dumps(row.asDict(), sort_keys=True, default=repr)
                         for row in spark.read.schema(schema).parquet(str(out / level)).collect())
        assert rows == written and (rows or level == "findings"), level


def test_what_a_scan_cannot_read_is_said_and_the_status_is_2(tmp_path, kbatch, spark):
    """A file that is not there, a FIFO, a pattern that matches nothing and a name that is no UTF-8 (the tables
    hold names as text) are each named on stderr; the rest is scanned, and the status says trouble."""
    tree = tmp_path / "tree"
    (tree / "orders-0").mkdir(parents=True)
    shutil.copy(ROOT / "fixtures/logdir/orders-0/00000000000000000000.log", tree / "orders-0")
    os.mkfifo(tree / "orders-0" / "fifo.log")
    odd = os.fsencode(tree / "orders-0") + b"/\xff.log"
    with open(odd, "wb") as out:
        out.write((ROOT / "fixtures/v2-none.log").read_bytes())
    # A partition directory renamed by hand: 84 ESC are a topic=%1B... directory of 258 bytes, which no file
    # system holds (Spark's writer failed the whole scan on it).
    (tree / ("\x1b" * 84 + "-0")).mkdir()
    shutil.copy(ROOT / "fixtures/v2-none.log", tree / ("\x1b" * 84 + "-0") / "00000000000000000000.log")
    result = kbatch("scan", str(tree / "gone.log"), str(tree), str(tree / "*.nothing"), "--out", str(tmp_path / "out"),
                    "--format", "json", expect=2)
    escapes = "\\x1b" * 84   # (the names as kbatch shows them)
    assert result.err.splitlines()[:5] == [
        f"kbatch: cannot read {tree / 'gone.log'}: No such file or directory",
        f"kbatch: cannot read {tree / 'orders-0' / 'fifo.log'}: a FIFO, not a regular file",
        f"kbatch: no file matches {tree / '*.nothing'}",
        f"kbatch: cannot read {tree}/{escapes}-0/00000000000000000000.log: its topic, as a table's partition "
        "directory (escaped as Spark escapes it), is a name of 258 bytes, past the 255 a file system allows",
        f"kbatch: cannot read {tree / 'orders-0'}/\\xff.log: its name is not UTF-8, and the tables hold file names "
        "as UTF-8 text"]
    assert json.loads(result.out)["segments"] == 1


def test_scanning_the_fixtures_flags_every_damaged_one(tmp_path, kbatch, spark):
    result = kbatch("scan", "fixtures/", "--out", str(tmp_path / "x"), "--format", "json")
    report = json.loads(result.out)
    assert_a_document_of_the_schema(report, "scan_document")
    damaged = {path for path in report["damaged_segments"]}
    expected = {f"fixtures/{path.name}" for path in FIXTURES.glob("damaged-*.log") if "zero-tail" not in path.name}
    assert result.code == 1 and expected <= damaged
    assert "fixtures/damaged-zero-tail.log" not in damaged   # a preallocated tail is not damage
    assert report["segments"] == len(list(FIXTURES.rglob("*.log")))


def test_a_last_marker_whose_crc_fails_leaves_its_transaction_of_unknown_outcome(tmp_path, kbatch, spark):
    """The rule txn and the cross-checks follow (kbatch.reading.markers): a marker whose CRC fails is not believed."""
    import struct

    from .handmade import batch, end_marker

    data = batch(0, [(b"k", b"v")] * 3, transactional=True, producer_id=9001, producer_epoch=0, base_sequence=0)
    marker = bytearray(batch(3, [end_marker("COMMIT", 5)], control=True, transactional=True, producer_id=9001,
                             producer_epoch=0))
    marker[17:21] = struct.pack(">I", 0)   # CRC 0, as a librdkafka mock broker writes its markers
    directory = tmp_path / "orders-0"
    directory.mkdir()
    (directory / "00000000000000000000.log").write_bytes(data + bytes(marker))
    result = kbatch("scan", str(directory), "--out", str(tmp_path / "scan"), "--format", "json", expect=1)
    (row,) = json.loads(result.out)["partitions"]
    assert row["open_transactions"] == [] and row["unknown_outcome_transactions"] == [9001]


def _data(offset, producer_id, sequence, count=1, *, epoch=0, transactional=False):
    from .handmade import batch

    return batch(offset, [(b"k", b"v%d" % (offset + i)) for i in range(count)], producer_id=producer_id,
                 producer_epoch=epoch, base_sequence=sequence, transactional=transactional)


def _broken_producers() -> dict[int, bytes]:
    """Two segments of a partition (by base offset) whose producers break two rules of kbatch producers'."""
    from .handmade import batch, end_marker

    return {0: (_data(0, 4001, 0, 2) + _data(2, 4001, 2) + _data(3, 4001, 5)   # sequences 3 and 4 never written
                + _data(4, 4002, 0, transactional=True)
                + batch(5, [end_marker("COMMIT", 1)], control=True, transactional=True, producer_id=4002,
                        producer_epoch=0)   # (at its producer's epoch: a marker's epoch below it goes back)
                + _data(6, 4002, 1)),
            10: (_data(10, 4001, 6) + _data(11, 4003, 0, epoch=2) + _data(12, 4003, 1, epoch=1)   # epoch going back
                 + _data(14, 4004, 0) + _data(17, 4004, 3))}            # its sequences 1-2 (15, 16) compacted away


_BROKEN_PRODUCERS = _broken_producers()


def test_a_worker_replays_each_partition_of_the_rows_it_is_given_apart():
    """What a Spark worker does with rows of the batches table (Arrow record batches, each partition's together
    and in log order): a PartitionProducers per partition, a damaged batch's header not believed."""
    import io

    import pyarrow as pa

    from kbatch.reading.reader import ReadOptions, SegmentReader
    from kbatch.spark.report import _header_columns, _replay_partitions

    header = _header_columns()
    rows = [{"topic": "orders", "partition": 0, "file": f"logs/orders-0/{base_offset:020d}.log",
             "damaged": item.is_damaged, **{column: getattr(item, name) for column, name in header.items()}}
            for base_offset, segment in _BROKEN_PRODUCERS.items()
            for item in SegmentReader(io.BytesIO(segment), ReadOptions())]
    # a damaged batch's header is not believed (its sequence here would be a gap of its producer's)
    rows.insert(3, {**rows[2], "pos": rows[2]["pos"] + 1, "base_offset": 7, "last_offset": 7, "base_sequence": 99,
                    "damaged": True})
    # the same producers' first batches again in orders-1: each partition's producers are its own
    again = [{**row, "partition": 1, "file": row["file"].replace("orders-0", "orders-1")} for row in rows[:4]]
    replayed = [row for batch in _replay_partitions(header, iter([pa.RecordBatch.from_pylist(rows[:5]),
                                                                  pa.RecordBatch.from_pylist(rows[5:] + again)]))
                for row in batch.to_pylist()]
    assert sorted((row["partition"], row["code"], row["breaks"]) for row in replayed) == [
        (0, "producer-epoch-backwards", 1), (0, "producer-sequence-gap", 1), (1, "producer-sequence-gap", 1)]
    assert {row["topic"] for row in replayed} == {"orders"}


def test_a_worker_takes_a_markers_epoch_from_its_header_alone():
    """The batches table holds no records: a marker's header alone makes its epoch the producer's (as
    kbatch producers does, ProducerAppendInfo.appendEndTxnMarker), so a batch at the old epoch after a
    transactions-version-2 marker goes back."""
    import io

    import pyarrow as pa

    from kbatch.reading.reader import ReadOptions, SegmentReader
    from kbatch.spark.report import _header_columns, _replay_partitions

    from .handmade import batch, end_marker

    segment = (_data(0, 4001, 0, 2, epoch=5, transactional=True)
               + batch(2, [end_marker("COMMIT", 3)], control=True, transactional=True, producer_id=4001,
                       producer_epoch=6)
               + _data(3, 4001, 2, epoch=5, transactional=True))
    header = _header_columns()
    rows = [{"topic": "orders", "partition": 0, "file": "logs/orders-0/00000000000000000000.log",
             "damaged": item.is_damaged, **{column: getattr(item, name) for column, name in header.items()}}
            for item in SegmentReader(io.BytesIO(segment), ReadOptions())]
    replayed = [row for arrow in _replay_partitions(header, iter([pa.RecordBatch.from_pylist(rows)]))
                for row in arrow.to_pylist()]
    assert [(row["partition"], row["code"], row["breaks"]) for row in replayed] == [
        (0, "producer-epoch-backwards", 1)]


def test_the_report_counts_each_partitions_producer_rule_breaks_as_kbatch_producers_does(tmp_path, kbatch, spark):
    """The batches table's header fields replayed per partition on Spark (kbatch.spark.report.producer_breaks)
    break the rules `kbatch producers` finds broken, as many times: a sequence gap and an epoch going back,
    across two segments; not a gap as wide as the offsets compaction removed, nor a plain batch after the
    producer's transaction ended at its marker (the marker's header alone ends it)."""
    directory = tmp_path / "orders-0"
    directory.mkdir()
    for base_offset, segment in _BROKEN_PRODUCERS.items():
        (directory / f"{base_offset:020d}.log").write_bytes(segment)

    result = kbatch("producers", "--format", "jsonl", str(directory), expect=1)   # (rules broken: warnings)
    codes = [line["code"] for line in map(json.loads, result.out.splitlines()) if line["type"] == "finding"]
    assert sorted(codes) == ["producer-epoch-backwards", "producer-sequence-gap"]
    # the later segment named first: the batches table's rows come in no set order
    segments = sorted(map(str, directory.glob("*.log")), reverse=True)
    result = kbatch("scan", *segments, "--out", str(tmp_path / "scan"), "--format", "json", expect=0)
    (row,) = json.loads(result.out)["partitions"]
    assert row["producer_breaks"] == {code: codes.count(code) for code in codes}
    assert row["producers"] == 4


def test_where_spark_does_not_start_kbatch_exits_without_waiting_for_the_read_committed_views(tmp_path):
    """--records makes the views on a thread while the JVM starts (kbatch.spark.scan._views_meanwhile): where it
    never starts, kbatch says so and exits, the views (here: never done) left behind."""
    import subprocess
    import sys

    never_done = ("import sys, threading\n"
                  "import kbatch.spark.source as source\n"
                  "source.committed_views = lambda paths, *rest: threading.Event().wait()\n"
                  "from kbatch.cli import main\n"
                  "main(sys.argv[1:])\n")
    segment = FIXTURES / "logdir" / "orders-0" / "00000000000000000000.log"
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java")}
    env.pop("SPARK_REMOTE", None)
    try:
        ran = subprocess.run([sys.executable, "-c", never_done, "scan", str(segment), "--records",
                              "--out", str(tmp_path / "out")], env=env, cwd=ROOT, stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("kbatch waited for the views of a scan Spark never started")
    assert ran.returncode == 2, ran.stderr
    assert "kbatch: scan failed on Spark: " in ran.stderr and "Traceback" not in ran.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own nice value is Linux's")
def test_the_read_committed_views_are_made_at_a_lower_priority_than_the_scan(monkeypatch):
    """The views take the CPU the JVM's start leaves idle (kbatch.spark.scan._views_meanwhile): their thread runs
    VIEWS_NICENESS nicer than the thread that starts Spark, which stays as it was."""
    import threading

    from kbatch.spark import scan, source

    def priority() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    before = priority()
    monkeypatch.setattr(source, "committed_views", lambda paths, *rest: (priority(), paths))
    assert scan._views_meanwhile(["a.log"]).result(timeout=30) == (min(before + scan.VIEWS_NICENESS, 19), ["a.log"])
    assert priority() == before

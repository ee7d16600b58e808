"""The output's columns come from one declaration (kbatch/output/columns.py): what is made from it is held to it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kbatch.output import columns, docs, jsonout
from tests.helpers import pure_recordwalk, read_all

ROOT = Path(__file__).resolve().parent.parent
_STALE = "stale: run python -m kbatch.output.docs"


def test_the_dict_functions_are_what_the_columns_give():
    """kbatch/output/_dicts.py (batch_dict, record_dict, finding_dict, ...) is written out from the declaration,
    not made from strings at import: it must be what the declaration gives now."""
    assert docs.DICTS_PATH.read_text() == docs.dicts_module_text(), f"kbatch/output/_dicts.py is {_STALE}"
    assert jsonout.batch_dict.__module__ == "kbatch.output._dicts"


def test_the_writer_of_the_dicts_runs_without_them():
    """python -m kbatch.output.docs imports the declaration only, so it mends an _dicts.py that no longer
    imports (a merge's conflict markers, say)."""
    run = subprocess.run([sys.executable, "-c", "import sys, kbatch.output.docs; print(sorted(name for name in "
                          "sys.modules if name.startswith('kbatch')))"], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout.replace("'", '"')) == ["kbatch", "kbatch.output", "kbatch.output.columns",
                                                         "kbatch.output.docs"]


def test_the_compiled_writers_keys_are_what_the_columns_give():
    """kbatch/kernels/_json_keys.py (the keys kbatch.kernels.jsonl writes) is written out from the declaration."""
    import kbatch.kernels.jsonl as writer

    assert docs.JSON_KEYS_PATH.read_text() == docs.json_keys_module_text(), f"kbatch/kernels/_json_keys.py is {_STALE}"
    assert writer.BATCH_JSON_KEYS is __import__("kbatch.kernels._json_keys", fromlist=["_"]).BATCH_JSON_KEYS


def test_the_json_schema_file_is_what_the_columns_give():
    assert docs.SCHEMA_PATH.read_text() == docs.json_schema_text(), f"{docs.SCHEMA_PATH.name} is {_STALE}"


def test_readmes_lists_of_keys_are_what_the_columns_give():
    text = docs.README_PATH.read_text()
    assert text == docs.readme_text(text), f"README.md's lists of keys are {_STALE}"


def test_readme_lists_every_key_once():
    text = docs.README_PATH.read_text()
    for name, table in docs.README_TABLES.items():
        block = text.split(docs._markers(name)[0])[1].split(docs._markers(name)[1])[0]
        assert re.findall(r"^\| `(\w+)` \|", block, re.M) == list(columns.names(table))


def test_the_dicts_have_the_declared_keys_in_order():
    batches, _ = read_all((ROOT / "fixtures" / "v2-none.log").read_bytes(), records=True)
    batch = batches[0]
    assert tuple(jsonout.batch_dict(batch)) == columns.always_written(columns.BATCH)
    assert tuple(jsonout.batch_dict(batch, with_records=True))[-1] == "records"
    assert tuple(jsonout.record_dict(batch.records[0], batch, "auto")) == columns.always_written(columns.RECORD)
    finding = jsonout.Finding("crc-mismatch", 0, 0, 1, "crc", "1", "2")
    assert tuple(jsonout.finding_dict(finding)) == columns.names(columns.FINDING)
    assert tuple(jsonout.finding_offsets(finding, batch)) == columns.always_written(columns.FINDING_OFFSETS)


@pytest.mark.parametrize("module", ["compiled", "pure"])
def test_the_compiled_writer_writes_the_declared_keys(module):
    """The JSON Lines writer of kbatch.kernels writes keys it lists itself: they must be the declaration's
    (jsonout checks them too when it makes a sink, and writes with json.dumps where they differ)."""
    import kbatch.kernels.jsonl as compiled

    writer = compiled if module == "compiled" else pure_recordwalk()
    stale = "the JSON Lines writer (kbatch/kernels/jsonl.py) differs from kbatch/output/columns.py: teach it the column"
    assert writer.BATCH_JSON_KEYS == columns.always_written(columns.BATCH), stale
    assert writer.RECORD_JSON_KEYS == columns.always_written(columns.RECORD), stale
    # Its pieces of JSON spell the record's keys (in the order records_json writes them: tests/test_recordwalk.py)
    record_parts = b"".join(writer._JSON_FIELDS[:-len(writer.BATCH_JSON_KEYS)])
    keys = {key.decode() for key in re.findall(rb'"(\w+)": ', record_parts)} - {"hex", "utf8"}   # (bytes' own)
    assert keys == set(writer.RECORD_JSON_KEYS)
    assert writer._JSON_FIELDS[-len(writer.BATCH_JSON_KEYS)] == b'"type": '


def test_the_spark_schemas_are_the_declared_columns():
    from kbatch.spark import source

    for level, table in columns.SPARK_TABLES.items():
        declared = source.SCHEMAS[level]
        assert [column.split()[0] for column in re.split(r", (?![^<]*>)", declared)] == list(columns.names(table))
    assert "payload_size LONG" in source.BATCH_SCHEMA and "findings" not in source.BATCH_SCHEMA


def test_a_record_row_has_every_column_of_the_records_table():
    from kbatch.spark.source import record_rows

    path = ROOT / "fixtures" / "v1-none.log"
    batches, _ = read_all(path.read_bytes(), records=True)
    rows = record_rows(str(path), None, None, batches[0], batches[0].records, None)
    assert rows and all(len(row) == len(columns.SPARK_RECORDS) for row in rows)


# A column added to the declaration, in a process of its own (every table below is made at import).
_ADD_A_COLUMN = r"""
import json, sys, types
from pathlib import Path
import kbatch.output
path = Path(kbatch.output.__file__).parent / "columns.py"
text = path.read_text()
anchor = '    Column("findings", "array", False,'
assert anchor in text
text = text.replace(anchor, '    Column("added", "int32", True, "batch.pos + 1", "a column added by a test"),\n' + anchor)
module = types.ModuleType("kbatch.output.columns")
module.__file__ = str(path)
sys.modules["kbatch.output.columns"] = module
exec(compile(text, str(path), "exec"), module.__dict__)
kbatch.output.columns = module

from kbatch.output import docs
dicts_text = docs.dicts_module_text()
dicts = types.ModuleType("kbatch.output._dicts")   # as python -m kbatch.output.docs would write it
exec(compile(dicts_text, str(docs.DICTS_PATH), "exec"), dicts.__dict__)
sys.modules["kbatch.output._dicts"] = dicts

from kbatch.output import jsonout
from kbatch.reading.reader import SegmentReader
from kbatch.spark import source
batch = next(iter(SegmentReader(open(sys.argv[1], "rb"))))
print(json.dumps({
    "batch_dict": list(jsonout.batch_dict(batch)),
    "value": jsonout.batch_dict(batch)["added"] == batch.pos + 1,
    "spark": source.BATCH_SCHEMA,
    "schema": docs.json_schema()["$defs"]["batch"]["properties"].get("added"),
    "dicts_current": docs.DICTS_PATH.read_text() == dicts_text,
    "schema_file_current": docs.SCHEMA_PATH.read_text() == docs.json_schema_text(),
    "readme_current": docs.README_PATH.read_text() == docs.readme_text(docs.README_PATH.read_text()),
    "sink_compiled": jsonout.JsonlSink(sys.stdout, records=False, decode="auto").compiled_lines,
}))
"""


def test_a_column_added_to_the_declaration_reaches_every_output():
    """One line in kbatch/output/columns.py: the Spark table and the JSON Schema have it, batch_dict has it once
    written out, the committed dicts, schema and README are then stale (the drift tests above say what to run),
    and the compiled writer, which does not know it, is not used."""
    run = subprocess.run([sys.executable, "-c", _ADD_A_COLUMN, str(ROOT / "fixtures" / "v2-none.log")],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    got = json.loads(run.stdout.splitlines()[-1])
    assert got["batch_dict"][-2:] == ["added", "findings"] and got["value"]
    assert "decompressed_size LONG, added INT, finding_count INT" in got["spark"]
    assert got["schema"] == {"type": ["integer", "null"], "description": "a column added by a test"}
    assert not got["dicts_current"] and not got["schema_file_current"] and not got["readme_current"]
    assert got["sink_compiled"] is False


def test_a_v2_header_gives_a_batch_by_name():
    """reading.v2.batch_fields gives a batch's header fields (model.HEADER_FIELDS: the fields Batch takes before
    its keyword-only ones), each from the header field its name says."""
    import dataclasses

    from kbatch.reading.model import HEADER_FIELDS, Batch
    from kbatch.reading.v2 import V2_HEADER_FIELDS, batch_fields, batch_of

    names = [each.name for each in dataclasses.fields(Batch)]
    assert HEADER_FIELDS == tuple(names[:names.index("records")]) and set(V2_HEADER_FIELDS) == set(HEADER_FIELDS)
    header = (100, 49 + 12, 7, 2, 1234, 0x0001 | 0x0010, 3, 1_000, 2_000, 42, 5, 9, 4)
    fields = batch_fields(10, 200, header, 1234)
    assert len(fields) == len(HEADER_FIELDS)
    batch = batch_of(fields)
    assert (batch.pos, batch.size, batch.base_offset, batch.last_offset, batch.length_field) == (10, 200, 100, 103, 61)
    assert (batch.partition_leader_epoch, batch.crc, batch.computed_crc, batch.codec) == (7, 1234, 1234, "gzip")
    assert (batch.is_transactional, batch.producer_id, batch.producer_epoch, batch.base_sequence) == (True, 42, 5, 9)
    assert (batch.count, batch.base_timestamp, batch.max_timestamp, batch.payload_pos) == (4, 1_000, 2_000, 71)


def test_a_header_field_without_its_value_is_refused():
    """batch_fields is written out from V2_HEADER_FIELDS: a header field it does not give (or one Batch does not
    have) stops the writing, not a batch read with a field left out."""
    from kbatch.reading.v2 import V2_HEADER_FIELDS, batch_fields_module

    missing = {name: value for name, value in V2_HEADER_FIELDS.items() if name != "codec"}
    with pytest.raises(AssertionError, match="codec"):
        batch_fields_module(missing)
    with pytest.raises(AssertionError, match="extra"):
        batch_fields_module({**V2_HEADER_FIELDS, "extra": "1"})


def test_batch_fields_is_what_v2_header_fields_gives():
    """kbatch/reading/_batch_fields.py is written out from kbatch.reading.v2.V2_HEADER_FIELDS, not made from a
    string at import: it must be what the table gives now."""
    from kbatch.reading import v2

    assert Path(v2.BATCH_FIELDS_PATH).read_text() == v2.batch_fields_module(), \
        f"kbatch/reading/_batch_fields.py is stale: run {v2.BATCH_FIELDS_COMMAND}"
    assert v2.batch_fields.__module__ == "kbatch.reading._batch_fields"


def test_no_code_is_made_from_strings():
    """kbatch calls neither exec, eval nor compile: what would be made so is written out and checked in (the
    drift tests above), where a reader, a linter and a coverage tool see it."""
    import ast

    import kbatch

    made = []
    for path in sorted(Path(kbatch.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("exec", "eval",
                                                                                                  "compile"):
                made.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.func.id}")
    assert made == []

"""What is written out from the columns' declaration (:mod:`kbatch.output.columns`): the functions that make
each kind of row's JSON dict (``kbatch/output/_dicts.py``, which :mod:`kbatch.output.jsonout` hands out), the
JSON Schema of ``--format json`` (``kbatch/schema/kbatch-json-v1.schema.json``, which encode-from-json reads
too) and README's lists of keys.  ``python -m kbatch.output.docs`` rewrites all three; tests/test_columns.py
fails when one differs from what the declaration gives.

(This module imports only the declaration, never what it writes: it runs however stale or broken those are.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kbatch.output import columns

ROOT = Path(__file__).resolve().parent.parent.parent
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "kbatch-json-v1.schema.json"
README_PATH = ROOT / "README.md"
DICTS_PATH = Path(__file__).resolve().parent / "_dicts.py"
JSON_KEYS_PATH = Path(__file__).resolve().parent.parent / "kernels" / "_json_keys.py"
COMMAND = "python -m kbatch.output.docs"

# What encode-from-json reads besides dump's output (kbatch.ops.encode): never written by kbatch.
_VARINT: dict = {"description": "an integer, or {\"hex\": ...}: the exact bytes to write (e.g. an over-long varint)",
           "oneOf": [{"type": ["integer", "null"]}, {"$ref": "#/$defs/bytes"}]}
ENCODE_ONLY_RECORD = {"magic": {"type": ["integer", "null"]},
                      **{name: _VARINT for name in ("offset_delta", "timestamp_delta", "length", "key_length",
                                                    "value_length", "headers_count")}}
ENCODE_ONLY_BATCH: dict[str, dict] = {
    "truncate_to": {"type": "integer", "minimum": 0},
    "snappy_framing": {"enum": ["xerial", "raw"]},
    "lz4_kafka3160": {"type": "boolean"},
    "frame": {"type": "object",
              "description": "lz4 or zstd frame options other than Kafka's producer writes (lz4: FLG 0x60, BD 0x40; "
                             "zstd: no content size)",
              "properties": {"block_size": {"enum": [65536, 262144, 1048576, 4194304]},
                             "independent_blocks": {"type": "boolean"}, "block_checksum": {"type": "boolean"},
                             "content_size": {"type": "boolean"}, "content_checksum": {"type": "boolean"},
                             "single_segment": {"type": "boolean"},
                             "window_descriptor": {"type": ["integer", "null"], "minimum": 0, "maximum": 255}},
              "additionalProperties": False},
}


def _property(column: columns.Column, derived: bool) -> dict:
    """A column's JSON Schema.  ``derived``: an entry's fields, which encode-from-json derives where they are
    absent or null, so null is allowed in every one of them."""
    if column.schema is not None:
        out = dict(column.schema)
    else:
        json_type = columns.TYPES[column.type][0]
        out = {"type": [json_type, "null"] if derived or column.nullable else json_type}
    out.setdefault("description", column.doc)
    return out


def _object(properties: dict, description: str | None = None, required=None, closed: bool = True) -> dict:
    out: dict[str, Any] = {"type": "object"}
    if description:
        out["description"] = description
    out["properties"] = properties
    if required:
        out["required"] = list(required)
    out["additionalProperties"] = not closed
    return out


def _kind_object(columns_, description: str) -> dict:
    """An object of one declared kind: every key it always has required; a spread column's keys (a sidecar
    entry's fields) its own, so open to keys not listed."""
    return _object({column.name: _property(column, derived=False) for column in columns_ if not column.spread},
                   description, required=columns.always_written(columns_),
                   closed=not any(column.spread for column in columns_))


# Every kind of line a command's --format jsonl writes besides dump's batches and damaged ranges (#/$defs/entry):
# its name in the schema's $defs, its columns and what it is.  #/$defs/line is any one of them.
LINE_KINDS = (
    # (a finding on a line of its own, of dump, txn, offsets, producers, is #/$defs/finding_entry)
    ("verify_finding_line", columns.FINDING_LINE + columns.FINDING_OFFSETS,
     "a line of kbatch verify-crc --format jsonl: a finding, with the offsets of the batch it lies in"),
    ("summary_line", columns.SUMMARY_LINE, "a segment's last line (dump, verify-crc)"),
    ("sidecar_summary_line", columns.SIDECAR_SUMMARY_LINE, "a file beside a segment's last line (dump)"),
    ("error_line", columns.ERROR_LINE, "a file that could not be read (dump, verify-crc)"),
    ("sidecar_entry", columns.SIDECAR_ENTRY, "an entry of an index, a snapshot, a checkpoint (dump)"),
    ("sidecar_header", columns.SIDECAR_HEADER, "what such a file says of itself (dump)"),
    ("grep_match", columns.GREP_MATCH, "a line of kbatch grep --format jsonl: a record, with its file and batch"),
    ("commit", columns.COMMIT, "a line of kbatch offsets --format jsonl: one offset commit"),
    ("coordinator_partition", columns.COORDINATOR_PARTITION,
     "kbatch offsets --group/--transactional-id: the partition of a name's coordinator"),
    ("producer", columns.PRODUCER, "a line of kbatch producers --format jsonl: one producer id and epoch"),
    ("transaction", columns.TRANSACTION, "a line of kbatch txn --format jsonl: one transaction"),
    ("txn_partition", columns.TXN_PARTITION, "kbatch txn: a partition's transactions counted"),
    ("coordinator", columns.COORDINATOR, "kbatch txn: a transactional id's last state in __transaction_state"),
    ("difference", columns.DIFFERENCE, "a line of kbatch diff --format jsonl: one difference"),
    ("diff_summary", columns.DIFF_SUMMARY, "kbatch diff --format jsonl: its last line"),
    ("segment_verdict", columns.SEGMENT_VERDICT, "a line of kbatch retention --format jsonl: a segment's verdict"),
    ("cleaning", columns.CLEANING, "a line of kbatch retention --format jsonl: a compacted partition's cleaning"),
    ("replica", columns.REPLICA, "a line of kbatch replicas --format jsonl: one broker's copy of a partition"),
    ("replica_record", columns.REPLICA_RECORD_HEAD + columns.RECORD,
     "a line of kbatch replicas --format jsonl: a record not every copy holds"),
    ("pcap_batch", columns.PCAP_BATCH_HEAD + columns.BATCH[1:],
     "a line of kbatch pcap --format jsonl: a record batch found in captured traffic"),
    ("pcap_finding", columns.PCAP_FINDING, "a line of kbatch pcap --format jsonl: a finding, with its packet"),
    ("pcap_summary", columns.PCAP_SUMMARY, "kbatch pcap --format jsonl: a capture's last line"),
    ("pcap_match", columns.PCAP_MATCH, "kbatch pcap --against: a captured batch held against the one on disk"),
)


# The objects of a command's one JSON document (stats --format json; its parts, each its own kind of object):
# their names in the schema's $defs, their columns and what they are.  Each document is also one of the schema's
# top-level choices.
DOCUMENT_KINDS = (
    ("stats_file", columns.STATS_FILE, "kbatch stats: a file read"),
    ("stats_share", columns.STATS_SHARE, "kbatch stats: a category's bytes"),
    ("stats_overhead", columns.STATS_OVERHEAD, "kbatch stats: the records' overhead"),
    ("stats_bucket", columns.STATS_BUCKET, "kbatch stats: a bucket of a distribution"),
    ("stats_by_magic", columns.STATS_BY_MAGIC, "kbatch stats: a magic's batches"),
    ("stats_by_codec", columns.STATS_BY_CODEC, "kbatch stats: a codec's batches"),
    ("stats_by_producer", columns.STATS_BY_PRODUCER, "kbatch stats: a producer's batches"),
    ("what_if_stored", columns.WHAT_IF_STORED, "kbatch stats --what-if: what was re-encoded"),
    ("what_if_left_out", columns.WHAT_IF_LEFT_OUT, "kbatch stats --what-if: what was not"),
    ("what_if_headers_first", columns.WHAT_IF_HEADERS_FIRST,
     "kbatch stats --what-if: compressed batches validated with each record's metadata first"),
    ("what_if_layout", columns.WHAT_IF_LAYOUT, "kbatch stats --what-if: one layout's size"),
    ("what_if", columns.WHAT_IF, "kbatch stats --what-if: each layout's size against what is stored"),
    ("scan_between", columns.SCAN_BETWEEN, "kbatch scan: offsets missing (or held twice) between two segments"),
    ("scan_cross_checks", columns.SCAN_CROSS_CHECKS, "kbatch scan --deep: a partition's cross-checks counted"),
    ("scan_partition", columns.SCAN_PARTITION, "kbatch scan: a topic-partition's report"),
)
DOCUMENTS = (
    ("stats_document", columns.STATS, "what kbatch stats --format json writes"),
    ("scan_document", columns.SCAN, "what kbatch scan --format json writes"),
)

def json_schema() -> dict:
    """kbatch-json-v1.schema.json: the document ``--format json`` writes, each entry's keys from the columns."""
    file_ = columns.LOCATION[0]
    finding = {column.name: _property(column, derived=False) for column in columns.FINDING}
    # A damaged range's keys besides its kind and bytes: the finding's and the offsets it may have lost.
    region = {column.name: _property(column, derived=False) for column in columns.REGION
              if column.name not in ("type", "raw")}
    record = {column.name: _property(column, derived=True) for column in columns.RECORD if not column.optional}
    record |= ENCODE_ONLY_RECORD
    record |= {column.name: _property(column, derived=True) for column in columns.RECORD if column.optional}
    batch_type, *batch_columns = columns.BATCH
    batch = {batch_type.name: _property(batch_type, derived=True), file_.name: {"type": "string"}}
    batch |= {column.name: _property(column, derived=True) for column in batch_columns}
    batch |= ENCODE_ONLY_BATCH
    entry_ref = {"$ref": "#/$defs/entry"}
    document = _object({
        "kbatch_json_version": {"const": 1},
        "entries": {"type": "array", "items": entry_ref},
        "files": {"type": "array", "items": _object({
            "file": {"type": "string"}, "size": {"type": "integer"},
            "entries": {"type": "array", "items": {"oneOf": [entry_ref, {"$ref": "#/$defs/sidecar_entry"},
                                                             {"$ref": "#/$defs/sidecar_header"}]}},
            "summary": {"oneOf": [_kind_object(columns.FILE_SUMMARY, "a segment's summary"),
                                  _kind_object(columns.SIDECAR_SUMMARY, "a file beside a segment's summary")]},
            "error": {"type": "string", "description": "why the file could not be read (its entries are then empty)"},
        }, required=["entries"])},
    }, "a document", required=["kbatch_json_version"])
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://kbatch.invalid/schema/kbatch-json-v1.schema.json",
        "title": "kbatch JSON, version 1",
        "description": "What `kbatch dump --format json` writes and `kbatch encode-from-json` reads. A field that "
                       "is present is written as given; an absent (or null) one is derived.",
        "oneOf": [document, {"$ref": "#/$defs/entry", "description": "one entry (encode-from-json --batch)"},
                  {"$ref": "#/$defs/pcap_document"}, *({"$ref": f"#/$defs/{name}"} for name, _, _ in DOCUMENTS)],
        "$defs": {
            "bytes": {"oneOf": [_object({mode: {"type": "string", **extra}}, required=[mode])
                                for mode, extra in (("utf8", {}), ("hex", {"pattern": "^([0-9a-fA-F]{2})*$"}),
                                                    ("base64", {}))]},
            "finding": _object(finding, required=columns.names(c for c in columns.FINDING if not c.nullable)),
            "record": _object(record, "a record: what dump writes; encode derives what is absent"),
            "batch": _object(batch, "a v2 record batch or a v0/v1 message"),
            "raw": _object({"raw": {"$ref": "#/$defs/bytes"},
                            **{name: {} for name in ("type", file_.name, *region)}},
                           "raw bytes written as they are (a damaged range in a dump)", required=["raw"]),
            "finding_entry": _object({"type": {"const": "finding"}, file_.name: {"type": "string"}, **region},
                                     "a finding between entries without bytes of its own", required=["type", "code"]),
            "entry": {"oneOf": [{"$ref": "#/$defs/raw"}, {"$ref": "#/$defs/finding_entry"},
                                {"$ref": "#/$defs/batch"}]},
            **{name: _kind_object(columns_, description) for name, columns_, description in LINE_KINDS},
            **{name: _kind_object(columns_, description) for name, columns_, description in DOCUMENT_KINDS + DOCUMENTS},
            "pcap_document": _object({
                "kbatch_json_version": {"const": 1},
                "captures": {"type": "array", "items": _object({
                    "file": {"type": "string"},
                    "entries": {"type": "array", "items": {"oneOf": [{"$ref": "#/$defs/pcap_batch"},
                                                                     {"$ref": "#/$defs/pcap_finding"},
                                                                     {"$ref": "#/$defs/pcap_match"}]}},
                    "summary": {"$ref": "#/$defs/pcap_summary"},
                }, required=["file", "entries", "summary"])},
            }, "what kbatch pcap --format json writes", required=["kbatch_json_version", "captures"]),
            "line": {"description": "any line a command's --format jsonl writes",
                     "oneOf": [{"$ref": "#/$defs/entry"},
                               *({"$ref": f"#/$defs/{name}"} for name, _, _ in LINE_KINDS)]},
        },
    }


def json_schema_text() -> str:
    return json.dumps(json_schema(), indent=1, ensure_ascii=False) + "\n"


# -- kbatch/output/_dicts.py ----------------------------------------------------------------------------

# Each function written there: its name, its parameters (what its columns' ``read`` expressions are over), its
# columns and what it gives.  A new kind of row is a line here, then python -m kbatch.output.docs.
DICT_FUNCTIONS = (
    ("finding_dict", "finding", columns.FINDING, "A finding's keys (columns.FINDING)."),
    ("finding_offsets", "finding, batch", columns.FINDING_OFFSETS,
     "The offsets of the batch a finding lies in, null between batches (columns.FINDING_OFFSETS)."),
    ("record_dict", "record, batch, decode", columns.RECORD, "A record's keys (columns.RECORD)."),
    ("batch_dict", 'batch, decode="auto", with_records=False', columns.BATCH,
     "A batch's keys, or a v0/v1 message's (columns.BATCH)."),
    ("grep_match_dict", "path, found, record, batch, decode", columns.GREP_MATCH,
     "A record grep shows (kbatch.ops.grep.Found), with its file and batch (columns.GREP_MATCH)."),
    ("commit_dict", "commit", columns.COMMIT, "An offset commit's keys (columns.COMMIT)."),
    ("producer_dict", "epoch", columns.PRODUCER, "A producer epoch's keys (columns.PRODUCER)."),
    ("segment_verdict_dict", "segment", columns.SEGMENT_VERDICT, "A segment's verdict (columns.SEGMENT_VERDICT)."),
    ("cleaning_dict", "partition, cleaning", columns.CLEANING, "A partition's cleaning (columns.CLEANING)."),
    ("damage_dict", "damage", columns.DAMAGE,
     "What Kafka's log recovery does with an entry its validation fails (columns.DAMAGE)."),
    ("replica_dict", "report, copy", columns.REPLICA, "A broker's copy of a partition (columns.REPLICA)."),
    ("replica_record_head", "report, divergence, record, high_watermarks", columns.REPLICA_RECORD_HEAD,
     "A record not every copy holds: its keys before the record's (columns.REPLICA_RECORD_HEAD)."),
    ("pcap_batch_head", "path, found", columns.PCAP_BATCH_HEAD,
     "A batch found in captured traffic: its keys before the batch's (columns.PCAP_BATCH_HEAD)."),
    ("pcap_finding_dict", "path, found, finding", columns.PCAP_FINDING,
     "A finding in captured traffic (columns.PCAP_FINDING)."),
    ("pcap_summary_dict", "path, summary", columns.PCAP_SUMMARY, "A capture's summary (columns.PCAP_SUMMARY)."),
    ("pcap_match_dict", "path, match", columns.PCAP_MATCH,
     "A captured batch held against the one on disk (kbatch.ops.against.Match; columns.PCAP_MATCH)."),
    ("region_dict", "finding, raw=None", columns.REGION,
     "A damaged range that belongs to no batch, as an entry of a document (columns.REGION)."),
    ("finding_line", "path, finding", columns.FINDING_LINE, "A finding on a line of its own (columns.FINDING_LINE)."),
    ("file_summary_dict", "summary", columns.FILE_SUMMARY,
     "A segment's summary (kbatch.reading.summary.FileSummary; columns.FILE_SUMMARY)."),
    ("file_summary_line", "summary", columns.SUMMARY_LINE, "... as a line (columns.SUMMARY_LINE)."),
    ("sidecar_summary_dict", "summary", columns.SIDECAR_SUMMARY,
     "A file beside a segment's summary (kbatch.partition.sidecars.SidecarSummary; columns.SIDECAR_SUMMARY)."),
    ("sidecar_summary_line", "summary", columns.SIDECAR_SUMMARY_LINE, "... as a line (columns.SIDECAR_SUMMARY_LINE)."),
    ("error_line", "path, reason", columns.ERROR_LINE, "A file that could not be read (columns.ERROR_LINE)."),
    ("sidecar_entry_dict", "item", columns.SIDECAR_ENTRY,
     "An entry of a file beside a segment (kbatch.partition.sidefile.Entry; columns.SIDECAR_ENTRY)."),
    ("sidecar_header_dict", "item", columns.SIDECAR_HEADER,
     "What such a file says of itself (kbatch.partition.sidefile.Header; columns.SIDECAR_HEADER)."),
    ("transaction_dict", "txn", columns.TRANSACTION, "A transaction (kbatch.ops.txn.Transaction; columns.TRANSACTION)."),
    ("txn_partition_dict", "view", columns.TXN_PARTITION,
     "A partition's transactions counted (kbatch.ops.txn.PartitionTransactions; columns.TXN_PARTITION)."),
    ("coordinator_dict", "state", columns.COORDINATOR,
     "A transactional id's last state (kbatch.ops.txn.CoordinatorState; columns.COORDINATOR)."),
    ("coordinator_partition_dict", "kind, name, topic, partition, partitions", columns.COORDINATOR_PARTITION,
     "Where a group's or a transactional id's coordinator keeps it (columns.COORDINATOR_PARTITION)."),
    ("difference_dict", "difference", columns.DIFFERENCE,
     "A difference diff finds (kbatch.ops.diff.Difference; columns.DIFFERENCE)."),
    ("diff_summary_dict", "summary, path_a, path_b", columns.DIFF_SUMMARY,
     "diff's summary (kbatch.ops.diff.DiffSummary; columns.DIFF_SUMMARY)."),
    ("stats_dict", "stats, what_if=None", columns.STATS,
     "stats' report (kbatch.ops.stats.SegmentStats; with --what-if, kbatch.ops.reencode.WhatIf; columns.STATS)."),
    ("stats_file_dict", "entry", columns.STATS_FILE, "A file stats read (columns.STATS_FILE)."),
    ("stats_share_dict", "share", columns.STATS_SHARE,
     "A category's bytes (kbatch.ops.stats.Share; columns.STATS_SHARE)."),
    ("stats_overhead_dict", "stats", columns.STATS_OVERHEAD, "The records' overhead (columns.STATS_OVERHEAD)."),
    ("stats_bucket_dict", "label, batches", columns.STATS_BUCKET,
     "A bucket of a distribution (columns.STATS_BUCKET)."),
    ("stats_by_magic_dict", "group, tally", columns.STATS_BY_MAGIC,
     "A magic's tally (kbatch.ops.stats.Tally; columns.STATS_BY_MAGIC)."),
    ("stats_by_codec_dict", "group, tally", columns.STATS_BY_CODEC, "A codec's tally (columns.STATS_BY_CODEC)."),
    ("stats_by_producer_dict", "group, tally", columns.STATS_BY_PRODUCER,
     "A producer's tally (columns.STATS_BY_PRODUCER)."),
    ("what_if_dict", "what_if", columns.WHAT_IF, "stats --what-if (kbatch.ops.reencode.WhatIf; columns.WHAT_IF)."),
    ("what_if_stored_dict", "what_if", columns.WHAT_IF_STORED, "What was re-encoded (columns.WHAT_IF_STORED)."),
    ("what_if_left_out_dict", "what_if", columns.WHAT_IF_LEFT_OUT, "What was not (columns.WHAT_IF_LEFT_OUT)."),
    ("what_if_headers_first_dict", "what_if", columns.WHAT_IF_HEADERS_FIRST,
     "Compressed batches validated with the records' metadata first (columns.WHAT_IF_HEADERS_FIRST)."),
    ("what_if_layout_dict", "total, stored, recompress", columns.WHAT_IF_LAYOUT,
     "One layout's size (kbatch.ops.reencode.LayoutTotal; columns.WHAT_IF_LAYOUT)."),
    ("scan_dict", "report", columns.SCAN, "scan's report (kbatch.spark.report.ScanReport; columns.SCAN)."),
    ("scan_partition_dict", "partition", columns.SCAN_PARTITION,
     "A topic-partition's report (kbatch.spark.report.PartitionReport; columns.SCAN_PARTITION)."),
    ("scan_between_dict", "between", columns.SCAN_BETWEEN,
     "Offsets missing or held twice between two segments (kbatch.spark.report.Between; columns.SCAN_BETWEEN)."),
    ("scan_cross_checks_dict", "checks", columns.SCAN_CROSS_CHECKS,
     "A partition's cross-checks counted (kbatch.spark.report.CrossChecks; columns.SCAN_CROSS_CHECKS)."),
)

# Where the helpers the ``read`` expressions use (columns.HELPERS) come from, those not written there.
HELPER_IMPORTS = {"kbatch.messages.registry": ("schema_ids",),
                  "kbatch.output.values": ("bytes_json", "control_dict", "iso_timestamp", "lost_offsets_of"),
                  "kbatch.output.visible": ("json_name",)}


def dict_function_source(name: str, parameters: str, columns_, doc: str) -> str:
    """A function ``name(parameters)`` returning the dict of ``columns_``, each key the value of its ``read``
    expression, in their order: a dict display of those every object has, up to the first that is not (an
    optional one only where its value is not None, one with ``when`` only where that holds, a spread one's
    keys in its place), then each of the rest in turn; as fast as one written by hand."""
    lines = [f"def {name}({parameters}):",
             f'    """{doc}"""']
    first_rest = next((index for index, column in enumerate(columns_) if not column.always), len(columns_))
    fixed = [f'        "{column.name}": {column.read},' for column in columns_[:first_rest]]
    lines += ["    out = {", *fixed, "    }"] if fixed else ["    out = {}"]
    for column in columns_[first_rest:]:
        if column.spread:
            lines.append(f"    out.update({column.read})")
        elif column.optional:
            lines += [f"    value = {column.read}", "    if value is not None:", f'        out["{column.name}"] = value']
        elif column.when:
            lines += [f"    if {column.when}:", f'        out["{column.name}"] = {column.read}']
        else:
            lines.append(f'    out["{column.name}"] = {column.read}')
    lines.append("    return out")
    return "\n".join(lines) + "\n"


def dicts_module_text() -> str:
    """kbatch/output/_dicts.py's text: the imports of HELPER_IMPORTS, then each of DICT_FUNCTIONS."""
    imported = {name for names in HELPER_IMPORTS.values() for name in names}
    written = {function[0] for function in DICT_FUNCTIONS}
    if set(columns.HELPERS) != imported | (written & set(columns.HELPERS)):
        raise AssertionError(f"columns.HELPERS {sorted(columns.HELPERS)} are not those imported {sorted(imported)} "
                             f"or written {sorted(written)}")
    head = ('"""The JSON form of each kind of row, one function per kind, written out from the declaration of its\n'
            "columns (kbatch/output/columns.py: what each key is and how it is read); kbatch.output.jsonout hands\n"
            "them out.\n\n"
            f"Generated by ``{COMMAND}``: do not edit.  tests/test_columns.py fails when this file\n"
            'differs from what that command writes.\n"""\n\n')
    imports = "".join(f"from {module} import {', '.join(names)}\n" for module, names in HELPER_IMPORTS.items())
    functions = "\n\n".join(dict_function_source(*function) for function in DICT_FUNCTIONS)
    return head + imports + "\n\n" + functions


# -- kbatch/kernels/_json_keys.py ------------------------------------------------------------------------

def json_keys_module_text() -> str:
    """The keys the compiled JSON Lines writer (kbatch.kernels.jsonl) writes, in order: a record's and a batch
    line's, those every one has (columns.RECORD and columns.BATCH, the optional ones left out)."""
    def keys(name: str, columns_) -> str:
        return f"{name} = (\n" + "".join(f'    "{key}",\n' for key in columns.always_written(columns_)) + ")\n"

    return ('"""The keys kbatch.kernels.jsonl writes, in the order it writes them: every key a record and a batch line\n'
            "always have (kbatch/output/columns.py's RECORD and BATCH). The kernels import nothing from kbatch.output,\n"
            "so the keys are written out here.\n\n"
            f"Generated by ``{COMMAND}``: do not edit.  tests/test_columns.py fails when this file\n"
            'differs from what that command writes.\n"""\n\n'
            + keys("RECORD_JSON_KEYS", columns.RECORD) + keys("BATCH_JSON_KEYS", columns.BATCH))


# -- README ---------------------------------------------------------------------------------------------

_TYPE_WORDS = {"int32": "integer", "int64": "integer", "bool": "boolean", "float": "number", "string": "string", "iso": "string",
               "bytes": "bytes", "headers": "array", "object": "object", "array": "array", "any": "any"}
README_TABLES = {"batch": columns.BATCH, "record": columns.RECORD, "finding": columns.FINDING,
                 "grep match": columns.GREP_MATCH_HEAD + columns.GREP_MATCH_TAIL, "offset commit": columns.COMMIT,
                 "producer": columns.PRODUCER, "transaction": columns.TRANSACTION,
                 "txn partition": columns.TXN_PARTITION, "coordinator": columns.COORDINATOR,
                 "difference": columns.DIFFERENCE, "diff summary": columns.DIFF_SUMMARY,
                 "summary": columns.SUMMARY_LINE, "segment verdict": columns.SEGMENT_VERDICT,
                 "cleaning": columns.CLEANING, "replica": columns.REPLICA, "damage": columns.DAMAGE,
                 "replica record": columns.REPLICA_RECORD_HEAD, "pcap batch": columns.PCAP_BATCH_HEAD,
                 "pcap finding": columns.PCAP_FINDING, "pcap summary": columns.PCAP_SUMMARY,
                 "pcap match": columns.PCAP_MATCH, "stats": columns.STATS,
                 "what if layout": columns.WHAT_IF_LAYOUT,
                 "scan partition": columns.SCAN_PARTITION}   # (grep match, replica record: a record's keys between)


def readme_table(columns_) -> str:
    rows = ["| key | type | meaning |", "| --- | --- | --- |"]
    for column in columns_:
        kind = _TYPE_WORDS[column.type] + (" or null" if column.nullable and not column.optional else "")
        rows.append(f"| `{column.name}` | {kind} | {column.doc.replace('|', '&#124;')} |")
    return "\n".join(rows) + "\n"


def _markers(name: str) -> tuple[str, str]:
    return (f"<!-- {name} keys: generated from kbatch/output/columns.py by python -m kbatch.output.docs -->\n",
            f"<!-- end of {name} keys -->\n")


def _as_it_is(block: str) -> Callable[[re.Match[str]], str]:
    """A replacement that puts ``block`` in as it is (re.sub would read its backslashes)."""
    return lambda _match: block


def readme_text(text: str) -> str:
    """README.md's text with each generated list of keys (between its markers) made afresh."""
    for name, columns_ in README_TABLES.items():
        begin, end = _markers(name)
        pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
        if not pattern.search(text):
            raise ValueError(f"README.md has no {begin.strip()} ... {end.strip()} block")
        text = pattern.sub(_as_it_is(begin + readme_table(columns_) + end), text)
    return text


def write() -> list[str]:
    """Rewrite what is stale; the paths rewritten."""
    rewritten = []
    for path, text in ((DICTS_PATH, dicts_module_text()), (JSON_KEYS_PATH, json_keys_module_text()),
                       (SCHEMA_PATH, json_schema_text()),
                       (README_PATH, readme_text(README_PATH.read_text()))):
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            rewritten.append(str(path.relative_to(ROOT)))
    return rewritten


if __name__ == "__main__":
    print("rewritten: " + ", ".join(rewritten) if (rewritten := write()) else "the dicts, the schema and README are current")

"""A v2 record batch: its header, and its records (DefaultRecordBatch.java).

The header is unpacked with the struct derived from
:data:`kbatch.format.layouts.RecordBatchHeader`; the records are decoded by
:mod:`kbatch.reading.records` (inflated first when compressed).
"""

from __future__ import annotations

import os

from kbatch.format.codecs import CodecError, Decompressor
from kbatch.format.findings import Finding
from kbatch.format.framing import CHECKSUMS, crc_mismatch, records_count_problem
from kbatch.reading.model import HEADER_FIELDS, Batch
from kbatch.reading.records import walk_batch_records
from kbatch.reading._batch_fields import batch_fields   # written out from V2_HEADER_FIELDS below
from kbatch.format.structs import (
    BATCH_HEADER,
    COMPRESSION_CODEC_MASK,
    HEADER_SIZE_UP_TO_MAGIC,
    LOG_ENTRY_PREFIX,
    LOG_OVERHEAD,
)
from kbatch.reading.window import CHUNK

_CRC = CHECKSUMS[2]
# recordsCount's place in the unpacked header: an int there (Batch.count is None where no v0/v1 count is known).
_RECORDS_COUNT = BATCH_HEADER.names.index("records_count")
_unpack_header = BATCH_HEADER.unpack_from


def read_batch(pos: int, entry: memoryview, decompressor: Decompressor, *, records: bool, inflate: bool,
               record_objects: bool = True) -> Batch:
    """The batch whose bytes (offset field to end) are ``entry``, at file position ``pos``.

    ``records`` decodes its records (``record_objects``: into Record objects too); ``inflate`` only
    decompresses them (for Batch.decompressed_size).
    """
    header = BATCH_HEADER.unpack_from(entry)
    batch = batch_of(batch_fields(pos, len(entry), header, _CRC.compute(entry)))
    if not batch.crc_valid:
        batch.findings.append(crc_mismatch(pos, pos + len(entry), 2, batch.computed_crc, batch.crc))
    count_problem = records_count_problem(pos, header[_RECORDS_COUNT])
    if count_problem is not None and not records:   # decoding the records reports it itself
        batch.findings.append(count_problem)
    if records or (inflate and batch.attributes & COMPRESSION_CODEC_MASK):
        load_records(batch, entry[BATCH_HEADER.size:], decompressor, decode=records, objects=record_objects)
    return batch


# Each of a batch's header fields (kbatch.reading.model.HEADER_FIELDS) as a v2 batch gives it, by its name:
# an expression over ``pos`` and ``size`` (where the batch lies in the file), ``computed_crc`` (its bytes'
# CRC-32C) and its header's fields, each by its name in the layout (BATCH_HEADER.names).
V2_HEADER_FIELDS = {
    "pos": "pos",
    "size": "size",
    "magic": "2",
    "length_field": "batch_length",
    "offset_field": "base_offset",
    "base_offset": "base_offset",
    "last_offset": "base_offset + last_offset_delta",
    "count": "records_count",
    "attributes": "attributes",
    "codec": "codec_name(attributes & COMPRESSION_CODEC_MASK)",
    "crc": "crc",
    "computed_crc": "computed_crc",
    "timestamp_type": "TIMESTAMP_TYPES[bool(attributes & TIMESTAMP_TYPE_MASK)]",
    "base_timestamp": "base_timestamp",
    "max_timestamp": "max_timestamp",
    "partition_leader_epoch": "partition_leader_epoch",
    "last_offset_delta": "last_offset_delta",
    "producer_id": "producer_id",
    "producer_epoch": "producer_epoch",
    "base_sequence": "base_sequence",
    "is_transactional": "bool(attributes & TRANSACTIONAL_FLAG_MASK)",
    "is_control": "bool(attributes & CONTROL_FLAG_MASK)",
    # DefaultRecordBatch.deleteHorizonMs: the base timestamp, when the attributes flag it so
    "delete_horizon_ms": "base_timestamp if attributes & DELETE_HORIZON_FLAG_MASK else None",
    "payload_pos": "pos + BATCH_HEADER.size",
    "payload_size": "size - BATCH_HEADER.size",
    "decompressed_size": "None",   # known once the records are inflated
}


# What the expressions above are written with, besides the header's fields: kbatch/reading/_batch_fields.py imports
# them so.
_BATCH_FIELDS_IMPORTS = {
    "kbatch.format.codecs": ("codec_name",),
    "kbatch.format.structs": ("BATCH_HEADER", "COMPRESSION_CODEC_MASK", "CONTROL_FLAG_MASK", "DELETE_HORIZON_FLAG_MASK",
                              "TIMESTAMP_TYPE_MASK", "TRANSACTIONAL_FLAG_MASK"),
    "kbatch.reading.model": ("TIMESTAMP_TYPES",),
}
# (a plain path: pathlib costs every run of kbatch a fiftieth of a second to import, for a file only the
# generator and its drift test read)
BATCH_FIELDS_PATH = os.path.join(os.path.dirname(__file__), "_batch_fields.py")
BATCH_FIELDS_COMMAND = "python -m kbatch.reading.v2"


def batch_fields_module(values: dict[str, str] = V2_HEADER_FIELDS) -> str:
    """kbatch/reading/_batch_fields.py's text: batch_fields written out from ``values`` as a plain function, the
    header's fields bound to their layout names, a tuple of the values in HEADER_FIELDS order.  Written so, each
    value is given by its field's name and the listing's fields cost what a tuple written by hand costs (by
    keyword they cost it a twentieth of its time)."""
    if set(values) != set(HEADER_FIELDS):
        raise AssertionError(f"V2_HEADER_FIELDS names {sorted(set(values) ^ set(HEADER_FIELDS))}: "
                             f"not kbatch.reading.model.HEADER_FIELDS")
    imports = "".join(f"from {module} import (\n" + "".join(f"    {name},\n" for name in names) + ")\n"
                      if len(names) > 1 else f"from {module} import {names[0]}\n"
                      for module, names in _BATCH_FIELDS_IMPORTS.items())
    unpacked = "".join(f"        {name},\n" for name in BATCH_HEADER.names)
    returned = "".join(f"        {values[name]},\n" if values[name] == name else f"        {values[name]},   # {name}\n"
                       for name in HEADER_FIELDS)
    return (f'''"""A v2 batch's header fields as Batch takes them, from kbatch.reading.v2.V2_HEADER_FIELDS.

Generated by ``{BATCH_FIELDS_COMMAND}``: do not edit.  tests/test_columns.py fails when this file differs
from what that command writes.
"""

{imports}

def batch_fields(pos, size, header, computed_crc):
    """A batch's header fields (HEADER_FIELDS, in that order) for the v2 batch of ``size`` bytes at ``pos`` whose
    header is ``header`` (BATCH_HEADER.unpack_from) and whose bytes give ``computed_crc``, each as
    V2_HEADER_FIELDS says.

    What read_batch makes a Batch of, and what ``dump --format jsonl`` writes a clean batch's line from
    without one (kbatch.walk.listing: kbatch.kernels.jsonl.fields_json)."""
    (
{unpacked}    ) = header
    return (
{returned}    )
''')


def write_batch_fields() -> bool:
    """Rewrite kbatch/reading/_batch_fields.py from V2_HEADER_FIELDS; whether it changed."""
    text = batch_fields_module()
    with open(BATCH_FIELDS_PATH, encoding="utf-8") as stream:
        if stream.read() == text:
            return False
    with open(BATCH_FIELDS_PATH, "w", encoding="utf-8") as stream:
        stream.write(text)
    return True


def batch_of(fields: tuple) -> Batch:
    """The Batch whose header fields are ``fields`` (batch_fields'): Batch takes HEADER_FIELDS, in their order,
    before its keyword-only fields."""
    return Batch(*fields)


def batch_in_view(window, pos: int) -> tuple[memoryview, int]:
    """(data, i): the reader's window at ``pos`` (an entry start) as ``data[i:]``, slid to hold the whole entry
    starting there when its size field says it fits a chunk.

    The runs over clean batches (kbatch.walk.engine) take only what lies whole in the window;
    without the slide, the batch its end cuts would go to the full reader once a chunk, an object made of
    it and of every check.  A larger size (a broker's largest batches, or damage claiming a gigabyte) is the
    full reader's as before.
    """
    data, i, available = window.view(pos, HEADER_SIZE_UP_TO_MAGIC)
    if available == HEADER_SIZE_UP_TO_MAGIC:
        size = LOG_OVERHEAD + LOG_ENTRY_PREFIX.unpack_from(data, i)[1]
        if len(data) - i < size <= CHUNK:
            data = None   # the window's buffer under this view can take the next read
            data, i, _ = window.view(pos, size)
    return data, i


def load_records(batch: Batch, payload, decompressor: Decompressor, *, decode: bool = True,
                 objects: bool = True) -> None:
    """Inflate a v2 batch's records (``payload``: its bytes after the header) and decode them into it.

    For a batch read without ``ReadOptions.records`` (its ``body`` kept),
    this decodes its records later, only if they are needed.
    """
    codec_id = batch.attributes & COMPRESSION_CODEC_MASK
    if codec_id != 0:
        try:
            payload = decompressor.decompress_view(codec_id, payload, 2)   # in place: held once, not twice
        except CodecError as error:
            batch.findings.append(Finding(error.code, batch.pos, batch.payload_pos, batch.payload_size,
                                          "records", f"{batch.codec} data", error.detail))
            batch.records = batch.records if batch.records is not None else []
            return
        batch.decompressed_size = len(payload)
    if decode:
        batch.findings += walk_batch_records(batch, payload, batch.payload_pos, batch.payload_pos,
                                             batch.payload_size, objects=objects)


if __name__ == "__main__":
    print("kbatch/reading/_batch_fields.py", "rewritten" if write_batch_fields() else "is current")

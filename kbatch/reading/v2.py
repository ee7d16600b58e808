"""A v2 record batch: its header, and its records (DefaultRecordBatch.java).

The header is unpacked with the struct derived from
:data:`kbatch.format.layouts.RecordBatchHeader`; the records are decoded by
:mod:`kbatch.reading.records` (inflated first when compressed).
"""

from __future__ import annotations

from kbatch.format.codecs import CodecError, Decompressor, codec_name
from kbatch.format.findings import Finding
from kbatch.format.framing import CHECKSUMS, crc_mismatch, records_count_problem
from kbatch.reading.model import TIMESTAMP_TYPES, Batch
from kbatch.reading.records import walk_batch_records
from kbatch.kernels.batchrules import framed_v2_batch
from kbatch.format.structs import (
    BATCH_HEADER,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    HEADER_SIZE_UP_TO_MAGIC,
    LOG_ENTRY_PREFIX,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from kbatch.reading.window import CHUNK

_CRC = CHECKSUMS[2]
_unpack_header = BATCH_HEADER.unpack_from


def read_batch(pos: int, entry: memoryview, decompressor: Decompressor, *, records: bool, inflate: bool,
               record_objects: bool = True) -> Batch:
    """The batch whose bytes (offset field to end) are ``entry``, at file position ``pos``.

    ``records`` decodes its records (``record_objects``: into Record objects too); ``inflate`` only
    decompresses them (for Batch.decompressed_size).
    """
    header = BATCH_HEADER.unpack_from(entry)
    batch = Batch(*batch_fields(pos, len(entry), header, _CRC.compute(entry)))
    if not batch.crc_valid:
        batch.findings.append(crc_mismatch(pos, pos + len(entry), 2, batch.computed_crc, batch.crc))
    count_problem = records_count_problem(pos, batch.count)
    if count_problem is not None and not records:   # decoding the records reports it itself
        batch.findings.append(count_problem)
    if records or (inflate and batch.attributes & COMPRESSION_CODEC_MASK):
        load_records(batch, entry[BATCH_HEADER.size:], decompressor, decode=records, objects=record_objects)
    return batch


def batch_fields(pos: int, size: int, header: tuple, computed_crc: int) -> tuple:
    """A Batch's fields, in its order up to decompressed_size (None), for the v2 batch of ``size`` bytes at
    ``pos`` whose header is ``header`` (BATCH_HEADER.unpack_from) and whose bytes give ``computed_crc``.

    What read_batch makes a Batch of, and what ``dump --format jsonl`` writes a clean batch's line from
    without one (kbatch.walk.listing).
    """
    (base_offset, batch_length, leader_epoch, _, crc, attributes, last_offset_delta, base_timestamp,
     max_timestamp, producer_id, producer_epoch, base_sequence, records_count) = header
    return (pos, size, 2, batch_length, base_offset, base_offset, base_offset + last_offset_delta, records_count,
            attributes, codec_name(attributes & COMPRESSION_CODEC_MASK), crc, computed_crc,
            TIMESTAMP_TYPES[bool(attributes & TIMESTAMP_TYPE_MASK)], base_timestamp, max_timestamp, leader_epoch,
            last_offset_delta, producer_id, producer_epoch, base_sequence,
            bool(attributes & TRANSACTIONAL_FLAG_MASK), bool(attributes & CONTROL_FLAG_MASK),
            base_timestamp if attributes & DELETE_HORIZON_FLAG_MASK else None,   # DefaultRecordBatch.deleteHorizonMs
            pos + BATCH_HEADER.size, size - BATCH_HEADER.size, None)


def framed_batches(window, pos: int, stop: int, max_entry_size: int):
    """The v2 batches from ``pos`` (an entry start) on that start before ``stop``, lie whole in the reader's
    window (slid to hold the first: :func:`batch_in_view`) and are framed as the reader wants them
    (kbatch.kernels.batchrules.framed_v2_batch), as (file position, view, i, end, header): the batch's bytes are
    ``view[i:end]``, ``header`` its BATCH_HEADER fields.  It ends at the first entry that is not one.

    The listing's run over clean batches (kbatch.walk.listing) takes these until one it leaves to the full
    reader; that one, and whatever ended this walk, the full reader reads.  (--deep's run,
    kbatch.kernels.cleanruns.CleanBatches, frames batches by the same rule in its compiled loop.)
    """
    data, i = batch_in_view(window, pos)
    base = pos - i                       # the file position of data[0]
    limit, last = len(data), stop - base
    with memoryview(data) as view:
        while i < last and i + BATCH_HEADER.size <= limit:
            header = _unpack_header(data, i)
            end = i + LOG_OVERHEAD + header[1]
            if not framed_v2_batch(header[3], header[1], max_entry_size) or end > limit:
                return   # not a v2 batch, a size that is damage, or one going on past the window
            yield base + i, view, i, end, header
            i = end


def batch_in_view(window, pos: int) -> tuple[memoryview, int]:
    """(data, i): the reader's window at ``pos`` (an entry start) as ``data[i:]``, slid to hold the whole entry
    starting there when its size field says it fits a chunk.

    The runs over clean batches (kbatch.walk.deep, kbatch.walk.listing) take only what lies whole in the window;
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

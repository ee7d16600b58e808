"""Compression codecs, as Kafka's clients and brokers write them.

One function, :func:`decompress`, turns the compressed records of a batch (or
the value of a v0/v1 wrapper message) into bytes.  It never returns more than
``limit`` bytes: a crafted batch that inflates without end is a finding, not
an out-of-memory kill.  Every failure raises :class:`CodecError`, carrying the
finding code the reader reports.

Kafka's quirks handled here:

* snappy: Java clients write snappy-java's "xerial" framing
  (``SnappyOutputStream``: an 8-byte magic, two int32 versions, then blocks of
  int32 length + raw snappy).  Other clients write one raw snappy block.
  Kafka's reader accepts both, so do we.
* lz4: an LZ4 frame.  For magic 0, Kafka computed the frame header checksum
  over the wrong bytes (KAFKA-3160, ``KafkaLZ4BlockOutputStream`` before 0.10)
  and its reader ignores that checksum for magic 0; we recompute it so a
  standard frame decoder accepts the frame.
* zstd: magic 2 only (``ZstdFactory``; Kafka rejects it in older formats).

cramjam does the codecs' work.  It is imported where a batch is first inflated
or compressed, not with this module: loading it is ~3 ms of every run's start,
and most segments hold no compressed batch.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Mapping

CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
CODEC_IDS = {name: codec_id for codec_id, name in CODEC_NAMES.items()}

DEFAULT_DECOMPRESSED_LIMIT = 256 * 1024 * 1024

XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = struct.Struct(">8sii")  # magic, version, compatible version
_XERIAL_BLOCK_LENGTH = struct.Struct(">i")

LZ4_FRAME_MAGIC = b"\x04\x22\x4d\x18"


class CodecError(Exception):
    """Compressed bytes that cannot be turned into records."""

    def __init__(self, code: str, detail: str):
        super().__init__(detail)
        self.code = code
        self.detail = detail


def codec_name(codec_id: int) -> str:
    return CODEC_NAMES.get(codec_id, f"unknown({codec_id})")


class Decompressor:
    """Decompresses into one reused, lazily backed buffer of ``limit`` bytes.

    The buffer is an anonymous map, so only the pages a batch really inflates
    into become resident: memory follows the inflated size, with ``limit`` as
    its bound.  Pages an unusually large batch touched are handed back before
    the next batch, so memory stays flat however many batches pass through.
    :meth:`decompress_view` hands out the inflated bytes in place, without a
    copy; :meth:`decompress` returns a copy of them.
    """

    _RELEASE_ABOVE = 16 * 1024 * 1024

    def __init__(self, limit: int = DEFAULT_DECOMPRESSED_LIMIT):
        self.limit = limit
        self._out: mmap.mmap | None = None
        self._touched = 0       # bytes the last call inflated into the buffer

    def decompress(self, codec_id: int, data, magic: int) -> bytes:
        """The inflated bytes, as a bytes object of their own."""
        result = bytes(self.decompress_view(codec_id, data, magic))
        self._release()
        return result

    def decompress_view(self, codec_id: int, data, magic: int) -> memoryview:
        """The inflated bytes in this decompressor's buffer: valid until its next call."""
        import cramjam

        self._release()
        if codec_id == 0:
            return memoryview(bytes(data))
        if codec_id not in CODEC_NAMES or (codec_id == 4 and magic < 2):
            raise CodecError("unknown-codec", f"codec id {codec_id} does not exist for magic {magic}")
        if codec_id == 2:
            return self._snappy(data)
        if codec_id == 3:
            data = _lz4_fix_kafka3160_header(data) if magic == 0 else data
        module = {1: cramjam.gzip, 3: cramjam.lz4, 4: cramjam.zstd}[codec_id]
        size = self._into(module.decompress_into, data, CODEC_NAMES[codec_id], 0)
        return memoryview(self._buffer())[:size]

    def release(self) -> None:
        """Say the last view is no longer in use: the pages a large batch inflated into are handed back now,
        not at the next call (a wrapper's inner messages, once read, need them no more)."""
        self._release()

    def _buffer(self) -> mmap.mmap:
        if self._out is None:
            # One byte more than the limit: output that fills it is too large.
            self._out = mmap.mmap(-1, self.limit + 1)
        return self._out

    def _release(self) -> None:
        """Hand back the pages a large batch touched (the view of it is no longer in use)."""
        if self._touched > self._RELEASE_ABOVE and self._out is not None:
            self._out.madvise(mmap.MADV_DONTNEED)
        self._touched = 0

    def _into(self, decompress_into, data, name: str, at: int) -> int:
        """Inflate ``data`` into the buffer from position ``at``; the bytes written."""
        import cramjam

        out = memoryview(self._buffer())[at:]
        try:
            size = decompress_into(bytes(data), out)
        except cramjam.DecompressionError as error:
            self._touched = self.limit + 1   # how far it got is unknown: release all
            if "failed to write whole buffer" in str(error):
                raise CodecError("decompress-too-large",
                                 f"{name} data inflates past the limit of {self.limit} bytes") from None
            raise CodecError("decompress-failed", f"{name}: {error}") from None
        finally:
            out.release()
        self._touched = max(self._touched, at + size)
        if at + size > self.limit:
            raise CodecError("decompress-too-large", f"{name} data inflates past the limit of {self.limit} bytes")
        return size

    def _snappy(self, data) -> memoryview:
        data = bytes(data)
        if not data.startswith(XERIAL_MAGIC):
            size = self._raw_snappy(data, 0)
            return memoryview(self._buffer())[:size]
        # snappy-java's SnappyOutputStream framing (xerial), as Java clients write it: each block is
        # inflated straight into its place in the buffer, so the whole is never held twice.
        if len(data) < _XERIAL_HEADER.size:
            raise CodecError("decompress-failed", "snappy: xerial header cut short")
        pos, total = _XERIAL_HEADER.size, 0
        while pos < len(data):
            if pos + 4 > len(data):
                raise CodecError("decompress-failed", f"snappy: xerial block length cut short at byte {pos}")
            (length,) = _XERIAL_BLOCK_LENGTH.unpack_from(data, pos)
            pos += 4
            if length < 0 or pos + length > len(data):
                raise CodecError("decompress-failed",
                                 f"snappy: xerial block at byte {pos - 4} claims {length} bytes, "
                                 f"{len(data) - pos} remain")
            total += self._raw_snappy(data[pos:pos + length], total)
            pos += length
        return memoryview(self._buffer())[:total]

    def _raw_snappy(self, data: bytes, at: int) -> int:
        import cramjam

        try:
            size = cramjam.snappy.decompress_raw_len(data)
        except cramjam.DecompressionError as error:
            raise CodecError("decompress-failed", f"snappy: {error}") from None
        if at + size > self.limit:
            raise CodecError("decompress-too-large", f"snappy data inflates past the limit of {self.limit} bytes")
        return self._into(cramjam.snappy.decompress_raw_into, data, "snappy", at)


# -- compressing, for encode-from-json ------------------------------------------

XERIAL_BLOCK_SIZE = 32 * 1024      # snappy-java's default block size
LZ4_BLOCK_SIZE = 64 * 1024         # Kafka's Lz4BlockOutputStream: BD 0x40, 64 KiB blocks
_LZ4_BLOCK_SIZES = {4: 64 * 1024, 5: 256 * 1024, 6: 1024 * 1024, 7: 4 * 1024 * 1024}   # BD bits 6-4
LZ4_BLOCK_SIZES = frozenset(_LZ4_BLOCK_SIZES.values())
ZSTD_LEVEL = 3                     # Kafka's default (CompressionType.ZSTD.defaultLevel, zstd's own default)
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

# The frame options compress() takes (``frame``), per codec, with what Kafka's producer writes.
# lz4 (Lz4BlockOutputStream: FLG 0x60, BD 0x40): independent 64 KiB blocks, no checksums, no content size.
LZ4_FRAME_DEFAULTS = {"block_size": LZ4_BLOCK_SIZE, "independent_blocks": True, "block_checksum": False,
                      "content_size": False, "content_checksum": False}
# zstd: the frame header's content size field and single-segment flag, and its window descriptor (None: the
# smallest window that holds the content, as zstd picks when it knows the size).  Kafka's producer streams
# (ZstdCompression: ZstdOutputStreamNoFinalizer), so it writes no content size.
ZSTD_FRAME_DEFAULTS = {"content_size": False, "single_segment": False, "window_descriptor": None}
FRAME_DEFAULTS: dict[int, Mapping[str, object]] = {3: LZ4_FRAME_DEFAULTS, 4: ZSTD_FRAME_DEFAULTS}


def frame_options(codec_id: int, head: bytes, content_size: int) -> dict | None:
    """What a stored lz4 or zstd frame's header says about how it was written (``head``: its first bytes,
    ``content_size``: what it inflates to), as :func:`compress` takes it; None for other codecs or a header
    that does not parse.  The compression level is not in a frame: it is not here."""
    head = bytes(head)
    if codec_id == 3 and len(head) >= 6 and head.startswith(LZ4_FRAME_MAGIC):
        flg, bd = head[4], head[5]
        block_size = _LZ4_BLOCK_SIZES.get((bd >> 4) & 7)
        if block_size is None:
            return None
        return {"block_size": block_size, "independent_blocks": bool(flg & 0x20), "block_checksum": bool(flg & 0x10),
                "content_size": bool(flg & 0x08), "content_checksum": bool(flg & 0x04)}
    if codec_id == 4 and len(head) >= 6 and head.startswith(_ZSTD_MAGIC):
        descriptor = head[4]
        single_segment = bool(descriptor & 0x20)
        window = None if single_segment else head[5]
        return {"content_size": single_segment or descriptor >> 6 != 0, "single_segment": single_segment,
                "window_descriptor": None if window == _zstd_fitting_window(content_size) else window}
    return None


def compress(codec_id: int, data: bytes, *, snappy_framing: str = "xerial", lz4_kafka3160: bool = False,
             frame: dict | None = None) -> bytes:
    """Compress records as Kafka's Java clients do (the frame layouts, not necessarily the same bytes).

    ``frame`` changes the lz4 or zstd frame's options from what Kafka writes
    (:data:`FRAME_DEFAULTS`): how another producer wrote it (:func:`frame_options`).
    """
    import cramjam

    data = bytes(data)
    if codec_id == 0:
        return data
    if codec_id == 1:
        return bytes(cramjam.gzip.compress(data))
    if codec_id == 2:
        if snappy_framing == "raw":
            return bytes(cramjam.snappy.compress_raw(data))
        blocks = [_XERIAL_HEADER.pack(XERIAL_MAGIC, 1, 1)]
        for start in range(0, len(data), XERIAL_BLOCK_SIZE):
            block = bytes(cramjam.snappy.compress_raw(data[start:start + XERIAL_BLOCK_SIZE]))
            blocks += [_XERIAL_BLOCK_LENGTH.pack(len(block)), block]
        return b"".join(blocks)
    if codec_id == 3:
        return _lz4_frame(data, kafka3160=lz4_kafka3160, **{**LZ4_FRAME_DEFAULTS, **(frame or {})})
    if codec_id == 4:
        return _zstd_frame(data, **{**ZSTD_FRAME_DEFAULTS, **(frame or {})})
    raise CodecError("unknown-codec", f"codec id {codec_id} does not exist")


def _lz4_frame(data: bytes, *, kafka3160: bool, block_size: int, independent_blocks: bool, block_checksum: bool,
               content_size: bool, content_checksum: bool) -> bytes:
    """An LZ4 frame as Kafka's Lz4BlockOutputStream writes it (the LZ4 frame format), or with other options.

    With ``kafka3160`` the header checksum is the one Kafka's magic-0 writer
    made (KAFKA-3160): xxHash32 over the frame magic too, not just FLG and BD.
    Blocks are always compressed independently (LZ4_compress_default, Kafka's
    fastCompressor); a frame that says they are linked may refer back to the
    block before, so a linked producer's frame of several blocks can be smaller.
    """
    import cramjam

    flg = 0x40 | independent_blocks << 5 | block_checksum << 4 | content_size << 3 | content_checksum << 2
    bd = {size: code for code, size in _LZ4_BLOCK_SIZES.items()}[block_size] << 4
    descriptor = bytes([flg, bd]) + (struct.pack("<Q", len(data)) if content_size else b"")
    hashed = LZ4_FRAME_MAGIC + descriptor if kafka3160 else descriptor
    out = [LZ4_FRAME_MAGIC, descriptor, bytes([(xxh32(hashed) >> 8) & 0xFF])]
    for start in range(0, len(data), block_size):
        block = data[start:start + block_size]
        packed = bytes(cramjam.lz4.compress_block(block, store_size=False))
        if len(packed) >= len(block):   # incompressible: stored as is, flagged by the high bit
            out += [struct.pack("<I", len(block) | 0x80000000), block]
            packed = block
        else:
            out += [struct.pack("<I", len(packed)), packed]
        if block_checksum:
            out.append(struct.pack("<I", xxh32(packed)))
    out.append(b"\x00\x00\x00\x00")  # end mark
    if content_checksum:
        out.append(struct.pack("<I", xxh32(data)))
    return b"".join(out)


def _zstd_fitting_window(size: int) -> int:
    """The window descriptor zstd writes when it knows the content's size (ZSTD_adjustCParams at level 3):
    the smallest power of two holding it, 1 KiB at least, 2 MiB at most."""
    log = max(10, min(21, (max(size, 1) - 1).bit_length()))
    return (log - 10) << 3


def _zstd_frame(data: bytes, *, content_size: bool, single_segment: bool, window_descriptor: int | None) -> bytes:
    """A zstd frame at Kafka's level, its header written as asked (RFC 8878, 3.1.1.1).

    The blocks are zstd's own; only the header changes: the content size
    field (ZSTD_writeFrameHeader's widths: 1 byte only in a single segment,
    2 bytes holding size - 256, then 4, then 8), or the window descriptor of a
    frame that is not a single segment.
    """
    import cramjam

    packed = bytes(cramjam.zstd.compress(data, level=ZSTD_LEVEL))
    descriptor = packed[4]
    header_end = 5 + (0 if descriptor & 0x20 else 1) + (0, 1, 2, 4)[descriptor & 3] \
        + ((1 if descriptor & 0x20 else 0), 2, 4, 8)[descriptor >> 6]
    blocks = packed[header_end:len(packed) - (4 if descriptor & 0x04 else 0)]
    size = len(data)
    code = (size >= 256) + (size >= 65536 + 256) + (size >= 0xFFFFFFFF) if content_size or single_segment else 0
    header = [_ZSTD_MAGIC, bytes([code << 6 | single_segment << 5])]
    if not single_segment:
        header.append(bytes([_zstd_fitting_window(size) if window_descriptor is None else window_descriptor]))
    if single_segment or code:
        header.append((size - 256).to_bytes(2, "little") if code == 1 else size.to_bytes((1, 2, 4, 8)[code], "little"))
    return b"".join(header) + blocks


def _lz4_fix_kafka3160_header(data) -> bytes:
    """Give a magic-0 LZ4 frame the header checksum the LZ4 spec asks for.

    KAFKA-3160: Kafka's magic-0 writer hashed the frame magic too when making
    the header checksum (HC); its reader skips the check for magic 0.  The HC
    is the second byte of xxHash32 (seed 0) over the frame descriptor, FLG to
    the byte before HC.
    """
    data = bytes(data)
    if len(data) < 7 or not data.startswith(LZ4_FRAME_MAGIC):
        return data
    flags = data[4]
    descriptor_end = 6 + (8 if flags & 0x08 else 0) + (4 if flags & 0x01 else 0)
    if len(data) <= descriptor_end:
        return data
    checksum = (xxh32(data[4:descriptor_end]) >> 8) & 0xFF
    return data[:descriptor_end] + bytes([checksum]) + data[descriptor_end + 1:]


_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M32 = 0xFFFFFFFF


def _rotl(value: int, count: int) -> int:
    return ((value << count) | (value >> (32 - count))) & _M32


def xxh32(data: bytes, seed: int = 0) -> int:
    """xxHash32, only ever run over the few bytes of an LZ4 frame descriptor."""
    length, pos = len(data), 0
    if length >= 16:
        lanes = [(seed + _P1 + _P2) & _M32, (seed + _P2) & _M32, seed & _M32, (seed - _P1) & _M32]
        while pos + 16 <= length:
            for lane in range(4):
                (word,) = struct.unpack_from("<I", data, pos)
                lanes[lane] = (_rotl((lanes[lane] + word * _P2) & _M32, 13) * _P1) & _M32
                pos += 4
        acc = (_rotl(lanes[0], 1) + _rotl(lanes[1], 7) + _rotl(lanes[2], 12) + _rotl(lanes[3], 18)) & _M32
    else:
        acc = (seed + _P5) & _M32
    acc = (acc + length) & _M32
    while pos + 4 <= length:
        (word,) = struct.unpack_from("<I", data, pos)
        acc = (_rotl((acc + word * _P3) & _M32, 17) * _P4) & _M32
        pos += 4
    while pos < length:
        acc = (_rotl((acc + data[pos] * _P5) & _M32, 11) * _P1) & _M32
        pos += 1
    acc ^= acc >> 15
    acc = (acc * _P2) & _M32
    acc ^= acc >> 13
    acc = (acc * _P3) & _M32
    acc ^= acc >> 16
    return acc

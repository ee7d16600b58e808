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
"""

from __future__ import annotations

import mmap
import struct

import cramjam

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
        return memoryview(self._out)[:size]

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
            return memoryview(self._out)[:size]
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
_LZ4_FLG = 0x60                    # version 01, independent blocks, no checksums, no content size
_LZ4_BD = 0x40


def compress(codec_id: int, data: bytes, *, snappy_framing: str = "xerial", lz4_kafka3160: bool = False) -> bytes:
    """Compress records as Kafka's Java clients do (the frame layouts, not necessarily the same bytes)."""
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
        return _lz4_frame(data, kafka3160=lz4_kafka3160)
    if codec_id == 4:
        return bytes(cramjam.zstd.compress(data))
    raise CodecError("unknown-codec", f"codec id {codec_id} does not exist")


def _lz4_frame(data: bytes, *, kafka3160: bool) -> bytes:
    """An LZ4 frame as Kafka's Lz4BlockOutputStream writes it.

    With ``kafka3160`` the header checksum is the one Kafka's magic-0 writer
    made (KAFKA-3160): xxHash32 over the frame magic too, not just FLG and BD.
    """
    descriptor = bytes([_LZ4_FLG, _LZ4_BD])
    hashed = LZ4_FRAME_MAGIC + descriptor if kafka3160 else descriptor
    out = [LZ4_FRAME_MAGIC, descriptor, bytes([(xxh32(hashed) >> 8) & 0xFF])]
    for start in range(0, len(data), LZ4_BLOCK_SIZE):
        block = data[start:start + LZ4_BLOCK_SIZE]
        packed = bytes(cramjam.lz4.compress_block(block, store_size=False))
        if len(packed) >= len(block):   # incompressible: stored as is, flagged by the high bit
            out += [struct.pack("<I", len(block) | 0x80000000), block]
        else:
            out += [struct.pack("<I", len(packed)), packed]
    out.append(b"\x00\x00\x00\x00")  # end mark
    return b"".join(out)


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

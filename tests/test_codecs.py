"""Every codec, against bytes kafka-python's encoders made (an independent implementation)."""

from __future__ import annotations

import random

import cramjam
import pytest
from kafka import codec as kafka_codec

from kbatch.format.codecs import CODEC_IDS, FRAME_DEFAULTS, CodecError, Decompressor, compress, frame_options, xxh32

PAYLOAD = random.Random(0).randbytes(3000) + b"kafka " * 20000


@pytest.mark.parametrize("name,encode,magic", [
    ("gzip", kafka_codec.gzip_encode, 1),
    ("snappy", lambda data: kafka_codec.snappy_encode(data, xerial_compatible=True), 1),
    ("snappy", lambda data: kafka_codec.snappy_encode(data, xerial_compatible=False), 2),
    ("lz4", kafka_codec.lz4_encode, 1),
    ("lz4", kafka_codec.lz4_encode_old_kafka, 0),
    ("zstd", kafka_codec.zstd_encode, 2),
], ids=["gzip", "snappy-xerial", "snappy-raw", "lz4", "lz4-kafka3160", "zstd"])
def test_decompresses_what_kafka_python_compressed(name, encode, magic):
    compressed = encode(PAYLOAD)
    assert Decompressor().decompress(CODEC_IDS[name], compressed, magic) == PAYLOAD


def test_xerial_framing_is_what_java_writes():
    framed = kafka_codec.snappy_encode(PAYLOAD, xerial_compatible=True, xerial_blocksize=4096)
    assert framed[:16] == bytes.fromhex("82534e415050590000000001" "00000001")
    assert Decompressor().decompress(2, framed, 2) == PAYLOAD


@pytest.mark.parametrize("codec_id,compressed", [
    (1, kafka_codec.gzip_encode(PAYLOAD)), (3, kafka_codec.lz4_encode(PAYLOAD)), (4, kafka_codec.zstd_encode(PAYLOAD)),
    (2, kafka_codec.snappy_encode(PAYLOAD, xerial_compatible=False)),
    (2, kafka_codec.snappy_encode(PAYLOAD, xerial_compatible=True, xerial_blocksize=4096)),
], ids=["gzip", "lz4", "zstd", "snappy-raw", "snappy-xerial"])
def test_the_view_is_the_inflated_bytes_in_place_until_the_next_call(codec_id, compressed):
    decompressor = Decompressor()
    view = decompressor.decompress_view(codec_id, compressed, 2)
    assert isinstance(view, memoryview) and view == PAYLOAD
    other = kafka_codec.gzip_encode(b"another batch")
    assert decompressor.decompress_view(1, other, 2) == b"another batch"
    assert view[:13] == b"another batch"   # the same buffer: a view lives until the next call, by contract


def test_xerial_blocks_past_the_limit_are_too_large_however_they_are_split():
    framed = kafka_codec.snappy_encode(PAYLOAD, xerial_compatible=True, xerial_blocksize=4096)
    with pytest.raises(CodecError) as caught:
        Decompressor(limit=len(PAYLOAD) - 1).decompress(2, framed, 2)
    assert caught.value.code == "decompress-too-large"
    assert Decompressor(limit=len(PAYLOAD)).decompress(2, framed, 2) == PAYLOAD


def test_kafka3160_header_checksum_is_only_forgiven_for_magic_0():
    old_kafka = kafka_codec.lz4_encode_old_kafka(PAYLOAD)
    with pytest.raises(CodecError) as caught:
        Decompressor().decompress(3, old_kafka, 1)
    assert caught.value.code == "decompress-failed"


def test_gzip_reads_concatenated_members_like_gzipinputstream():
    data = kafka_codec.gzip_encode(b"first ") + kafka_codec.gzip_encode(b"second")
    assert Decompressor().decompress(1, data, 2) == b"first second"


@pytest.mark.parametrize("codec_id,compress", [
    (1, cramjam.gzip.compress), (3, cramjam.lz4.compress), (4, cramjam.zstd.compress),
    (2, cramjam.snappy.compress_raw),
])
def test_a_decompression_bomb_is_a_finding(codec_id, compress):
    bomb = bytes(compress(b"\0" * 5_000_000))
    with pytest.raises(CodecError) as caught:
        Decompressor(limit=1_000_000).decompress(codec_id, bomb, 2)
    assert caught.value.code == "decompress-too-large"


@pytest.mark.parametrize("codec_id", [1, 2, 3, 4])
def test_garbage_is_a_finding_not_a_crash(codec_id):
    noise = random.Random(codec_id)
    for garbage in (b"", b"\x00", *(noise.randbytes(100) for _ in range(50)),
                    b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01\x7f\xff\xff\xff"):
        try:
            Decompressor(limit=1 << 20).decompress(codec_id, garbage, 2)
        except CodecError as error:
            assert error.code in ("decompress-failed", "decompress-too-large")


def test_zstd_and_unknown_codecs_by_magic():
    for codec_id, magic in ((4, 1), (4, 0), (5, 2), (7, 1)):
        with pytest.raises(CodecError) as caught:
            Decompressor().decompress(codec_id, b"anything", magic)
        assert caught.value.code == "unknown-codec"


def test_xxh32_reference_values():
    # xxHash's own test values (seed 0).
    assert xxh32(b"") == 0x02CC5D05
    assert xxh32(b"a") == 0x550D7456
    assert xxh32(b"abc") == 0x32D153FF
    assert xxh32(b"Nobody inspects the spammish repetition") == 0xE2293B2F


LZ4_OPTIONS = [dict(block_size=size, block_checksum=block, content_checksum=content, content_size=stored)
               for size in (64 * 1024, 256 * 1024) for block in (False, True) for content in (False, True)
               for stored in (False, True)]


@pytest.mark.parametrize("options", LZ4_OPTIONS, ids=lambda options: "-".join(
    f"{key}={value}" for key, value in options.items()))
def test_lz4_frames_with_other_options_are_liblz4s_bytes(options):
    """A frame written with another producer's options is the frame liblz4 itself writes with them."""
    import lz4.frame

    sizes = {64 * 1024: lz4.frame.BLOCKSIZE_MAX64KB, 256 * 1024: lz4.frame.BLOCKSIZE_MAX256KB}
    theirs = lz4.frame.compress(PAYLOAD, block_size=sizes[options["block_size"]], block_linked=False,
                                block_checksum=options["block_checksum"],
                                content_checksum=options["content_checksum"], store_size=options["content_size"])
    assert compress(CODEC_IDS["lz4"], PAYLOAD, frame=options) == theirs
    assert frame_options(CODEC_IDS["lz4"], theirs[:16], len(PAYLOAD)) == {**options, "independent_blocks": True}


def test_kafkas_lz4_frame_is_the_default():
    plain = compress(CODEC_IDS["lz4"], PAYLOAD)
    assert plain[4:6] == b"\x60\x40"   # Lz4BlockOutputStream: FLG version 1 + independent blocks, BD 64 KiB
    assert frame_options(CODEC_IDS["lz4"], plain, len(PAYLOAD)) == FRAME_DEFAULTS[CODEC_IDS["lz4"]]


@pytest.mark.parametrize("size", [100, 300, 70_000, len(PAYLOAD)])
@pytest.mark.parametrize("content_size", [False, True])
def test_zstd_frame_headers_are_libzstds(size, content_size):
    """With the content size (single segment) or without it (a window descriptor fitted to the content), the
    frame is libzstd's own at Kafka's level 3."""
    import zstandard

    data = PAYLOAD[:size]
    theirs = zstandard.ZstdCompressor(level=3, write_content_size=content_size).compress(data)
    options = frame_options(CODEC_IDS["zstd"], theirs[:16], len(data))
    assert options == {"content_size": content_size, "single_segment": content_size, "window_descriptor": None}
    assert compress(CODEC_IDS["zstd"], data, frame=options) == theirs


def test_a_zstd_window_larger_than_the_content_is_kept():
    """A streaming producer that did not know the size (zstd-jni) declares its level's window: 2 MiB at level 3."""
    import zstandard

    written = compress(CODEC_IDS["zstd"], PAYLOAD[:1000], frame={"window_descriptor": 0x58})
    assert written[4:6] == b"\x00\x58"
    assert frame_options(CODEC_IDS["zstd"], written, 1000)["window_descriptor"] == 0x58
    assert zstandard.ZstdDecompressor().decompressobj().decompress(written) == PAYLOAD[:1000]
    assert frame_options(CODEC_IDS["zstd"], compress(CODEC_IDS["zstd"], PAYLOAD[:1000]), 1000) \
        == FRAME_DEFAULTS[CODEC_IDS["zstd"]]


# -- the zstd frame header kbatch writes, and the LZ4 header checksum it mends: exact bytes ---------------------
# RFC 8878 3.1.1.1: the frame header descriptor is FCS code (2 bits) << 6 | single segment << 5 | checksum << 2
# | dictionary id code; a window descriptor follows unless single segment; then the content size, 1, 2 (size -
# 256), 4 or 8 bytes little-endian (libzstd's ZSTD_writeFrameHeader: code (size >= 256) + (size >= 65792) +
# (size >= 0xFFFFFFFF)).  The window is zstd's at level 3 fitted to the content: log2 from 10 to 21, (log - 10) << 3.

ZSTD_MAGIC = "28b52ffd"


def _bytes(size: int) -> bytes:
    return (bytes(range(256)) * (size // 256 + 1))[:size]


@pytest.mark.parametrize("size, single_segment, content_size, header", [
    (100, True, True, "20" "64"),
    (255, True, True, "20" "ff"),
    (256, True, True, "60" "0000"),
    (300, True, True, "60" "2c00"),
    (65280, True, True, "60" "00fe"),
    (65791, True, True, "60" "ffff"),
    (65792, True, True, "a0" "00010100"),
    (70000, True, True, "a0" "70110100"),
    (1000, False, False, "00" "00"),
    (1000, False, True, "40" "00" "e802"),
    (1025, False, False, "00" "08"),
    (3 * 2**20, False, False, "00" "58"),   # more than zstd's 2 MiB window: libzstd's own frame is not single either
    (3 * 2**20, False, True, "80" "58" "00003000"),
])
def test_zstd_frame_header_bytes(size, single_segment, content_size, header):
    import zstandard

    data = _bytes(size)
    frame = compress(CODEC_IDS["zstd"], data, frame={"single_segment": single_segment, "content_size": content_size})
    assert frame[:4 + len(header) // 2].hex() == ZSTD_MAGIC + header
    assert zstandard.ZstdDecompressor().decompressobj().decompress(frame) == data


@pytest.mark.parametrize("size, descriptor", [(0, 0x00), (1, 0x00), (1024, 0x00), (1025, 0x08), (2**20, 0x50),
                                              (2**20 + 1, 0x58), (2**21, 0x58), (2**21 + 1, 0x58), (2**30, 0x58)])
def test_zstd_window_fitted_to_the_content(size, descriptor):
    from kbatch.format.codecs import _zstd_fitting_window

    assert _zstd_fitting_window(size) == descriptor


def _lz4_header_checksum(descriptor: bytes) -> int:
    """The LZ4 frame format's HC: the second byte of xxHash32 (seed 0) over FLG..the byte before HC."""
    import xxhash

    return (xxhash.xxh32_intdigest(descriptor) >> 8) & 0xFF


@pytest.mark.parametrize("descriptor", [
    "6040",                                  # FLG version 1, independent blocks; BD 64 KiB (Kafka's)
    "6840" "e803000000000000",               # + content size (FLG 0x08): 8 bytes
    "6140" "04030201",                       # + dictionary id (FLG 0x01): 4 bytes
    "6970" "e803000000000000" "04030201",    # both, BD 4 MiB
])
@pytest.mark.parametrize("rest", [b"", b"\x05\x00\x00\x80hello\x00\x00\x00\x00"], ids=["header-only", "blocks"])
def test_a_kafka3160_header_checksum_is_mended(descriptor, rest):
    from kbatch.format.codecs import LZ4_FRAME_MAGIC, _lz4_fix_kafka3160_header

    descriptor = bytes.fromhex(descriptor)
    wrong = (_lz4_header_checksum(descriptor) + 1) & 0xFF
    mended = _lz4_fix_kafka3160_header(LZ4_FRAME_MAGIC + descriptor + bytes([wrong]) + rest)
    assert mended == LZ4_FRAME_MAGIC + descriptor + bytes([_lz4_header_checksum(descriptor)]) + rest


@pytest.mark.parametrize("data", [
    "04224d18" "6040",                        # no HC byte: 6 bytes
    "04224d18" "6840" "e803000000000000",     # the content size, then nothing: no HC byte
    "00" * 20,                                # not an LZ4 frame
    "04224d19" "604000" "0000",               # not the magic
])
def test_what_is_no_lz4_frame_header_is_left_as_it_is(data):
    from kbatch.format.codecs import _lz4_fix_kafka3160_header

    assert _lz4_fix_kafka3160_header(bytes.fromhex(data)) == bytes.fromhex(data)


# -- what a decompressor says about bytes it cannot inflate, or that inflate too far: exact words -----------------
# snappy-java's xerial framing: magic 82 'SNAPPY' 00, version, compatible version (16 bytes), then blocks, each an
# int32 length and that many bytes of raw snappy.

XERIAL_HEAD = "82534e41505059000000000100000001"


def _codec_error(codec_id: int, data: bytes, magic: int = 2, limit: int = 1000) -> tuple[str, str]:
    with pytest.raises(CodecError) as caught:
        Decompressor(limit).decompress(codec_id, data, magic)
    assert str(caught.value) == caught.value.detail
    return caught.value.code, caught.value.detail


@pytest.mark.parametrize("data, detail", [
    ("82534e4150505900" "00000001", "snappy: xerial header cut short"),
    (XERIAL_HEAD + "0000", "snappy: xerial block length cut short at byte 16"),
    (XERIAL_HEAD + "00000064" + "00" * 10, "snappy: xerial block at byte 16 claims 100 bytes, 10 remain"),
    (XERIAL_HEAD + "ffffffff" + "00" * 10, "snappy: xerial block at byte 16 claims -1 bytes, 10 remain"),
])
def test_a_damaged_xerial_frame_is_said_where(data, detail):
    assert _codec_error(2, bytes.fromhex(data)) == ("decompress-failed", detail)


def _xerial(*blocks: bytes) -> bytes:
    return bytes.fromhex(XERIAL_HEAD) + b"".join(
        len(block).to_bytes(4, "big") + block for block in (bytes(cramjam.snappy.compress_raw(b)) for b in blocks))


def test_xerial_blocks_inflate_end_to_end_up_to_the_limit_and_no_further():
    first, second = b"a" * 600, bytes(range(200)) * 2
    assert Decompressor(1000).decompress(2, _xerial(first, second), 2) == first + second   # 1000: the limit
    assert Decompressor(1000).decompress(2, _xerial(b""), 2) == b""
    assert _codec_error(2, _xerial(first, second + b"!")) == \
        ("decompress-too-large", "snappy data inflates past the limit of 1000 bytes")
    assert Decompressor(600).decompress(2, bytes(cramjam.snappy.compress_raw(first)), 2) == first   # raw snappy
    assert _codec_error(2, bytes(cramjam.snappy.compress_raw(first)), limit=599) == \
        ("decompress-too-large", "snappy data inflates past the limit of 599 bytes")
    code, detail = _codec_error(2, b"\xff\xff\xff\xff\xff\xff")
    assert code == "decompress-failed" and detail.startswith("snappy: ")


@pytest.mark.parametrize("codec_id, name, pack", [(1, "gzip", cramjam.gzip.compress), (3, "lz4", None),
                                                  (4, "zstd", cramjam.zstd.compress)])
def test_a_frame_inflating_past_the_limit_or_not_inflating_is_said(codec_id, name, pack):
    data = bytes(range(256)) * 4
    packed = bytes(pack(data)) if pack else compress(3, data)
    assert Decompressor(1024).decompress(codec_id, packed, 2) == data   # exactly the limit
    assert _codec_error(codec_id, packed, limit=1023) == \
        ("decompress-too-large", f"{name} data inflates past the limit of 1023 bytes")
    code, detail = _codec_error(codec_id, packed[:len(packed) // 2] + bytes(8))
    assert code == "decompress-failed" and detail.startswith(f"{name}: ")


def test_a_codec_a_magic_does_not_have():
    assert _codec_error(4, b"", magic=1) == ("unknown-codec", "codec id 4 does not exist for magic 1")
    assert _codec_error(5, b"") == ("unknown-codec", "codec id 5 does not exist for magic 2")
    from kbatch.format.codecs import codec_name

    assert [codec_name(codec_id) for codec_id in (0, 1, 2, 3, 4, 5)] == \
        ["none", "gzip", "snappy", "lz4", "zstd", "unknown(5)"]


# -- an lz4 frame of one incompressible block, byte for byte ------------------------------------------------------
# 3 bytes do not compress: the block is stored as is, its length's high bit set (03000080).  The magic-0 frame is
# kafka-python's lz4_encode_old_kafka's bytes exactly (its header checksum 1a hashes the frame magic too).

@pytest.mark.parametrize("options, frame", [
    ({}, "04224d18" "6040" "82" "03000080" "010203" "00000000"),
    ({"lz4_kafka3160": True}, "04224d18" "6040" "1a" "03000080" "010203" "00000000"),
    # block and content checksums: xxHash32 of the 3 bytes, f59c78c4 (above 2^31: written unsigned)
    ({"frame": {"block_checksum": True, "content_checksum": True}},
     "04224d18" "7440" "bd" "03000080" "010203" "c4789cf5" "00000000" "c4789cf5"),
])
def test_an_incompressible_lz4_block_is_stored_as_is(options, frame):
    assert compress(3, b"\x01\x02\x03", **options).hex() == frame
    assert xxh32(b"\x01\x02\x03") == 0xF59C78C4


# -- what a stored frame's header says of how it was written ------------------------------------------------------

@pytest.mark.parametrize("codec_id, head, options", [
    # FLG 0x64: version 1, independent blocks, content checksum; BD 0x70: 4 MiB blocks
    (3, "04224d18" "6470", {"block_size": 4 << 20, "independent_blocks": True, "block_checksum": False,
                            "content_size": False, "content_checksum": True}),
    # FLG 0x41: version 1 and a dictionary id, nothing else; BD 0x50: 256 KiB
    (3, "04224d18" "4150", {"block_size": 256 << 10, "independent_blocks": False, "block_checksum": False,
                            "content_size": False, "content_checksum": False}),
    (3, "04224d18" "5840" "00", {"block_size": 64 << 10, "independent_blocks": False, "block_checksum": True,
                                 "content_size": True, "content_checksum": False}),
    (3, "04224d18" "6430", None),        # BD 3: no block size of the format
    (3, "04224d18" "64", None),          # cut short
    (3, "28b52ffd" "0158", None),        # a zstd frame is no lz4 frame
    (4, "04224d18" "6470", None),        # nor an lz4 frame a zstd one
    (2, "04224d18" "6470", None),
    # descriptor 0x01: a one-byte dictionary id, no content size, not single segment; window 0x58 (not the
    # 1 KiB zstd fits to 1000 bytes)
    (4, "28b52ffd" "0158", {"content_size": False, "single_segment": False, "window_descriptor": 0x58}),
    (4, "28b52ffd" "0100", {"content_size": False, "single_segment": False, "window_descriptor": None}),
    (4, "28b52ffd" "20e8", {"content_size": True, "single_segment": True, "window_descriptor": None}),
    (4, "28b52ffd" "4000", {"content_size": True, "single_segment": False, "window_descriptor": None}),
    (4, "28b52ffd" "01", None),
])
def test_frame_options_read_from_a_frame_header(codec_id, head, options):
    assert frame_options(codec_id, bytes.fromhex(head), 1000) == options


# -- compress (encode-from-json) run inside a test: the parametrized cases above compress while being collected ----

def test_snappy_is_written_as_kafka_pythons_xerial_blocks_of_32_kib_or_one_raw_block():
    assert compress(2, b"kafka " * 10).hex() == \
        XERIAL_HEAD + "0000000b" "3c146b61666b6120d60600"   # one block: 11 bytes of raw snappy
    data = bytes(range(256)) * 200   # 51,200 bytes: blocks of 32,768 and 18,432
    assert compress(2, data) == kafka_codec.snappy_encode(data, xerial_compatible=True)
    assert compress(2, data, snappy_framing="raw") == kafka_codec.snappy_encode(data, xerial_compatible=False)
    assert compress(2, b"") == bytes.fromhex(XERIAL_HEAD)


def test_compress_leaves_codec_0_alone_gzips_1_and_refuses_an_unknown_codec():
    assert compress(0, memoryview(b"kafka")) == b"kafka"
    assert bytes(cramjam.gzip.decompress(compress(1, b"kafka " * 10))) == b"kafka " * 10
    with pytest.raises(CodecError) as caught:
        compress(5, b"kafka")
    assert (caught.value.code, caught.value.detail) == ("unknown-codec", "codec id 5 does not exist")

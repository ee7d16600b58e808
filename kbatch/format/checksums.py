"""The two checksums of Kafka's log formats.

* v0/v1 messages: CRC-32 (IEEE 802.3, zlib's) over magic..end of the message
  (LegacyRecord.computeChecksum).
* v2 batches: CRC-32C (Castagnoli) over attributes..end of the batch
  (DefaultRecordBatch.computeChecksum, Crc32C).

Both take any buffer (bytes, memoryview) without copying it.
"""

from __future__ import annotations

import zlib


def _crc32c_function():
    """The crc32c package's C function, loaded without running the package's ``__init__``.

    That ``__init__`` asks importlib.metadata for the package's own version and loads its command line:
    20 ms, a sixth of kbatch's start-up, for nothing kbatch uses.  Where the extension module is not
    where the package keeps it, the package is imported as usual.
    """
    import importlib.machinery
    import importlib.util
    import os

    spec = importlib.util.find_spec("crc32c")   # finds the package without running it
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(folder, "_crc32c" + suffix)
            if os.path.exists(path):
                loader = importlib.machinery.ExtensionFileLoader("crc32c._crc32c", path)
                module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
                loader.exec_module(module)
                return module.crc32c
    from crc32c import crc32c

    return crc32c


CRC32C = _crc32c_function()   # (data, value=0) -> int: the C function itself, for loops over many entries


def crc32(data, value: int = 0) -> int:
    """CRC-32 of ``data``; pass the CRC of the bytes before it as ``value`` to continue one."""
    return zlib.crc32(data, value) & 0xFFFFFFFF


def crc32c(data, value: int = 0) -> int:
    """CRC-32C of ``data``; pass the CRC of the bytes before it as ``value`` to continue one."""
    return CRC32C(data, value)


# -- the CRC of any span, from CRCs of prefixes ----------------------------------------------------
#
# A CRC is linear: for bytes A then B, crc(A + B) = crc(A) * x^(8 * len(B)) mod P  ^  crc(B)
# (zlib's crc32_combine).  So one running pass over a region, noting the CRC of the prefix at chosen
# positions, gives the CRC of the span between any two of them in a few table look-ups: what resync
# uses to test thousands of candidate entries, each claiming megabytes, in one pass over the bytes.

# The reflected polynomials: CRC-32 (zlib's) and CRC-32C (Castagnoli).
_POLYNOMIALS = {crc32: 0xEDB88320, crc32c: 0x82F63B78, CRC32C: 0x82F63B78}


def _multiply(a: int, b: int, polynomial: int) -> int:
    """a * b modulo the polynomial, in the reflected bit order CRCs use (zlib's multmodp)."""
    product, bit = 0, 1 << 31
    while a:
        if a & bit:
            product ^= b
            a ^= bit
        bit >>= 1
        b = (b >> 1) ^ polynomial if b & 1 else b >> 1
    return product


class SpanCrc:
    """CRCs of spans, from the CRCs of the prefixes that end where the spans start and end."""

    def __init__(self, function):
        self.function = function
        self.polynomial = _POLYNOMIALS[function]
        self._shift_tables: dict[int, list[list[int]]] = {}   # k -> multiply by x^(8 * 2^k), a byte at a time

    def _shift_table(self, k: int) -> list[list[int]]:
        table = self._shift_tables.get(k)
        if table is None:
            factor = 1 << 30          # x^1
            for _ in range(k + 3):    # x^(2^(k+3)) = x^(8 * 2^k)
                factor = _multiply(factor, factor, self.polynomial)
            table = []
            for byte_index in range(4):
                basis = [_multiply(factor, 1 << (8 * byte_index + bit), self.polynomial) for bit in range(8)]
                row = [0] * 256
                for value in range(1, 256):
                    low = value & -value
                    row[value] = row[value ^ low] ^ basis[low.bit_length() - 1]
                table.append(row)
            self._shift_tables[k] = table
        return table

    def shift(self, crc: int, length: int) -> int:
        """crc * x^(8 * length): what the CRC of some bytes contributes after ``length`` more bytes."""
        k = 0
        while length:
            if length & 1:
                table = self._shift_table(k)
                crc = (table[0][crc & 0xFF] ^ table[1][(crc >> 8) & 0xFF] ^ table[2][(crc >> 16) & 0xFF]
                       ^ table[3][crc >> 24])
            length >>= 1
            k += 1
        return crc

    def span(self, prefix_to_start: int, prefix_to_end: int, length: int) -> int:
        """The CRC of the ``length`` bytes between two prefixes of one pass (their CRCs given)."""
        return prefix_to_end ^ self.shift(prefix_to_start, length)

"""The two checksums: the CRC-32C function kbatch loads from the crc32c package's extension is the package's."""

from __future__ import annotations

import subprocess
import sys

import crc32c as package
from hypothesis import given, strategies as st

from kbatch.format.checksums import CRC32C, crc32c


def test_crc32c_check_value():
    assert CRC32C(b"123456789") == crc32c(b"123456789") == 0xE3069283   # the CRC-32C catalogue's check value


@given(first=st.binary(max_size=300), second=st.binary(max_size=300))
def test_crc32c_is_the_packages_and_goes_on_from_a_running_value(first, second):
    assert CRC32C(first + second) == package.crc32c(first + second)
    assert CRC32C(second, CRC32C(first)) == package.crc32c(first + second)
    assert crc32c(memoryview(second), crc32c(first)) == package.crc32c(first + second)


def test_loading_it_leaves_the_package_and_its_version_lookup_alone():
    """The package's __init__ (importlib.metadata for its version) is what costs start-up time."""
    code = ("import sys, kbatch.format.checksums; "
            "print('crc32c' in sys.modules, 'importlib.metadata' in sys.modules, kbatch.format.checksums.CRC32C(b'a'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False", str(package.crc32c(b"a"))]

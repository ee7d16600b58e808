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


@given(first=st.binary(max_size=40), second=st.binary(max_size=700))
def test_the_crc_of_a_span_from_the_crcs_of_two_prefixes(first, second):
    """crc(B) from crc(A) and crc(A + B) (zlib's crc32_combine, in reverse), for both CRCs, by a SpanCrc made
    here (its shift tables built by this test, not cached by an earlier one)."""
    import zlib

    from kbatch.format.checksums import SpanCrc, crc32

    for function, reference in ((crc32c, package.crc32c), (crc32, zlib.crc32)):
        spans = SpanCrc(function)
        assert spans.span(reference(first), reference(first + second), len(second)) == reference(second)


def test_the_function_loaded_here_is_the_extensions_without_the_package(monkeypatch):
    """_crc32c_function run now (at import it runs before a test can watch): the package's C function, from its
    extension module, the package itself left unloaded."""
    from kbatch.format.checksums import _crc32c_function

    for name in [name for name in sys.modules if name == "crc32c" or name.startswith("crc32c.")]:
        monkeypatch.delitem(sys.modules, name)
    function = _crc32c_function()
    assert "crc32c" not in sys.modules
    assert function(b"123456789") == 0xE3069283 and function(b"56789", function(b"1234")) == 0xE3069283

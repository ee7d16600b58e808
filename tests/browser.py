"""A real headless browser for the tests of ``kbatch map``'s page: Debian's chromium, driven from its command line.

``--dump-dom`` gives the page as its scripts left it (the map's script writes what it drew into #drawn),
``--screenshot`` a PNG, ``--enable-logging=stderr`` the console's messages.  No driver library: the page
reports on itself.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from dataclasses import dataclass
from pathlib import Path

NAMES = ("chromium", "chromium-browser", "google-chrome")


class Unavailable(Exception):
    """No browser, and none could be installed: the reason, for a skip (or CI's failure)."""


def find_or_install() -> str:
    """The browser's path; Debian's chromium package installed first when it is missing and we are root."""
    found = _which()
    if found:
        return found
    from .debian import apt_install

    failed = apt_install("chromium")
    found = _which()
    if found:
        return found
    raise Unavailable(failed or "apt-get installed chromium, and no chromium is on PATH")


def _which() -> str | None:
    for name in NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class Browser:
    path: str

    def _run(self, page: Path, *extra: str, fragment: str = "") -> subprocess.CompletedProcess:
        command = [self.path, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                   "--no-first-run", "--enable-logging=stderr", "--v=0",
                   # nothing may be fetched from the network: a name that resolves nowhere fails loudly
                   "--host-resolver-rules=MAP * ~NOTFOUND", "--virtual-time-budget=20000",
                   *extra, page.resolve().as_uri() + (f"#{fragment}" if fragment else "")]
        return subprocess.run(command, capture_output=True, text=True, timeout=180)

    def dom(self, page: Path, fragment: str = "", size=(1280, 1000)) -> tuple[str, list[str]]:
        """The page's DOM after its scripts ran (at ``page#fragment``, in a window of ``size`` pixels), and every
        console message it logged."""
        result = self._run(page, "--dump-dom", f"--window-size={size[0]},{size[1]}", fragment=fragment)
        return result.stdout, console_messages(result.stderr)

    def screenshot(self, page: Path, out: Path, size=(1280, 1000)) -> list[str]:
        """A PNG of the page's first ``size`` pixels at ``out``; the console's messages."""
        result = self._run(page, f"--screenshot={out}", f"--window-size={size[0]},{size[1]}")
        if not out.exists():
            raise AssertionError(f"no screenshot: {result.stderr[-2000:]}")
        return console_messages(result.stderr)


def console_messages(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def drawn(dom: str) -> dict:
    """What the map's script says it drew (the JSON in its #drawn element)."""
    import html
    import json

    match = re.search(r'<pre id="drawn"[^>]*>(.*?)</pre>', dom, re.S)
    assert match, "the page's script did not finish drawing (no #drawn)"
    return json.loads(html.unescape(match.group(1)))


# -- PNG, just enough to look at a screenshot's pixels ---------------------------------------------------

def png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and rows of RGB(A) bytes of an 8-bit truecolour PNG (what chromium writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), (depth, colour)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                estimate = left + up - corner
                pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, rows


def colours(path: Path, step: int = 4) -> dict[tuple, int]:
    """How many sampled pixels (every ``step``-th in each direction) have each colour."""
    width, height, rows = png_pixels(path)
    channels = len(rows[0]) // width
    seen: dict[tuple, int] = {}
    for y in range(0, height, step):
        row = rows[y]
        for x in range(0, width, step):
            pixel = tuple(row[x * channels:x * channels + 3])
            seen[pixel] = seen.get(pixel, 0) + 1
    return seen

"""What a person sees at a terminal: the dump table's layout, the batch headings, the words."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from rich.cells import cell_len

from kbatch.output.values import counted

from .helpers import FIXTURES, ROOT, expected_status, fixture_paths


def _batches(kbatch, path: str) -> list[dict]:
    lines = [json.loads(line) for line in kbatch("dump", "--format", "jsonl", path, expect=0).out.splitlines()]
    return [line for line in lines if line["type"] == "batch"]


@pytest.mark.parametrize("name", ["v2-txn-commit.log", "v2-idempotent.log", "mixed-v0-v1-v2.log",
                                  "v2-logappendtime.log"])
def test_records_headings_keep_every_header_field(name, kbatch):
    """`dump --records` shows a batch's producer fields, leader epoch and timestamp type, as the table does."""
    out = kbatch("dump", "--records", f"fixtures/{name}", expect=0).out
    for batch in _batches(kbatch, f"fixtures/{name}"):
        heading = re.search(rf"^batch @ pos {batch['pos']} .*\n.*", out, re.M).group(0)
        assert batch["timestamp_type"] in heading
        if batch["magic"] == 2:
            assert f"leader epoch {batch['partition_leader_epoch']}" in heading
            assert f"{batch['producer_id']}/{batch['producer_epoch']}/{batch['base_sequence']}" in heading
        if batch["is_transactional"]:
            assert "txn" in heading


def test_counts_are_in_the_singular_when_one(kbatch, tmp_path):
    assert [counted(n, "byte") for n in (0, 1, 2)] == ["0 bytes", "1 byte", "2 bytes"]
    assert [counted(n, "batch") for n in (0, 1, 2)] == ["0 batches", "1 batch", "2 batches"]
    one = _batches(kbatch, "fixtures/v2-none.log")[0]
    segment = tmp_path / "one.log"
    segment.write_bytes((FIXTURES / "v2-none.log").read_bytes()[:one["size"]])
    assert f"{segment}: 1 batch, {one['count']} records," in kbatch("dump", str(segment), expect=0).out
    segment.write_bytes(b"\x01")
    out = kbatch("dump", str(segment), expect=1).out   # a byte that is no entry: truncated
    assert out.startswith(f"{segment} (1 byte)") and f"{segment}: 0 batches, 0 records, 1 byte;" in out


WIDTHS = (80, 100, 120, 200)


@pytest.fixture(scope="module")
def huge_offsets(tmp_path_factory) -> Path:
    """Offsets near Long.MAX_VALUE, a damaged batch and garbage: the widest essential cells there are."""
    from .test_reader import v2_batch

    first = 9_223_372_036_854_775_000
    damaged = bytearray(v2_batch(first + 6, [b"e", b"f"]))
    damaged[-1] ^= 0xFF   # its CRC fails
    data = v2_batch(first, [b"a", b"b", b"c"]) + v2_batch(first + 3, [b"d" * 300, b"", b""]) + bytes(damaged) \
        + b"\x07" * 40 + v2_batch(first + 8, [b"g", b"h"])
    path = tmp_path_factory.mktemp("wide") / "00000000000000000000.log"
    path.write_bytes(bytes(data))
    return path


def _entries(kbatch, path: str, expect: int) -> list[dict]:
    lines = [json.loads(line) for line in kbatch("dump", "--format", "jsonl", path, expect=expect).out.splitlines()]
    return [line for line in lines if line["type"] in ("batch", "finding")]


def _row_is_whole(lines: list[str], entry: dict) -> bool:
    """Some row shows the entry's position and, for a batch, its offsets, each in full (offsets may stack:
    the base offset on the row, "–last" under it)."""
    pos = str(entry["pos"])
    if entry["type"] == "finding":
        return any(re.search(rf"(^|[│ ]){pos} [│ ]", line) for line in lines if pos in line)
    base, last = entry["base_offset"], entry["last_offset"]
    if entry.get("lost_first") is not None:   # a damaged entry shows the offsets it held, as inferred
        base, last = entry["lost_first"], entry["lost_last"]
    offsets = str(base) if base == last else f"{base}–{last}"
    for index, line in enumerate(lines[:-1]):
        if pos not in line:   # (the regular expressions only on the lines that can hold the row)
            continue
        if re.search(rf"(^|[│ ]){entry['pos']} [│ ]+{re.escape(offsets)}( |$)", line):
            return True
        if base != last and re.search(rf"(^|[│ ]){entry['pos']} [│ ]+{base}( |$)", line) \
                and re.search(rf"[│ ]–{last}( |$)", lines[index + 1]):
            return True
    return False


@pytest.mark.parametrize("width", WIDTHS)
def test_the_table_fits_the_terminal_with_every_position_and_offset_whole(width, kbatch, monkeypatch, huge_offsets):
    monkeypatch.setenv("COLUMNS", str(width))
    status = {path.relative_to(ROOT).as_posix(): expected_status(path, records=False) for path in fixture_paths()}
    status[str(huge_offsets)] = 1   # a CRC that fails, and garbage
    for path in status:
        out = kbatch("dump", path, expect=status[path]).out
        table = out.split("\n  ✗ ")[0].split("\n" + path + ": ")[0].splitlines()
        assert all(cell_len(line) <= width for line in table), (path, width)
        for entry in _entries(kbatch, path, status[path]):
            assert _row_is_whole(table, entry), (path, width, entry)
        # the essential columns are always there; what did not fit is named
        header = next(line for line in table if re.search(r"(^|[┃ ])pos[┃ ]", line))
        for name in ("offsets", "count", "codec", "crc", "findings"):
            assert re.search(rf"[┃ ]{name}([┃ ]|$)", header), (path, width, header)
        shown = {name for name in ("magic", "size", "flags", "leader epoch", "pid/epoch/seq", "max timestamp",
                                   "ts type", "base timestamp") if re.search(rf"[┃ ]{name}([┃ ]|$)", header)}
        note = re.search(r"\(not shown at \d+ columns: (.*?);", out.replace("\n", " "))
        hidden = set(note.group(1).split(", ")) if note else set()
        assert not shown & hidden


def test_wider_terminals_show_more(kbatch, monkeypatch):
    headers = {}
    for width in WIDTHS:
        monkeypatch.setenv("COLUMNS", str(width))
        out = kbatch("dump", "fixtures/v2-txn-commit.log", expect=0).out
        headers[width] = next(line for line in out.splitlines() if re.search(r"(^|[┃ ])pos[┃ ]", line))
    assert [len(headers[width].split()) for width in WIDTHS] == sorted(len(headers[width].split()) for width in WIDTHS)
    assert "base timestamp" in headers[200] and "base timestamp" not in headers[80]
    assert "flags" in headers[200]   # txn and control batches


def test_offsets_stack_when_even_the_essential_columns_do_not_fit():
    from kbatch.render.table import BatchTable
    from rich.console import Console

    from .helpers import read_all
    from .test_reader import v2_batch

    batches, _ = read_all(v2_batch(9_223_372_036_854_775_000, [b"a", b"b"]))
    table = BatchTable("t", 60)
    table.add_batch(batches[0])
    console = Console(width=60, record=True, color_system=None)
    for renderable in table.renderables():
        console.print(renderable)
    lines = console.export_text().splitlines()
    row = next(index for index, line in enumerate(lines) if line.lstrip().startswith("0 "))
    assert "9223372036854775000" in lines[row] and "–9223372036854775001" in lines[row + 1]
    assert all(cell_len(line) <= 60 for line in lines)


def test_a_null_reads_differently_from_the_string_null(kbatch, tmp_path):
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    builder.append(0, timestamp=1, key=None, value=b"null", headers=[("h", None), ("g", b"null")])
    builder.append(1, timestamp=2, key=b"null", value=None, headers=[])
    segment = tmp_path / "nulls.log"
    segment.write_bytes(bytes(builder.build()))
    rows = [line.split() for line in kbatch("dump", "-r", str(segment), expect=0).out.splitlines()
            if line.strip().startswith(("0 ", "1 "))]
    assert rows[0][3:] == ["(null)", "null", "h=(null),", "g=null"]
    assert rows[1][3:] == ["null", "(null)"]


def _table_both_ways(data: bytes, width: int) -> tuple[str, str]:
    """The batch table of ``data`` drawn by Rich's Table and by the streamed writer, as plain text."""
    import io

    from rich.console import Console

    from kbatch.format.findings import Finding
    from kbatch.reading.reader import ReadOptions, SegmentReader
    from kbatch.render.table import BatchTable, StreamedBatchTable

    table = BatchTable("t", width)
    for item in SegmentReader(io.BytesIO(data), ReadOptions()):
        (table.add_region if isinstance(item, Finding) else table.add_batch)(item)
    rich = Console(width=width, record=True, color_system=None, file=io.StringIO())
    for renderable in table.renderables():
        rich.print(renderable)
    assert table.layout().fits, "where even the essential columns do not fit, Rich squeezes them: not streamed"
    streamed = io.StringIO()
    StreamedBatchTable(table, Console(width=width, color_system=None, file=streamed)).close()
    return rich.export_text(), streamed.getvalue()


@pytest.mark.parametrize("width", [66, 72, 80, 100, 120, 200])
def test_the_streamed_table_draws_what_rich_draws(width):
    """A long table is written row by row, not by Rich: the same text, with and without the box."""
    from .test_reader import v2_batch

    data = b"".join((FIXTURES / name).read_bytes() for name in
                    ("damaged-garbage-between.log", "v2-txn-commit.log", "mixed-v0-v1-v2.log", "damaged-crc-field.log"))
    data += v2_batch(9_223_372_036_854_775_000, [b"a", b"b"])
    rich, streamed = _table_both_ways(data, width)
    assert streamed == rich


def test_a_long_table_has_one_header_every_row_and_widens_where_it_must(kbatch, tmp_path, monkeypatch):
    from kbatch.render.table import TableSink

    from .test_reader import v2_batch

    monkeypatch.setattr(TableSink, "ROWS_PER_TABLE", 10)
    monkeypatch.setenv("COLUMNS", "120")
    path = tmp_path / "long.log"
    path.write_bytes(b"".join(v2_batch(offset, [b"x"]) for offset in range(95)) + v2_batch(10**12, [b"y"]))
    out = kbatch("dump", str(path), expect=0).out
    lines = out.splitlines()
    rows = [line.split("│")[2].strip() for line in lines if line.startswith("│") and line.split("│")[2].strip()]
    assert rows == [str(offset) for offset in range(95)] + [str(10**12)]
    # one header for the 95 rows; the offset that does not fit its column opens a wider table, once
    assert sum("┃" in line and "offsets" in line for line in lines) == 2
    assert sum(line.endswith(", continued") for line in lines) == 1
    widths = {len(line) for line in lines if line.startswith("│")}
    assert len(widths) == 2 and all(len(line) <= 120 for line in lines)


def _records_both_ways(table, width: int) -> tuple[str, str | None]:
    """A records table drawn by Rich (inside dump's four spaces) and written from its cells."""
    import io

    from rich.console import Console
    from rich.padding import Padding

    from kbatch.render.plain import plain_table_lines

    rich = Console(width=width, color_system=None, file=io.StringIO(), highlight=False, emoji=False)
    rich.print(Padding(table, (0, 0, 0, 4), expand=False))
    lines = plain_table_lines(table, Console(width=width, color_system=None, file=io.StringIO()))
    return rich.file.getvalue(), None if lines is None else "".join(line + "\n" for line in lines)


@pytest.mark.parametrize("width", [24, 66, 80, 100, 120, 200])
def test_the_records_table_written_from_its_cells_is_what_rich_draws(width):
    """dump --records off a terminal writes each records table from its cells: the text Rich draws."""
    from kbatch.reading.reader import ReadOptions, SegmentReader
    from kbatch.render.table import records_table

    written = 0
    for path in fixture_paths() + sorted((FIXTURES / "internal").glob("**/*.log")):
        with open(path, "rb") as stream:
            batches = [batch for batch in SegmentReader(stream, ReadOptions(records=True))
                       if getattr(batch, "records", None)]
        for batch in batches[:4]:   # the first few batches of each: every kind of record there is
            for full, laid_out in ((False, None), (True, None), (False, width), (True, width)):
                # as Rich lays it out, and as dump lays it out for the terminal (timestamps stacked, kept whole)
                table = records_table(batch, "auto", full, batch.records[:12], True, laid_out)
                rich, plain = _records_both_ways(table, width)
                if plain is not None:
                    assert plain == rich, (path.name, batch.pos, full, laid_out)
                    written += 1
    assert written > 100   # the cells' way is the common one, not an exception


_CELL_TEXT = st.text(alphabet=st.sampled_from("ab cdefxyz0123 -=…界\u0301\n"), max_size=90)


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.lists(_CELL_TEXT, min_size=5, max_size=5), min_size=1, max_size=6),
       width=st.integers(min_value=12, max_value=220), header=st.booleans(),
       whole=st.lists(st.sampled_from(["offset", "timestamp", "key"]), unique=True))
def test_any_records_table_written_from_its_cells_is_what_rich_draws(rows, width, header, whole):
    """Words, spaces, long words, wide and zero-width characters, lines: wrapped and folded as Rich does,
    and the columns kept whole never wrapped."""
    from rich.text import Text

    from kbatch.render.table import records_frame

    table = records_frame(header, tuple(whole))
    for row in rows:
        table.add_row(row[0], *(Text(cell) for cell in row[1:]))
    rich, plain = _records_both_ways(table, width)
    if plain is not None:
        assert plain == rich


def _verify_summary_both_ways(rows, width: int) -> tuple[str, str | None]:
    """verify-crc's summary table of ``rows`` (FileSummary, or (path, why unreadable)) drawn by Rich, and
    written from its cells off a terminal ``width`` wide (None: left to Rich)."""
    import io

    from kbatch.render.console import make_console
    from kbatch.render.verify import VerifyTableSink

    console = make_console(io.StringIO())
    console.width = width
    sink = VerifyTableSink(io.StringIO())
    for row in rows:
        if isinstance(row, tuple):
            sink.unreadable(*row)
        else:
            sink.file_done(row)
    console.print(sink.table(width))
    lines = sink.plain_lines(width)   # on a terminal without colour too, at its width
    return console.file.getvalue(), None if lines is None else "".join(line + "\n" for line in lines)


def test_verify_crc_of_the_fixtures_writes_the_summary_rich_draws():
    """Off a terminal verify-crc's summary is written from its cells (a row a file): the text Rich draws."""
    import io

    from kbatch.render.console import make_console
    from kbatch.reading.summary import FileSummary
    from kbatch.ops.verify import verify_file

    rows = []
    for path in fixture_paths():
        with open(path, "rb") as stream:
            summary = FileSummary(str(path.relative_to(ROOT)), path.stat().st_size)
            list(verify_file(summary.path, stream, summary))
        rows.append(summary)
    rows.append(("gone.log", "No such file or directory"))
    for width in (80, 120, 200):
        rich, plain = _verify_summary_both_ways(rows, width)
        if width == 200:
            assert plain is not None, "the common case is written from the cells"
        assert plain in (None, rich)
    assert make_console(io.StringIO()).width == 200   # what a pipe gets, as above


@pytest.mark.parametrize("environment, width", [
    ({}, 200), ({"COLUMNS": "120"}, 120), ({"COLUMNS": ""}, 200), ({"COLUMNS": "0"}, 0), ({"NO_COLOR": "1"}, 200),
    ({"COLUMNS": "wide"}, None), ({"FORCE_COLOR": "1"}, None), ({"FORCE_COLOR": ""}, None),
    ({"TTY_COMPATIBLE": "0"}, None), ({"TTY_COMPATIBLE": "1"}, None)])
def test_the_width_told_without_rich_is_the_one_its_console_draws_plain_at(environment, width, monkeypatch):
    """verify-crc writes its summary off a terminal at plain_width, without making a Rich console: where
    that tells a width, the console kbatch would make draws plain (not a terminal, no colour) at it."""
    import io

    from kbatch.render.console import make_console
    from kbatch.render.plain import plain_width

    for name in ("COLUMNS", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    stream = io.StringIO()
    assert plain_width(stream) == width
    if width is not None:
        console = make_console(stream)
        assert (console.width, console.is_terminal, console.color_system) == (width, False, None)


def test_on_a_terminal_only_rich_tells_the_width():
    import os

    from kbatch.render.plain import plain_width

    leader, follower = os.openpty()
    with open(follower, "w") as terminal:
        assert plain_width(terminal) is None
    os.close(leader)


_PATH_TEXT = st.text(alphabet=st.sampled_from("abz09/-_. [bold]界\u0301é"), min_size=1, max_size=50)


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.one_of(
    st.builds(lambda path, batches, records, size, codes: _summary(path, batches, records, size, codes),
              _PATH_TEXT, st.integers(0, 10**7), st.integers(0, 10**9), st.integers(0, 2**40),
              st.lists(st.sampled_from(["crc-mismatch", "truncated", "zero-tail", "bad-length"]), max_size=4)),
    st.tuples(_PATH_TEXT, st.sampled_from(["Permission denied", "Is a directory"]))), min_size=1, max_size=8),
       width=st.integers(min_value=30, max_value=220))
def test_any_verify_summary_written_from_its_cells_is_what_rich_draws(rows, width):
    rich, plain = _verify_summary_both_ways(rows, width)
    if plain is not None:
        assert plain == rich


def _summary(path: str, batches: int, records: int, size: int, codes: list[str]):
    from kbatch.format.findings import Finding
    from kbatch.reading.summary import FileSummary

    summary = FileSummary(path, size)
    summary.batches, summary.records = batches, records
    for code in codes:
        summary.add_finding(Finding(code, 0, 0, 1, "entry", "x", "y"))
    return summary


@pytest.mark.parametrize("no_color", ["1", ""])
def test_no_color_writes_no_escape_at_all_on_a_terminal(monkeypatch, no_color):
    """NO_COLOR (set and not empty) is --no-color: Rich alone dropped the colours but wrote bold."""
    import io

    from rich.text import Text

    from kbatch.render.console import make_console

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setenv("NO_COLOR", no_color)
    monkeypatch.setenv("TERM", "xterm-256color")
    stream = Terminal()
    make_console(stream).print(Text("title", style="bold underline"), Text("damaged", style="bold red"))
    assert ("\x1b" in stream.getvalue()) == (not no_color)


def test_a_forced_kind_shows_bytes_that_are_no_text_once_escaped_as_hex(kbatch, tmp_path):
    """`dump --kind offset-checkpoint` of random bytes showed "'\\\\xe3…\\x7f…'": two escapings mixed."""
    import random

    noise = tmp_path / "noise.bin"
    noise.write_bytes(random.Random(7).randbytes(300))
    out = kbatch("dump", "--kind", "offset-checkpoint", str(noise), expect=1).out
    assert "\\\\" not in out and "\\x" not in out
    assert "version: expected 0, found 0x" in " ".join(out.split())


_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def assert_iso_times_whole(out: str, context) -> None:
    """Every ISO time in ``out`` is on one line: no line holds its start or its end alone."""
    whole = len(_ISO.findall(out))
    assert len(re.findall(r"\d{4}-\d\d-\d\dT", out)) == whole, context
    assert len(re.findall(r"T\d\d:\d\d:\d\d\.\d{3}Z", out)) == whole, context


def _record_segments() -> list[str]:
    internal = sorted((FIXTURES / "internal").glob("**/*.log"))
    return [path.relative_to(ROOT).as_posix() for path in fixture_paths() + internal]


@pytest.mark.parametrize("width", [80, 100, 120])
def test_dump_records_never_splits_an_iso_time(width, kbatch, monkeypatch):
    """`dump -r` at 80 columns showed "2023-11-14T22:13:20." over "000Z": a narrow timestamp column was
    folded like any other.  Every record's ISO time is shown, each on one line (a value's own text may
    hold one too: that is the record's, and folds as its value)."""
    from collections import Counter

    monkeypatch.setenv("COLUMNS", str(width))
    for path in _record_segments():
        expect = expected_status(ROOT / path)
        out = kbatch("dump", "-r", path, expect=expect).out
        times = Counter(record["timestamp_iso"] for line in kbatch("dump", "-r", "--format", "jsonl", path,
                                                                   expect=expect).out.splitlines()
                        for record in json.loads(line).get("records") or [] if record["timestamp_iso"])
        for iso, records in times.items():
            assert out.count(iso) >= records, (path, width, iso)


def _value_cells(out: str) -> tuple[list[str], list[int]]:
    """The value cells of `dump -r`'s records tables in ``out`` (each row on one line: a wide terminal) and
    the value column's width in each table."""
    cells, widths, columns = [], [], None
    for line in out.splitlines():
        if re.match(r"    offset  timestamp ", line):   # headers: not there where no record has any
            columns = line.index(" value") + 1, line.index(" headers") if " headers" in line else len(line)
            widths.append(columns[1] - columns[0] - (columns[1] < len(line)))
        elif columns and re.match(r"    \d", line):
            cells.append(line[columns[0]:columns[1]].strip())
        elif not line.startswith("    "):
            columns = None
    return cells, widths


@pytest.mark.parametrize("width", [80, 100, 120])
def test_dump_records_wraps_an_internal_value_between_its_fields(width, kbatch, monkeypatch):
    """At 100 columns `{"version":0,"voters":[{"voterId"` ended a line and `:1,"voterDirectoryId"…` began the
    next: the JSON of a decoded value had no space to wrap at.  Each field (up to its comma) that fits the
    value column is shown whole on a line."""
    for path in sorted((FIXTURES / "internal").glob("**/__*/*.log")):
        monkeypatch.setenv("COLUMNS", "1000")
        values, _ = _value_cells(kbatch("dump", "-r", str(path), expect=expected_status(path)).out)
        monkeypatch.setenv("COLUMNS", str(width))
        out = kbatch("dump", "-r", str(path), expect=expected_status(path)).out
        _, widths = _value_cells(out)
        fields = {field for value in values for field in re.findall(r"[^\s,]+,?", value)}
        assert fields and widths
        for field in fields:
            if len(field) <= min(widths):
                assert field in out, (path.name, width, field)


@pytest.mark.parametrize("width", [80, 100, 120])
def test_the_files_beside_a_segment_never_split_an_iso_time(width, kbatch, monkeypatch):
    """A producer snapshot's table at 80 columns folded "2023-11-14T22:13:" over "44.000Z".  An entry's ISO
    time is whole under its timestamp, or (where the table has no room for it) left out, and said so."""
    from kbatch.output.values import iso_timestamp

    monkeypatch.setenv("COLUMNS", str(width))
    for path in sorted((FIXTURES / "partition" / "orders-0").glob("*[0-9].*")):
        out = kbatch("dump", str(path), expect=0).out
        assert_iso_times_whole(out, (path.name, width))
        listed = kbatch("dump", "--format", "jsonl", str(path), expect=0)
        entries = [json.loads(line) for line in listed.out.splitlines()]
        times = [iso_timestamp(entry["timestamp"]) for entry in entries
                 if entry.get("type") == "entry" and isinstance(entry.get("timestamp"), int)]
        shown = all(iso in out for iso in times)
        assert shown or f"(the timestamps' ISO times do not fit {width} columns)" in out, (path.name, width)
        assert shown or width < 100, (path.name, width)   # these tables have room for them at 100


@pytest.mark.parametrize("width", [80, 100, 120])
def test_dump_records_gives_the_value_the_room_of_headers_no_record_has(width, kbatch, monkeypatch):
    """At 80 columns an empty headers column kept nine of them while the value's name was folded
    ("OffsetCommitVal" over "ue v1"): where a records table does not fit, headers no record has take no room."""
    monkeypatch.setenv("COLUMNS", str(width))
    out = kbatch("dump", "-r", "fixtures/internal/__consumer_offsets-12/00000000000000000000.log", expect=0).out
    assert "OffsetCommitValue v1" in out and "GroupMetadataValue v3" in out, width
    with_headers = kbatch("dump", "-r", "fixtures/v2-headers.log", expect=0).out
    assert all(" headers" in line for line in with_headers.splitlines() if line.startswith("    offset  "))


def test_a_pipe_from_a_terminal_gets_the_terminals_width(monkeypatch):
    """``kbatch dump | less`` on an 88-column terminal: stdout is a pipe, standard error (or else standard
    input) the terminal, and the lines are laid out at 88 columns (COLUMNS, when set, first; with no terminal
    at all, 200)."""
    import fcntl
    import io
    import os
    import struct
    import termios

    from kbatch.render.console import make_console
    from kbatch.render.plain import PIPE_WIDTH, plain_width

    monkeypatch.delenv("COLUMNS", raising=False)
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 88, 0, 0))
    pipe = io.StringIO()
    try:
        with open(follower, "w") as terminal:
            monkeypatch.setattr("sys.stderr", terminal)
            assert plain_width(pipe) == 88 and make_console(pipe).width == 88
            assert make_console(pipe).is_terminal is False
            monkeypatch.setenv("COLUMNS", "101")
            assert plain_width(pipe) == 101 and make_console(pipe).width == 101
            monkeypatch.delenv("COLUMNS")
            monkeypatch.setattr("sys.stderr", io.StringIO())   # 2>/dev/null | head: the terminal is stdin
            monkeypatch.setattr("sys.stdin", terminal)
            assert plain_width(pipe) == 88 and make_console(pipe).width == 88
            monkeypatch.setattr("sys.stdin", io.StringIO())
            assert plain_width(pipe) == PIPE_WIDTH and make_console(pipe).width == PIPE_WIDTH
    finally:
        os.close(leader)


@pytest.mark.parametrize("width", [50, 80, 120])
def test_a_batch_heading_wraps_between_its_fields(width, kbatch, monkeypatch):
    """`dump -r` at 80 columns wrapped "crc 4228143185 ✓" after the number: a field is never split."""
    monkeypatch.setenv("COLUMNS", str(width))
    result = kbatch("dump", "-r", "fixtures/partition/orders-0/00000000000000000000.log")
    assert result.code == 0
    lines = result.out.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= width
    crcs = [line for line in lines if "crc " in line]
    assert len(crcs) == 12 and all(re.search(r"(^|  )crc \d+ ✓$", line.strip()) for line in crcs)
    headings = [line for line in lines if line.startswith("batch @ pos ")]
    assert len(headings) == 12 and all(re.match(r"batch @ pos \d+  offsets \d+(–\d+)?  ", line) for line in headings)
    if width >= 120:
        assert all(line.endswith("✓") for line in headings)

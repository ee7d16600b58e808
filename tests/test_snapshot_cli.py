"""kbatch snapshot write|check: golden texts of Kafka bytes beside the files, for projects in any language."""

from __future__ import annotations

import json
import os
import shutil
import stat

import pytest

from kbatch.render.snapshot import EXTENSION, describe, snapshot_bytes

from .helpers import FIXTURES, REPRESENTATIVE, expected_status, fixture_id, fixture_paths


def _encoded(value: bytes = b"v-3", producer_id: int = 1000) -> bytes:
    """An idempotent producer's batch of five records, as kafka-python's encoder makes it."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=producer_id,
                                        producer_epoch=0, base_sequence=0, batch_size=1 << 20)
    for delta in range(5):
        builder.append(delta, timestamp=1700000000000 + delta, key=b"k-%d" % delta,
                       value=value if delta == 3 else b"v-%d" % delta, headers=[("h", b"abc")])
    data = bytearray(builder.build())
    data[0:8] = (1000).to_bytes(8, "big")
    return bytes(data)


def test_write_then_check(kbatch, tmp_path):
    golden = tmp_path / "produce.bin"
    golden.write_bytes(_encoded())
    golden.chmod(0o640)
    result = kbatch("snapshot", "write", str(golden))
    assert result.code == 0, result.err
    written = tmp_path / f"produce.bin{EXTENSION}"
    assert result.out == f"wrote {written}: 156 bytes: 1 batch, 5 records; clean\n"
    assert written.read_text() == describe(_encoded()) and snapshot_bytes(written.read_text()) == _encoded()
    assert stat.S_IMODE(written.stat().st_mode) == 0o640 & ~_umask()
    result = kbatch("snapshot", "check", str(golden))
    assert (result.code, result.out) == (0, f"{golden}: matches {written}\n")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_check_names_the_field_that_changed(kbatch, tmp_path):
    golden = tmp_path / "produce.bin"
    golden.write_bytes(_encoded())
    kbatch("snapshot", "write", str(golden))
    golden.write_bytes(_encoded(value=b"v-4", producer_id=1001))
    result = kbatch("snapshot", "check", str(golden))
    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[0] == f"{golden}: differs from {golden}{EXTENSION}"
    assert f"  Kafka bytes differ (A = the snapshot, B = {golden}): 1 batch changed, 1 record changed" in lines
    assert "    producer_id (producerId): 1000 → 1001" in lines
    assert any(line.startswith("    record offset 1003 (offsetDelta 3) at byte ") and
               line.endswith(": value 'v-3' → 'v-4'") for line in lines), lines
    assert any(line.startswith("    as a consequence: crc ") for line in lines)
    assert any("batch[0].producer_id" in line and "batch[0].records[3].value" in line for line in lines)
    # the golden is untouched by a check; write accepts the change
    assert snapshot_bytes((tmp_path / f"produce.bin{EXTENSION}").read_text()) == _encoded()
    assert kbatch("snapshot", "write", str(golden)).code == 0
    assert kbatch("snapshot", "check", str(golden)).code == 0


def test_check_with_many_files_and_quiet(kbatch, tmp_path):
    paths = []
    for name in ("v2-none.log", "v1-gzip.log", "mixed-v0-v1-v2.log"):
        shutil.copy(FIXTURES / name, tmp_path / name)
        paths.append(str(tmp_path / name))
    assert kbatch("snapshot", "write", "-q", *paths).out == ""
    assert kbatch("snapshot", "check", *paths).out.count(": matches ") == 3
    data = bytearray((tmp_path / "v1-gzip.log").read_bytes())
    data[-1] ^= 1
    (tmp_path / "v1-gzip.log").write_bytes(bytes(data))
    result = kbatch("snapshot", "check", "--quiet", *paths)
    assert (result.code, result.out) == (1, "")


def test_check_says_when_the_text_is_an_older_kbatchs(kbatch, tmp_path):
    golden = tmp_path / "a.bin"
    golden.write_bytes(_encoded())
    kbatch("snapshot", "write", str(golden))
    snapshot = tmp_path / f"a.bin{EXTENSION}"
    snapshot.write_text(snapshot.read_text().replace("  magic: 2\n", ""))
    result = kbatch("snapshot", "check", str(golden))
    assert result.code == 0 and "older kbatch's: kbatch snapshot write refreshes it" in result.out


def test_check_of_hex_text(kbatch, tmp_path):
    golden = tmp_path / "batch.hex"
    golden.write_text(_encoded().hex(" ", 4) + "\n")
    assert kbatch("snapshot", "write", "--hex", str(golden)).code == 0
    assert snapshot_bytes((tmp_path / f"batch.hex{EXTENSION}").read_text()) == _encoded()
    assert kbatch("snapshot", "check", "--hex", str(golden)).code == 0


@pytest.mark.parametrize("setup, message", [
    ("no snapshot", "has no snapshot"),
    ("edited hex", "hex line 1: not hex"),
    ("edited position", r"hex line 1 starts with '0000\\u2028\\x1b[31m', not its position in hex digits"),
    ("underscored position", "hex line 1 starts with '0_000000', not its position in hex digits"),
    ("not a snapshot", "not a kbatch snapshot"),
    ("no file", "cannot read"),
])
def test_trouble_is_status_2(kbatch, tmp_path, setup, message):
    golden = tmp_path / "a.bin"
    golden.write_bytes(_encoded())
    snapshot = tmp_path / f"a.bin{EXTENSION}"
    if setup != "no snapshot":
        kbatch("snapshot", "write", str(golden))
    if setup == "edited hex":
        text = snapshot.read_text()
        snapshot.write_text(text.replace("\n00000000  ", "\n00000000  zz", 1))
    elif setup == "edited position":   # a hand-edited file's text reaches the terminal escaped
        text = snapshot.read_text()
        snapshot.write_text(text.replace("\n00000000  ", "\n0000\u2028\x1b[31m  ", 1))
    elif setup == "underscored position":
        text = snapshot.read_text()
        snapshot.write_text(text.replace("\n00000000  ", "\n0_000000  ", 1))
    elif setup == "not a snapshot":
        snapshot.write_text("hello\n")
    elif setup == "no file":
        golden.unlink()
    result = kbatch("snapshot", "check", str(golden))
    assert result.code == 2 and message in result.err, result.err
    assert "Traceback" not in result.err


def test_stdin_and_unknown_actions_are_usage_errors(kbatch):
    assert kbatch("snapshot", "write", "-").code == 2
    result = kbatch("snapshot", "update", "fixtures/v2-none.log")
    assert result.code == 2 and "write|check" in result.err


# A golden text is some ten times its input: the one vector past this (a 160 KB fetch response of 1,614
# batches) would pin 1.6 MB of text; its text is checked to give back its bytes (test_pytest_plugin.py).
PINNED_UP_TO = 64 * 1024


@pytest.mark.parametrize("path", REPRESENTATIVE, ids=fixture_id)
def test_snapshot_text(path, kbatch, tmp_path, text_snapshot):
    """The golden text of the representative inputs, pinned: readable, and the same on any terminal."""
    copy = tmp_path / path.name
    shutil.copy(path, copy)
    kbatch("snapshot", "write", str(copy), expect=0)
    text = (tmp_path / f"{path.name}{EXTENSION}").read_text()
    assert snapshot_bytes(text) == path.read_bytes()
    assert text == text_snapshot


def _hex_lines(data: bytes) -> list[str]:
    """The bytes as the snapshot's last part writes them, worked here: 32 a line after the line's position in
    eight hex digits and two spaces, in groups of four."""
    return [f"{pos:08x}  " + " ".join(data[at:at + 4].hex() for at in range(pos, min(pos + 32, len(data)), 4))
            for pos in range(0, len(data), 32)]


@pytest.mark.parametrize("path", [path for path in fixture_paths() if path.stat().st_size <= PINNED_UP_TO],
                         ids=fixture_id)
def test_snapshot_text_of_every_input(path, kbatch, tmp_path):
    """Every input's golden text: its size, counts and state, a heading for each entry where dump finds it,
    each record's offset, and its bytes in hex, line for line."""
    copy = tmp_path / path.name
    shutil.copy(path, copy)
    data = path.read_bytes()
    kbatch("snapshot", "write", str(copy), expect=0)
    text = (tmp_path / f"{path.name}{EXTENSION}").read_text()
    dumped = [json.loads(line) for line in kbatch("dump", "--format", "jsonl", "--records", str(path),
                                                  expect=expected_status(path)).out.splitlines()]
    batches = [line for line in dumped if line["type"] == "batch"]
    records = sum(len(batch["records"]) for batch in batches)

    def many(count, noun):
        return f"{count} {noun}{'' if count == 1 else 'es' if noun.endswith('h') else 's'}"
    state = "damaged" if expected_status(path) else "clean"
    head, _, hex_part = text.partition(
        "\nbytes (hex), the first column their position; these are compared, the text above is for review:\n")
    assert head.startswith(f"kbatch snapshot 1\n{len(data)} bytes: {many(len(batches), 'batch')}, "
                           f"{many(records, 'record')}; {state}\n\n")
    headings = [line for line in head.splitlines() if line.startswith("batch at byte ")]
    assert headings == [f"batch at byte {batch['pos']}: " + (
        f"offset {batch['base_offset']}" if batch["base_offset"] == batch["last_offset"]
        else f"offsets {batch['base_offset']}–{batch['last_offset']}") for batch in batches]
    assert [int(line.split()[2]) for line in head.splitlines() if line.startswith("  record offset ")] == \
        [record["offset"] for batch in batches for record in batch["records"]]
    assert [line for line in head.splitlines() if line.startswith("  crc: ")] == \
        [f"  crc: {batch['crc']}" for batch in batches]
    assert hex_part.splitlines() == _hex_lines(data)


def test_the_text_does_not_depend_on_the_terminal(kbatch, tmp_path, monkeypatch):
    golden = tmp_path / "a.log"
    shutil.copy(FIXTURES / "v2-headers.log", golden)
    kbatch("snapshot", "write", str(golden), expect=0)
    plain = (tmp_path / f"a.log{EXTENSION}").read_text()
    monkeypatch.setenv("COLUMNS", "30")
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TERM", "xterm-256color")
    kbatch("snapshot", "write", str(golden), expect=0)
    assert (tmp_path / f"a.log{EXTENSION}").read_text() == plain and "\x1b" not in plain


SMALL_FIXTURES = [path for path in fixture_paths() if path.stat().st_size <= 8192]


@pytest.mark.parametrize("path", SMALL_FIXTURES[::4], ids=fixture_id)
def test_any_change_of_bytes_is_explained_without_a_crash(path):
    """Bad input never crashes kbatch: bytes changed anywhere (a field, a length, a CRC, a varint) are told
    field by field or as damage, and a snapshot of the damaged bytes still gives them back."""
    from hypothesis import HealthCheck, given, settings, strategies as st

    from kbatch.render.snapshot import explain

    original = path.read_bytes()

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.tuples(st.integers(0, len(original) - 1), st.integers(0, 255)), min_size=1, max_size=3),
           st.integers(0, 16))
    def check(changes, cut):
        changed = bytearray(original)
        for position, value in changes:
            changed[position] = value
        changed = bytes(changed[:len(changed) - cut])
        lines = explain(original, changed)
        assert all(isinstance(line, str) and "\n" not in line for line in lines)
        assert (lines == []) == (changed == original)
        assert snapshot_bytes(describe(changed)) == changed

    check()


def test_the_bytes_come_back_without_kbatch_as_the_readme_says(kbatch, tmp_path):
    """README: sed '1,/^bytes (hex)/d' FILE.kbatch-snapshot | cut -c11- | xxd -r -p > FILE."""
    import re
    import subprocess

    from .helpers import ROOT

    command = re.search(r"`(sed '1,/\^bytes \(hex\)/d' FILE\.kbatch-snapshot \| cut -c11- \| xxd -r -p > FILE)`",
                        (ROOT / "README.md").read_text()).group(1)
    if shutil.which("xxd") is None:
        pytest.skip("no xxd here")
    golden = tmp_path / "a.log"
    shutil.copy(FIXTURES / "v2-txn-commit.log", golden)
    kbatch("snapshot", "write", str(golden), expect=0)
    subprocess.run(["bash", "-c", command.replace("FILE.kbatch-snapshot", "a.log.kbatch-snapshot")
                    .replace("> FILE", "> back.log")], cwd=tmp_path, check=True)
    assert (tmp_path / "back.log").read_bytes() == golden.read_bytes()


class _Trickle:
    """A seekable stream that hands out at most 7 bytes a read, as an unbuffered read may."""

    def __init__(self, data: bytes):
        import io

        self.inner = io.BytesIO(data)

    def read(self, size: int = -1) -> bytes:
        return self.inner.read(7 if size < 0 else min(size, 7))

    def seek(self, pos: int, whence: int = 0) -> int:
        return self.inner.seek(pos, whence)


def test_the_text_made_a_piece_at_a_time_is_the_whole_text(monkeypatch):
    """The batch and record lines wait on disk past a size, the hex is read a piece at a time from a stream
    that hands out a few bytes a read: the text is the same as made in memory (the pinned texts above)."""
    import kbatch.render.snapshot as render
    from kbatch.render.snapshot import snapshot_text

    data = b"".join((FIXTURES / name).read_bytes() for name in ("v2-none.log", "v2-gzip.log")) + b"\x07" * 45
    whole = describe(data)
    monkeypatch.setattr(render, "_TEXT_IN_MEMORY", 100)
    monkeypatch.setattr(render, "_HEX_PIECE", render.HEX_WIDTH * 3)
    pieces = list(snapshot_text(_Trickle(data)))
    assert len(pieces) > 10 and "".join(pieces) == whole
    assert snapshot_bytes(whole) == data


@pytest.mark.parametrize("change, status, said", [
    (None, 0, "matches"),
    ("last byte", 1, "differs from"),
    ("one byte more", 1, "differs from"),
    ("one byte less", 1, "differs from"),
])
def test_check_compares_every_byte_to_the_end(kbatch, tmp_path, change, status, said):
    """check reads the snapshot's hex a line at a time beside the file: a change in its last byte, or a
    byte more or less at its end, is found as surely as one at its start."""
    golden = tmp_path / "a.bin"
    data = b"".join(_encoded(b"v-%d" % n) for n in range(40))   # hex lines beyond a piece's
    golden.write_bytes(data)
    assert kbatch("snapshot", "write", str(golden)).code == 0
    changed = {None: data, "last byte": data[:-1] + bytes([data[-1] ^ 1]), "one byte more": data + b"\0",
               "one byte less": data[:-1]}[change]
    golden.write_bytes(changed)
    result = kbatch("snapshot", "check", str(golden))
    assert result.code == status and f"a.bin: {said}" in result.out, result.out

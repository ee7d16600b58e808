"""``kbatch grep``: the records ``dump --records`` gives, filtered; as grep shows them; pinned by snapshots."""

from __future__ import annotations

import json
import re

import pytest

from kbatch.ops.grep import Query, Search

from .helpers import FIXTURES, REPRESENTATIVE, ROOT, expected_status, fixture_id, fixture_paths, schema_validator

# every segment we ship: the flat fixtures, the vectors, and the segments of the partition directories
SEGMENTS = fixture_paths() + sorted(set(FIXTURES.glob("*/**/*.log")) - set(fixture_paths()))


def _rel(path) -> str:
    return path.relative_to(ROOT).as_posix()


def _bytes(shown: dict | None) -> bytes | None:
    if shown is None:
        return None
    (kind, text), = shown.items()
    return bytes.fromhex(text) if kind == "hex" else text.encode()


def _dumped(kbatch, path: str, extra=()) -> list[tuple[dict, dict]]:
    """(batch, record) of every data record ``dump --records --format jsonl`` lists, bytes in hex."""
    result = kbatch("dump", "--records", "--format", "jsonl", "--decode", "hex", *extra, path)
    out = []
    for line in result.out.splitlines():
        entry = json.loads(line)
        if entry.get("type") == "batch" and not entry["is_control"]:
            out += [(entry, record) for record in entry["records"] or [] if record["control"] is None]
    return out


def _where(record: dict) -> tuple:
    return record["offset"], record["pos"], record["inner_pos"]


def _consumer_refuses(batch: dict, record: dict) -> bool:
    """Kafka's consumer (check.crcs) on dump's JSON: a v2 batch whose CRC fails, a v0/v1 message whose own does, an
    entry whose length field dump found wrong, the last record a v2 batch counts when bytes follow it."""
    end = (record["inner_pos"] if record["pos"] is None else record["pos"]) + record["size"]
    return (batch["magic"] >= 2 and not batch["crc_valid"]) or record["crc_valid"] is False or any(
        (finding["code"] == "bad-length" and finding["pos"] == batch["pos"] + 8) or
        (finding["code"] == "trailing-bytes" and batch["magic"] >= 2 and
         end == (finding["inner_pos"] if record["pos"] is None else finding["pos"]))
        for finding in batch["findings"])


# (grep's arguments, the same selection written plainly on dump's bytes)
def _search(pattern: bytes, flags=0, key=True, value=True):
    regex = re.compile(pattern, flags)

    def test(batch, record):
        return any(data is not None and regex.search(data) for data in
                   ([_bytes(record["key"])] if key else []) + ([_bytes(record["value"])] if value else []))
    return test


def _header(name: bytes, pattern: bytes | None = None):
    def test(batch, record):
        return any(_bytes(header["key"]) == name and (pattern is None or (
            header["value"] is not None and re.search(pattern, _bytes(header["value"]))))
            for header in record["headers"])
    return test


QUERIES = {
    "anything": ([""], lambda batch, record: record["key"] is not None or record["value"] is not None),
    "order": (["order"], _search(b"order")),
    "key-anchored": (["--key", "^order-[0-9]+$"], _search(rb"^order-[0-9]+$", value=False)),
    "value-ignore-case": (["--value", "-i", "CREATED"], _search(b"created", re.IGNORECASE, key=False)),
    "inverted": (["-v", "e"], lambda batch, record: not _search(b"e")(batch, record)),
    "fixed": (["-F", "a.b"], _search(re.escape(b"a.b"))),
    "bytes": (["--bytes", "00"], _search(b"\x00")),
    "regex-with-literals": (["[0-9]+ kafka"], _search(rb"[0-9]+ kafka")),
    "word": (["-w", "kafka|record"], _search(rb"(?<![A-Za-z0-9_])(kafka|record)(?![A-Za-z0-9_])")),
    "word-fixed-ignore-case": (["-w", "-F", "-i", "KEY-1"], _search(rb"(?<![A-Za-z0-9_])key-1(?![A-Za-z0-9_])",
                                                                    re.IGNORECASE)),
    "header": (["--header", "trace"], _header(b"trace")),
    "header-value": (["--header", "x=^1$"], _header(b"x", rb"^1$")),
    "producer": (["--producer-id", "4010", ""], lambda batch, record: batch["producer_id"] == 4010 and (
        record["key"] is not None or record["value"] is not None)),
}


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("path", SEGMENTS, ids=fixture_id)
def test_grep_gives_the_records_dump_gives_filtered(path, query, kbatch):
    args, selects = QUERIES[query]
    expected = [_where(record) for batch, record in _dumped(kbatch, _rel(path), ["--decoder", "none"])
                if selects(batch, record)]
    result = kbatch("grep", "--format", "jsonl", "--decoder", "none", *args, _rel(path))
    found = [json.loads(line) for line in result.out.splitlines()]
    assert [_where(record) for record in found] == expected
    assert result.code in ((0 if expected else 1), 2) and (result.code != 2 or "--strict" in args)
    assert "Traceback" not in result.err


@pytest.mark.parametrize("path", SEGMENTS, ids=fixture_id)
def test_a_match_is_the_record_dump_writes_with_its_batch(path, kbatch):
    dumped = {_where(record): (batch, record) for batch, record in _dumped(kbatch, _rel(path), ["--decoder", "none"])}
    # grep's status: 0 when a record is selected (the empty pattern selects each), 1 when none is
    result = kbatch("grep", "--format", "jsonl", "--decode", "hex", "--decoder", "none", "", _rel(path),
                    expect=0 if dumped else 1)
    for line in result.out.splitlines():
        match = json.loads(line)
        batch, record = dumped[_where(match)]
        assert {key: match[key] for key in record} == record
        assert (match["file"], match["batch_pos"], match["batch_base_offset"], match["batch_last_offset"],
                match["match"]) == (_rel(path), batch["pos"], batch["base_offset"], batch["last_offset"], True)


def test_field_reads_json_values(kbatch):
    path = "fixtures/internal/registry/payments-1/00000000000000000000.log"
    values = [(record["offset"], _bytes(record["value"])) for _, record in _dumped(kbatch, path)]
    wanted = []
    for offset, value in values:
        try:
            document = json.loads(value)
        except (TypeError, ValueError):
            continue
        if isinstance(document, dict):
            wanted.append((offset, document))
    assert wanted, "the fixture holds a plain JSON value"
    offset, document = wanted[0]
    name, leaf = next(iter(document.items()))
    wanted_text = leaf if isinstance(leaf, str) else json.dumps(leaf)
    result = kbatch("grep", "--format", "jsonl", "--field", f"{name}={wanted_text}", path)
    assert [json.loads(line)["offset"] for line in result.out.splitlines()] == \
        [offset for offset, doc in wanted if doc.get(name) == leaf]
    assert kbatch("grep", "--field", f"{name}=no such value", path).code == 1


def test_field_reads_an_internal_topics_decoded_records(kbatch):
    path = "fixtures/internal/__consumer_offsets-12/00000000000000000000.log"
    result = kbatch("grep", "--format", "jsonl", "--field", "key.data.group=billing", path, expect=0)
    found = [json.loads(line) for line in result.out.splitlines()]
    assert found and all(match["decoded"]["key"]["data"]["group"] == "billing" for match in found)
    every = [json.loads(line) for line in kbatch("grep", "--format", "jsonl", "", path, expect=0).out.splitlines()]
    assert len(found) == sum(1 for match in every if (match.get("decoded") or {}).get("key")
                             and match["decoded"]["key"]["data"].get("group") == "billing")


def _search_file(path, query: Query, every_record: bool = False):
    with open(path, "rb") as stream:
        search = Search(query, every_record=every_record)
        found = [item for item in search.run(str(path), stream) if hasattr(item, "selected")]
    return search, found


def test_batches_with_no_match_are_walked_without_objects(tmp_path):
    """The compiled walk takes the batches with nothing to show; the full reader the one with the match."""
    from .handmade import batch

    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(batch(10 * n, [(b"key-%d-%d" % (n, i), b"value") for i in range(10)]) for n in range(6)))
    search, found = _search_file(path, Query(pattern="key-4-7", where="key"))
    assert [item.record.offset for item in found] == [47]
    assert search.walked == 5   # all but the batch holding the match


def test_a_key_is_searched_up_to_its_end_not_into_the_bytes_after_it(tmp_path):
    """A key ending "order-4" whose value is 25 bytes long is followed in the batch by the byte "2" (the value's
    length, a zigzag varint): "order-42" lies across the two, which the batch-wide screen sees and the test of
    each key must not -- the batch holds no match, so the compiled walk takes it."""
    from .handmade import batch

    path = tmp_path / "00000000000000000000.log"
    keys = [b"k-%d:" % i + b"x" * i + b"order-4" for i in range(70)]
    path.write_bytes(batch(0, [(key, b"v" * 25) for key in keys]))
    assert path.read_bytes().count(b"order-42") == len(keys)
    search, found = _search_file(path, Query(pattern="order-42", where="key"))
    assert (found, search.walked) == ([], 1)


@pytest.mark.parametrize("query", ["order", "^order-[0-9]$", "e", "kafka", "-w kafka", "-w key-1"])
@pytest.mark.parametrize("path", SEGMENTS, ids=fixture_id)
def test_the_walk_and_the_full_reader_select_alike(path, query):
    """Every record asked by the full reader (every_record) gives what the compiled walk lets through."""
    word = query.startswith("-w ")
    pattern = query.removeprefix("-w ")
    for invert in (False, True):
        fast = _search_file(path, Query(pattern=pattern, invert=invert, word=word))[1]
        full = [item for item in _search_file(path, Query(pattern=pattern, invert=invert, word=word),
                                              every_record=True)[1] if item.selected]
        assert [(item.batch.pos, item.record.offset) for item in fast] == \
            [(item.batch.pos, item.record.offset) for item in full]


@pytest.mark.parametrize("query", [["order"], ["^order-[0-9]$"], ["e"], ["-w", "kafka"], ["-w", "-F", "-i", "KEY-1"]])
def test_the_pure_build_selects_as_the_compiled(query, kbatch):
    """The same search with every kernel as plain Python (KBATCH_PURE_PYTHON, in a process of its own)."""
    from .helpers import run_kbatch_pure

    args = ["grep", "--format", "jsonl", *query, *map(str, SEGMENTS)]
    compiled = kbatch(*args)
    pure = run_kbatch_pure(args)
    assert compiled.out and (pure.code, pure.out) == (compiled.code, compiled.out)


@pytest.mark.parametrize("needle", [b"order-42", b"x", b"-4", b"\x00\xff", b"ordered items, pending"])
def test_a_literal_is_found_where_python_finds_it(needle):
    """The literal search (a block of places screened at once, then memcmp) against ``in``: the needle at every
    place of keys up to three blocks long and past them, and near misses (a byte of it changed) everywhere."""
    from kbatch.kernels.match import RecordMatch

    match = RecordMatch(literal=needle)
    filler = b"user-4021:order-4 order-2 " * 10
    for length in range(len(needle), 200, 7):
        for at in range(length - len(needle) + 1):
            for changed in range(-1, len(needle)):
                sought = bytearray(needle)
                if changed >= 0:
                    sought[changed] ^= 0x01
                key = filler[:at] + bytes(sought) + filler[at + len(needle):length]
                assert match.record(key, None, []) == (needle in key), (key, needle)
                assert match.record(key[:-1], None, []) == (needle in key[:-1]), (key, needle)


# -- as grep shows lines ------------------------------------------------------------------------------------

def test_lines_are_file_offset_key_and_value(kbatch):
    result = kbatch("grep", "order-3", "fixtures/v2-txn-abort.log", "fixtures/v2-txn-commit.log")
    assert result.out.splitlines() == ["fixtures/v2-txn-abort.log:1003:order-3\tcreated",
                                       "fixtures/v2-txn-commit.log:903:order-3\tcreated"]
    assert result.code == 0
    one = kbatch("grep", "order-3", "fixtures/v2-txn-abort.log")
    assert one.out == "1003:order-3\tcreated\n"
    assert kbatch("grep", "-H", "order-3", "fixtures/v2-txn-abort.log").out.startswith("fixtures/v2-txn-abort.log:")
    assert kbatch("grep", "--no-filename", "order-3", "fixtures/v2-txn-abort.log", "fixtures/v2-txn-commit.log").out \
        == "1003:order-3\tcreated\n903:order-3\tcreated\n"


def test_count_files_and_max_count(kbatch):
    assert kbatch("grep", "-c", "order", "fixtures/v2-txn-abort.log", expect=0).out == "4\n"
    assert kbatch("grep", "-l", "order-3", "fixtures/v2-txn-abort.log", "fixtures/v2-none.log", expect=0).out == \
        "fixtures/v2-txn-abort.log\n"
    assert len(kbatch("grep", "-m", "2", "order", "fixtures/v2-txn-abort.log", expect=0).out.splitlines()) == 2


def test_context_shows_the_records_around_a_match(kbatch):
    result = kbatch("grep", "-C", "1", "other", "fixtures/v2-txn-abort.log", expect=0)
    assert result.out.splitlines() == ["1003-order-3\tcreated", "1004:other\tnon-transactional, interleaved",
                                       "1006-after\tafter the marker"]   # the ABORT marker (1005) is no data


def test_exit_status_is_greps(kbatch):
    assert kbatch("grep", "order", "fixtures/v2-txn-abort.log").code == 0
    assert kbatch("grep", "no such thing", "fixtures/v2-txn-abort.log").code == 1
    assert kbatch("grep", "order", "fixtures/no-such-file.log").code == 2
    assert kbatch("grep", "(", "fixtures/v2-txn-abort.log").code == 2


def test_damage_is_a_finding_on_stderr_and_with_strict_an_error(kbatch):
    result = kbatch("grep", "", "fixtures/damaged-crc-field.log")
    assert result.code == 0 and "crc-mismatch at pos 2356" in result.err
    assert kbatch("grep", "--strict", "", "fixtures/damaged-crc-field.log").code == 2


def test_colour_marks_the_match(kbatch):
    result = kbatch("grep", "--color", "always", "rder-3", "fixtures/v2-txn-abort.log", expect=0)
    assert "\x1b[" in result.out and "rder-3" in result.out
    assert "\x1b[" not in kbatch("grep", "rder-3", "fixtures/v2-txn-abort.log", expect=0).out


def test_offset_range_and_time_select_as_dump_does(kbatch):
    path = "fixtures/partition/orders-0/00000000000000000000.log"
    for extra in (["--offset-range", "5:12"], ["--since", "1700000000005", "--until", "1700000000011"]):
        expected = [_where(record) for _, record in _dumped(kbatch, path, extra)]
        result = kbatch("grep", "--format", "jsonl", *extra, "", path, expect=0 if expected else 1)
        assert [_where(json.loads(line)) for line in result.out.splitlines()] == expected


# -- snapshots -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", REPRESENTATIVE, ids=fixture_id)
def test_grep_snapshot(path, kbatch, text_snapshot):
    shown = []
    for args in (["-H", "e"], ["-c", "--key", "order"], ["-v", "--format", "jsonl", "a"]):
        result = kbatch("grep", *args, _rel(path))
        assert result.code in (0, 1)   # (what each should be: test_grep_selects_what_the_records_hold)
        shown.append(f"$ kbatch grep {' '.join(args)} {_rel(path)}\n{result.out}"
                     f"{'[stderr]' + chr(10) + result.err if result.err else ''}(exit {result.code})\n")
    assert "\n".join(shown) == text_snapshot


def _data_records(kbatch, path) -> list[tuple[dict, dict, bytes, bytes]]:
    """Every data record of an input as ``dump --records`` gives it (held to the sidecars in test_dump.py),
    with its batch and its key and value bytes (b"" for null): control records never match."""
    dumped = [json.loads(line) for line in kbatch("dump", "--format", "jsonl", "--records", "--decode", "hex",
                                                  _rel(path), expect=expected_status(path)).out.splitlines()]
    return [(batch, record, bytes.fromhex((record["key"] or {"hex": ""})["hex"]),
             bytes.fromhex((record["value"] or {"hex": ""})["hex"]))
            for batch in dumped if batch["type"] == "batch" for record in batch["records"] if record["control"] is None]


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_grep_selects_what_the_records_hold(path, kbatch):
    """On every input: the records grep selects are those whose key or value holds the bytes (``-v``: not),
    in the order of the file, each under its batch and marked untrusted where a consumer refuses it; ``-c``
    counts them; the exit status is 0 when one is selected, else 1."""
    records = _data_records(kbatch, path)
    with_e = [(batch, record) for batch, record, key, value in records if b"e" in key or b"e" in value]
    without_a = [(batch, record) for batch, record, key, value in records if b"a" not in key and b"a" not in value]
    order_keys = sum(b"order" in key for _, _, key, _ in records)
    shown = kbatch("grep", "-H", "e", _rel(path), expect=0 if with_e else 1).out.splitlines()
    assert [int(line.split(":")[1]) for line in shown] == [record["offset"] for _, record in with_e]
    assert all(line.startswith(f"{_rel(path)}:") for line in shown)
    assert kbatch("grep", "-c", "--key", "order", _rel(path), expect=0 if order_keys else 1).out == f"{order_keys}\n"
    lines = [json.loads(line) for line in kbatch("grep", "-v", "--format", "jsonl", "a", _rel(path),
                                                 expect=0 if without_a else 1).out.splitlines()]
    assert [(line["batch_pos"], line["batch_base_offset"], line["offset"], line["match"], "untrusted" in line)
            for line in lines] == [(batch["pos"], batch["base_offset"], record["offset"], True, _refused(batch))
                                   for batch, record in without_a]


def _refused(batch: dict) -> bool:
    """Whether a consumer refuses a batch's records (README's grep): its CRC fails, or damage was found in it (a
    length field wrong, bytes after its last record)."""
    return not batch["crc_valid"] or any(finding["severity"] == "error" for finding in batch["findings"])


# -- what a read_committed consumer is given -------------------------------------------------------------------

def _transactional_partition(directory) -> dict:
    """A partition of committed, aborted, open and damaged-marker transactions, between plain records; what a
    read_committed consumer is given of each offset (True, False, None: unknown)."""
    from .handmade import batch, end_marker

    def txn(offset, pid, keys):
        return batch(offset, [(key, b"v-" + key) for key in keys], transactional=True, producer_id=pid,
                     producer_epoch=0, base_sequence=0)

    def marker(offset, pid, kind):
        return batch(offset, [end_marker(kind, 7)], control=True, transactional=True, producer_id=pid,
                     producer_epoch=0)

    damaged = bytearray(marker(9, 300, "COMMIT"))
    damaged[-1] ^= 0xFF   # its CRC fails: a broker's recovery drops it, and the outcome is unknown
    entries = [txn(0, 100, [b"committed-0", b"committed-1"]), batch(2, [(b"plain-2", b"v")]),
               txn(3, 200, [b"aborted-3", b"aborted-4"]), marker(5, 100, "COMMIT"), marker(6, 200, "ABORT"),
               txn(7, 300, [b"unknown-7", b"unknown-8"]), bytes(damaged), batch(10, [(b"plain-10", b"v")]),
               txn(11, 400, [b"open-11", b"open-12"]), batch(13, [(b"plain-13", b"v")])]
    partition = directory / "orders-0"
    partition.mkdir()
    (partition / "00000000000000000000.log").write_bytes(b"".join(entries))
    return {0: True, 1: True, 2: True, 3: False, 4: False, 7: None, 8: None, 10: True, 11: False, 12: False,
            13: False}


def test_read_committed_leaves_out_aborted_and_open_transactions_and_says_what_is_unknown(kbatch, tmp_path):
    seen = _transactional_partition(tmp_path)
    path = str(tmp_path / "orders-0" / "00000000000000000000.log")
    every = kbatch("grep", "--format", "jsonl", "", path, expect=0)
    assert [json.loads(line)["offset"] for line in every.out.splitlines()] == sorted(seen)   # no marker is data
    committed = kbatch("grep", "--format", "jsonl", "--isolation", "read_committed", "", path, expect=0)
    found = [json.loads(line) for line in committed.out.splitlines()]
    assert [(match["offset"], match["visible_to_read_committed"]) for match in found] == \
        [(offset, visible) for offset, visible in seen.items() if visible is not False]
    assert "producer 300's transaction from offset 7 has an unknown outcome" in committed.err
    assert "its CRC fails" in committed.err
    text = kbatch("grep", "--isolation", "read_committed", "unknown-7", path, expect=0)
    assert text.out == "7:unknown-7\tv-unknown-7\t(read_committed: unknown outcome)\n"
    # the whole directory, and its segment named alone, read the same partition
    assert kbatch("grep", "-c", "--no-filename", "--isolation", "read_committed", "", str(tmp_path / "orders-0"),
                  expect=0).out \
        == f"{sum(visible is not False for visible in seen.values())}\n"


def test_read_committed_holds_the_txnindex_to_a_log_with_an_empty_active_segment(kbatch, tmp_path):
    """The view reads every segment of the partition, an empty one (just rolled) too, and so holds its
    .txnindex against the log: a wrong producer id in it is said."""
    directory = tmp_path / "orders-0"
    directory.mkdir()
    for path in (FIXTURES / "partition" / "orders-0").iterdir():
        (directory / path.name).write_bytes(path.read_bytes())
    index = directory / "00000000000000000000.txnindex"
    index.write_bytes(index.read_bytes()[:2] + (4004).to_bytes(8, "big") + index.read_bytes()[10:])
    (directory / "00000000000000000053.log").write_bytes(b"")
    result = kbatch("grep", "-c", "--isolation", "read_committed", "", str(directory), expect=0)
    assert "00000000000000000000.txnindex: txnindex-mismatch at pos 0" in result.err
    assert result.out.splitlines()[-1].endswith("00000000000000000053.log:0")


def test_dump_read_committed_lists_what_grep_finds(kbatch, tmp_path):
    seen = _transactional_partition(tmp_path)
    path = str(tmp_path / "orders-0" / "00000000000000000000.log")
    dumped = _dumped(kbatch, path, ["--isolation", "read_committed"])
    assert [record["offset"] for _, record in dumped] == [offset for offset, visible in seen.items()
                                                          if visible is not False]
    for args, selects in QUERIES.values():
        expected = [_where(record) for batch, record in dumped if selects(batch, record)]
        result = kbatch("grep", "--format", "jsonl", "--isolation", "read_committed", *args, path,
                        expect=0 if expected else 1)
        assert [_where(json.loads(line)) for line in result.out.splitlines()] == expected, args


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*/**/*.log")), ids=fixture_id)
def test_read_committed_grep_is_read_committed_dump_filtered(path, kbatch):
    dumped = [(batch, record) for batch, record in
              _dumped(kbatch, _rel(path), ["--isolation", "read_committed", "--decoder", "none"])
              if not _consumer_refuses(batch, record)]
    for query in ("anything", "order", "inverted"):
        args, selects = QUERIES[query]
        expected = [_where(record) for batch, record in dumped if selects(batch, record)]
        result = kbatch("grep", "--format", "jsonl", "--decoder", "none", "--isolation", "read_committed", *args,
                        _rel(path), expect=0 if expected else 1)
        assert [_where(json.loads(line)) for line in result.out.splitlines()] == expected


def test_the_txn_fixture_read_committed(kbatch):
    """fixtures/internal/txn/payments-0: 5002 aborts, 5004 and 5005 are open (the last stable offset is 9)."""
    path = "fixtures/internal/txn/payments-0"
    every = [json.loads(line) for line in kbatch("grep", "--format", "jsonl", "", path, expect=0).out.splitlines()]
    committed = [json.loads(line) for line in kbatch("grep", "--format", "jsonl", "--isolation", "read_committed",
                                                     "", path, expect=0).out.splitlines()]
    assert all(match["offset"] < 9 and match["producer_id"] != 5002 for match in committed)
    assert {match["offset"] for match in every if match["offset"] < 9 and match["producer_id"] != 5002} == \
        {match["offset"] for match in committed}


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_a_file_searched_in_parts_prints_what_one_walk_prints(path, kbatch, monkeypatch):
    from kbatch.walk import parts

    monkeypatch.setattr(parts, "PART_MIN_SIZE", 64)
    forks = []
    fork = parts._fork
    monkeypatch.setattr(parts, "_fork", lambda part, *args: forks.append(part.cut) or fork(part, *args))
    for args in (["e"], ["-v", "--format", "jsonl", "a"]):
        before = len(forks)
        whole = kbatch("grep", "-j", "1", *args, _rel(path))
        assert len(forks) == before
        cut = kbatch("grep", "-j", "3", *args, _rel(path))
        assert (cut.out, cut.code) == (whole.out, whole.code)
    assert forks or path.stat().st_size < 2 * 64


# -- what a consumer refuses as corrupt: marked untrusted, and never in what a consumer is given -------------------

def _v2(base_offset: int, keys, codec: int = 0) -> bytes:
    """A v2 batch of kafka-python's builder (not kbatch's encoder) at ``base_offset``, each value "v-" + key."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for delta, key in enumerate(keys):
        builder.append(delta, timestamp=1_700_000_000_000 + delta, key=key, value=b"v-" + key, headers=[])
    return base_offset.to_bytes(8, "big") + bytes(builder.build())[8:]   # (baseOffset: outside the CRC)


def _flipped(entry: bytes, needle: bytes) -> bytes:
    """``entry`` with a bit of the last byte of ``needle`` (in it once, under the CRC) flipped."""
    at = entry.index(needle) + len(needle) - 1
    return entry[:at] + bytes([entry[at] ^ 0x01]) + entry[at + 1:]


def _crc_flipped_segment(directory) -> str:
    """Three batches; the middle one's CRC fails: the value of order-3 reads v-order-2 (a bit of its last byte)."""
    middle = _v2(2, [b"order-2", b"order-3"])
    assert _flipped(middle, b"v-order-3") != middle
    path = directory / "00000000000000000000.log"
    path.write_bytes(_v2(0, [b"order-0", b"order-1"]) + _flipped(middle, b"v-order-3") + _v2(4, [b"order-4"]))
    return str(path)


def _lines(result) -> list[dict]:
    return [json.loads(line) for line in result.out.splitlines()]


def test_records_of_a_batch_whose_crc_fails_are_marked_and_never_in_a_consumers_view(kbatch, tmp_path):
    path = _crc_flipped_segment(tmp_path)
    every = kbatch("grep", "--format", "jsonl", "order", path)
    assert every.code == 0
    assert [(match["offset"], match["value"], match.get("untrusted")) for match in _lines(every)] == [
        (0, {"utf8": "v-order-0"}, None), (1, {"utf8": "v-order-1"}, None),
        (2, {"utf8": "v-order-2"}, "batch CRC fails"), (3, {"utf8": "v-order-2"}, "batch CRC fails"),
        (4, {"utf8": "v-order-4"}, None)]
    assert every.err.splitlines()[-1] == (
        f"kbatch: {path}: matching records a consumer refuses as corrupt (their batch or message fails its check): "
        "2, marked untrusted (--isolation leaves them out)")
    for isolation in ("read_uncommitted", "read_committed"):
        view = kbatch("grep", "--format", "jsonl", "--isolation", isolation, "order", path)
        assert view.code == 0
        assert [(match["offset"], "untrusted" in match) for match in _lines(view)] == [(0, False), (1, False),
                                                                                      (4, False)]
        assert view.err.splitlines()[-1] == (
            f"kbatch: {path}: matching records a consumer refuses as corrupt (their batch or message fails its "
            "check): 2, left out (without --isolation they are shown, marked untrusted)")
    only = kbatch("grep", "--isolation", "read_uncommitted", "order-3", path)   # the one match a consumer refuses
    assert (only.code, only.out) == (1, "") and only.err.endswith(": 1, left out (without --isolation they are "
                                                                  "shown, marked untrusted)\n")


def test_dumps_consumer_view_leaves_out_what_a_consumer_refuses(kbatch, tmp_path):
    """dump --records --isolation is the same view as grep's: the damaged batch is listed, with its damage, but
    not its records; without --isolation they are listed (the batch's crc_valid says why not to trust them)."""
    path = _crc_flipped_segment(tmp_path)

    def offsets(result):
        return [(line["base_offset"], line["crc_valid"], [record["offset"] for record in line["records"]])
                for line in _lines(result) if line["type"] == "batch"]

    every = kbatch("dump", "--records", "--format", "jsonl", path)
    assert every.code == 1
    assert offsets(every) == [(0, True, [0, 1]), (2, False, [2, 3]), (4, True, [4])]
    for isolation in ("read_uncommitted", "read_committed"):
        view = kbatch("dump", "--records", "--format", "jsonl", "--isolation", isolation, path)
        assert view.code == 1
        assert offsets(view) == [(0, True, [0, 1]), (2, False, []), (4, True, [4])]
        assert view.err.splitlines()[-1] == (
            f"kbatch: {path}: records a consumer refuses as corrupt (their batch or message fails its check): 2, "
            "left out (without --isolation they are listed)")


def test_untrusted_records_as_text(kbatch, tmp_path, text_snapshot):
    path = _crc_flipped_segment(tmp_path)
    shown = []
    for args in (["order"], ["-c", "order"], ["-C", "1", "order-4"], ["-o", "v-order-[0-9]"],
                 ["--isolation", "read_committed", "order"]):
        result = kbatch("grep", *args, path)
        shown.append(f"$ kbatch grep {' '.join(args)} SEGMENT\n{result.out}[stderr]\n{result.err}(exit {result.code})\n")
    assert "\n".join(shown).replace(path, "SEGMENT") == text_snapshot


def test_the_compiled_walk_never_takes_a_batch_whose_crc_fails(tmp_path):
    """The compiled walk takes only batches with nothing to report: a search that selects nothing still reads the
    damaged batch with the full reader, which marks (or, in a consumer's view, leaves out) its records."""
    path = _crc_flipped_segment(tmp_path)
    search, found = _search_file(path, Query(pattern="no such key"))
    assert (found, search.walked) == ([], 2)
    search, found = _search_file(path, Query(pattern="order-[34]"))
    assert [(item.record.offset, item.refused) for item in found] == [(3, "batch CRC fails"), (4, None)]
    with open(path, "rb") as stream:
        consumer = Search(Query(pattern="order-[234]"), consumer_view=True)
        assert [item.record.offset for item in consumer.run(path, stream) if hasattr(item, "selected")] == [4]
    assert consumer.left_out == 2


def test_the_pure_build_and_the_parts_mark_alike(kbatch, tmp_path, monkeypatch):
    from kbatch.walk import parts

    from .helpers import run_kbatch_pure

    path = _crc_flipped_segment(tmp_path)
    for args in (["--format", "jsonl", "order"], ["order"], ["--isolation", "read_uncommitted", "order"]):
        compiled = kbatch("grep", "-j", "1", *args, path)
        pure = run_kbatch_pure(["grep", "-j", "1", *args, path])
        assert (pure.code, pure.out, pure.err) == (compiled.code, compiled.out, compiled.err)
        monkeypatch.setattr(parts, "PART_MIN_SIZE", 64)
        cut = kbatch("grep", "-j", "3", *args, path)
        monkeypatch.undo()
        assert (cut.code, cut.out, cut.err.splitlines()[-1]) == (0, compiled.out, compiled.err.splitlines()[-1])


def test_a_v1_message_whose_own_crc_fails_is_untrusted_alone(kbatch, tmp_path):
    """v0/v1: the consumer checks each message's own CRC (LegacyRecord.ensureValid), its neighbours' are theirs."""
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    def message(offset, key):
        builder = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
        builder.append(offset, timestamp=1_600_000_000_000, key=key, value=b"v-" + key)
        return bytes(builder.build())

    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(message(0, b"order-0") + _flipped(message(1, b"order-1"), b"v-order-1") + message(2, b"order-2"))
    result = kbatch("grep", "--format", "jsonl", "order", str(path))
    assert result.code == 0
    assert [(match["offset"], match["crc_valid"], match.get("untrusted")) for match in _lines(result)] == [
        (0, True, None), (1, False, "message CRC fails"), (2, True, None)]
    view = kbatch("grep", "--format", "jsonl", "--isolation", "read_committed", "order", str(path))
    assert (view.code, [match["offset"] for match in _lines(view)]) == (0, [0, 2])


@pytest.mark.parametrize("codec", [0, 1], ids=["none", "gzip"])
def test_the_last_record_counted_before_bytes_left_is_untrusted(kbatch, tmp_path, codec):
    """recordsCount says 2 where 3 records are (the CRC made again over it): Kafka's record iterator reads the
    second, finds bytes left, and throws instead of returning it (DefaultRecordBatch.RecordIterator.next)."""
    import crc32c

    entry = bytearray(_v2(0, [b"order-0", b"order-1", b"order-2"], codec))
    entry[57:61] = (2).to_bytes(4, "big")   # recordsCount
    entry[17:21] = crc32c.crc32c(bytes(entry[21:])).to_bytes(4, "big")
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(entry) + _v2(3, [b"order-3"]))
    result = kbatch("grep", "--format", "jsonl", "order", str(path))
    assert result.code == 0 and "trailing-bytes" in result.err
    assert [(match["offset"], match.get("untrusted")) for match in _lines(result)] == [
        (0, None), (1, "bytes remain after the last record counted"), (3, None)]


def test_a_batch_whose_length_field_is_wrong_is_untrusted(kbatch):
    result = kbatch("grep", "--format", "jsonl", "", "fixtures/damaged-bad-length.log")
    assert result.code == 0
    assert [(match["offset"], match.get("untrusted")) for match in _lines(result)] == [
        (0, None), (1, None), (2, None)] + [(offset, "length field wrong: the CRC fails over the bytes it frames")
                                            for offset in (3, 4, 5)] + [(offset, None) for offset in range(6, 11)]


def test_grep_lines_hold_to_the_json_schema(kbatch, tmp_path):
    seen = _transactional_partition(tmp_path)
    partition = str(tmp_path / "orders-0" / "00000000000000000000.log")
    lines = _lines(kbatch("grep", "--format", "jsonl", "-C", "1", "order", _crc_flipped_segment(tmp_path), expect=0))
    lines += _lines(kbatch("grep", "--format", "jsonl", "--isolation", "read_committed", "", partition, expect=0))
    assert {match.get("untrusted") for match in lines} == {None, "batch CRC fails"}
    assert {match.get("visible_to_read_committed", "absent") for match in lines} == {"absent", True, None} and seen
    for line in lines:
        schema_validator("grep_match").validate(line)


# -- what grep users type: -q, -w, -o, -L, -A, -B -------------------------------------------------------------------

def _words_segment(directory) -> str:
    from .handmade import batch

    path = directory / "00000000000000000000.log"
    path.write_bytes(batch(0, [(key, b"v-" + key) for key in
                               (b"order-1", b"orders-1", b"order-12", b"my order", b"border", b"ORDER-1")]))
    return str(path)


def _offsets(result) -> list[int]:
    return [int(line.split(":")[0]) for line in result.out.splitlines()]


def test_word_regexp_matches_whole_words(kbatch, tmp_path):
    path = _words_segment(tmp_path)
    for args, offsets in ((["order"], [0, 2, 3]), (["order-1"], [0]), (["-F", "order-1"], [0]),
                          (["-i", "order-1"], [0, 5]), (["-F", "-i", "ORDER-1"], [0, 5]), (["order-[0-9]+"], [0, 2]),
                          (["-v", "order"], [1, 4, 5])):
        result = kbatch("grep", "-w", "--key", *args, path)
        assert (result.code, _offsets(result)) == (0, offsets), args
    assert kbatch("grep", "-w", "--key", "rder", path).code == 1


def test_only_matching_quiet_and_files_without_match(kbatch, tmp_path, text_snapshot):
    path = _words_segment(tmp_path)
    shown = []
    for args in (["-o", "--key", "order-[0-9]+"], ["-o", "-w", "-i", "order"], ["-o", "-v", "order"],
                 ["-q", "order"], ["-L", "order", "fixtures/v2-none.log"], ["-l", "order", "fixtures/v2-none.log"]):
        result = kbatch("grep", *args, path)
        shown.append(f"$ kbatch grep {' '.join(args)} SEGMENT\n{result.out}[stderr]\n{result.err}(exit {result.code})\n")
    assert "\n".join(shown).replace(path, "SEGMENT") == text_snapshot


def test_quiet_prints_nothing_and_says_by_its_exit_status(kbatch, tmp_path):
    path = _words_segment(tmp_path)
    assert (kbatch("grep", "-q", "order", path).code, kbatch("grep", "-q", "order", path).out) == (0, "")
    assert kbatch("grep", "-q", "no such key", path).code == 1
    assert kbatch("grep", "-q", "order", path, "fixtures/no-such-file.log").code == 2   # a match vouches for no other
    # It stops a file at its first match: damage after it is not met, unless --strict asks for every byte.
    damaged = _crc_flipped_segment(tmp_path)
    quiet = kbatch("grep", "-q", "order-0", damaged)
    assert (quiet.code, quiet.out, quiet.err) == (0, "", "")
    strict = kbatch("grep", "-q", "--strict", "order-0", damaged)
    assert (strict.code, strict.out) == (2, "") and "crc-mismatch" in strict.err


def test_files_without_match_exit_status(kbatch, tmp_path):
    path = _words_segment(tmp_path)
    listed = kbatch("grep", "-L", "order", path, "fixtures/v2-none.log")
    assert (listed.code, listed.out) == (0, "fixtures/v2-none.log\n")
    none = kbatch("grep", "-L", "order", path)
    assert (none.code, none.out) == (1, "")


def test_after_and_before_context(kbatch, tmp_path):
    path = _words_segment(tmp_path)
    after = kbatch("grep", "--key", "-A", "1", "^my", path)
    assert (after.code, after.out.splitlines()) == (0, ["3:my order\tv-my order", "4-border\tv-border"])
    before = kbatch("grep", "--key", "-B", "2", "^my", path)
    assert (before.code, before.out.splitlines()) == (0, ["1-orders-1\tv-orders-1", "2-order-12\tv-order-12",
                                                          "3:my order\tv-my order"])
    groups = kbatch("grep", "--key", "-B", "1", "-A", "0", "-C", "3", "^(orders|border)", path)   # -A/-B over -C
    assert (groups.code, groups.out.splitlines()) == (0, ["0-order-1\tv-order-1", "1:orders-1\tv-orders-1", "--",
                                                          "3-my order\tv-my order", "4:border\tv-border"])
    assert kbatch("grep", "-o", "--format", "jsonl", "order", path).code == 2

"""Hostile text: whatever a record, an internal topic or a file name holds reaches a terminal, a CI log or a
shell only as visible escapes.

The fixture holds every escape class a terminal acts on (each C0 byte, ESC with CSI, OSC 8 and OSC 52
sequences, DEL, C1's CSI, Unicode's bidi and invisible format characters, line and paragraph separators),
line ends that would forge a line, a workflow command, a command substitution, quotes, and bytes that are
not UTF-8, in record keys, values and headers, in a group id and a transactional id, and in the names of a
file and a partition directory.  Every text output of every command is read for the characters a terminal
would act on, and for a line the data did not give.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder

from kbatch.output.inert import RUNNER_VARIABLES
from kbatch.output.visible import json_name, json_visible, shell_word, visible

from .helpers import ROOT

# Every C0 control but NUL (not in a file name), ESC's CSI (colour), OSC 8 (a link) and OSC 52 (the
# clipboard), C1's CSI alone, DEL, bidi overrides and isolates, a zero-width space, BOM, the line and
# paragraph separators, a line that would be a workflow command, a command substitution and quotes.
HOSTILE = ("".join(map(chr, range(1, 32))) + "\x7f\x1b[31mred\x1b[0m\x1b]8;;x\x1b\\ln\x1b]8;;\x1b\\"
           "\x1b]52;c;cHdu\x07\x9b31m\u202eevil\u2066\u2069\u061c\u200e\u200b\ufeff\u2028\u2029"
           "\n::error::FORGED\r\nFORGED\r$(touch pwned)`id`'\"\\x41")
NOT_UTF8 = b"\xff\xc3("   # a byte no UTF-8 begins with, and a lead byte without its continuation
HOSTILE_NAME = HOSTILE.encode() + NOT_UTF8
# A topic's directory: a TOPIC-N name holds no line end (kbatch.files.inputs reads no topic from it then).
HOSTILE_TOPIC = HOSTILE_NAME.replace(b"\n", b"")


def _record_batch(base_offset: int, records: list[tuple[bytes | None, bytes | None, list]], *,
                  transactional: bool = False, producer_id: int = -1) -> bytes:
    """A v2 batch by kafka-python's builder (not kbatch's encoder)."""
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=transactional,
                                        producer_id=producer_id, producer_epoch=0 if producer_id >= 0 else -1,
                                        base_sequence=0 if producer_id >= 0 else -1, batch_size=1 << 20)
    for delta, (key, value, headers) in enumerate(records):
        builder.append(delta, timestamp=1_700_000_000_000 + delta, key=key, value=value, headers=headers)
    data = bytearray(builder.build())
    data[0:8] = base_offset.to_bytes(8, "big")
    return bytes(data)


def _string(text: bytes) -> bytes:
    """A non-flexible Kafka STRING: int16 length, then the bytes."""
    return struct.pack(">h", len(text)) + text


# __consumer_offsets: OffsetCommitKey v1 (group, topic, partition), OffsetCommitValue v1 (offset, metadata,
# commitTimestamp, expireTimestamp): Kafka's coordinator-common OffsetCommitKey.json / OffsetCommitValue.json.
def _offset_commit(text: bytes) -> tuple[bytes, bytes]:
    return (struct.pack(">h", 1) + _string(text) + _string(text) + struct.pack(">i", 0),
            struct.pack(">hq", 1, 42) + _string(text) + struct.pack(">qq", 1_700_000_000_000, -1))


# __transaction_state: TransactionLogKey v0 (transactionalId), TransactionLogValue v0 (producerId,
# producerEpoch, transactionTimeoutMs, transactionStatus, transactionPartitions, transactionLastUpdateTimestampMs,
# transactionStartTimestampMs); status 1 is Ongoing, over one partition of the hostile topic.
def _transaction(text: bytes, topic: bytes) -> tuple[bytes, bytes]:
    return (struct.pack(">h", 0) + _string(text),
            struct.pack(">hqhib", 0, 7, 0, 60_000, 1) + struct.pack(">i", 1) + _string(topic[:40])
            + struct.pack(">ii", 1, 0) + struct.pack(">qq", 1_700_000_000_000, 1_700_000_000_000))


def build(root: Path, text: str = HOSTILE, name: bytes = HOSTILE_NAME) -> dict[str, Path]:
    """The hostile log directory under ``root``: a partition directory with a hostile name holding an open
    transaction of hostile records, a segment with a hostile name, and the two internal topics."""
    root, topic = Path(root), name.replace(b"\n", b"")
    records = [(text.encode(), text.encode(), [(text, text.encode())]),
               (NOT_UTF8, text.encode() + NOT_UTF8, [(text, NOT_UTF8)]),
               (b"plain", b"plain", [])]
    partition = Path(os.fsdecode(os.path.join(os.fsencode(root), topic + b"-0")))
    partition.mkdir()
    segment = partition / "00000000000000000000.log"
    segment.write_bytes(_record_batch(0, records, transactional=True, producer_id=7))
    named = Path(os.fsdecode(os.path.join(os.fsencode(root), name + b".log")))
    named.write_bytes(_record_batch(0, records))
    offsets = root / "__consumer_offsets-0"
    offsets.mkdir()
    (offsets / "00000000000000000000.log").write_bytes(_record_batch(0, [(*_offset_commit(text.encode()), [])]))
    txns = root / "__transaction_state-0"
    txns.mkdir()
    (txns / "00000000000000000000.log").write_bytes(_record_batch(0, [(*_transaction(text.encode(), topic), [])]))
    # The log directory's meta.properties with a key of the text, in Properties' \\uXXXX (a file of ASCII: Java
    # unescapes it), on a line too long for kbatch to read whole (a finding that names the key).
    key = "".join(char if " " < char < "\x7f" and char not in "\\=:#!" else f"\\u{ord(char):04x}" for char in text)
    (root / "meta.properties").write_text(f"version=1\nnode.id=1\ncluster.id=abc\n{key}={'A' * 5000}\n")
    return {"partition": partition, "segment": segment, "named": named, "offsets": offsets, "txns": txns,
            "root": root}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict[str, str]:
    return {name: str(path) for name, path in build(tmp_path_factory.mktemp("hostile")).items()}


def _run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("COLUMNS", "KBATCH_DEBUG", *RUNNER_VARIABLES)}
    return subprocess.run([sys.executable, "-m", "kbatch", *args], cwd=ROOT, capture_output=True,
                          env={**environment, **(env or {})})


def _unsafe(char: str, tab: bool) -> bool:
    """A character a terminal acts on or hides: C0 but the line end (and the tab where the renderer lays
    out with it), DEL, C1, and what Unicode calls format, separator, surrogate, private or unassigned."""
    point = ord(char)
    if char == "\n" or (tab and char == "\t"):
        return False
    return point < 0x20 or 0x7F <= point <= 0x9F or \
        unicodedata.category(char) in ("Cf", "Zl", "Zp", "Cs", "Co", "Cn")


# A line the data forged: one that starts with what follows a line end in HOSTILE (after a table's border).
FORGED_LINE = re.compile(r"^[\s│┃|]*(::error|FORGED)", re.M)


def assert_safe(data: bytes, *, tab: bool = False, forged=FORGED_LINE) -> str:
    """The output is UTF-8 and holds none of what a terminal would act on, and no line the data made."""
    text = data.decode("utf-8")   # raises on bytes that are not UTF-8
    unsafe = sorted({f"U+{ord(char):04X}" for char in text if _unsafe(char, tab)})
    assert not unsafe, unsafe
    assert not forged.search(text), forged.search(text).group(0)
    return text


def _lines(text: str, start: str) -> int:
    return sum(line.startswith(start) for line in text.split("\n"))


# (command line, expected exit status, tabs laid out by the renderer); S: the segment in the hostile
# partition directory, N: the hostile file name, P: the directory, O and T: the internal topics' segments (TD:
# __transaction_state's directory).
TEXT_COMMANDS = {
    "dump": (["dump", "S", "N", "O", "T"], 0, False),
    "dump-records": (["dump", "--records", "S", "N", "O", "T"], 0, False),
    "dump-directory": (["dump", "P"], 0, False),
    "dumplog": (["dump", "--format", "dumplog", "--records", "S", "N", "O", "T"], 0, False),
    "verify-crc": (["verify-crc", "S", "N"], 0, False),
    "verify-crc-deep": (["verify-crc", "--deep", "P"], 0, False),
    "verify-crc-log-dir": (["verify-crc", "--deep", "R"], 0, False),
    "dump-meta-properties": (["dump", "R/meta.properties"], 0, False),
    "txn": (["txn", "P", "T"], 0, False),
    "producers": (["producers", "P", "T"], 0, False),
    "producers-unknown-id": (["producers", "--transactional-id", HOSTILE + "?", "TD"], 0, False),
    "retention": (["retention", "--config", "cleanup.policy=compact", "P", "TD"], 0, False),
    "retention-config-key": (["retention", "--config", HOSTILE + "=1", "TD"], 2, False),
    "retention-config-policy": (["retention", "--config", "cleanup.policy=" + HOSTILE.replace(",", ""), "TD"], 2, False),
    "grep": (["grep", "", "S", "N", "O"], 0, True),
    "grep-count": (["grep", "-c", "", "S", "N"], 0, False),
    "stats": (["stats", "S", "N"], 0, False),
    "diff": (["diff", "S", "N"], 1, False),
    "hexdump-annotate": (["hexdump-annotate", "N"], 0, False),
    "hexdump-annotate-internal": (["hexdump-annotate", "T"], 0, False),
    "not-there": (["dump", "N+"], 2, False),
    "usage-error": (["diff", "O", "T", "N"], 2, False),   # (Click quotes the extra arguments: a glob's names)
    "offsets": (["offsets", "O"], 0, False),
    "offsets-at": (["offsets", "--at", "2030-01-01T00:00:00Z", "O"], 0, False),
    "salvage": (["salvage", "N", "-o", "N.salvaged"], 0, False),
    "repair-length": (["repair-length", "N"], 0, False),
}


def _args(hostile: dict, args: list[str]) -> list[str]:
    paths = {"S": hostile["segment"], "N": hostile["named"], "P": hostile["partition"], "N+": hostile["named"] + "x",
             "N.salvaged": hostile["named"] + ".salvaged",
             "O": os.path.join(hostile["offsets"], "00000000000000000000.log"),
             "T": os.path.join(hostile["txns"], "00000000000000000000.log"), "TD": hostile["txns"],
             "R": hostile["root"], "R/meta.properties": os.path.join(hostile["root"], "meta.properties")}
    return [paths.get(arg, arg) for arg in args]


@pytest.mark.parametrize("command", TEXT_COMMANDS)
def test_no_text_output_lets_hostile_bytes_through(hostile, command):
    args, status, tab = TEXT_COMMANDS[command]
    run = _run(*_args(hostile, args))
    assert run.returncode == status, run.stderr
    assert b"internal error" not in run.stderr
    out, err = assert_safe(run.stdout, tab=tab), assert_safe(run.stderr)
    if command != "stats":   # (stats names no file) the names and values are shown, escaped (a cell may cut
        assert re.search(r"\\(x[0-9a-f]{2}|u[0-9a-f]{4})", out + err)   # out the middle, where ESC is)


def test_each_record_is_one_line_of_kafkas_dump_text(hostile):
    """--format dumplog: a value's line ends do not make lines of their own; Kafka's tokens stay."""
    run = _run(*_args(hostile, ["dump", "--format", "dumplog", "--records", "S", "N"]))
    text = assert_safe(run.stdout)
    assert run.returncode == 0
    # Dumping, Log starting offset (for a segment named by its offset: not the hostile name), a batch, 3 records
    assert len(text.split("\n")[:-1]) == (2 + 1 + 3) + (1 + 1 + 3)
    assert _lines(text, "baseOffset: ") == 2 and _lines(text, "| offset: ") == 6
    first = next(line for line in text.split("\n")[:-1] if line.startswith("| offset: 0 "))
    # the header key and the key and payload as the StringDecoder reads them, then escaped; a backslash kept
    assert first.endswith(f"payload: {visible(HOSTILE, backslash=False)}")
    assert f"headerKeys: [{visible(HOSTILE, backslash=False)}]" in first
    assert "\\\\x41" not in first and "\\x41" in first


def test_a_grep_line_is_a_record(hostile):
    run = _run(*_args(hostile, ["grep", "", "S", "N"]))
    text = assert_safe(run.stdout, tab=True)
    assert run.returncode == 0 and len(text.split("\n")[:-1]) == 6
    assert all(line.startswith(visible(path) + ":") for line, path in
               zip(text.split("\n")[:-1], [hostile["segment"]] * 3 + [hostile["named"]] * 3))


def test_the_abort_command_pastes_as_the_topic_it_names(hostile, tmp_path):
    """txn's kafka-transactions.sh line: the topic is one shell word, read back by bash byte for byte, and
    nothing in it runs."""
    run = _run(*_args(hostile, ["txn", "P", "T"]))
    text = assert_safe(run.stdout)
    assert run.returncode == 0
    command = re.search(r"kafka-transactions\.sh --bootstrap-server BROKER abort --topic (.*) \\$", text, re.M)
    assert command is not None and _lines(text, "        --partition 0 --start-offset 0") == 1
    word = command.group(1)
    said = subprocess.run(["bash", "-c", f"printf %s {word}"], cwd=tmp_path, capture_output=True, check=True)
    assert said.stdout == HOSTILE_TOPIC
    assert list(tmp_path.iterdir()) == []   # $(touch pwned) was a word, not a command


@pytest.mark.parametrize("text", ["orders", "o$(touch pwned);x", "a'b", "tab\there", "\x1b[31m", "\u202e",
                                  os.fsdecode(b"bad\xff\xfe"), "back\\slash", "line\nend", "\U000e0001"])
def test_a_shell_word_reads_back_as_the_text(text, tmp_path):
    word = shell_word(text)
    assert not any(_unsafe(char, tab=False) for char in word)
    said = subprocess.run(["bash", "-c", f"printf %s {word}"], cwd=tmp_path, capture_output=True, check=True)
    assert said.stdout == os.fsencode(text)
    assert list(tmp_path.iterdir()) == []
    assert (word == text) == (text == "orders")


def _unescaped(shown: str) -> str:
    """visible's inverse: \\xNN below 0x80 a character, from 0x80 a byte of a name (its surrogate)."""
    def one(match):
        escape = match.group(1)
        if escape in ("\\", "t", "n", "r"):
            return {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}[escape]
        point = int(escape[1:], 16)
        return chr(0xDC00 + point) if escape[0] == "x" and point >= 0x80 else chr(point)
    return re.sub(r"\\(\\|t|n|r|x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8})", one, shown)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",))) |
       st.binary().map(lambda data: os.fsdecode(data.replace(b"\0", b""))))
def test_visible_text_is_safe_and_says_exactly_what_was_there(text):
    shown = visible(text)
    assert not any(_unsafe(char, tab=False) for char in shown) and "\n" not in shown
    assert _unescaped(shown) == text
    assert (shown == text) == (text.isprintable() and "\\" not in text)


@pytest.mark.parametrize("char, shown", [("\x1b", "\\x1b"), ("\x00", "\\x00"), ("\x7f", "\\x7f"), ("\t", "\\t"),
                                         ("\r", "\\r"), ("\n", "\\n"), ("\\", "\\\\"), ("\x9b", "\\u009b"),
                                         ("\u202e", "\\u202e"), ("\u2066", "\\u2066"), ("\u061c", "\\u061c"),
                                         ("\u200b", "\\u200b"), ("\ufeff", "\\ufeff"), ("\u2028", "\\u2028"),
                                         ("\u00a0", "\\u00a0"), ("\U000e0001", "\\U000e0001"),
                                         ("\udcff", "\\xff"), ("é界", "é界")])
def test_each_escape_class_is_spelt_so(char, shown):
    assert visible(char) == shown


def test_json_shown_to_people_stays_json():
    value = {"k": HOSTILE, "\u202e": ["\x7f\x9b\u2028\U000e0001"]}
    text = json_visible(json.dumps(value, ensure_ascii=False))
    assert json.loads(text) == value and not any(_unsafe(char, tab=False) for char in text)
    assert json_visible('{"a":"é"}') == '{"a":"é"}'


JSON_COMMANDS = {
    "dump-jsonl": ["dump", "--records", "--format", "jsonl", "S", "N", "O", "T"],
    "dump-json": ["dump", "--records", "--format", "json", "S", "N"],
    "verify-crc-jsonl": ["verify-crc", "--format", "jsonl", "S", "N"],
    "txn-jsonl": ["txn", "--format", "jsonl", "P", "T"],
    "grep-jsonl": ["grep", "--format", "jsonl", "", "S", "N"],
    "stats-json": ["stats", "--format", "json", "S", "N"],
}


@pytest.mark.parametrize("command", JSON_COMMANDS)
def test_json_output_is_utf8_json_with_the_names_escaped_where_they_are_not(hostile, command):
    """A name's bytes that are not UTF-8 are written as \\xNN text; the rest of the name, and the records'
    own text, as JSON escapes it (the bidi and other characters too: JSON is for programs)."""
    run = _run(*_args(hostile, JSON_COMMANDS[command]))
    assert run.returncode == 0, run.stderr
    text = run.stdout.decode("utf-8")
    documents = [json.loads(line) for line in text.split("\n")[:-1]] if "jsonl" in command else [json.loads(text)]
    named = json_name(hostile["named" if "N" in JSON_COMMANDS[command] else "segment"])
    assert named.endswith((r"\xff\xc3(.log", r"\xff\xc3(-0/00000000000000000000.log"))
    assert named in _strings(documents)


def _strings(value) -> set[str]:
    if isinstance(value, str):
        return {value}
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return set().union(*map(_strings, items)) if items else set()


def test_github_annotations_and_stderr_forge_no_workflow_command(hostile, tmp_path):
    """--format github: each stdout line is one of kbatch's commands; no stderr line can be read as one
    (actions/runner reads ``::`` at a line's start and ``##[`` anywhere, on both streams)."""
    damaged = Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), b"::error::x\n##[error]y" + NOT_UTF8 + b".log")))
    damaged.write_bytes(Path(hostile["named"]).read_bytes()[:100])   # a batch cut short
    missing = str(tmp_path / "::warning::gone ##[error]z.log")   # "[" makes it a pattern, matching nothing
    run = _run("verify-crc", "--format", "github", hostile["named"], str(damaged), missing)
    assert run.returncode == 2   # a path that names no file
    out, err = assert_safe(run.stdout, forged=re.compile("^[\\s]*FORGED", re.M)), assert_safe(run.stderr)
    lines = out.split("\n")[:-1]
    assert [line.split(" ", 1)[0] for line in lines] == ["::error", "::notice"]
    assert lines[0].startswith("::error file=") and "%3A%3Aerror%3A%3Ax\\n##[error]y\\xff\\xc3(.log," in lines[0]
    assert all(line.count("::") == 2 for line in lines)
    assert err.split("\n")[:-1] == [f"kbatch: no file matches {missing.replace('##[', '##' + chr(92) + 'u005b')}"]


# What a CI runner reads as its command: GitHub's at a line's start and its older form anywhere, Azure
# Pipelines' and TeamCity's anywhere (kbatch.output.inert), as a record, a group, a transaction and a file
# name: at the start of a first column, a grep line's value, Kafka's dump text.
COMMANDING = ("::error::FORGED ##[error]FORGED ##vso[task.setvariable variable=x]FORGED "
              "##teamcity[message text='FORGED']")
RUNNER_COMMAND = re.compile(r"^\s*::|##\w*\[", re.M)


@pytest.fixture(scope="module")
def commanding(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("commanding")
    return {name: str(path) for name, path in build(root, COMMANDING, COMMANDING.encode()).items()}


@pytest.mark.parametrize("command", [*TEXT_COMMANDS, *JSON_COMMANDS])
def test_in_a_runners_job_no_output_holds_a_runners_command(commanding, command):
    """Every command, text and JSON, on stdout and stderr; JSON still reads back the text as it was."""
    args, status = TEXT_COMMANDS[command][:2] if command in TEXT_COMMANDS else (JSON_COMMANDS[command], 0)
    run = _run(*_args(commanding, [arg.replace(HOSTILE, COMMANDING) for arg in args]),
               env={"GITHUB_ACTIONS": "true"})
    assert run.returncode == status, run.stderr
    out, err = run.stdout.decode("utf-8"), run.stderr.decode("utf-8")
    assert not RUNNER_COMMAND.search(out) and not RUNNER_COMMAND.search(err), RUNNER_COMMAND.search(out + err)
    if command in JSON_COMMANDS:
        documents = [json.loads(line) for line in out.split("\n")[:-1]] if "jsonl" in command else [json.loads(out)]
        assert any(COMMANDING in string for string in _strings(documents)) and "##\\u005b" in out
    elif command not in ("stats", "hexdump-annotate-internal"):   # (these name no file and show no text)
        assert "##vso\\u005btask" in out + err   # shown, and inert


def test_a_page_asked_for_a_colouring_no_object_names_keeps_its_own(tmp_path):
    """map.html#colour=constructor (or __proto__, toString): the page draws with its own colouring."""
    from kbatch.map.draw import SCRIPT

    line = re.search(r"^\s*const choice = .*;$", SCRIPT, re.M).group(0)
    program = ("const data = {colours: {codec: 1, damage: 2}, choice: 'codec'};\n"
               "for (const asked of ['constructor', '__proto__', 'toString', 'damage', null]) {\n"
               f"  {line}\n  console.log(String(choice));\n}}\n")
    if shutil.which("node") is None:
        pytest.skip("no node to run the page's script")
    said = subprocess.run(["node", "-e", program], capture_output=True, text=True, check=True)
    assert said.stdout.split() == ["codec", "codec", "codec", "damage", "codec"]


def test_map_draws_hostile_names_without_a_byte_a_terminal_would_act_on(hostile, tmp_path):
    pytest.importorskip("vl_convert")
    for output_format, name in (("html", "map.html"), ("svg", "map.svg"), ("json", "map.json")):
        out = tmp_path / name
        run = _run("map", "--format", output_format, hostile["partition"], hostile["named"], hostile["txns"],
                   "-o", str(out))
        assert run.returncode == 0, run.stderr
        assert_safe(run.stderr)
        text = assert_safe(out.read_bytes(), tab=True)
        if output_format == "json":
            assert json_name(hostile["named"]) in _strings(json.loads(text))
        else:
            assert visible(os.path.basename(hostile["named"])).replace("&", "&amp;").replace("<", "&lt;") \
                .replace(">", "&gt;") in text.replace("&#x27;", "'").replace("&quot;", '"')


def _on_a_terminal(args: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """The ``kbatch`` program run on a pseudo-terminal, in colour: its status, and what it wrote (stdout and
    stderr, as ``stdout``) with Rich's own SGR sequences taken out and each line's CR LF (the onlcr line
    discipline) made LF.  The terminal is wide enough that no cell wraps: a wrapped cell's next line may start with any of its
    text, and where the wrap falls depends on the length of the temporary directory's name."""
    import pty
    import select

    leader, follower = pty.openpty()
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("COLUMNS", "NO_COLOR", "KBATCH_DEBUG", *RUNNER_VARIABLES)}
    process = subprocess.Popen([sys.executable, "-m", "kbatch", *args], cwd=cwd,
                               stdin=follower, stdout=follower, stderr=follower,
                               env={**environment, "TERM": "xterm-256color", "COLUMNS": "1000"})
    os.close(follower)
    received = bytearray()
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:   # the other end closed
            break
        if not chunk:
            break
        received += chunk
    os.close(leader)
    return subprocess.CompletedProcess(args, process.wait(60),
                                       re.sub(rb"\x1b\[[0-9;]*m", b"", bytes(received)).replace(b"\r\n", b"\n"))


def test_on_a_terminal_nothing_but_kbatchs_own_styles_are_written(hostile):
    """The same outputs on a pseudo-terminal, in colour: once Rich's own SGR sequences are taken out, no
    escape is left."""
    for args in (["dump", "--records", "S", "N", "O", "T"], ["txn", "P", "T"], ["verify-crc", "S", "N"],
                 ["dump", "--format", "dumplog", "--records", "S", "N"], ["grep", "", "S", "N"]):
        run = _on_a_terminal(_args(hostile, args))
        assert run.returncode == 0, args
        shown = assert_safe(run.stdout, tab=args[0] == "grep")
        assert args[0] == "verify-crc" or re.search(r"\\(x1b|u202e)", shown)   # (its names are cut to fit)


def test_the_progress_bar_shows_a_hostile_name_as_text(tmp_path):
    """verify-crc's progress bar (a file past 64 MiB, on a terminal): the name is shown escaped, and Rich reads
    no markup in it (a "[link=…]" would be a hyperlink, "[blink]" a style).  The name is given as it is, in
    its directory: the bar's column is cut to fit."""
    from kbatch.cli.verify_crc import PROGRESS_ABOVE

    name = b"[link=https:evil][blink]\x1b]0;TITLE\x07\xe2\x80\xae.log"
    with open(os.path.join(os.fsencode(tmp_path), name), "wb") as segment:   # sparse: zeros past the batches
        segment.write((ROOT / "fixtures" / "v2-none.log").read_bytes())
        segment.truncate(PROGRESS_ABOVE + 1)
    run = _on_a_terminal(["verify-crc", os.fsdecode(name)], cwd=tmp_path)
    assert run.returncode == 0   # (zeros after the last batch: a preallocated file, as Kafka leaves one)
    assert b"\x1b]8;" not in run.stdout and b"\x1b[5m" not in run.stdout
    shown = assert_safe(re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]|\r", b"", run.stdout))   # (and the bar's redrawing)
    assert "verifying [link=https:evil][blink]\\x1b]0;TITLE\\x07\\u202e.log" in shown


@pytest.mark.parametrize("command", [*JSON_COMMANDS, "pcap-jsonl", "pcap-json", "replicas-jsonl"])
def test_json_on_a_terminal_is_the_same_json_with_nothing_a_terminal_acts_on(hostile, tmp_path, command):
    """To a pipe, JSON as json writes it (JSON is for programs): DEL, C1, the bidi controls and separators
    as they are.  To a terminal a person reads it: each is written as JSON's own \\uNNNN (kbatch.output.
    terminal), which a program reads back as the same JSON."""
    if command.startswith("pcap"):
        pytest.importorskip("dpkt")
        args = ["pcap", "--format", command.split("-")[1], str(_hostile_capture(tmp_path / "hostile.pcap"))]
    elif command == "replicas-jsonl":
        args = ["replicas", "--format", "jsonl", *_two_copies(hostile, tmp_path)]
    else:
        args = _args(hostile, JSON_COMMANDS[command])
    piped = _run(*args)
    on_a_terminal = _on_a_terminal(args)
    # (the capture's hostile topic is a name Kafka refuses: a topic-refused finding, exit 1)
    assert on_a_terminal.returncode == piped.returncode == (1 if command.startswith("pcap") else 0), piped.stderr
    shown = assert_safe(on_a_terminal.stdout)
    if command not in ("grep-jsonl", "stats-json"):   # (grep's lines are escaped as its text is; stats names none)
        assert any(_unsafe(char, False) for char in piped.stdout.decode("utf-8", "replace").replace("\n", ""))
        assert "\\u202e" in shown   # the bidi override, as JSON writes it

    def documents(text: str) -> list:
        return [json.loads(line) for line in text.split("\n") if line] if "jsonl" in args else [json.loads(text)]

    assert documents(shown) == documents(piped.stdout.decode("utf-8") + piped.stderr.decode("utf-8"))


def test_a_snapshot_text_holds_nothing_a_terminal_or_a_review_would_act_on(hostile, tmp_path):
    """kbatch snapshot: the golden text beside a file, and what check says when the bytes change."""
    segment = tmp_path / "s.log"
    segment.write_bytes(Path(hostile["named"]).read_bytes())
    assert _run("snapshot", "write", str(segment)).returncode == 0
    golden = assert_safe(Path(f"{segment}.kbatch-snapshot").read_bytes())
    assert "value: 0x0102030405" in golden   # what is not printable text is kept as hex
    segment.write_bytes(Path(hostile["segment"]).read_bytes())   # the same records in a transactional batch
    run = _run("snapshot", "check", str(segment))
    assert run.returncode == 1
    assert_safe(run.stdout) and assert_safe(run.stderr)


def _two_copies(hostile: dict, root: Path) -> list[str]:
    """Two brokers' log directories, each holding a copy of the hostile partition."""
    name = os.path.basename(os.fsencode(hostile["partition"]))
    brokers = [root / "broker-1", root / "broker-2"]
    for broker in brokers:
        shutil.copytree(os.fsencode(hostile["partition"]), os.path.join(os.fsencode(broker), name))
    return [str(broker) for broker in brokers]


def test_replicas_jsonl_is_utf8_json_naming_the_hostile_copies(hostile, tmp_path):
    run = _run("replicas", "--format", "jsonl", *_two_copies(hostile, tmp_path))
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.decode("utf-8").split("\n")[:-1]]
    assert [line["type"] for line in lines] == ["replica", "replica"]
    assert [line["path"] for line in lines] == [json_name(os.path.join(tmp_path, broker, os.path.basename(
        hostile["partition"]))) for broker in ("broker-1", "broker-2")]
    assert lines[0]["partition"] == json_name(os.path.basename(hostile["partition"]))


def test_junit_names_each_file_as_the_terminal_does(hostile):
    """verify-crc --format junit: a CI page shows a testcase's name; the name is written with visible's escapes
    (exact, and nothing a page would act on: a bidi override, a zero-width space, a line end), then as XML."""
    from xml.etree import ElementTree

    run = _run("verify-crc", "--format", "junit", hostile["segment"], hostile["named"], hostile["named"] + "x")
    assert run.returncode == 2   # a name that matches no file
    text, _ = assert_safe(run.stdout), assert_safe(run.stderr)
    root = ElementTree.fromstring(text)
    assert [case.get("name") for case in root.iter("testcase")] == [visible(hostile["segment"]),
                                                                   visible(hostile["named"])]


def _hostile_capture(path: Path) -> Path:
    """A produce of the hostile records to the hostile topic, by a hostile client and transactional id, and
    its answer; then a frame of an absurd size (the rest of that direction is not read)."""
    from .capture_builder import Capture, produce, produce_response, request, response

    topic = HOSTILE.replace("\n", "")[:60]
    records = _record_batch(0, [(HOSTILE.encode(), HOSTILE.encode() + NOT_UTF8, [(HOSTILE, NOT_UTF8)])],
                            transactional=True, producer_id=7)
    capture = (Capture()
               .send(request("Produce", 9, 11, produce(9, {topic: {0: records}}, transactional_id=HOSTILE),
                             client_id=HOSTILE.encode() + NOT_UTF8, flexible=True))
               .answer(response(11, produce_response(9, {topic: {0: (0, 500)}}), flexible=True))
               .send(struct.pack(">i", 0x7FFFFFFF) + b"\x1b[31m"))
    path.write_bytes(capture.pcap())
    return path


@pytest.mark.parametrize("args", [[], ["--deep"], ["--format", "jsonl"]])
def test_pcap_shows_what_a_capture_names_escaped(tmp_path, args):
    pytest.importorskip("dpkt")
    capture = _hostile_capture(Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), HOSTILE_NAME + b".pcap"))))
    run = _run("pcap", *args, str(capture))
    # a frame kbatch cannot follow is a warning; the hostile topic, a name Kafka refuses, is an error
    assert run.returncode == 1, run.stderr
    err = assert_safe(run.stderr)
    if "jsonl" in args:
        lines = [json.loads(line) for line in run.stdout.decode("utf-8").split("\n")[:-1]]
        assert json_name(str(capture)) in _strings(lines) and err == ""
        return
    out = assert_safe(run.stdout)
    assert "\\x1b[31mred" in out and "\\xff\\xc3(.pcap" in out   # the topic and client id; the file's name
    assert "a Kafka frame size of 2147483647 bytes" in out.replace("\n", " ")


def test_replicas_table_shows_the_hostile_copies_escaped(hostile, tmp_path):
    run = _run("replicas", *_two_copies(hostile, tmp_path))
    assert run.returncode == 0, run.stderr
    out, _ = assert_safe(run.stdout), assert_safe(run.stderr)
    assert "\\x1b[31mred" in out and "nothing to repair" in out


@pytest.mark.parametrize("variable", RUNNER_VARIABLES)
def test_each_runner_switches_it_on_and_outside_one_the_output_is_as_it_was(commanding, variable):
    args = _args(commanding, ["dump", "--records", "N"])
    outside, inside = _run(*args), _run(*args, env={variable: "True"})
    assert outside.returncode == inside.returncode == 0
    assert "##[error]FORGED ##vso[task" in outside.stdout.decode()
    assert inside.stdout == outside.stdout.replace(b"##[", b"##\\u005b").replace(b"##vso[", b"##vso\\u005b") \
        .replace(b"##teamcity[", b"##teamcity\\u005b")


@pytest.mark.parametrize("writes, written", [
    ([b"a\n::error::x\n"], b"a\n:\\x3aerror::x\n"),                     # a line's start
    ([b"::x"], b":\\x3ax"),                                             # the output's start
    ([b"a\n  :", b":error::x"], b"a\n  :\\x3aerror::x"),                # the two colons in two writes
    ([b"a\n", b"\t::x"], b"a\n\t:\\x3ax"),
    (["a\n\u3000::x".encode()], "a\n\u3000:\\x3ax".encode()),          # a blank .NET's TrimStart trims
    ([b"a\r::x"], b"a\r:\\x3ax"),                                       # a carriage return ends a line too
    ([b"mid ::x"], b"mid ::x"),                                         # inside a line: nothing to read
    ([b"a" * 100, b"::x"], b"a" * 100 + b"::x"),                       # a long line goes on
    ([b"x ##[e]"], b"x ##\\u005be]"),                                   # the older form, anywhere
    ([b"x ##", b"vso[t]"], b"x ##vso\\u005bt]"),
    ([b"x #", b"#[e]"], b"x ##\\u005be]"),
    ([b"x ##teamcity[m]"], b"x ##teamcity\\u005bm]"),
    ([b"# one [", b"## two"], b"# one [## two"),                        # no prefix: as it was
    ([b"\xff\xc3(\n::"], b"\xff\xc3(\n:\\x3a"),                          # bytes that are not UTF-8 kept
])
def test_the_programs_output_is_inert_across_writes(writes, written):
    import io

    from kbatch.output.inert import InertBuffer

    raw = io.BytesIO()
    buffer = InertBuffer(raw)
    assert [buffer.write(data) for data in writes] == [len(data) for data in writes]
    buffer.flush()
    assert raw.getvalue() == written


@pytest.mark.parametrize("encoding, writes, written", [
    ("utf-8", [b"plain ascii\n"], b"plain ascii\n"),
    ("utf-8", [b"\x1b[1mbold\x1b[0m\t\n", "é→✓".encode()], "\x1b[1mbold\x1b[0m\t\né→✓".encode()),  # C0 passes
    ("utf-8", [b"a\x7fb"], b"a\\u007fb"),
    ("utf-8", ["\u009b31m\u202eevil\u2028".encode()], b"\\u009b31m\\u202eevil\\u2028"),
    ("utf-8", [b"\xe2\x80", b"\xae!"], b"\\u202e!"),                           # one character, two writes
    ("utf-8", [b"\xe2", b"\x80", b"\xae", b"\xe2\x80\x8b"], b"\\u202e\\u200b"),
    ("utf-8", ["\U000e0041".encode()], b"\\udb40\\udc41"),                        # a tag: JSON's surrogate pair
    ("utf-8", [b"\xff\xc3("], b"\\xff\\xc3("),                                   # bytes that are not UTF-8
    ("latin-1", [b"\x9b31m\xe9"], b"\\u009b31m\xe9"),                           # C1 is a byte there
])
def test_what_reaches_a_terminal_is_shown_escaped_across_writes(encoding, writes, written):
    import io

    from kbatch.output.terminal import TerminalBuffer

    raw = io.BytesIO()
    buffer = TerminalBuffer(raw, encoding=encoding)
    assert [buffer.write(data) for data in writes] == [len(data) for data in writes]
    buffer.flush()
    assert raw.getvalue() == written


def test_a_terminal_gets_a_characters_start_as_it_came_when_flushed_before_its_end():
    import io

    from kbatch.output.terminal import TerminalBuffer

    raw = io.BytesIO()
    buffer = TerminalBuffer(raw, encoding="utf-8")
    buffer.write(b"x\xe2\x80")
    buffer.flush()
    assert raw.getvalue() == b"x\xe2\x80"
    with buffer.verbatim():
        buffer.write(b"\x9b\xc2\x9b")
    buffer.write("\u009b".encode())
    buffer.flush()
    assert raw.getvalue() == b"x\xe2\x80\x9b\xc2\x9b\\u009b"


def test_a_runner_reading_a_terminal_gets_both_inert_and_shown_escaped():
    import io

    from kbatch.output.inert import InertBuffer

    raw = io.BytesIO()
    buffer = InertBuffer(raw, encoding="utf-8")
    buffer.write("::error::\u202e\n".encode())
    buffer.flush()
    assert raw.getvalue() == b":\\x3aerror::\\u202e\n"


def test_bytes_that_are_not_text_pass_verbatim_and_the_filter_comes_back():
    import io

    from kbatch.output.inert import InertBuffer, inert, verbatim

    raw = io.BytesIO()
    stream = io.TextIOWrapper(InertBuffer(raw), encoding="utf-8")
    stream.write("::a\n")
    with verbatim(stream):
        stream.write("::error::meant\n")
        stream.flush()   # (as files.outputs does before its bytes)
        stream.buffer.write(b"##[segment bytes]\n")
    stream.write("::b ##[c]\n")
    stream.flush()
    assert raw.getvalue() == b":\\x3aa\n::error::meant\n##[segment bytes]\n:\\x3ab ##\\u005bc]\n"
    assert inert(inert("::x ##[y]")) == inert("::x ##[y]") == ":\\x3ax ##\\u005by]"   # once is enough
    assert json.loads(inert('{"v": "##[x]"}')) == {"v": "##[x]"}


@pytest.mark.parametrize("where", ["value", "key", "bytes key"])
def test_a_spec_encode_from_json_refuses_is_named_escaped(tmp_path, where):
    """encode-from-json's error names the spec's path (its own keys) and what it found there (its own text, cut
    at 60 characters: the bidi override, the clipboard's OSC 52 and C1's CSI first)."""
    hostile = "\u202e\x1b]52;c;cHdu\x07\x9b31m\x7f\u2028" + HOSTILE
    batch = {"type": "batch", "magic": 2, "codec": "none", "base_offset": 0,
             "records": [{"offset": 0, "value": {"utf8": "x"}}]}
    if where == "value":
        batch["codec"] = hostile
    elif where == "key":
        batch[hostile] = 1
    else:
        batch["records"][0]["value"] = {hostile: "x"}
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"kbatch_json_version": 1, "files": [{"file": "x", "entries": [batch]}]}))
    run = _run("encode-from-json", str(spec), "-o", str(tmp_path / "out.log"))
    assert run.returncode == 2 and run.stdout == b""
    said = assert_safe(run.stderr)
    assert said.startswith(f"kbatch: {spec}: files[0].entries[0]") and "\\u202e" in said
    assert not (tmp_path / "out.log").exists()

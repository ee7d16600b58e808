"""How every command behaves as a program among programs: in a pipeline that closes early."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .helpers import FIXTURES, ROOT

KBATCH = [sys.executable, "-m", "kbatch"]


@pytest.fixture(scope="module")
def big_segment(tmp_path_factory):
    """Enough entries that every command still has output to write when the reader goes away."""
    path = tmp_path_factory.mktemp("pipe") / "00000000000000000000.log"
    path.write_bytes((FIXTURES / "mixed-v0-v1-v2.log").read_bytes() * 300)
    return str(path)


PIPED_COMMANDS = {
    "dump": ["dump", "{big}"],
    "dump-records": ["dump", "--records", "{big}"],
    "dump-jsonl": ["dump", "--format", "jsonl", "--records", "{big}"],
    "dump-json": ["dump", "--format", "json", "--records", "{big}"],
    "dump-dumplog": ["dump", "--format", "dumplog", "--records", "{big}"],
    "verify-crc": ["verify-crc", "--deep", "{big}"],
    "verify-crc-jsonl": ["verify-crc", "--deep", "--format", "jsonl", "{big}"],
    "hexdump-annotate": ["hexdump-annotate", "--range", "0:200000", "{big}"],
    "diff": ["diff", "fixtures/mixed-v0-v1-v2.log", "{big}"],
    "diff-jsonl": ["diff", "--format", "jsonl", "fixtures/v2-none.log", "{big}"],
    "encode-from-json": ["encode-from-json", "-", "-o", "-", "--hex"],
}


@pytest.mark.parametrize("name", sorted(PIPED_COMMANDS))
def test_a_closed_pipe_ends_quietly_with_the_sigpipe_status(name, big_segment):
    """`kbatch ... | head -1`: nothing on stderr and exit 141 (128 + SIGPIPE) as any Unix filter, for every
    command; never 0, which would let `kbatch verify-crc ... | head && echo intact` vouch for unread bytes."""
    args = [arg.format(big=big_segment) for arg in PIPED_COMMANDS[name]]
    stdin = subprocess.DEVNULL
    if name == "encode-from-json":
        document = subprocess.run([*KBATCH, "dump", "--format", "json", big_segment], cwd=ROOT,
                                  capture_output=True, check=True).stdout
        stdin = subprocess.PIPE
    process = subprocess.Popen([*KBATCH, *args], cwd=ROOT, stdin=stdin, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    if stdin is subprocess.PIPE:
        process.stdin.write(document)
        process.stdin.close()
    assert process.stdout.read(100)
    process.stdout.close()          # what `head -c 100` does after its bytes
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141
    assert err == ""


@pytest.mark.parametrize("bad", ["-5:", ":-1", "-10:-5"])
def test_negative_offsets_are_refused(bad, kbatch):
    result = kbatch("dump", "--offset-range", bad, "fixtures/v2-none.log")
    assert result.code == 2 and "never negative" in result.err and result.out == ""


@pytest.mark.parametrize("text,said", [
    (b"00 11\n22 zz 33\n", "not hex: 'z' on line 2"),
    (b"0x00 0x1", "an odd number of hex digits (3)"),
])
def test_bad_hex_is_said_in_the_inputs_own_terms(text, said, kbatch):
    result = kbatch("dump", "--hex", "-", stdin=text)
    assert result.code == 2 and said in result.err and "fromhex" not in result.err


def test_a_missing_file_is_in_the_output_not_only_on_stderr(kbatch):
    result = kbatch("verify-crc", "fixtures/v2-none.log", "no/such.log")
    assert result.code == 2 and "cannot read no/such.log" in result.err
    row = next(line for line in result.out.splitlines() if "no/such.log" in line)
    assert "unreadable" in row and "No such file" in row
    assert "1 unreadable" in result.out
    for args in (["verify-crc", "--format", "jsonl"], ["dump", "--format", "jsonl"]):
        lines = [json.loads(line) for line in kbatch(*args, "no/such.log", "fixtures/v2-none.log").out.splitlines()]
        assert lines[0] == {"file": "no/such.log", "type": "error", "error": "cannot read: No such file or directory"}
        assert lines[-1]["type"] == "summary" and lines[-1]["file"] == "fixtures/v2-none.log"
    document = json.loads(kbatch("dump", "--format", "json", "fixtures/v2-none.log", "no/such.log").out)
    assert document["files"][1] == {"file": "no/such.log", "error": "cannot read: No such file or directory",
                                    "entries": []}
    assert "no/such.log: cannot read" in kbatch("dump", "no/such.log").out


def test_json_timestamps_have_iso_8601_utc_twins(kbatch):
    from datetime import datetime, timezone

    def iso(ms):
        return None if ms is None or ms < 0 else \
            datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")

    seen = 0
    for name in ("mixed-v0-v1-v2.log", "v1-logappendtime.log", "v2-txn-commit.log"):
        dumped = kbatch("dump", "--format", "jsonl", "-r", f"fixtures/{name}", expect=0)
        for line in map(json.loads, dumped.out.splitlines()):
            if line["type"] != "batch":
                continue
            assert line["base_timestamp_iso"] == iso(line["base_timestamp"])
            assert line["max_timestamp_iso"] == iso(line["max_timestamp"])
            for record in line["records"]:
                assert record["timestamp_iso"] == iso(record["timestamp"])
                seen += record["timestamp_iso"] is not None
    assert seen > 10
    assert '"max_timestamp_iso": "2023-11-14T22:28:20.001Z"' in kbatch("dump", "--format", "jsonl",
                                                                       "fixtures/v2-txn-commit.log", expect=0).out


# What each run loads: a command imports the renderer and the decoders it uses, no more (start-up time is
# most of a small file's run).  A table loads Rich, an internal topic's records load Kafka's schemas.
LOADS = [
    (["dump", "--format", "jsonl", "--records", "fixtures/mixed-v0-v1-v2.log"], set(), {"rich", "kbatch.messages.schemas"}),
    (["verify-crc", "--deep", "--format", "jsonl", "fixtures/mixed-v0-v1-v2.log"], set(),
     {"rich", "kbatch.messages.schemas"}),
    (["dump", "--records", "fixtures/mixed-v0-v1-v2.log"], {"rich"}, set()),
    (["dump", "--format", "jsonl", "--records", "fixtures/internal/__transaction_state-3/00000000000000000000.log"],
     {"kbatch.messages.schemas"}, {"rich"}),
    # Off a terminal (here a pipe) verify-crc's summary is written without Rich.
    (["verify-crc", "--deep", "fixtures/internal/__transaction_state-3/00000000000000000000.log"],
     {"kbatch.messages.schemas"}, {"rich"}),
    (["--help"], set(), {"construct", "kbatch.reading.reader", *(f"kbatch.cli.{name}" for name in ("diff", "dump", "scan"))}),
    # A segment without compressed batches needs no codec.
    # A summary needs no JSON; pathlib (with urllib.parse: a fiftieth of a second) is for the generators only.
    (["verify-crc", "--deep", "fixtures/v2-uncompressed.log"], set(), {"cramjam", "json", "base64", "pathlib"}),
    (["verify-crc", "--deep", "fixtures/v2-gzip.log"], {"cramjam"}, {"json", "base64", "pathlib"}),
    (["verify-crc", "--format", "jsonl", "fixtures/v2-uncompressed.log"], {"json"}, {"cramjam", "base64", "pathlib"}),
    (["dump", "--format", "jsonl", "fixtures/v2-uncompressed.log"], {"json"}, {"pathlib"}),
]


@pytest.mark.parametrize("args, loaded, not_loaded", LOADS, ids=[" ".join(args[:3]) for args, _, _ in LOADS])
def test_a_command_loads_only_what_it_uses(args, loaded, not_loaded):
    program = ("import sys; from kbatch.cli import main\n"
               "try:\n    main()\nexcept SystemExit:\n    pass\n"
               f"print(sorted(name for name in {sorted(loaded | not_loaded)!r} if name in sys.modules), file=sys.stderr)")
    at_pipe_width = {name: value for name, value in os.environ.items() if name != "COLUMNS"}
    result = subprocess.run([sys.executable, "-c", program, *args], cwd=ROOT, capture_output=True, text=True,
                            check=True, env=at_pipe_width)
    assert result.stderr.splitlines()[-1] == repr(sorted(loaded))


def test_the_list_of_commands_gives_each_its_line_as_its_own_help_does(kbatch, monkeypatch):
    from kbatch.cli import SUBCOMMANDS, commands

    monkeypatch.setenv("COLUMNS", "120")
    listed = kbatch("--help", expect=0).out.split("Commands:\n")[1].split("\n\n")[0].splitlines()
    assert [line.split(maxsplit=1) for line in listed] == [[name, line] for name, (_, line) in SUBCOMMANDS.items()]
    assert {name: command.get_short_help_str(200) for name, command in commands().items()} == \
        {name: line for name, (_, line) in SUBCOMMANDS.items()}


def test_the_program_freezes_what_it_loaded_and_main_alone_does_not():
    """kbatch's own process leaves its modules out of the collector's walks, and collects again after; a
    caller of main() keeps its own collector."""
    program = ("import atexit, gc, sys\n"
               "from kbatch.cli import main\n"
               "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
               "print(gc.get_freeze_count() > 0, gc.isenabled(), file=sys.stderr)\n"
               "from kbatch.__main__ import run\n"
               "atexit.register(lambda: print(gc.get_freeze_count() > 0, gc.isenabled(), file=sys.stderr))\n"
               "run()\n")
    result = subprocess.run([sys.executable, "-c", program, "--version"], cwd=ROOT, capture_output=True, text=True,
                            check=True)
    assert result.stderr.split() == ["False", "True", "True", "True"]


# How the program ends (kbatch.__main__.leave): the exit handlers run and the output is flushed, then the
# process goes without the interpreter's teardown; what that way cannot do well takes sys.exit.
ENDINGS = {
    "a clean run": ("leave(0)", 0, "unflushed", "handler ran\n"),
    "damage found": ("leave(1)", 1, "unflushed", "handler ran\n"),
    "no status": ("leave(None)", 0, "unflushed", "handler ran\n"),
    "a message for a status": ("leave('kbatch: gone')", 1, "unflushed", "kbatch: gone\nhandler ran\n"),
    # The usual exit waits for a thread still running; so must this one, or the thread's output is lost.
    "a thread still running": ("import threading, time\n"
                               "threading.Thread(target=lambda: (time.sleep(0.2), print('thread done'))).start()\n"
                               "leave(0)", 0, "unflushedthread done\n", "handler ran\n"),
}


@pytest.mark.parametrize("ending", ENDINGS.values(), ids=ENDINGS.keys())
def test_the_program_ends_as_sys_exit_would(ending):
    code, status, out, err = ending
    program = ("import atexit, sys\n"
               "from kbatch.__main__ import leave\n"
               "atexit.register(print, 'handler ran', file=sys.stderr)\n"
               "sys.stdout.write('unflushed')\n"   # a pipe's stdout is block-buffered: still in the buffer
               f"{code}\n"
               "print('not reached')")
    result = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True)
    assert (result.returncode, result.stdout, result.stderr) == (status, out, err)

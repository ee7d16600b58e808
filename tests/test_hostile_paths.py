"""Hostile paths: where kbatch writes and what it opens.

A writer writes a regular file atomically (through a link, the file the link points at), stdout for ``-`` or
any name of stdout, through a FIFO or character device, and refuses anything else and every name of its own
input.  From a directory only regular files are opened: a FIFO named ``*.log`` would hang the run, a device
or socket would crash it.  Ctrl-C ends a run with 130, a full disk under stdout with one line and 2.

Every FIFO, device and socket here is made in the test's temporary directory; the machine's own /dev is only
ever a subprocess's stdout (/dev/full) or the link target /dev/stdout, and never replaced.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time

import pytest

from .helpers import FIXTURES, ROOT

PYTHON = sys.executable
DAMAGED = FIXTURES / "damaged-garbage-between.log"     # salvage keeps 4 batches, skips 40 bytes: exit 1
BAD_LENGTH = FIXTURES / "damaged-bad-length.log"       # repair-length mends one length field
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="making a device node (mknod) needs root")


def _run(*args: str, timeout: float = 60, **options) -> subprocess.CompletedProcess:
    options.setdefault("stdout", subprocess.PIPE)
    options.setdefault("stderr", subprocess.PIPE)
    options.setdefault("cwd", ROOT)
    return subprocess.run([PYTHON, "-m", "kbatch", *args], timeout=timeout,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), **options)


def _copy(source, target, mode: int = 0o644):
    target.write_bytes(source.read_bytes())
    target.chmod(mode)
    return target


def _salvaged() -> bytes:
    """What salvage writes for DAMAGED: the bytes every other output form must carry."""
    result = _run("salvage", str(DAMAGED), "-o", "-")
    assert result.returncode == 1, result.stderr
    return result.stdout


def _read_fifo(path, into: list) -> threading.Thread:
    def read():
        with open(path, "rb") as fifo:
            into.append(fifo.read())
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader


# -- 1. -o never replaces what a name is -----------------------------------------------------------------

@pytest.mark.parametrize("name", ["/dev/stdout", "link"])
def test_a_name_of_stdout_is_stdout_and_stays_what_it_is(tmp_path, name):
    if name == "link":
        (tmp_path / "link").symlink_to("/dev/stdout")
        name = str(tmp_path / "link")
    result = _run("salvage", str(DAMAGED), "-o", name)
    assert result.returncode == 1, result.stderr
    assert result.stdout == _salvaged()
    assert b"in stdout; skipped 1 damaged range" in result.stderr     # the report went to stderr
    if name != "/dev/stdout":
        assert os.readlink(name) == "/dev/stdout"


def test_a_fifo_is_written_through(kbatch, tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo, 0o600)
    got: list[bytes] = []
    reader = _read_fifo(fifo, got)
    result = kbatch("salvage", str(DAMAGED), "-o", str(fifo))
    reader.join(30)
    assert result.code == 1, result.err
    assert got == [_salvaged()]
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and stat.S_IMODE(fifo.lstat().st_mode) == 0o600


def test_repair_length_to_a_fifo_does_not_read_it_back(kbatch, tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = _read_fifo(fifo, got)
    result = kbatch("repair-length", str(BAD_LENGTH), "-o", str(fifo), "--apply")
    reader.join(30)
    assert result.code == 0, result.err
    assert "wrote " + str(fifo) in result.out and "verify-crc" not in result.out
    assert len(got[0]) == BAD_LENGTH.stat().st_size and got[0] != BAD_LENGTH.read_bytes()


@as_root
def test_a_character_device_is_written_through_its_mode_and_owner_untouched(kbatch, tmp_path):
    device = tmp_path / "null"
    os.mknod(device, stat.S_IFCHR | 0o620, os.makedev(1, 3))   # what /dev/null is, made here
    os.chmod(device, 0o620)   # mknod takes the umask off
    os.chown(device, 1234, 4321)
    source = _copy(DAMAGED, tmp_path / "in.log", 0o644)
    result = kbatch("salvage", str(source), "-o", str(device))
    assert result.code == 1, result.err
    status = device.lstat()
    assert stat.S_ISCHR(status.st_mode) and status.st_rdev == os.makedev(1, 3)
    assert stat.S_IMODE(status.st_mode) == 0o620 and (status.st_uid, status.st_gid) == (1234, 4321)


@pytest.mark.parametrize("kind", ["socket", "dangling link", "block device"])
def test_a_name_kbatch_cannot_write_through_is_refused_and_left(kbatch, tmp_path, kind):
    target = tmp_path / "out"
    if kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(target))
        expected = "a socket, not a file kbatch writes"
    elif kind == "dangling link":
        target.symlink_to("nowhere")
        expected = "a symbolic link to nothing (nowhere)"
    else:
        if os.geteuid() != 0:
            pytest.skip("making a device node (mknod) needs root")
        os.mknod(target, stat.S_IFBLK | 0o600, os.makedev(240, 0))   # a local/experimental number: no disk
        expected = "a block device, not a file kbatch writes"
    before = target.lstat()
    result = kbatch("salvage", str(DAMAGED), "-o", str(target))
    assert result.code == 2
    assert f"kbatch: cannot write {target}: {expected}" in result.err
    after = target.lstat()
    assert (after.st_mode, after.st_ino, after.st_rdev) == (before.st_mode, before.st_ino, before.st_rdev)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out"]   # no temporary left behind


def test_a_link_to_a_file_writes_the_file_and_keeps_the_link(kbatch, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "target.log"
    target.write_bytes(b"old")
    target.chmod(0o640)
    link = tmp_path / "link.log"
    link.symlink_to(target)
    result = kbatch("salvage", str(DAMAGED), "-o", str(link))
    assert result.code == 1, result.err
    assert os.readlink(link) == str(target)
    assert target.read_bytes() == _salvaged()
    assert stat.S_IMODE(target.stat().st_mode) == 0o640   # replaced, as a file written in place keeps its mode
    assert sorted(path.name for path in tmp_path.iterdir()) == ["elsewhere", "link.log"]


# -- 3. a writer never writes over its input -----------------------------------------------------------

def _writers(tmp_path):
    """(command, the input) for every command that writes a file, each given an output that is its input
    through a link (symbolic or hard)."""
    segment = _copy(BAD_LENGTH, tmp_path / "00000000000000000000.log")
    spec = tmp_path / "spec.json"
    spec.write_text('{"kbatch_json_version": 1, "batches": []}')
    (tmp_path / "spec-link.json").symlink_to(spec)
    os.link(segment, tmp_path / "hard.log")
    (tmp_path / "sym.log").symlink_to(segment.name)
    (tmp_path / "00000000000000000000.log.kbatch-snapshot").symlink_to(segment.name)
    layouts = tmp_path / "layouts"
    layouts.mkdir()
    (layouts / "00000000000000000000.v2.log").symlink_to(segment)
    return segment, spec, {
        "salvage": ["salvage", str(segment), "-o", str(tmp_path / "sym.log")],
        "repair-length": ["repair-length", str(segment), "-o", str(tmp_path / "hard.log"), "--apply"],
        "encode-from-json": ["encode-from-json", str(spec), "-o", str(tmp_path / "spec-link.json")],
        "map": ["map", "--format", "json", str(segment), "-o", str(tmp_path / "hard.log")],
        "snapshot": ["snapshot", "write", str(segment)],
        "stats": ["stats", "--what-if", "--write-layouts", str(layouts), str(segment)],
    }


@pytest.mark.parametrize("command", ["salvage", "repair-length", "encode-from-json", "map", "snapshot", "stats"])
def test_no_writer_writes_over_its_input(kbatch, tmp_path, command):
    segment, spec, commands = _writers(tmp_path)
    before = {path: path.read_bytes() for path in (segment, spec)}
    result = kbatch(*commands[command])
    assert result.code == 2, result.out
    assert "kbatch never writes over its input" in result.err
    assert {path: path.read_bytes() for path in (segment, spec)} == before
    assert os.path.islink(tmp_path / "sym.log") and os.path.islink(tmp_path / "spec-link.json")


def test_map_never_writes_over_a_file_of_a_partition_it_reads(kbatch, tmp_path):
    directory = tmp_path / "orders-0"
    directory.mkdir()
    _copy(FIXTURES / "mixed-v0-v1-v2.log", directory / "00000000000000000000.log")
    index = directory / "00000000000000000000.index"
    index.write_bytes(bytes(8))
    result = kbatch("map", "--format", "json", str(directory), "-o", str(index))
    assert result.code == 2
    assert f"{index} is an input: kbatch never writes over its input" in result.err
    assert index.read_bytes() == bytes(8)


def test_stdout_appended_to_the_input_is_refused(tmp_path):
    source = _copy(DAMAGED, tmp_path / "in.log")
    with open(source, "ab") as out:
        result = _run("salvage", str(source), "-o", "-", stdout=out)
    assert result.returncode == 2
    assert b"stdout is the input" in result.stderr
    assert source.read_bytes() == DAMAGED.read_bytes()


def test_in_place_through_a_link_repairs_the_segment_and_keeps_the_link(kbatch, tmp_path):
    (tmp_path / "partition").mkdir()
    segment = _copy(BAD_LENGTH, tmp_path / "partition" / "00000000000000000000.log")
    link = tmp_path / "link.log"
    link.symlink_to(segment)
    result = kbatch("repair-length", str(link), "--in-place", "--backup", ".orig", "--apply")
    assert result.code == 0, result.out
    assert os.readlink(link) == str(segment)
    assert (tmp_path / "link.log.orig").read_bytes() == BAD_LENGTH.read_bytes()
    assert segment.read_bytes() != BAD_LENGTH.read_bytes()
    assert kbatch("verify-crc", str(segment)).code == 0


# -- 4. only regular files are opened from a directory ------------------------------------------------------

@pytest.fixture
def hostile_partition(tmp_path):
    """orders-0 with one real segment and, named like segments, a FIFO, a socket, a link loop, a link to
    nothing and (as root) a character device."""
    directory = tmp_path / "orders-0"
    directory.mkdir()
    _copy(FIXTURES / "mixed-v0-v1-v2.log", directory / "00000000000000000000.log")
    os.mkfifo(directory / "00000000000000000100.log")
    (directory / "00000000000000000200.log").symlink_to("00000000000000000200.log")
    (directory / "00000000000000000300.log").symlink_to("nowhere")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(directory / "00000000000000000400.log"))
    passed = {"00000000000000000100.log": "a FIFO, not a regular file",
              "00000000000000000200.log": "a symbolic link loop",
              "00000000000000000300.log": "a symbolic link to nothing (nowhere)",
              "00000000000000000400.log": "a socket, not a regular file"}
    if os.geteuid() == 0:
        os.mknod(directory / "00000000000000000500.log", stat.S_IFCHR | 0o600, os.makedev(1, 5))   # /dev/zero's
        passed["00000000000000000500.log"] = "a character device, not a regular file"
    yield directory, passed
    server.close()


@pytest.mark.parametrize("command", [
    ["verify-crc"], ["verify-crc", "--format", "jsonl"], ["verify-crc", "--deep", "--format", "jsonl"],
    ["dump"], ["dump", "--format", "jsonl"], ["grep", "-c", ""], ["grep", "-c", "--isolation", "read_committed", ""],
    ["stats", "--format", "json"], ["txn"], ["map", "--format", "json", "-o", "-"],
])
def test_a_directory_command_passes_over_what_is_not_a_regular_file(hostile_partition, command):
    directory, passed = hostile_partition
    result = _run(*command, str(directory), timeout=60)     # a FIFO opened would hang past the timeout
    assert result.returncode == 2, result.stderr
    lines = result.stderr.decode().splitlines()
    for name, why in passed.items():
        assert f"kbatch: cannot read {directory / name}: {why}: passed over unopened" in lines
    assert "Traceback" not in result.stderr.decode() and "internal error" not in result.stderr.decode()
    if command == ["verify-crc"]:
        return   # its table has a row for each passed over, and so other widths
    for name in passed:   # what is passed over changes nothing else: what the run says without it, it says
        (directory / name).unlink()
    clean = _run(*command, str(directory))
    assert clean.returncode in (0, 1), clean.stderr
    assert clean.stdout and set(clean.stdout.splitlines()) <= set(result.stdout.splitlines())


def test_a_directory_passes_over_in_json_too(kbatch, hostile_partition):
    directory, passed = hostile_partition
    result = kbatch("verify-crc", "--format", "jsonl", str(directory))
    assert result.code == 2
    errors = [json.loads(line) for line in result.out.splitlines() if '"error"' in line]
    assert {os.path.basename(entry["file"]): entry["error"] for entry in errors} == {
        name: f"cannot read: {why}: passed over unopened" for name, why in passed.items()}


def test_a_glob_passes_over_the_same(kbatch, hostile_partition):
    from kbatch.files.inputs import expand_paths

    directory, passed = hostile_partition
    files, missing, over = expand_paths([str(directory / "*.log")])
    assert files == [str(directory / "00000000000000000000.log")] and missing == []
    assert dict((os.path.basename(path), why) for path, why in over) == passed


def test_a_snapshot_that_is_a_fifo_is_not_opened(tmp_path):
    segment = _copy(FIXTURES / "mixed-v0-v1-v2.log", tmp_path / "segment.log")
    os.mkfifo(tmp_path / "segment.log.kbatch-snapshot")
    result = _run("snapshot", "check", str(segment), timeout=60)   # opened, it would wait for a writer
    assert result.returncode == 2
    assert result.stderr.decode().splitlines() == [
        f"kbatch: cannot read {segment}.kbatch-snapshot: a FIFO, not a regular file: passed over unopened"]


def test_a_fifo_named_alone_is_read_as_a_stream(tmp_path):
    fifo = tmp_path / "segment.fifo"
    os.mkfifo(fifo)

    def write():
        with open(fifo, "wb") as out:
            out.write((FIXTURES / "mixed-v0-v1-v2.log").read_bytes())
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    result = _run("verify-crc", "--format", "jsonl", str(fifo))
    writer.join(30)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["file"], summary["size"], summary["batch_count"], summary["damaged"]) == (str(fifo), 1082, 7, False)


# -- 8. signals and write errors -------------------------------------------------------------------------

def test_ctrl_c_exits_130(tmp_path):
    """SIGINT while kbatch reads a FIFO (it waits on it): status 130 (128 + SIGINT), no "Aborted.", no
    traceback."""
    fifo = tmp_path / "segment.fifo"
    os.mkfifo(fifo)
    child = subprocess.Popen([PYTHON, "-m", "kbatch", "verify-crc", str(fifo)], cwd=ROOT,
                             env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    writer = None
    try:
        for _ in range(1200):   # a FIFO opens for writing without waiting only once its reader has it open
            try:
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:
                assert child.poll() is None, child.stderr.read()
                time.sleep(0.05)
        assert writer is not None, "kbatch never opened the FIFO"
        os.write(writer, (FIXTURES / "mixed-v0-v1-v2.log").read_bytes()[:100])   # and then nothing more
        time.sleep(0.3)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
    finally:
        if writer is not None:
            os.close(writer)
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130, err
    assert b"Aborted" not in err and b"Traceback" not in err


@pytest.mark.parametrize("command", [
    ["dump", str(FIXTURES / "mixed-v0-v1-v2.log")],
    ["dump", "--format", "json", str(FIXTURES / "mixed-v0-v1-v2.log")],
    ["salvage", str(DAMAGED), "-o", "-"],
])
def test_a_full_disk_under_stdout_is_one_line_and_status_2(command):
    with open("/dev/full", "wb") as full:
        result = _run(*command, stdout=full)
    assert result.returncode == 2
    assert result.stderr.decode().splitlines() == ["kbatch: cannot write stdout: No space left on device"]


def test_a_file_too_large_under_stdout_is_one_line_and_status_2(tmp_path):
    """EFBIG: stdout is a file past the process's file-size limit (Python ignores SIGXFSZ, so the write fails)."""
    import resource

    with open(tmp_path / "out.txt", "wb") as out:
        result = _run("dump", "--records", str(FIXTURES / "mixed-v0-v1-v2.log"), stdout=out,
                      preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100)))
    assert result.returncode == 2
    assert result.stderr.decode().splitlines() == ["kbatch: cannot write stdout: File too large"]


def test_a_closed_stdout_is_one_line_and_status_2():
    result = _run("dump", str(FIXTURES / "mixed-v0-v1-v2.log"), stdout=None, preexec_fn=lambda: os.close(1))
    assert result.returncode == 2
    assert result.stderr.decode().splitlines() == ["kbatch: cannot write stdout: Bad file descriptor"]


@pytest.mark.parametrize("name, status", [("v2-gzip.log", 0), ("damaged-crc-field.log", 1)])
def test_a_closed_stderr_leaves_the_status_to_the_run(name, status):
    """2>&-: nothing is said there, and the status is the run's own (it was 1, "damage found", for a clean
    file: the last flush met no stderr)."""
    result = _run("dump", str(FIXTURES / name), stderr=None, preexec_fn=lambda: os.close(2))
    assert result.returncode == status
    assert f"{name}: " in result.stdout.decode()


@pytest.mark.parametrize("command", [["dump", "-"], ["encode-from-json", "-", "-o", "never-written.log"]])
def test_reading_a_closed_stdin_is_one_line_and_status_2(command, tmp_path):
    result = _run(*command, stdin=None, cwd=tmp_path, preexec_fn=lambda: os.close(0))
    assert result.returncode == 2
    assert "Bad file descriptor" in result.stderr.decode() + result.stdout.decode()
    assert "internal error" not in result.stderr.decode() and list(tmp_path.iterdir()) == []


def test_a_closed_stderr_is_held_by_dev_null_so_no_file_kbatch_opens_takes_it():
    probe = ("import os, kbatch.cli as cli\n"
             "def where_stderr_goes():\n"
             "    print(os.readlink('/proc/self/fd/2'))\n"
             "    raise SystemExit(0)\n"
             "cli.main = where_stderr_goes\n"
             "from kbatch.__main__ import run\n"
             "run()\n")
    result = subprocess.run([PYTHON, "-c", probe], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                            stdout=subprocess.PIPE, preexec_fn=lambda: os.close(2), timeout=60)
    assert (result.returncode, result.stdout) == (0, b"/dev/null\n")


def test_a_closed_pipe_stays_silent():
    child = subprocess.Popen([PYTHON, "-m", "kbatch", "dump", "--records", str(FIXTURES / "mixed-v0-v1-v2.log")],
                             cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    child.stdout.read(10)
    child.stdout.close()
    assert child.wait(timeout=60) == 141
    assert child.stderr.read() == b""


def test_write_layouts_where_nothing_can_be_written_is_one_line_and_status_2(kbatch, tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_bytes(b"")
    layouts = blocked / "layouts"   # under a regular file: no directory can be made there, even by root
    result = kbatch("stats", "--what-if", "--write-layouts", str(layouts), str(DAMAGED))
    assert result.code == 2
    assert result.err.splitlines() == [f"kbatch: cannot write {layouts}/damaged-garbage-between.v0.log: Not a directory"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_write_layouts_into_a_read_only_directory_is_one_line_and_status_2(kbatch, tmp_path):
    layouts = tmp_path / "layouts"
    layouts.mkdir(mode=0o555)
    result = kbatch("stats", "--what-if", "--write-layouts", str(layouts), str(DAMAGED))
    assert result.code == 2
    assert f"kbatch: cannot write {layouts}/damaged-garbage-between.v0.log: Permission denied" in result.err


@pytest.mark.parametrize("mode", [0o600, 0o640])
def test_write_layouts_take_the_inputs_mode(kbatch, tmp_path, mode):
    source = _copy(DAMAGED, tmp_path / "segment.log", mode)
    previous = os.umask(0o022)
    try:
        result = kbatch("stats", "--what-if", "--write-layouts", str(tmp_path / "layouts"), str(source))
    finally:
        os.umask(previous)
    assert result.code == 1, result.err
    written = sorted((tmp_path / "layouts").iterdir())
    assert [path.name for path in written] == [f"segment.v{n}.log" for n in range(4)]
    assert {stat.S_IMODE(path.stat().st_mode) for path in written} == {mode}

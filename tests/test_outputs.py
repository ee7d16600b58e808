"""Where the commands that write a segment put it: ``-o -`` is stdout; a file takes the input's mode; a
writer killed midway leaves no temporary file behind."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time

import pytest

import kbatch.files.outputs as files

from .helpers import FIXTURES, ROOT

PYTHON = sys.executable


def _run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-m", "kbatch", *args], capture_output=True, timeout=timeout, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


@pytest.mark.parametrize("args, fixture", [
    (["salvage"], "damaged-garbage-between.log"),
    (["repair-length", "--apply"], "damaged-bad-length.log"),
])
def test_dash_o_writes_the_segment_to_stdout(tmp_path, args, fixture):
    source = tmp_path / fixture
    source.write_bytes((FIXTURES / fixture).read_bytes())
    result = _run(*args, str(source), "-o", "-")
    assert result.returncode == (1 if args == ["salvage"] else 0), result.stderr   # salvage: it skipped a range
    assert not (ROOT / "-").exists() and not (tmp_path / "-").exists()
    assert b"\xe2\x94" not in result.stdout          # no table in the bytes: the report went to stderr
    assert b"wrote stdout" in result.stderr or b"in stdout" in result.stderr
    copy = tmp_path / "copy.log"
    copy.write_bytes(result.stdout)
    assert _run("verify-crc", "--deep", str(copy)).returncode == 0


def test_dash_o_on_a_terminal_is_refused(kbatch, monkeypatch):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    result = kbatch("salvage", "fixtures/damaged-garbage-between.log", "-o", "-")
    assert result.code == 2 and "redirect" in result.err


@pytest.mark.parametrize("mode", [0o640, 0o600, 0o444])
@pytest.mark.parametrize("args, fixture", [
    (["salvage"], "damaged-garbage-between.log"),
    (["repair-length", "--apply"], "damaged-bad-length.log"),
])
def test_an_output_takes_the_inputs_mode_less_the_umask(kbatch, tmp_path, mode, args, fixture):
    source = tmp_path / fixture
    source.write_bytes((FIXTURES / fixture).read_bytes())
    source.chmod(mode)
    out = tmp_path / "out.log"
    previous = os.umask(0o022)
    try:
        # salvage: it skipped a range
        kbatch(*args, str(source), "-o", str(out), expect=1 if args == ["salvage"] else 0)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(out.stat().st_mode) == mode & ~0o022


def test_the_in_place_backup_keeps_the_originals_mode(kbatch, tmp_path):
    source = tmp_path / "00000000000000000000.log"
    source.write_bytes((FIXTURES / "damaged-bad-length.log").read_bytes())
    source.chmod(0o640)
    if os.geteuid() == 0:   # root may give files away: the original belongs to someone else
        os.chown(source, 1234, 4321)
    result = kbatch("repair-length", str(source), "--apply", "--in-place", "--backup", ".orig")
    assert result.code == 0, result.out
    backup = tmp_path / "00000000000000000000.log.orig"
    assert stat.S_IMODE(backup.stat().st_mode) == 0o640
    assert (backup.stat().st_uid, backup.stat().st_gid) == (source.stat().st_uid, source.stat().st_gid)
    assert sorted(p.name for p in tmp_path.iterdir()) == [source.name, backup.name]


_WRITER = """
import sys, time
sys.path.insert(0, {root!r})
from kbatch.files.outputs import write_atomically
def chunks():
    yield b"x" * 65536
    open({ready!r}, "w").close()
    while True:
        time.sleep(0.05)
        yield b"y"
write_atomically({target!r}, chunks())
"""


def _kill_a_writer(tmp_path, target) -> None:
    ready = tmp_path / "ready"
    child = subprocess.Popen([PYTHON, "-c", _WRITER.format(root=str(ROOT), ready=str(ready), target=str(target))])
    try:
        for _ in range(600):
            if ready.exists() or child.poll() is not None:
                break
            time.sleep(0.05)
        assert ready.exists(), "the writer never started writing"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    ready.unlink()


def test_a_writer_killed_midway_leaves_nothing(tmp_path):
    target = tmp_path / "partition" / "00000000000000000000.log"
    target.parent.mkdir()
    _kill_a_writer(tmp_path, target)
    assert list(target.parent.iterdir()) == []


def test_without_unnamed_files_the_next_write_removes_what_a_killed_one_left(tmp_path, monkeypatch):
    """Where O_TMPFILE is missing, temporaries carry their writer's pid; a later write removes those of the
    dead (and not those of a live writer)."""
    directory = tmp_path / "partition"
    directory.mkdir()
    dead = subprocess.run([PYTHON, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = directory / f".kbatch-{int(dead.stdout)}-abc123.tmp"
    stale.write_bytes(b"half a segment")
    alive = directory / f".kbatch-{os.getpid()}-def456.tmp"
    alive.write_bytes(b"someone's write")
    monkeypatch.delattr(os, "O_TMPFILE", raising=False)
    files.write_atomically(str(directory / "out.log"), [b"data"])
    assert sorted(p.name for p in directory.iterdir()) == [alive.name, "out.log"]


def test_write_atomically_never_renames_over_what_is_not_a_regular_file(tmp_path):
    """The last check before the rename: a name that became a FIFO meanwhile is refused, not replaced."""
    fifo = tmp_path / "out.log"
    os.mkfifo(fifo)
    with pytest.raises(files.RefusedOutput, match="a FIFO, not a regular file: not replaced"):
        files.write_atomically(str(fifo), [b"data"])
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert [path.name for path in tmp_path.iterdir()] == ["out.log"]


def test_an_input_is_found_through_every_kind_of_link(tmp_path):
    source = tmp_path / "in.log"
    source.write_bytes(b"segment")
    (tmp_path / "sym.log").symlink_to(source.name)
    os.link(source, tmp_path / "hard.log")
    (tmp_path / "other.log").write_bytes(b"segment")
    inputs = ["x.log", str(source)]
    assert files.input_written(str(tmp_path / "sym.log"), inputs) == str(source)
    assert files.input_written(str(tmp_path / "hard.log"), inputs) == str(source)
    assert files.input_written(str(tmp_path / "other.log"), inputs) is None   # the same bytes, another file
    assert files.input_written(str(tmp_path / "new.log"), inputs) is None
    assert files.input_written(None, inputs) is None

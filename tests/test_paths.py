"""Directories and globs name files the same way for every command that takes files.

``kbatch dump DIR`` reads the same files as ``kbatch verify-crc DIR``: the
*.log files under it, recursively, sorted; a glob names what it matches (a
directory among its matches is searched too); a path naming nothing is
reported and makes the exit status 2.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kbatch.files.inputs import PARTITION_FILES, expand_paths, list_segments

from .helpers import FIXTURES


@pytest.fixture
def log_tree(tmp_path):
    """orders-0/ with two segments and an index, orders-1/ with one segment, and a stray text file."""
    for directory, names in (("orders-0", ("v2-none", "v1-none")), ("orders-1", ("damaged-crc-field",))):
        (tmp_path / directory).mkdir()
        for offset, name in enumerate(names):
            shutil.copy(FIXTURES / f"{name}.log", tmp_path / directory / f"{offset:020d}.log")
    (tmp_path / "orders-0" / f"{0:020d}.index").write_bytes(b"")
    (tmp_path / "notes.txt").write_text("not a segment")
    return tmp_path


def test_a_directory_names_its_log_files_recursively_sorted(log_tree):
    files, missing, _ = expand_paths([str(log_tree)])
    assert files == [str(log_tree / "orders-0" / "00000000000000000000.log"),
                     str(log_tree / "orders-0" / "00000000000000000001.log"),
                     str(log_tree / "orders-1" / "00000000000000000000.log")]
    assert missing == []


def test_a_glob_names_its_files_and_searches_its_directories(log_tree):
    files, _, _ = expand_paths([str(log_tree / "orders-*")])
    assert files == expand_paths([str(log_tree)])[0]
    files, _, _ = expand_paths([str(log_tree / "*" / "*1.log")])
    assert files == [str(log_tree / "orders-0" / "00000000000000000001.log")]


def test_paths_naming_nothing_are_reported_and_a_missing_file_is_kept_for_the_opener(log_tree):
    (log_tree / "empty").mkdir()
    files, missing, _ = expand_paths([str(log_tree / "empty"), str(log_tree / "*.nothing"), str(log_tree / "gone.log"),
                                   "-"])
    assert files == [str(log_tree / "gone.log"), "-"]
    assert missing == [f"{log_tree / 'empty'} (no *.log files in it)", str(log_tree / "*.nothing")]


def test_a_pattern_matching_nothing_is_reported_after_a_file_passed_over(log_tree):
    """A FIFO passed over under one path does not hide that a later pattern matched nothing."""
    os.mkfifo(log_tree / "orders-1" / "fifo.log")
    files, missing, passed = expand_paths([str(log_tree / "orders-1"), str(log_tree / "*.nothing")])
    assert files == [str(log_tree / "orders-1" / "00000000000000000000.log")]
    assert passed == [(str(log_tree / "orders-1" / "fifo.log"), "a FIFO, not a regular file")]
    assert missing == [str(log_tree / "*.nothing")]


def test_scan_lists_the_same_segments(log_tree):
    assert [segment.path for segment in list_segments([str(log_tree)])] == expand_paths([str(log_tree)])[0]


def test_scan_lists_what_it_leaves_out_and_why(log_tree):
    os.mkfifo(log_tree / "orders-1" / "fifo.log")
    unread: list = []
    segments = list_segments([str(log_tree / "gone.log"), str(log_tree), str(log_tree / "*.nothing")], "*.log", unread)
    assert [segment.path for segment in segments] == expand_paths([str(log_tree)])[0]
    assert unread == [(str(log_tree / "gone.log"), "No such file or directory"),
                      (str(log_tree / "orders-1" / "fifo.log"), "a FIFO, not a regular file"),
                      (str(log_tree / "*.nothing"), None)]


@pytest.mark.parametrize("command", [["dump", "--format", "jsonl"], ["dump", "--format", "dumplog"],
                                     ["verify-crc", "--format", "jsonl"], ["stats", "--format", "json"]],
                         ids=lambda command: " ".join(command))
def test_every_command_reads_a_directory_as_the_files_in_it(kbatch, log_tree, command):
    # dump reads every file Kafka keeps (its indexes too); the others read the segments.
    files = expand_paths([str(log_tree)], *([PARTITION_FILES] if command[0] == "dump" else []))[0]
    by_name = kbatch(*command, *files)
    by_directory = kbatch(*command, str(log_tree))
    by_glob = kbatch(*command, str(log_tree / "orders-?"))
    assert by_name.code == 1, "orders-1 holds a damaged segment"
    assert (by_directory.code, by_directory.out) == (by_glob.code, by_glob.out) == (by_name.code, by_name.out)
    assert all(file in by_name.out for file in files)


@pytest.mark.parametrize("command", ["dump", "verify-crc", "stats"])
def test_every_command_reports_a_directory_without_segments(kbatch, tmp_path, command):
    result = kbatch(command, str(tmp_path))
    assert result.code == 2
    assert f"kbatch: no file matches {tmp_path} (no *.log files in it)" in result.err


@pytest.mark.parametrize("command", [["dump"], ["dump", "--records"], ["verify-crc"], ["verify-crc", "--deep"],
                                     ["hexdump-annotate"], ["txn"], ["repair-length"], ["salvage"]],
                         ids=lambda command: " ".join(command))
def test_a_file_name_is_shown_as_it_is_never_read_as_markup(kbatch, tmp_path, monkeypatch, command):
    """Rich reads "[bold]" in a plain string as a style: a file named so must still be shown by its name."""
    monkeypatch.chdir(tmp_path)   # a short name: a table's title wraps at the table's width
    damaged = Path("orders[bold]-0 [red]x[reset].log")
    # what salvage shows of its input is the table of the ranges it skipped
    shutil.copy(FIXTURES / ("damaged-garbage-between.log" if command[0] == "salvage" else "damaged-bad-length.log"),
                damaged)
    extra = ["--output", "out.log"] if command[0] in ("repair-length", "salvage") else []
    result = kbatch(*command, *extra, str(damaged))
    # each finds the damage it was given, but hexdump-annotate, which shows the first batch: a whole one
    assert result.code == (0 if command == ["hexdump-annotate"] else 1), result.err
    shown = result.out + result.err
    assert str(damaged) in shown
    assert shown.count("orders") == shown.count(damaged.name), "every mention is the whole name"


def test_diff_shows_both_names_as_they_are(kbatch, tmp_path):
    a, b = tmp_path / "a[bold].log", tmp_path / "b[italic].log"
    shutil.copy(FIXTURES / "v2-none.log", a)
    shutil.copy(FIXTURES / "v2-gzip.log", b)
    result = kbatch("diff", str(a), str(b), expect=1)
    assert str(a) in result.out and str(b) in result.out
    assert result.out.count("/a") == result.out.count("/a[bold].log")

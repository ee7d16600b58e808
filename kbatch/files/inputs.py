"""Finding segments: local paths, globs, directories, and remote object stores.

A broker keeps each partition in a directory named ``<topic>-<partition>``
holding segments named by their base offset (``00000000000000001234.log``);
the topic and partition of a segment come from there.
"""

from __future__ import annotations

import errno
import fnmatch
import glob
import os
import re
import stat
from typing import BinaryIO, NamedTuple


# Every file of a partition directory kbatch reads (``dump DIR``): a directory lists them as Kafka keeps
# them, by offset, each segment's files together (kbatch.files.kinds.listing_order).
PARTITION_FILES = ("*.log", "*.index", "*.timeindex", "*.txnindex", "*.snapshot", "*.checkpoint",
                   "*.checkpoint.part", "leader-epoch-checkpoint", "partition.metadata", "*offset-checkpoint",
                   "quorum-state", "meta.properties")


class Segment(NamedTuple):
    path: str
    size: int

    @property
    def topic(self) -> str | None:
        return topic_partition(self.path)[0]

    @property
    def partition(self) -> int | None:
        return topic_partition(self.path)[1]


def topic_partition(path: str) -> tuple[str | None, int | None]:
    """The topic and partition a file's directory names (``orders-3/00000000000000000000.log``), or Nones."""
    directory = path.rstrip("/").rsplit("/", 2)[-2] if "/" in path.rstrip("/") else ""
    return partition_directory(directory) or (None, None)


def partition_directory(name: str) -> tuple[str, int] | None:
    """(topic, partition) of a partition directory's name, read as LocalLog.parseTopicPartitionName reads it:
    TOPIC-N, the last "-" ending the topic; or TOPIC-N.ID-delete, -future or -stray, a directory Kafka renamed
    that holds the same files (kinds.renamed_partition).  None for any other name."""
    from kbatch.files.kinds import renamed_partition

    renamed = renamed_partition(name)
    topic, dash, partition = (renamed[0] if renamed else name).rpartition("-")
    if not (topic and dash and partition.isascii() and partition.isdigit()):
        return None
    return topic, int(partition)


# Kafka's rule for a topic's name (org.apache.kafka.common.internals.Topic: validate, detectInvalidTopic,
# containsValidPattern): not empty, not "." or "..", at most MAX_NAME_LENGTH characters, each of LEGAL_CHARS.
# A broker makes a partition directory, TOPIC-N, for no other name: a captured name that breaks the rule names
# no directory of a log directory (its "/" and ".." would walk out of it), nor one kbatch writes as it is.
TOPIC_MAX_LENGTH = 249
TOPIC_LEGAL_CHARS = re.compile(r"[a-zA-Z0-9._-]")   # one character of Topic.LEGAL_CHARS
_TOPIC_NAME_CHARACTERS = re.compile(TOPIC_LEGAL_CHARS.pattern + "*")


def topic_refused(topic: str) -> str | None:
    """Why Kafka refuses ``topic`` as a topic's name (Topic.detectInvalidTopic's reasons), or None."""
    if not topic:
        return "the empty string is not allowed"
    if topic in (".", ".."):
        return f"'{topic}' is not allowed"
    if len(topic) > TOPIC_MAX_LENGTH:
        return f"a name of {len(topic)} characters is longer than the max allowed length {TOPIC_MAX_LENGTH}"
    if not _TOPIC_NAME_CHARACTERS.fullmatch(topic):
        return "it contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    return None


def segment_base_offset(path: str) -> int | None:
    """The base offset a segment's name gives (``00000000000000000042.log``), or None."""
    stem, dot, suffix = path.rsplit("/", 1)[-1].partition(".")
    return int(stem) if dot and suffix == "log" and stem.isascii() and stem.isdigit() else None


def is_remote(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


# The URI schemes pyarrow.fs opens (FileSystem.from_uri). A remote URI of any other (s3a://, wasb://, ...) names
# files only Hadoop's clients reach: ``kbatch scan`` has Spark list and read them (kbatch.spark.hadoop).
PYARROW_SCHEMES = frozenset({"s3", "gs", "gcs", "hdfs", "viewfs", "abfs", "abfss"})


def through_hadoop(path: str) -> bool:
    """Whether ``path`` is a URI only Hadoop's file systems open (``s3a://bucket/kafka/``), not pyarrow.fs."""
    return is_remote(path) and path.split("://", 1)[0].lower() not in PYARROW_SCHEMES


def expand_paths(paths, pattern: str | tuple[str, ...] = "*.log") -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """The files that command-line paths name, in the order given; each path that names none; and each file
    found that is passed over unopened, with why (:func:`passed_over`).

    Every command that takes files reads its arguments this way: a file as it
    is (and ``-``, stdin); a directory as its regular files matching
    ``pattern``, searched recursively; a glob (quoted, for more files than a
    shell takes) as what it matches, a directory among them searched
    likewise.  Within one argument the files come sorted.  A path that does
    not exist is kept, for the command to report as unreadable when it opens
    it; a FIFO named on its own is kept too, and read as a stream.
    """
    files: list[str] = []
    missing: list[str] = []
    passed: list[tuple[str, str]] = []   # (file, why it is passed over)
    for path in paths:
        path = path.removeprefix("file://")
        if path == "-" or os.path.isfile(path):
            if (why := not_a_segment(path, pattern)) is None:
                files.append(path)
            else:
                passed.append((path, why))
            continue
        if os.path.isdir(path):
            found = _search(path, pattern, passed)
            if not found:
                missing.append(f"{path} (no {pattern if isinstance(pattern, str) else pattern[0]} files in it)")
        elif glob.has_magic(path):
            found = []
            passed_before = len(passed)
            for match in sorted(glob.glob(path, recursive=True)):
                if os.path.isdir(match):
                    found += _search(match, pattern, passed)
                elif (why := passed_over(match) or not_a_segment(match, pattern)) is None:
                    found.append(match)
                else:
                    passed.append((match, why))
            if not found and len(passed) == passed_before:   # (this pattern's: not an earlier path's)
                missing.append(path)
        else:
            found = [path]   # reported as unreadable when opened (or read as a stream: a FIFO named alone)
        files += found
    return files, missing, passed


def partition_directories(paths) -> list[str]:
    """The partition directories the arguments name: each that holds segments, at any depth, under a
    directory argument, found by the one walk every command uses (:func:`expand_paths`), in
    its order; and each directory all of whose segments the file (and glob) arguments name, as if the
    directory were given (``'/var/kafka-logs/*/*.log'`` names every partition)."""
    return complete_and_partial_partitions(paths)[0]


def complete_and_partial_partitions(paths) -> tuple[list[str], list[tuple[str, int, int]]]:
    """:func:`partition_directories`, and the directories only some of whose segments the arguments name:
    (directory, segments named, segments in it) each, which a cross-check cannot take (an index or a
    snapshot is held against the whole partition's log)."""
    from kbatch.files.kinds import LOG, kind_of

    found: dict[str, None] = {}
    named: dict[str, set[str]] = {}
    for path in paths:
        if path == "-" or "://" in path:
            continue
        segments = expand_paths([path])[0]
        if os.path.isdir(path):
            found.update((os.path.dirname(segment), None) for segment in segments)
            continue
        for segment in segments:
            if os.path.isfile(segment) and kind_of(segment) == LOG:
                named.setdefault(os.path.dirname(segment) or ".", set()).add(os.path.basename(segment))
    partial = []
    for directory, names in named.items():
        # A scratch directory holding one segment is no partition to hold indexes against.
        if directory in found or partition_directory(os.path.basename(os.path.abspath(directory))) is None:
            continue
        in_it = {name for name in os.listdir(directory)
                 if kind_of(name) == LOG and os.path.isfile(os.path.join(directory, name))}
        if in_it <= names:
            found[directory] = None
        else:
            partial.append((directory, len(names & in_it), len(in_it)))
    return list(found), partial


def not_a_segment(path: str, pattern: str | tuple[str, ...]) -> str | None:
    """Why a file named to a command that reads log segments (``pattern`` "*.log") is not read as one: Kafka's
    name for it says it is another kind (a producer snapshot, an index, a checkpoint), whose bytes read as
    batches would all be damage.  None: read it."""
    from kbatch.files import kinds

    kind = kinds.kind_of(path)
    if pattern != "*.log" or kind is None or kind in kinds.BATCH_KINDS:
        return None
    return f"{kinds.DESCRIPTIONS[kind]}, not a log segment (kbatch dump reads it)"


def passed_over(path: str) -> str | None:
    """Why a file found in a directory (or by a glob) is not opened, or None for a regular file (through links).

    Only regular files are opened from a directory: opening a FIFO waits for a writer that may never come, a
    device may never end, a socket cannot be opened, and none of them holds a segment.  Kafka reads a log
    directory the same way (LogLoader.loadSegmentFiles keeps the entries for which File.isFile holds).
    """
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "a symbolic link loop"
        if os.path.islink(path):
            return f"a symbolic link to nothing ({os.readlink(path)})"
        return error.strerror or str(error)
    return None if stat.S_ISREG(mode) else f"{what_it_is(mode)}, not a regular file"


def what_it_is(mode: int) -> str:
    """What a file that is not a regular one is, in words (from its st_mode)."""
    for test, words in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                        (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                        (stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return words
    return "a special file"


def _search(directory: str, pattern: str | tuple[str, ...], passed: list[tuple[str, str]]) -> list[str]:
    """The regular files under ``directory`` (recursively) whose names match ``pattern`` (or one of them),
    sorted; the others matching go to ``passed`` with why (:func:`passed_over`), unopened."""
    patterns = (pattern,) if isinstance(pattern, str) else pattern
    matching = [os.path.join(root, name) for root, _, names in os.walk(directory)
                for name in names if any(fnmatch.fnmatch(name, one) for one in patterns)]
    found = []
    for path in sorted(matching):
        why = passed_over(path)
        if why is None:
            found.append(path)
        else:
            passed.append((path, why))
    if pattern == PARTITION_FILES:
        from kbatch.files.kinds import listing_order

        return sorted(found, key=lambda path: (os.path.dirname(path), listing_order(path)))
    return sorted(found)


def list_segments(paths: list[str], pattern: str = "*.log",
                  unread: list[tuple[str, str | None]] | None = None) -> list[Segment]:
    """Every segment the paths name (see :func:`expand_paths`), and remote object-store URIs; sorted, once each.

    A URI only Hadoop's file systems open (:func:`through_hadoop`) is kept as it is, its size -1: not listed
    here (Spark lists it, kbatch.spark.hadoop).  What is left out goes to ``unread`` (when given): each file
    passed over or not found, with why, and each path or pattern that names no file at all (why: None)."""
    found: dict[str, int] = {}
    local = []
    for path in paths:
        if through_hadoop(path):
            found[path] = -1
        elif is_remote(path):
            found.update(_remote(path, pattern))
        else:
            local.append(path)
    files, missing, passed = expand_paths(local, pattern)
    for path in files:
        if os.path.isfile(path):
            found[path] = os.path.getsize(path)
        elif unread is not None:   # (not found, or a FIFO named alone: read as a stream elsewhere, not here)
            unread.append((path, passed_over(path) or "not a regular file"))
    if unread is not None:
        unread += passed + [(path, None) for path in missing]
    return [Segment(path, size) for path, size in sorted(found.items())]


def _remote(uri: str, pattern: str) -> dict[str, int]:
    from pyarrow import fs

    filesystem, root = fs.FileSystem.from_uri(uri)
    scheme = uri.split("://", 1)[0]
    info = filesystem.get_file_info(root)
    if info.type == fs.FileType.File:
        return {uri: info.size}
    out = {}
    for entry in filesystem.get_file_info(fs.FileSelector(root, recursive=True)):
        if entry.type == fs.FileType.File and fnmatch.fnmatch(entry.base_name, pattern):
            out[f"{scheme}://{entry.path}"] = entry.size
    return out


def open_segment(path: str) -> BinaryIO:
    """A seekable binary stream: a local file, or a remote object through pyarrow's file systems."""
    if is_remote(path):
        filesystem, location = file_system(path)
        return filesystem.open_input_file(location)
    return open(path.removeprefix("file://"), "rb", buffering=0)


def file_system(path: str):
    """The pyarrow file system a path or URI is on, and the path on it (for what kbatch writes on Spark's executors)."""
    from pyarrow import fs

    if is_remote(path):
        return fs.FileSystem.from_uri(path)
    return fs.LocalFileSystem(), path.removeprefix("file://")

"""Finding segments: local paths, globs, directories, and remote object stores.

A broker keeps each partition in a directory named ``<topic>-<partition>``
holding segments named by their base offset (``00000000000000001234.log``);
the topic and partition of a segment come from there.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass
from typing import BinaryIO

_PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")
_SEGMENT_NAME = re.compile(r"^(?P<base>\d+)\.log$")


@dataclass(frozen=True)
class Segment:
    path: str
    size: int

    @property
    def topic(self) -> str | None:
        return topic_partition(self.path)[0]

    @property
    def partition(self) -> int | None:
        return topic_partition(self.path)[1]


def topic_partition(path: str) -> tuple[str | None, int | None]:
    directory = path.rstrip("/").rsplit("/", 2)[-2] if "/" in path.rstrip("/") else ""
    match = _PARTITION_DIR.match(directory)
    if not match:
        return None, None
    return match["topic"], int(match["partition"])


def segment_base_offset(path: str) -> int | None:
    match = _SEGMENT_NAME.match(path.rsplit("/", 1)[-1])
    return int(match["base"]) if match else None


def is_remote(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


def list_segments(paths: list[str], pattern: str = "*.log") -> list[Segment]:
    """Every segment the paths name: files, globs, or directories searched recursively for ``pattern``."""
    found: dict[str, int] = {}
    for path in paths:
        if is_remote(path):
            found.update(_remote(path, pattern))
            continue
        path = path.removeprefix("file://")
        candidates = sorted(glob.glob(path, recursive=True)) if glob.has_magic(path) else [path]
        for candidate in candidates:
            if os.path.isdir(candidate):
                for root, _, names in os.walk(candidate):
                    for name in names:
                        if glob.fnmatch.fnmatch(name, pattern):
                            full = os.path.join(root, name)
                            found[full] = os.path.getsize(full)
            elif os.path.isfile(candidate):
                found[candidate] = os.path.getsize(candidate)
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
        if entry.type == fs.FileType.File and glob.fnmatch.fnmatch(entry.base_name, pattern):
            out[f"{scheme}://{entry.path}"] = entry.size
    return out


def open_segment(path: str) -> BinaryIO:
    """A seekable binary stream: a local file, or a remote object through pyarrow's file systems."""
    if is_remote(path):
        from pyarrow import fs

        filesystem, location = fs.FileSystem.from_uri(path)
        return filesystem.open_input_file(location)
    return open(path.removeprefix("file://"), "rb", buffering=0)

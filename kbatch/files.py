"""Writing output files: never the input, always atomically."""

from __future__ import annotations

import itertools
import os
import shutil
import stat
import tempfile
from typing import Iterable


def write_atomically(path: str, chunks: Iterable[bytes]) -> int:
    """Write ``chunks`` to a temporary file beside ``path``, flush it to disk, then rename it into place.

    A reader of ``path`` sees the old file or the new one, never half of
    one; on any failure the temporary file is removed and ``path`` is
    untouched.  Returns the bytes written.

    The file gets the mode it would have had if written in place: a file
    replaced keeps its mode (and owner and group, where permitted), a new one
    gets the usual 0666 less the umask, not the temporary file's 0600.
    """
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".kbatch-", suffix=".tmp", dir=directory)
    written = 0
    try:
        with os.fdopen(handle, "wb") as out:
            for chunk in chunks:
                out.write(chunk)
                written += len(chunk)
            out.flush()
            _take_mode(out.fileno(), path)
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    return written


def _take_mode(handle: int, path: str) -> None:
    try:
        replaced = os.stat(path)
    except FileNotFoundError:
        os.fchmod(handle, 0o666 & ~_umask())
        return
    try:
        os.fchown(handle, replaced.st_uid, replaced.st_gid)
    except PermissionError:
        pass   # only root may give a file away: the copy stays ours
    os.fchmod(handle, stat.S_IMODE(replaced.st_mode))


def _umask() -> int:
    mask = os.umask(0o022)   # the only portable way to read it is to set it
    os.umask(mask)
    return mask


def same_file(path_a: str, path_b: str) -> bool:
    try:
        return os.path.samefile(path_a, path_b)
    except OSError:
        return False


def keep_copy(path: str, suffix: str) -> str:
    """Copy ``path`` to ``path + suffix``, or, if that exists, to ``path + suffix + ".1"``, ``".2"``, ...

    An existing file is never overwritten: a second in-place repair must not
    replace the original with the once-repaired bytes.  The copy is written
    whole to a temporary file first and then linked to its name, which fails
    rather than replaces when the name is taken (so a race cannot overwrite one
    either).  Returns the name used.
    """
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".kbatch-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "wb") as out, open(path, "rb") as source:
            shutil.copyfileobj(source, out, 4 * 1024 * 1024)
            out.flush()
            os.fsync(out.fileno())
        shutil.copystat(path, temporary)
        for number in itertools.count():
            name = path + suffix + (f".{number}" if number else "")
            try:
                os.link(temporary, name)
                return name
            except FileExistsError:
                continue
    finally:
        os.unlink(temporary)

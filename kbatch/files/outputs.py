"""Writing output files: never the input, always atomically."""

from __future__ import annotations

import itertools
import os
import shutil
import stat
import sys
import tempfile
from typing import Iterable


def write_atomically(path: str, chunks: Iterable[bytes], *, like: str | None = None) -> int:
    """Write ``chunks`` to a temporary file beside ``path``, flush it to disk, then put it in place.

    A reader of ``path`` sees the old file or the new one, never half of
    one; on any failure the temporary file is removed and ``path`` is
    untouched.  Returns the bytes written.

    The temporary file has no name where the platform allows (Linux
    ``O_TMPFILE``): a run killed midway leaves nothing behind, not even in a
    partition directory a broker reads.  Elsewhere it is named
    ``.kbatch-PID-*.tmp``, and the next write into that directory removes
    those of processes no longer alive.

    The file gets the mode it would have had if written in place: a file
    replaced keeps its mode (and owner and group, where permitted); a new one
    takes the mode of ``like`` (the input it comes from) less the umask, as
    ``cp`` does, so that an output never widens access to segment data
    (0666 less the umask without ``like``).
    """
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = _temporary_file(directory)
    written = 0
    try:
        with os.fdopen(handle, "wb") as out:
            for chunk in chunks:
                out.write(chunk)
                written += len(chunk)
            out.flush()
            _take_mode(out.fileno(), path, like)
            os.fsync(out.fileno())
            if temporary is None:   # the unnamed file gets a name beside its place, then the place
                temporary = _name_unnamed(out.fileno(), directory)
        os.replace(temporary, path)
    except BaseException:
        if temporary is not None and os.path.exists(temporary):
            os.unlink(temporary)
        raise
    return written


_TEMPORARY_PREFIX = ".kbatch-"
_TEMPORARY_SUFFIX = ".tmp"


def _temporary_file(directory: str) -> tuple[int, str | None]:
    """(a handle open for writing, its name): no name when the file is an unnamed one (O_TMPFILE)."""
    _remove_stale(directory)
    if hasattr(os, "O_TMPFILE"):
        try:
            return os.open(directory, os.O_TMPFILE | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o600), None
        except OSError:
            pass   # a file system without unnamed files (or an old kernel): a named one
    return tempfile.mkstemp(prefix=f"{_TEMPORARY_PREFIX}{os.getpid()}-", suffix=_TEMPORARY_SUFFIX, dir=directory)


def _name_unnamed(handle: int, directory: str) -> str:
    """Link an O_TMPFILE file into ``directory`` under a temporary name (linkat through /proc/self/fd, which
    os.link does when it follows the link); the name lives only until the rename that follows."""
    # (a directory handle makes os.link call linkat with AT_SYMLINK_FOLLOW; plain link() would link the
    # /proc symlink itself, across devices)
    descriptors = os.open("/proc/self/fd", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        for _ in range(100):
            name = os.path.join(directory,
                                f"{_TEMPORARY_PREFIX}{os.getpid()}-{os.urandom(6).hex()}{_TEMPORARY_SUFFIX}")
            try:
                os.link(str(handle), name, src_dir_fd=descriptors, follow_symlinks=True)
                return name
            except FileExistsError:
                continue
    finally:
        os.close(descriptors)
    raise FileExistsError(f"no free temporary name in {directory}")


def _remove_stale(directory: str) -> None:
    """Remove this program's temporary files in ``directory`` left by processes no longer alive."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if not (name.startswith(_TEMPORARY_PREFIX) and name.endswith(_TEMPORARY_SUFFIX)):
            continue
        pid = name[len(_TEMPORARY_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        try:
            os.unlink(os.path.join(directory, name))
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True   # someone else's: alive, or not ours to judge
    return True


def write_output(path: str, chunks: Iterable[bytes], *, like: str | None = None) -> int:
    """Write a command's output segment: ``-`` is stdout (as it comes), anything else a file written
    atomically (:func:`write_atomically`).  Returns the bytes written."""
    if path != "-":
        return write_atomically(path, chunks, like=like)
    out = sys.stdout.buffer
    written = 0
    for chunk in chunks:
        out.write(chunk)
        written += len(chunk)
    out.flush()
    return written


def _take_mode(handle: int, path: str, like: str | None = None) -> None:
    try:
        replaced = os.stat(path)
    except FileNotFoundError:
        mode = 0o666
        if like is not None:
            try:
                mode = stat.S_IMODE(os.stat(like).st_mode) & 0o777
            except OSError:
                pass
        os.fchmod(handle, mode & ~_umask())
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
    handle, temporary = _temporary_file(directory)
    try:
        with os.fdopen(handle, "wb") as out, open(path, "rb") as source:
            shutil.copyfileobj(source, out, 4 * 1024 * 1024)
            out.flush()
            original = os.stat(path)
            try:   # the backup is the original's: its owner and group too, where permitted
                os.fchown(out.fileno(), original.st_uid, original.st_gid)
            except PermissionError:
                pass
            os.fchmod(out.fileno(), stat.S_IMODE(original.st_mode))
            os.fsync(out.fileno())
            if temporary is None:
                temporary = _name_unnamed(out.fileno(), directory)
        shutil.copystat(path, temporary)
        for number in itertools.count():
            name = path + suffix + (f".{number}" if number else "")
            try:
                os.link(temporary, name)
                return name
            except FileExistsError:
                continue
    finally:
        if temporary is not None:
            os.unlink(temporary)

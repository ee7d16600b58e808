"""Writing output files: never the input, never over what a name is; a regular file always atomically.

Where ``-o NAME`` goes depends on what NAME is (:func:`write_output`):

- nothing yet, or a regular file: written atomically (a temporary file beside it, renamed into place);
  through a symbolic link, the file the link points at, in its own directory: the link stays;
- ``-``, or any name for the process's own stdout (``/dev/stdout``, ``/proc/self/fd/1``): stdout;
- a FIFO or a character device (``/dev/null``, a pipe a reader waits on): written through, opened and
  written as ``cp`` and ``tee`` do, never renamed over, its mode and owner never touched;
- anything else (a block device, a socket, a directory, a link to nothing): refused.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from contextlib import nullcontext
from typing import Iterable

from kbatch.files.inputs import what_it_is

# The longest name of a file or directory the file systems kbatch writes to allow, in bytes (NAME_MAX: ext4,
# XFS, btrfs, APFS; a longer one fails with ENAMETOOLONG).
NAME_MAX = 255

# The name a failed write to standard output carries as its OSError's filename (kbatch.__main__), so that the
# error line says where the write failed.
STDOUT = "stdout"


class RefusedOutput(OSError):
    """An output name kbatch will not write: its message says what the name is and why."""


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

    ``path`` must name a regular file or nothing (:func:`write_output` resolves links first): whatever
    else holds the name when the file is put in place is refused, never renamed over.
    """
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = _temporary_file(directory)
    try:
        with os.fdopen(handle, "wb") as out:
            written = _write_all(out, chunks)
            _take_mode(out.fileno(), path, like)
            os.fsync(out.fileno())
            if temporary is None:   # the unnamed file gets a name beside its place, then the place
                temporary = _name_unnamed(out.fileno(), directory)
        _refuse_non_regular(path)   # checked again at the last moment: a name swapped meanwhile is not replaced
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
    """Write a command's output to ``path`` by what the name is (see the module): stdout, a regular file
    atomically (:func:`write_atomically`; through a link, the file it points at), a FIFO or character
    device written through; anything else refused (:class:`RefusedOutput`).  Returns the bytes written."""
    if is_stdout(path):
        return _write_stdout(chunks)
    try:
        mode = os.stat(path).st_mode   # through links: what is written is what the name leads to
    except FileNotFoundError:
        if os.path.islink(path):
            # cp refuses too: following a link to nothing creates a file wherever the link says
            raise RefusedOutput(f"a symbolic link to nothing ({os.readlink(path)}): not followed") from None
        return write_atomically(path, chunks, like=like)
    if stat.S_ISREG(mode):
        # The file the link names, replaced in its own directory (a rename cannot cross file systems):
        # renaming over the link would leave the file unchanged and the link gone.
        return write_atomically(os.path.realpath(path), chunks, like=like)
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        # What cp, tee and sort -o do: a reader waits on the FIFO, /dev/null discards, and the name stays
        # what it is (renaming over it would leave a regular file where a device was, with its mode).
        return _write_through(path, chunks)
    raise RefusedOutput(f"{what_it_is(mode)}, not a file kbatch writes "
                        + ("(a segment never belongs on a disk device: write a file, then dd it there)"
                           if stat.S_ISBLK(mode) else "(name a regular file, a FIFO or -)"))


def is_stdout(path: str | None) -> bool:
    """Whether ``path`` is stdout: ``-``, or a name that leads to the very file standard output is
    (``/dev/stdout``, ``/proc/self/fd/1``, or the file stdout was redirected to)."""
    if path == "-":
        return True
    if not path:
        return False
    try:
        return _identity(os.stat(path)) == _identity(os.fstat(sys.stdout.fileno()))
    except (OSError, ValueError, AttributeError):   # no such name, or stdout is not a file (a test's capture)
        return False


def input_written(output: str | None, inputs: Iterable[str]) -> str | None:
    """The input ``output`` would write over (the same file, through links and hard links too), or None.

    ``-`` is stdout as an output and stdin as an input: ``kbatch salvage x.log -o - >> x.log`` writes
    over its input as surely as ``-o x.log`` does (cat refuses the same).  Every writer asks this first.
    """
    if output is None:
        return None
    written = _identity_of(output, sys.stdout)
    if written is None:
        return None
    for source in inputs:
        if _identity_of(source, sys.stdin) == written:
            return source
    return None


def _identity(status: os.stat_result) -> tuple[int, int]:
    return status.st_dev, status.st_ino


def _identity_of(path: str, dash) -> tuple[int, int] | None:
    """(device, inode) of the file ``path`` leads to (``-``: the stream ``dash``); None when there is none."""
    try:
        status = os.fstat(dash.fileno()) if path == "-" else os.stat(path)
    except (OSError, ValueError, AttributeError):
        return None
    if path == "-" and not stat.S_ISREG(status.st_mode):
        return None   # a pipe or terminal: nothing to write over
    return _identity(status)


def _write_all(out, chunks: Iterable[bytes]) -> int:
    written = 0
    for chunk in chunks:
        out.write(chunk)
        written += len(chunk)
    out.flush()
    return written


def _write_stdout(chunks: Iterable[bytes]) -> int:
    try:
        sys.stdout.flush()
        buffer = sys.stdout.buffer
        # Kafka's bytes, not text: they pass the program's inert output (kbatch.output.inert) as they are.
        with getattr(buffer, "verbatim", nullcontext)():
            return _write_all(buffer, chunks)
    except OSError as error:
        discard_stdout()   # what is still buffered must not fail again at exit
        error.filename = error.filename or STDOUT
        raise


def discard_stdout() -> None:
    """Point standard output at /dev/null: after a write to it failed (a full disk, a closed pipe), the bytes
    still buffered are dropped at exit instead of failing a second time."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    finally:
        os.close(devnull)


def _write_through(path: str, chunks: Iterable[bytes]) -> int:
    """Open ``path`` (a FIFO or character device) and write to it: no temporary file, no rename, no chmod.
    O_NOCTTY: a terminal named as the output never becomes kbatch's controlling terminal."""
    handle = os.open(path, os.O_WRONLY | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(handle, "wb") as out:
        return _write_all(out, chunks)


def _refuse_non_regular(path: str) -> None:
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise RefusedOutput(f"{what_it_is(mode)}, not a regular file: not replaced")


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
        number = 0
        while True:   # (a `while True` a type checker knows never falls through)
            name = path + suffix + (f".{number}" if number else "")
            try:
                os.link(temporary, name)
                return name
            except FileExistsError:
                number += 1
    finally:
        if temporary is not None:
            os.unlink(temporary)

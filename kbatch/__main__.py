"""The ``kbatch`` program: its console script, ``python -m kbatch ...``, and the script ``spark-submit`` runs
(``spark-submit ... kbatch/__main__.py scan ...``).

A short run spends half its time outside its work: loading its modules and, at the end, the interpreter's
teardown.  :func:`run` trims both for the program alone (a caller of :func:`kbatch.cli.main` keeps its own
collector and its own exit).
"""

import gc
import io
import os
import sys


def run() -> None:
    """Run kbatch on ``sys.argv`` in a process of its own, and end the process."""
    if sys.stdout is None:
        # Started with stdout closed (``>&-``): nothing it says could be written, and the first file it
        # opened would take descriptor 1.  What cat says, and the status of any other failed write.
        if sys.stderr is not None:
            sys.stderr.write("kbatch: cannot write stdout: Bad file descriptor\n")
            sys.stderr.flush()
        os._exit(2)
    if sys.stdin is None:
        # Started with stdin closed (``<&-``): /dev/null holds descriptor 0 (no file kbatch opens takes it),
        # and reading "-" says stdin cannot be read, as cat does, with status 2.
        _devnull_on(0, os.O_RDONLY)
        sys.stdin = _ClosedStdin()
    if sys.stderr is None:
        # Started with stderr closed (``2>&-``): what kbatch would say there is dropped, as the shell asked,
        # and /dev/null holds descriptor 2, so that no file kbatch opens takes it (a salvaged copy would
        # receive what a library or a child process writes to "stderr").  The status stays the run's own.
        sys.stderr = _devnull_on(2)
    # The ~20,000 objects made while the modules load all live as long as the process: the collector would
    # walk them again and again as they are made (~5 ms), and free none.  Frozen once loaded, they are left
    # out of every later collection too, and a forked part's pages stay shared with the parent.
    gc.disable()
    from kbatch.cli import main

    gc.freeze()
    gc.enable()
    from kbatch.output.inert import read_by_a_runner

    inert = read_by_a_runner(os.environ)   # a CI runner reads commands from the log: no line kbatch writes is one
    sys.stdout, sys.stderr = _whole(sys.stdout, inert=inert), _whole(sys.stderr, inert=inert, only_to_filter=True)
    try:
        main()
    except SystemExit as done:
        leave(done.code)


class _WholeWrites(io.FileIO):
    """A standard stream whose every write is whole, or raises.

    When the reader of a pipe goes away during a large write, the system returns the part it took, and
    Python's buffered writer reports that short count without an error; the text layer above it drops the
    rest unsaid.  A last large write cut short that way ended the run with status 0 and no complaint, as if
    every byte had been read (``kbatch verify-crc ... | head && echo intact``).  Writing on after a short
    write meets the closed pipe (EPIPE: BrokenPipeError), which kbatch.cli.main turns into status 141.
    """

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        done = 0
        try:
            while done < len(view):
                done += super().write(view[done:])
        except OSError as error:   # a full disk (ENOSPC), a file too large (EFBIG): the error line names stdout
            if self.fileno() == 1:
                from kbatch.files.outputs import STDOUT

                error.filename = error.filename or STDOUT
            raise
        return done


def _whole(stream, *, inert: bool = False, only_to_filter: bool = False):
    """``stream`` (sys.stdout, or sys.stderr) as it was, over :class:`_WholeWrites` of its file descriptor;
    with ``inert``, every line made one no CI runner reads as its command (kbatch.output.inert); on a
    terminal, nothing in it the terminal would act on but kbatch's own styles (kbatch.output.terminal).
    ``only_to_filter``: left as it is where neither applies."""
    if stream is None:
        return stream
    try:
        descriptor = stream.fileno()
        terminal = stream.isatty()
    except (AttributeError, OSError, ValueError):   # not a file (replaced by a caller): left as it is
        return stream
    if only_to_filter and not (inert or terminal):
        return stream
    stream.flush()
    raw = _WholeWrites(descriptor, "w", closefd=False)
    encoding = stream.encoding if terminal else None
    buffer: io.BufferedWriter
    if inert:
        from kbatch.output.inert import InertBuffer

        buffer = InertBuffer(raw, encoding=encoding)
    elif terminal:
        from kbatch.output.terminal import TerminalBuffer

        buffer = TerminalBuffer(raw, encoding=encoding)
    else:
        buffer = io.BufferedWriter(raw)
    return io.TextIOWrapper(buffer, encoding=stream.encoding, errors=stream.errors,
                            line_buffering=stream.line_buffering, write_through=stream.write_through)


class _ClosedStdin:
    """sys.stdin (and its buffer) where the process was started without one: reading it is an I/O error."""

    buffer = property(lambda self: self)

    def read(self, *_size) -> bytes:
        raise OSError(9, "Bad file descriptor", "stdin")

    readline = readinto = fileno = read

    def isatty(self) -> bool:
        return False


def _devnull_on(descriptor: int, flags: int = os.O_WRONLY):
    """/dev/null opened on ``descriptor`` (a standard stream's, closed), as a text stream."""
    null = os.open(os.devnull, flags)
    if null != descriptor:
        os.dup2(null, descriptor)
        os.close(null)
    return io.TextIOWrapper(io.FileIO(descriptor, "w", closefd=False), encoding="utf-8", errors="backslashreplace",
                            line_buffering=True)


def leave(status) -> None:
    """End the process as ``sys.exit(status)`` does, without the interpreter's teardown.

    Teardown frees every object one at a time, ~10 ms of a 0.2 s run; the system frees a process at once.
    What teardown does that anyone sees is done here first: the exit handlers run and the output is
    flushed.  Anything unusual (a status that is not a number, another thread still running, output that
    cannot be flushed) takes the usual way out, which knows how to report it.
    """
    import atexit
    import threading

    if not (status is None or isinstance(status, int)) or threading.active_count() > 1:
        sys.exit(status)
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(status)
    os._exit(status or 0)


if __name__ == "__main__":
    run()

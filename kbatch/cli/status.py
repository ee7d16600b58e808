"""Exit statuses, the same for every subcommand (like diff(1))."""

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0          # clean: nothing found
    FOUND = 1       # damage (or, for diff, a difference) found
    TROUBLE = 2     # usage error, unreadable input, internal error
    # The reader of the output went away (`| head`): the status of every Unix filter killed by SIGPIPE in a
    # shell (128 + 13).  Not 0: `kbatch verify-crc ... | head` did not read everything, so it vouches for nothing.
    OUTPUT_CLOSED = 141
    # Interrupted (Ctrl-C, SIGINT): 128 + 2, what a shell reports for a program SIGINT ended, so a script
    # tells "stopped" from "usage error" (2).
    INTERRUPTED = 130

"""Exit statuses, the same for every subcommand (like diff(1))."""

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0          # clean: nothing found
    FOUND = 1       # damage (or, for diff, a difference) found
    TROUBLE = 2     # usage error, unreadable input, internal error

"""Writing output files: never the input, always atomically."""

from __future__ import annotations

import os
import tempfile
from typing import Iterable


def write_atomically(path: str, chunks: Iterable[bytes]) -> int:
    """Write ``chunks`` to a temporary file beside ``path``, flush it to disk, then rename it into place.

    A reader of ``path`` sees the old file or the new one, never half of
    one; on any failure the temporary file is removed and ``path`` is
    untouched.  Returns the bytes written.
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
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    return written


def same_file(path_a: str, path_b: str) -> bool:
    try:
        return os.path.samefile(path_a, path_b)
    except OSError:
        return False

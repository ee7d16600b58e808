"""What the ``kbatch`` program writes to a terminal: nothing the terminal would act on but kbatch's own
styles, whatever the format.

Every human-readable format escapes text kbatch did not write (kbatch.output.visible). JSON escapes only
C0 controls, quotes and backslashes: a record's DEL, C1's U+009B (ESC [ on many terminals), a bidi override
or isolate, a zero-width space, a line or paragraph separator pass through ``json.dumps`` and the compiled
writer as they are. Written to a pipe or a file, that is right: JSON is for programs, and a program reads
the same string either way. Written to a terminal, a person reads it, and the terminal acts on it.

So, where the program's standard output or error is a terminal (kbatch.__main__), each character
:func:`~kbatch.output.visible.visible` would escape is written as JSON's own ``\\uNNNN``, except the C0
controls: those are kbatch's own line ends and Rich's colour sequences, since every format has already
escaped the ones it was given. In a JSON string the escape reads back as the same character, so the
output is still the same JSON; in any other format no such character is left to escape. A byte that is
not text in the stream's encoding is written as ``\\xNN``, as visible writes a file name's.
"""

from __future__ import annotations

import codecs
import io
from contextlib import contextmanager

from kbatch.output.visible import terminal_visible


class TerminalBuffer(io.BufferedWriter):
    """The buffer of a text stream; with ``encoding`` (the stream's, where it is a terminal) every write is
    made :func:`terminal_visible` on its way in, a character begun by one write and ended by the next
    included. A write of ASCII without DEL, every ordinary line, passes after one test. Bytes that are not
    text pass :meth:`verbatim`."""

    def __init__(self, raw, buffer_size: int = io.DEFAULT_BUFFER_SIZE, *, encoding: str | None = None):
        super().__init__(raw, buffer_size)
        self.filtering = True
        self._encoding = encoding or "utf-8"
        self._decoder = codecs.getincrementaldecoder(encoding)("surrogateescape") if encoding else None

    def write(self, data) -> int:
        decoder = self._decoder
        if decoder is None or not self.filtering:
            return super().write(data)
        data = data if type(data) is bytes else bytes(data)
        if data.isascii() and b"\x7f" not in data and not decoder.getstate()[0]:
            return super().write(data)
        super().write(terminal_visible(decoder.decode(data)).encode(self._encoding, "surrogateescape"))
        return len(data)

    def flush(self) -> None:
        # Flushed between a character's bytes (the decoder holds its start): they go as they came, as they
        # would without this.
        decoder = self._decoder
        if decoder is not None and (held := decoder.getstate()[0]):
            decoder.reset()
            super().write(held)
        super().flush()

    @contextmanager
    def verbatim(self):
        """Writes that pass as they are while the block runs (bytes that are not text, commands meant)."""
        self.flush()
        self.filtering = False
        try:
            yield self
        finally:
            self.flush()
            self.filtering = True

"""Text kbatch did not write, made safe to show: the one escaping rule of every human-readable output.

A record's key, value and headers, a group id or a transactional id, the name of a file or a directory: all
of it comes from whoever wrote the segment or named the file, and kbatch's output goes to a terminal, a CI
log, a pager. A terminal acts on control characters (ESC starts a sequence that recolours, retitles, writes
the clipboard with OSC 52 or hides a link with OSC 8; C1's U+009B is ESC [ on many), a line end forges a
line, a bidi control reorders what follows, an invisible character hides what is there. So, as Wireshark
and ``less`` do, every such character is shown as an escape, in Python's spelling:

- ``\\t``, ``\\n``, ``\\r`` for tab and the line ends (a carriage return is never dropped);
- ``\\xNN`` for the other C0 controls and DEL, and for a byte of a file name that is not UTF-8 (Python
  holds it as a lone surrogate, ``os.fsdecode``'s surrogateescape): ``\\xNN`` is a byte;
- ``\\uNNNN`` (``\\UNNNNNNNN`` above the BMP) for every other character Python's ``str.isprintable`` calls
  unprintable: C1 controls, format characters (category Cf: the bidi embeddings, overrides and isolates,
  U+061C, U+200B, U+FEFF, ...), the line and paragraph separators, spaces other than U+0020, private-use and
  unassigned code points;
- ``\\\\`` for a backslash, so no text can forge an escape.

Everything else, any script's letters included, is shown as it is.  JSON output does not use this: JSON
has escapes of its own, and on a terminal :func:`terminal_visible` writes the rest (kbatch.output.terminal).
"""

from __future__ import annotations

_NAMED = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(char: str) -> str:
    named = _NAMED.get(char)
    if named is not None:
        return named
    point = ord(char)
    if point < 0x80:
        return f"\\x{point:02x}"
    if 0xDC80 <= point <= 0xDCFF:        # surrogateescape: the byte point - 0xDC00 of a name
        return f"\\x{point - 0xDC00:02x}"
    return f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}"


def visible(text: str, *, backslash: bool = True) -> str:
    """``text`` with every character a terminal would act on or hide shown as an escape (the module says
    which and how); text that holds none comes back as it is.  ``backslash=False`` leaves backslashes as
    they are, for a format whose readers take them as they come (Kafka's dump text): there an escape can
    be told from the same characters written by hand only by the record's sizes."""
    kept = "" if backslash else "\\"
    if text.isprintable() and (kept or "\\" not in text):   # in C: the common case costs one pass
        return text
    return "".join(char if (char.isprintable() and char != "\\") or char == kept else _escape(char)
                   for char in text)


def json_visible(text: str) -> str:
    """JSON text shown to people (json.dumps's, which escapes C0, quotes and backslashes only) with every
    other character :func:`visible` would escape written as JSON's own ``\\uNNNN``: still the same JSON, and
    safe to show.  A JSON text that holds none (every ordinary one) comes back as it is."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else _json_escape(char) for char in text)


def terminal_visible(text: str) -> str:
    """What the program writes, on its way to a terminal (kbatch.output.terminal): every character
    :func:`visible` escapes but the C0 controls (kbatch's own line ends and colour sequences) as JSON's
    ``\\uNNNN``, which reads back as the same character inside a JSON string, and a byte that is not text
    (a lone surrogate, surrogateescape's) as ``\\xNN``."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() or char < " " else _terminal_escape(char) for char in text)


def _terminal_escape(char: str) -> str:
    point = ord(char)
    return f"\\x{point - 0xDC00:02x}" if 0xDC80 <= point <= 0xDCFF else _json_escape(char)


def _json_escape(char: str) -> str:
    point = ord(char)
    if point <= 0xFFFF:
        return f"\\u{point:04x}"
    point -= 0x10000   # above the BMP: a surrogate pair, as JSON spells it (RFC 8259, section 7)
    return f"\\u{0xD800 + (point >> 10):04x}\\u{0xDC00 + (point & 0x3FF):04x}"


def shell_word(text: str) -> str:
    """``text`` as one word of a command line a person pastes into a shell: quoted with ``shlex.quote``, or,
    where it holds what :func:`visible` escapes, as a ``$'…'`` word (bash, zsh, ksh and POSIX.1-2024's sh)
    whose escapes are :func:`visible`'s own, so the line is safe to show and the shell reads back exactly
    ``text`` (a name's bytes that are not UTF-8 included)."""
    shown = visible(text)
    if shown == text:
        import shlex

        return shlex.quote(text)
    return "$'" + shown.replace("'", "\\'") + "'"


def json_name(name: str) -> str:
    """A file or directory name for JSON output, which must be UTF-8: a byte of the name that is not UTF-8
    (held by Python as a lone surrogate, ``os.fsdecode``'s surrogateescape) is written as the four
    characters ``\\xNN`` (the codec's ``backslashreplace``); every other name, the rest of such a name's
    characters too, as it is (JSON escapes what it must)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return name

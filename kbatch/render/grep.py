"""What ``kbatch grep`` prints of the records a search hands out (kbatch.ops.grep.Search), file by file: lines
as grep prints them (FILE:OFFSET:KEY<tab>VALUE, with -A/-B/-C context, -c, -l, -L, -o), or JSON Lines.

Colour is written as ANSI escapes, as grep's own: the text around them -- keys, values, file names, a
pattern's matches -- has already been made visible (kbatch.output.values.bytes_text, kbatch.output.visible),
so no byte of a record reaches the terminal as a control character.  What it says besides the lines (damage
met, notes, records a consumer refuses) goes to stderr.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any, TextIO

from kbatch.format.findings import Finding
from kbatch.ops.grep import Found, Note, Query, Tally
from kbatch.output.values import bytes_text, finding_text
from kbatch.output.visible import visible

# ANSI's colours (SGR 31-36) and bold (1), as grep --color writes its parts.
RED, GREEN, YELLOW, MAGENTA, CYAN = 31, 32, 33, 35, 36


def _styled(text: str, colour: int, bold: bool = False) -> str:
    """``text`` (already visible: no escape of its own) in ``colour``, bold if asked."""
    return f"\x1b[{colour}m" + ("\x1b[1m" if bold else "") + f"{text}\x1b[0m"


def _tell(line: str) -> None:
    """A line on stderr (the stream of the moment: a Spark task catches it)."""
    print(line, file=sys.stderr, flush=True)


@dataclasses.dataclass(frozen=True)
class Shown:
    """What grep prints of each file's matches."""

    max_count: int | None = None   # -m: stop a file after this many
    before: int = 0                # -B: records shown before each match
    after: int = 0                 # -A: and after
    count: bool = False            # -c: only how many
    names: str | None = None       # -l ("with") and -L ("without"): only the names of files with or without one
    quiet: bool = False            # -q: nothing
    only_matching: bool = False    # -o: the matched parts of keys and values
    read_to_end: bool = False      # --strict: -l, -L and -q still read each file to its end, for its damage

    @property
    def lines_only(self) -> bool:
        """Whether every line of every match is printed and nothing else (a file may be searched in parts)."""
        return not (self.count or self.names or self.quiet or self.max_count is not None or self.before or self.after)

    @property
    def stops_at_first(self) -> bool:
        return (self.names is not None or self.quiet) and not self.read_to_end



@dataclasses.dataclass
class Output:
    """What grep prints, file by file."""

    out: TextIO
    format: str
    show_names: bool
    colour: bool
    decode: str
    query: Query
    shown: Shown = Shown()
    groups: int = 0   # groups of context lines shown
    highlight: Any = dataclasses.field(init=False, default=None)   # the pattern as marked in colour (an RE2 pattern)

    def __post_init__(self):
        query = self.query
        if not self.colour or query.invert or (query.pattern is None and query.literal is None):
            return
        from kbatch.ops.regex import shown_text_pattern   # (RE2: a hostile value cannot make marking it run on)

        self.highlight = shown_text_pattern(
            query.pattern, None if query.literal is None else query.literal.decode("utf-8", "replace"),
            query.ignore_case)

    def file(self, path: str, items) -> Tally:
        """Show what the search of one file hands out, as ``self.shown`` says."""
        shown = self.shown
        tally = Tally()
        before: list[Found] = []      # the last records before a match, not shown yet (-B)
        after = 0                     # records still to show after the last match (-A)
        index, last_shown = 0, None   # which record of the file this is; which was shown last
        lines = not (shown.count or shown.names or shown.quiet)
        for item in items:
            if isinstance(item, Note):
                _tell(f"kbatch: {visible(path)}: {item.text}")
                continue
            if isinstance(item, Finding):
                _tell(f"kbatch: {visible(path)}: {finding_text(item)}")
                tally.damaged |= item.is_damage
                continue
            index += 1
            if not item.selected:
                if after:
                    self._line(path, item, "-")
                    last_shown, after = index, after - 1
                elif shown.before:
                    before = (before + [item])[-shown.before:]
                continue
            if shown.max_count is not None and tally.matched >= shown.max_count:
                break
            tally.matched += 1
            tally.marked += item.refused is not None
            if tally.matched == 1 and shown.stops_at_first:
                break
            if not lines:
                continue
            if shown.before or shown.after:
                first = index - len(before)
                if self.groups and last_shown is not None and first > last_shown + 1:
                    self.out.write("--\n")
                for context in before:
                    self._line(path, context, "-")
                before = []
                self.groups += 1
            self._line(path, item, ":")
            last_shown, after = index, shown.after
        if shown.count:
            self.out.write(f"{self._name(path) + ':' if self.show_names else ''}{tally.matched}\n")
        elif shown.names == ("with" if tally.matched else "without") and not shown.quiet:
            self.out.write(self._name(path) + "\n")
        return tally

    def untrusted(self, path: str, tally: Tally) -> None:
        """Under a file's matches (on stderr): how many of them a consumer is refused (kbatch.ops.visibility.refused),
        shown marked or left out."""
        why = "matching records a consumer refuses as corrupt (their batch or message fails its check)"
        if tally.marked:
            _tell(f"kbatch: {visible(path)}: {why}: {tally.marked}, marked untrusted (--isolation leaves them out)")
        if tally.left_out:
            _tell(f"kbatch: {visible(path)}: {why}: {tally.left_out}, left out (without --isolation they are shown, "
                  f"marked untrusted)")

    def _name(self, path: str) -> str:
        path = visible(path)
        return _styled(path, MAGENTA) if self.colour else path

    def _line(self, path: str, found: Found, separator: str) -> None:
        if self.format == "jsonl":
            from kbatch.output.jsonout import match_dict

            self.out.write(json.dumps(match_dict(path, found, self.decode)) + "\n")
            return
        record = found.record
        sep = _styled(separator, CYAN) if self.colour else separator
        offset = _styled(str(record.offset), GREEN) if self.colour else str(record.offset)
        head = f"{self._name(path)}{sep}" if self.show_names else ""
        unknown = "\t(read_committed: unknown outcome)" if found.seen is not None and found.seen.visible is None \
            else ""
        untrusted = f"\t(untrusted: {found.refused})" if found.refused is not None else ""
        if untrusted and self.colour:
            untrusted = _styled(untrusted, YELLOW, bold=True)
        if self.shown.only_matching:
            if separator == ":":   # (a context record matched nothing to show)
                for part in self._parts(record):
                    self.out.write(f"{head}{offset}{sep}{part}{unknown}{untrusted}\n")
            return
        key, value = bytes_text(record.key, self.decode), bytes_text(record.value, self.decode)   # (one line each)
        highlight = self.highlight
        if highlight is not None and separator == ":":
            key, value = _marked(highlight, key), _marked(highlight, value)
        self.out.write(f"{head}{offset}{sep}{key}\t{value}{unknown}{untrusted}\n")

    def _parts(self, record) -> list[str]:
        """-o: the matched parts of the key, then of the value (where the query looks), as text."""
        where = self.query.where
        parts = (self.query.parts(record.key) if where != "value" else []) + \
            (self.query.parts(record.value) if where != "key" else [])
        if self.query.invert:
            return []   # (grep -o -v prints nothing: a record selected for not matching has no matched part)
        return [bytes_text(part, self.decode) for part in parts]


def _marked(highlight, text: str) -> str:
    return highlight.sub(lambda m: _styled(m.group(0), RED, bold=True) if m.group(0) else "", text)

"""Finding records: what ``kbatch grep`` looks for (:class:`Query`) and the search of one segment (:class:`Search`).

A pattern is a regular expression (Python's ``re`` syntax, matched by RE2 in linear time:
kbatch.ops.regex) on the bytes of a key or value, read as UTF-8: a non-ASCII character of the pattern
matches its UTF-8 bytes, ``-i`` folds ASCII letters.  A pattern without
special characters is a literal, looked for byte by byte.  The test itself --
kbatch.kernels.match.RecordMatch -- runs in the compiled walk over the batches the search has nothing to show of
(kbatch.kernels.cleanruns.CleanBatches: no object per record; every batch's records inflated once); a batch where a
record may be selected, and every entry that walk does not take (v0/v1, control batches, damage), is read by
the full reader and its records asked one by one with the same test.  So the search gives the records
``dump --records`` gives, the same ones whichever path read them.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, Iterator, TypedDict, cast

from kbatch.format.findings import Finding
from kbatch.reading.model import Batch, Record
from kbatch.reading.records import RecordStream, chunk_records, record_chunks
from kbatch.kernels.match import RecordMatch
from kbatch.ops.regex import LinearRegex
from kbatch.ops.visibility import Seen, refused
from kbatch.walk.deep import MatchRun
from kbatch.walk.engine import Walk
from kbatch.walk.parts import copy_out, walk_in_parts, worth_parts

if TYPE_CHECKING:
    from kbatch.ops.visibility import CommittedView, ConsumerViews
    from kbatch.partition.seek import Window

if TYPE_CHECKING:   # typeshed has the regular expression parser under its names before 3.11 only
    import sre_constants as _re_constants
    import sre_parse as _re_parser
else:               # (importing those names is deprecated since 3.11, the oldest Python kbatch runs on)
    from re import _constants as _re_constants
    from re import _parser as _re_parser



@dataclass(frozen=True)
class Query:
    """What a record must hold to be selected.

    ``pattern`` (a regular expression) or ``literal`` (bytes) is looked for in the key, the value or either
    (``where``); every ``headers`` entry (name, value pattern or None) must be carried; every ``fields`` entry
    (path, value) must hold in the value read as JSON, or in an internal topic's decoded record (``decoded``:
    its key and value as ``dump --format jsonl`` shows them under "decoded").  ``invert`` selects the records
    that do not match; ``producer_id`` only the records of that producer's batches (never inverted).
    """

    pattern: str | None = None
    literal: bytes | None = None
    where: str = "either"
    headers: tuple = ()
    fields: tuple = ()
    ignore_case: bool = False
    invert: bool = False
    producer_id: int | None = None
    word: bool = False   # -w: the pattern only where no word character (ASCII letter, digit, _) touches it

    def match(self, decoded: bool = False) -> RecordMatch:
        """The compiled test of this query (``decoded``: records of an internal topic, whose fields are the
        decoder's, not the value's text)."""
        literals = () if decoded else tuple(value.encode() for _, value in self.fields)
        return RecordMatch(**_text_test(self.pattern, self.literal, self.ignore_case, self.word),
                           in_key=self.where != "value", in_value=self.where != "key",
                           headers=tuple((name.encode(), None if pattern is None else RecordMatch(
                               **_text_test(pattern, None, self.ignore_case), in_key=False))
                               for name, pattern in self.headers),
                           value_literals=literals, undecided=bool(self.fields), invert=self.invert,
                           producer_id=-2 if self.producer_id is None else self.producer_id)

    def selects(self, match: RecordMatch, batch: Batch, record: Record) -> bool:
        """Whether ``record`` of ``batch`` is selected (``match``: this query's :meth:`match`)."""
        if self.producer_id is not None and batch.producer_id != self.producer_id:
            return False
        found = match.record(record.key, record.value, record.headers) and all(
            _field_holds(record, path, value) for path, value in self.fields)
        return found != self.invert

    def parts(self, data: bytes | None) -> list[bytes]:
        """The pieces of ``data`` (a key or value) the pattern matches, left to right, none empty (``-o``)."""
        if data is None:
            return []
        if self.literal is not None:
            source = re.escape(self.literal)
        elif self.pattern is not None:
            source = self.pattern.encode()
        else:
            return []
        if self.word:   # the word is the group inside its neighbours
            return LinearRegex(_word_bounded(source, captured=True), self.ignore_case, group=1).pieces(data)
        return LinearRegex(source, self.ignore_case).pieces(data)


def _word_bounded(source: bytes, captured: bool = False) -> bytes:
    """``-w``: the pattern where nothing before or after it is a word character, as grep -w asks.  The match
    holds the neighbours (RE2 has no lookaround); ``captured``: the pattern is group 1, the word itself."""
    inner = rb"(" + source + rb")" if captured else rb"(?:" + source + rb")"
    return rb"(?:^|\W)" + inner + rb"(?:\W|$)"


class _TextTest(TypedDict, total=False):
    """RecordMatch's arguments for the text a record must hold: a literal, or a regular expression and the
    bytes every match of it holds; ``fold``: ASCII letters of either case."""
    literal: bytes | None
    regex: LinearRegex
    required: tuple[bytes, ...]
    fold: bool


def _text_test(pattern: str | None, literal: bytes | None, ignore_case: bool, word: bool = False) -> _TextTest:
    """RecordMatch's arguments for a pattern: a literal where it is one, else the regular expression and the
    bytes every match of it holds (``word``: only where no word character touches it, a regular expression
    holding the literal)."""
    if literal is None and pattern is not None:
        source = pattern.encode()
        try:
            # (typeshed's sre_parse.parse takes a str only: the parser reads a bytes pattern as well)
            parsed = _re_parser.parse(source, re.IGNORECASE if ignore_case else 0)  # type: ignore[arg-type]
        except re.error as error:
            raise ValueError(f"not a regular expression: {pattern!r}: {error}") from None
        fold = bool(parsed.state.flags & re.IGNORECASE)   # -i, or (?i) in the pattern (bytes: ASCII letters)
        if all(op is _re_constants.LITERAL for op, _ in parsed.data) and not word:
            return {"literal": bytes(cast(int, code) for _, code in parsed.data), "fold": fold}
        required = _required(parsed)
    elif literal is not None and word:
        source, required, fold = re.escape(literal), (literal,), ignore_case
    else:
        return {"literal": literal, "fold": ignore_case}
    if word:
        source = _word_bounded(source)
    return {"regex": LinearRegex(source, ignore_case), "required": required, "fold": fold}


def _required(parsed: _re_parser.SubPattern) -> tuple[bytes, ...]:
    """The runs of literal bytes in a parsed pattern's top-level sequence, longest first: every match holds
    each of them."""
    runs, run = [], bytearray()
    for op, arg in parsed.data:
        if op is _re_constants.LITERAL:
            run.append(cast(int, arg))   # (a literal's argument is its byte)
        elif run:
            runs.append(bytes(run))
            run = bytearray()
    if run:
        runs.append(bytes(run))
    return tuple(sorted(runs, key=len, reverse=True))


def parse_field(text: str) -> tuple[str, str]:
    """``--field PATH=VALUE``."""
    path, equals, value = text.partition("=")
    if not equals or not path:
        raise ValueError(f"--field takes PATH=VALUE (e.g. customer.id=42), not {text!r}")
    return path, value


def _field_holds(record: Record, path: str, wanted: str) -> bool:
    """Whether the field at ``path`` (names and list indexes joined by dots) of the record's value as JSON
    (or its decoded internal record) is ``wanted``: a string equal to it, or any other JSON value written so."""
    if record.decoded is not None:
        node = record.decoded.as_dict()
    else:
        if record.value is None:
            return False
        try:
            node = json.loads(record.value)
        except ValueError:
            return False
    for step in path.split("."):
        if isinstance(node, dict) and step in node:
            node = node[step]
        elif isinstance(node, list) and step.lstrip("-").isdigit() and -len(node) <= int(step) < len(node):
            node = node[int(step)]
        else:
            return False
    return node == wanted if isinstance(node, str) else json.dumps(node) == wanted


# -- the search of one segment ----------------------------------------------------------------------------


@dataclass
class Found:
    """A record the search shows: selected (a match), or around one (``--context``)."""

    batch: Batch
    record: Record
    selected: bool
    seen: Seen | None = None   # with --isolation read_committed
    refused: str | None = None   # why a consumer is never given it (kbatch.ops.visibility.refused), or None


@dataclass(frozen=True)
class Note:
    """Something the search says about how it read (stderr), not about the bytes."""

    text: str


@dataclass
class Search:
    """One segment searched: what to look for, and how."""

    query: Query
    decoder: str | None = None            # an internal topic's decoder (kbatch.messages), or None
    kafka_version: str | None = None      # the release whose layouts read its records (--kafka-version)
    window: Window | None = None          # selecting offsets or times
    committed: CommittedView | None = None   # read_committed
    every_record: bool = False            # hand out every record (--context), not only the selected
    controls: bool = False                # ask control records too (the Spark records table holds them)
    consumer_view: bool = False           # --isolation: only what a consumer is given (no refused record)
    decompressed_limit: int | None = None
    walked: int = field(default=0)        # batches the compiled walk took without an object
    landed: int = field(default=0)        # where the last run's walk ended
    last_offset: int | None = field(default=None)   # and the last offset of the last intact entry it went past
    left_out: int = field(default=0)      # selected records left out of the consumer view as refused

    def run(self, path: str, stream: BinaryIO, start: int = 0, stop: int | None = None,
            follows: int | None = None) -> Iterator[Found | Finding | Note]:
        """The records of the segment the search shows, and every finding met, in file order: of the entries
        starting in [start, stop) (``start`` an entry's start; kbatch.walk.parts), ``self.landed`` where it ended;
        ``follows``, the last offset of the intact entry before ``start`` (SegmentReader.follows)."""
        from kbatch.reading.reader import ReadOptions, SegmentReader

        internal = self.decoder not in (None, "none")
        options = ReadOptions(records=True, record_objects=internal)
        if self.decompressed_limit is not None:
            options = ReadOptions(records=True, record_objects=internal, decompressed_limit=self.decompressed_limit)
        reader = SegmentReader(stream, options)
        reader.follows(follows)
        match = self.query.match(decoded=internal)
        if self.window is not None and self.window.selects:
            from kbatch.partition.seek import select, start_position

            first = start_position(path, reader, stream, self.window)
            if first.note:
                yield Note(first.note)
            yield from self._entries(select(reader, stream, first.pos, self.window), match, internal)
            return
        run = None if self.every_record or internal else MatchRun(match, reader.options.max_entry_size, reader.decompressor)
        walk = Walk(reader, run)

        def count_taken(pos: int) -> bool:   # the batches the run took without an object, counted
            self.walked += run.taken if run is not None else 0   # (called only after the run went on)
            return False   # (the walk goes on)

        yield from self._entries(walk.items(start, reader.size if stop is None else stop, after_run=count_taken),
                                 match, internal)
        self.landed, self.last_offset = cast(int, walk.landed), reader.last_intact_offset()   # (set by items)

    def _entries(self, items, match: RecordMatch, internal: bool) -> Iterator[Found | Finding]:
        from kbatch.reading.records import stream_records

        if internal:
            from kbatch.reading.internal import decode_batch
        for item in items:
            if isinstance(item, Finding):
                yield item
                continue
            yield from item.findings
            if item.is_control and not self.controls:
                continue   # control records are never data (CompletedFetch: "not returned to the user")
            stream_records(item)
            if self.window is not None and self.window.selects:
                from kbatch.partition.seek import keep_selected

                if not keep_selected(item, self.window):
                    continue
            if internal:
                decode_batch(item, self.decoder, self.kafka_version)
            seen = self.committed.batch(item) if self.committed is not None else None
            if seen is not None and seen.visible is False:
                continue
            for record in self._records(item, match):
                selected = self.query.selects(match, item, record)
                if selected or self.every_record:
                    why = refused(item, record) if item.findings else None   # (refused: always a finding)
                    if why is not None and self.consumer_view:
                        self.left_out += selected
                        continue
                    yield Found(item, record, selected, seen, why)


    def _records(self, batch: Batch, match: RecordMatch):
        """The records of a batch to ask: of a v2 batch walked without objects, only those the match lets
        through its columns become objects (unless every record is shown)."""
        if isinstance(batch.records, RecordStream) and not self.every_record:
            for columns in record_chunks(batch):
                rows = match.rows(columns, batch.record_data)
                if rows:
                    yield from chunk_records(columns, batch, set(rows))
            return
        yield from batch.records or ()


@dataclasses.dataclass
class Tally:
    """What the search of a file (or of a part of one) came to."""

    matched: int = 0    # records selected
    damaged: bool = False
    marked: int = 0     # of them, marked untrusted (kbatch.ops.visibility.refused), printed or not (-c, -l, -q)
    left_out: int = 0   # selected records left out of a consumer's view as refused (--isolation)

    def add(self, other: "Tally") -> None:
        self.matched += other.matched
        self.damaged |= other.damaged
        self.marked += other.marked
        self.left_out += other.left_out


@dataclasses.dataclass
class _Part:
    """What a child searching a part hands back; its lines are in its spill file."""

    landed: int
    tally: Tally
    last_offset: int | None   # the last offset of the last intact entry it went past


def search_in_parts(path: str, stream, search: Search, out, jobs: int) -> Tally:
    """The lines of a large local file, its parts searched at once by forked processes (kbatch.walk.parts), each
    writing its lines to a temporary file, copied out in file order.  ``out`` shows a file's matches
    (``out.file(path, items) -> Tally``; kbatch.render.grep.Output), a copy of it in each child writing to its spill."""

    size = os.fstat(stream.fileno()).st_size
    errors = getattr(out.out, "errors", None) or "strict"
    totals = Tally()
    before_last = None   # what a damaged range the parent meets after a child's part lost is told from it

    def searched(output, start, stop, part_stream, follows=None) -> Tally:
        before = search.left_out
        tally = output.file(path, search.run(path, part_stream, start, stop, follows))
        tally.left_out = search.left_out - before
        return tally

    def work(child_stream, start, stop, spill):
        text = io.TextIOWrapper(spill, encoding="utf-8", errors=errors)
        tally = searched(dataclasses.replace(out, out=text), start, stop, child_stream)
        text.flush()
        text.detach()
        return _Part(search.landed, tally, search.last_offset)

    def take(part, got):
        nonlocal before_last
        copy_out(part.spill, out.out)
        totals.add(got.tally)
        before_last = got.last_offset
        return got.landed
        yield   # (a step of walk_in_parts: the lines went to the output)

    def walk_here(pos, stop):   # searched here, on from where the walk ended
        nonlocal before_last
        totals.add(searched(out, pos, stop, stream, before_last))
        before_last = search.last_offset
        return search.landed
        yield   # (likewise)

    for _ in walk_in_parts(path, size, jobs, work, take, walk_here, spill=True):
        pass
    return totals


@dataclasses.dataclass
class GrepJob:
    """One grep over files, as the command line asked it (the same in a Spark task: kbatch.spark.grep): each
    file opened, searched and its matches handed to ``out``, which shows them (kbatch.render.grep.Output: its
    ``shown`` says what is shown, ``file(path, items)`` shows a file's and tallies them)."""

    query: Query
    out: Any
    window: Window | None
    isolation: str | None   # None: every record the bytes hold; else the records a consumer of it is given
    decoder: str
    decompressed_limit: int
    jobs: int
    unreadable: Callable[[str, Exception], None]   # reports an input that cannot be opened
    kafka_version: str | None = None

    def run(self, files: list[str], views: ConsumerViews | None) -> tuple[bool, bool, bool]:
        """Search every file, as a consumer of ``isolation`` sees it through ``views`` (None without one): (a record
        selected -- with -L, a file printed --, damage met, an input unreadable)."""
        matched = damaged = trouble = False
        for path in files:
            found, hurt, unreadable = self.one(path, views)
            matched, damaged, trouble = matched or found > 0, damaged or hurt, trouble or unreadable
        damaged |= views is not None and views.damaged
        return matched, damaged, trouble

    def one(self, path: str, views: ConsumerViews | None, shown: str | None = None) -> tuple[int, bool, bool]:
        """Search one file (named ``shown`` in the lines, if given): (records selected -- with -L, 1 when the file
        was printed --, damage met, unreadable)."""
        from kbatch.messages import decoder_for_path
        from kbatch.reading.reader import input_kind, open_input

        committed = views.of(path) if views is not None else None
        try:
            stream = open_input(path)
        except (OSError, ValueError) as error:
            self.unreadable(path, error)
            return 0, False, True
        internal = decoder_for_path(path) if self.decoder == "auto" else self.decoder
        settings = self.out.shown
        window = views.window(path, self.window) if views is not None else self.window
        search = Search(self.query, decoder=internal, kafka_version=self.kafka_version, window=window,
                        committed=committed, every_record=bool(settings.before or settings.after),
                        consumer_view=self.isolation is not None, decompressed_limit=self.decompressed_limit)
        with stream:
            # A large file is searched in parts at once (kbatch.walk.parts) when its lines are all there is to print.
            if settings.lines_only and not search.window and path != "-" and input_kind(path) == "file" \
                    and worth_parts(os.fstat(stream.fileno()).st_size, self.jobs):
                tally = search_in_parts(path, stream, search, self.out, self.jobs)
            else:
                tally = self.out.file(shown or path, search.run(path, stream))
                tally.left_out = search.left_out
        self.out.untrusted(shown or path, tally)
        if settings.names == "without":
            return int(tally.matched == 0), tally.damaged, False
        return tally.matched, tally.damaged, False

"""``kbatch pcap`` for people (a line per batch, findings beneath, a summary) and programs (JSON Lines, JSON)."""

from __future__ import annotations

import json
import re
import textwrap
import time as clock
from operator import attrgetter, itemgetter

from kbatch.capture.batches import CaptureFinding, CapturedBatch, CapturedRun
from kbatch.kernels.jsonl import RunLines, batch_json, fields_json, object_keys
from kbatch.kernels.recordwalk import is_compiled
from kbatch.output.jsonout import _batch_json_matches_batch_dict, utf8_buffer
from kbatch.output._dicts import batch_dict, pcap_batch_head, pcap_finding_dict, pcap_match_dict, pcap_summary_dict
from kbatch.output.columns import PCAP_BATCH_HEAD
from kbatch.output.values import counted
from kbatch.output.visible import visible


def item_dict(path: str, item, records: bool) -> dict:
    if isinstance(item, CaptureFinding):
        return pcap_finding_dict(path, item, item.finding)
    return {**pcap_batch_head(path, item), **batch_dict(item.batch, with_records=records)}


# json.dumps(value, ensure_ascii=False), without the encoder json.dumps makes a call (a line's capture keys are
# written once a Records field: tens of thousands of times in a large capture)
_json_text = json.JSONEncoder(ensure_ascii=False).encode

# How many bytes of runs' lines JsonlSink gathers before it writes them
_GATHERED = 1 << 20
# What a run's head ends with: each of its lines writes its own offset after it
_ASSIGNED_OFFSET_KEY = b', "assigned_offset": '

# What the compiled batch writer opens a batch's keys with: a pcap line has "type" first, before its own keys.
_TYPE_BATCH = b'"type": "batch"'


class JsonlSink:
    def __init__(self, out, records: bool):
        self.out, self.records = out, records
        self._bytes = utf8_buffer(out)
        # A batch's keys by the compiled writer, as dump's listing writes them (json.dumps of a dict is most of
        # the time of a capture's listing); interpreted, json.dumps is the faster of the two.
        self.compiled_lines = not records and self._bytes is not None and is_compiled() and \
            _batch_json_matches_batch_dict()
        self._head_of: tuple | None = None
        self._head = b""
        self._heads = _HeadEncoder()
        # runs' lines gathered by the compiled writer and written a MiB or so at a time (a write for each run's
        # few lines, through the standard stream's layers, costs more than its lines)
        self._gathered = RunLines(_GATHERED + (_GATHERED >> 2)) if self.compiled_lines else None
        if self._bytes is not None:
            out.flush()   # what its text layer holds goes first

    def _emit(self, line: str) -> None:
        if self._bytes is None:
            self.out.write(line)
        else:
            self._write(line.encode("utf-8", "surrogateescape"))

    def _write(self, data: bytes) -> None:
        """``data`` written after the runs' lines gathered."""
        self._write_gathered()
        self._bytes.write(data)

    def _write_gathered(self) -> None:
        if self._gathered is not None and self._gathered.size:
            with self._gathered.taken() as gathered:
                self._bytes.write(gathered)

    @property
    def takes_runs(self) -> bool:
        """Whether a CapturedRun is written at once here (else the reader hands out each of its batches)."""
        return self.compiled_lines

    def item(self, path: str, item) -> None:
        if isinstance(item, CapturedRun):
            heads, gathered = self._heads, self._gathered
            # (the common case in one compiled call: the run's head and lines gathered)
            if gathered is not None and heads.item_values is not None and gathered.add_keyed(
                    heads.opening(path, item), heads.names_through_error_code, heads.item_values[4](item),
                    _ASSIGNED_OFFSET_KEY, item.lines, item.spans, item.assigned_offset):
                if gathered.size >= _GATHERED:
                    self._write_gathered()
            else:
                self._run(path, item)
            return
        line = self._batch_line(path, item) if self.compiled_lines and isinstance(item, CapturedBatch) else None
        if line is None:
            self._emit(json.dumps(item_dict(path, item, self.records), ensure_ascii=False) + "\n")
        else:
            self._write(line)

    def _run(self, path: str, run) -> None:
        """The lines of a run's batches (kbatch.capture.batches.CapturedRun), as :meth:`item` writes each: the
        capture's keys, then the broker's offset of each batch (each following the one before), then its own."""
        head = self._heads.run_head(path, run)
        gathered = self._gathered
        if gathered is not None and gathered.add(head, run.lines, run.spans, run.assigned_offset):
            if gathered.size >= _GATHERED:
                self._write_gathered()
            return
        assigned = run.assigned_offset
        if assigned is None:   # (each line ends in a newline: the next one's head joins them)
            self._write((head + b"null").join((b"", *run.lines)))
            return
        parts: list[bytes] = []
        for line, span in zip(run.lines, run.spans):
            parts += (head, str(assigned).encode(), line)
            assigned += span
        self._write(b"".join(parts))

    def _batch_line(self, path: str, item) -> bytes | None:
        """json.dumps of item_dict, UTF-8, for a batch the compiled writer writes (from the header fields of a
        batch taken from its header alone)."""
        keys = batch_json(item.batch, b"") if item.header is None else fields_json(item.header, b"")
        if keys is None or not keys.startswith(_TYPE_BATCH):
            return None
        return b"".join((self._head_for(path, item), b', "error_code": ', _json_int(item.error_code),
                         b', "assigned_offset": ', _json_int(item.assigned_offset), keys[len(_TYPE_BATCH):], b"\n"))

    def _head_for(self, path: str, item) -> bytes:
        """A line's capture keys up to records_pos, kept from the batch before while it lies in the same Records
        field of the same capture (a partition's batches share them)."""
        if self._head_of is None or self._head_of[0] is not item.records or self._head_of[1] != path or \
                self._head_of[2] != item.topic:
            self._head = self._heads.encode_item(path, item)
            # (a Records field's bytes are one object: its batches share the message, request, partition and
            # place; the topic's name may come later, from a Metadata response)
            self._head_of = (item.records, path, item.topic)
        return self._head

    def match(self, path: str, match) -> None:
        self._emit(json.dumps(pcap_match_dict(path, match), ensure_ascii=False) + "\n")

    def done(self, summary) -> None:
        self._emit(json.dumps(pcap_summary_dict(summary.path, summary), ensure_ascii=False) + "\n")

    def flush(self) -> None:
        """The runs' lines gathered written."""
        if self._bytes is not None:
            self._write_gathered()

    def close(self) -> None:
        self.flush()


class _HeadEncoder:
    """A batch line's capture keys (pcap_batch_head's, less error_code and assigned_offset) as the JSON encoder
    writes the object, without its closing brace, UTF-8: each run of keys that many Records fields share -- the
    capture's, the partition's, the message's -- written once and kept, each value as the encoder writes it
    (:func:`_json_value`; json's encoder costs more to set up for an object than to write its keys).  A dict's
    JSON is its keys' and values' JSON joined by ", ", so the runs joined are the whole; a head of other keys (its
    columns changed) is encoded whole."""

    # the runs, in pcap_batch_head's order (kbatch.output.columns.PCAP_BATCH_HEAD); records_pos last
    RUNS = (("type", "file", "direction", "api"), ("topic", "topic_id", "partition"),
            ("api_version", "correlation_id", "client_id", "connection", "packet", "packet_time"))
    KEYS = sum(RUNS, ()) + ("records_pos",)
    KEPT = 4096   # runs kept per kind (a hostile capture's partitions are not all held)

    def __init__(self):
        self.kept: tuple[dict, ...] = tuple({} for _ in self.RUNS)
        self.values = tuple(itemgetter(*run) for run in self.RUNS)
        self.names = tuple(tuple(_json_text(key) + ": " for key in run) for run in self.RUNS)
        self.item_values = _item_getters(self.RUNS, self.KEYS)
        # (object_keys' names: each key after the first run with what goes before it)
        self.names_after_first = tuple((", " + name).encode() for names in self.names[1:] for name in names) + \
            (b', "records_pos": ',)
        self.names_through_error_code = self.names_after_first + (b', "error_code": ',)
        self.kept_first: dict = {}   # encode_item's first run: its text by the path and its item values
        self.kept_openings: dict = {}   # run_head's: "{" and the first run's text, by the same

    def encode(self, head: dict) -> bytes:
        if tuple(head) != self.KEYS:
            return _json_text(head)[:-1].encode("utf-8", "surrogateescape")
        parts = [self._run(kept, names, values(head)) for values, kept, names in zip(self.values, self.kept, self.names)]
        return b"{" + b", ".join(parts) + b', "records_pos": ' + _json_value(head["records_pos"]).encode()

    def encode_item(self, path: str, item) -> bytes:
        """:meth:`encode` of ``pcap_batch_head(path, item)`` less error_code and assigned_offset, without the
        dict: each value read from the item by its column's own expression (kbatch.output.columns: an attribute
        of ``found``, read as pcap_batch_head reads it), the first run's text kept by the path and those of its
        values the item gives (its others are the path's or constant).  Where the columns are not so, the dict."""
        if self.item_values is None:
            head = pcap_batch_head(path, item)
            del head["error_code"], head["assigned_offset"]
            return self.encode(head)
        _, later, records_pos, after_first, _ = self.item_values
        text = self._first_run(path, item)
        if _compiled_keys is not None:   # (the keys after the first run written in one compiled call)
            written = _compiled_keys(b"{" + text, self.names_after_first, after_first(item), b"")
            if written is not None:
                return written
        parts = [text]
        for values, kept, names in zip(later, self.kept[1:], self.names[1:]):
            parts.append(self._run(kept, names, values(item)))
        return b"{" + b", ".join(parts) + b', "records_pos": ' + _json_value(records_pos(item)).encode()

    def run_head(self, path: str, item) -> bytes:
        """:meth:`encode_item`'s keys, then error_code's, then the key of assigned_offset (a CapturedRun's head:
        each of its lines writes its own offset after it) -- in one compiled call where it can be."""
        if _compiled_keys is not None and self.item_values is not None:
            written = _compiled_keys(self.opening(path, item), self.names_through_error_code,
                                     self.item_values[4](item), _ASSIGNED_OFFSET_KEY)
            if written is not None:
                return written
        return self.encode_item(path, item) + b', "error_code": ' + _json_int(item.error_code) + _ASSIGNED_OFFSET_KEY

    def opening(self, path: str, item) -> bytes:
        """A head's opening brace and its first run's text (run_head's, before the keys ``item_values[4]``
        reads), kept by the path and those of its values the item gives (a few a capture)."""
        key = (path, self.item_values[0](item))
        opening = self.kept_openings.get(key)
        if opening is None:
            if len(self.kept_openings) >= self.KEPT:
                self.kept_openings.clear()
            opening = self.kept_openings[key] = b"{" + self._first_run(path, item)
        return opening

    def _first_run(self, path: str, item) -> bytes:
        """The first run's text, kept by the path and those of its values the item gives."""
        key = (path, self.item_values[0](item))
        text = self.kept_first.get(key)
        if text is None:
            if len(self.kept_first) >= self.KEPT:
                self.kept_first.clear()
            text = self.kept_first[key] = self._run({}, self.names[0], self.values[0](pcap_batch_head(path, item)))
        return text

    def _run(self, kept: dict, names: tuple, key: tuple) -> bytes:
        """A run of keys with these values (``key``), kept."""
        text = kept.get(key)
        if text is None:
            if len(kept) >= self.KEPT:
                kept.clear()
            text = kept[key] = ", ".join([name + _json_value(value) for name, value in zip(names, key)]).encode(
                "utf-8", "surrogateescape")
        return text


_ITEM_ATTRIBUTE = re.compile(r"found((?:\.[A-Za-z_]\w*)+)")


def _item_getters(runs: tuple, keys: tuple) -> tuple | None:
    """For :meth:`_HeadEncoder.encode_item`: (a getter of the first run's values an item gives, a getter of each
    later run's values, the getter of records_pos, a getter of every value after the first run's, the same with
    error_code's), each an attrgetter of the columns' expressions; None unless pcap_batch_head's keys are ``keys``, then error_code and
    assigned_offset, every later column is an attribute of the item, and the first run's other columns do not
    read the item."""
    reads = {column.name: column.read for column in PCAP_BATCH_HEAD}
    if tuple(reads) != keys + ("error_code", "assigned_offset"):
        return None
    attributes = {name: match.group(1)[1:] for name, read in reads.items() if (match := _ITEM_ATTRIBUTE.fullmatch(read))}
    if any(name not in attributes for run in runs[1:] for name in run) or \
            any(name not in attributes for name in ("records_pos", "error_code")) or \
            any("found" in reads[name] for name in runs[0] if name not in attributes):
        return None
    return (_values_of([attributes[name] for name in runs[0] if name in attributes]),
            tuple(_values_of([attributes[name] for name in run]) for run in runs[1:]), attrgetter(attributes["records_pos"]),
            _values_of([attributes[name] for run in runs[1:] for name in run] + [attributes["records_pos"]]),
            _values_of([attributes[name] for run in runs[1:] for name in run] + [attributes["records_pos"],
                                                                                 attributes["error_code"]]))


def _values_of(attributes: list):
    """A getter of these attributes' values, as a tuple however many they are."""
    if len(attributes) >= 2:
        return attrgetter(*attributes)
    got = [attrgetter(name) for name in attributes]
    return lambda found: tuple(get(found) for get in got)


_json_string = json.encoder.encode_basestring   # (what the encoder writes a str with, ensure_ascii=False)
# A head's keys after its first run in one call where the writer is compiled (interpreted, the runs kept are faster)
_compiled_keys = object_keys if is_compiled() else None
_INFINITY = float("inf")


def _json_value(value) -> str:
    """The JSON encoder's text of a value (None, str, int, a finite float; anything else as it encodes it)."""
    if value is None:
        return "null"
    kind = type(value)
    if kind is str:
        return _json_string(value)
    if kind is int:
        return int.__repr__(value)
    if kind is float and -_INFINITY < value < _INFINITY:
        return float.__repr__(value)
    return _json_text(value)


def _json_int(value: int | None) -> bytes:
    return b"null" if value is None else str(value).encode()


class JsonSink:
    """One document: {"kbatch_json_version": 1, "captures": [{"file", "entries", "summary"}]}."""

    def __init__(self, out, records: bool):
        self.out, self.records = out, records
        self.captures: list[dict] = []
        self.entries: list[dict] = []

    def item(self, path: str, item) -> None:
        self.entries.append(item_dict(path, item, self.records))

    def match(self, path: str, match) -> None:
        self.entries.append(pcap_match_dict(path, match))

    def done(self, summary) -> None:
        self.captures.append({"file": pcap_summary_dict(summary.path, summary)["file"], "entries": self.entries,
                              "summary": pcap_summary_dict(summary.path, summary)})
        self.entries = []

    def flush(self) -> None:
        pass   # (one document, written whole at the end)

    def close(self) -> None:
        json.dump({"kbatch_json_version": 1, "captures": self.captures}, self.out, ensure_ascii=False)
        self.out.write("\n")


def _where(item) -> str:
    """topic-partition, the topic's name (escaped) or its id."""
    topic = item.topic if item.topic is not None else item.topic_id
    return f"{visible(topic)}-{item.partition}" if topic is not None else "-"


def _when(seconds: float) -> str:
    """The packet's time of day, UTC (the jsonl has the whole time)."""
    return clock.strftime("%H:%M:%S", clock.gmtime(seconds))


def _fit(text: str, width: int, right: bool = False) -> str:
    """``text`` in ``width`` columns: cut in the middle with "~" when longer (a long topic's partition stays)."""
    if len(text) > width:
        keep = width - 1
        text = text[:keep // 2] + "~" + text[len(text) - (keep - keep // 2):]
    return text.rjust(width) if right else text.ljust(width)


class TableSink:
    """A line per batch -- packet, time, direction, topic-partition, offsets, records, CRC, the response --
    and each finding beneath its batch, then a summary; fits 80 columns (the connection and client id on
    a line of their own where the connection changes).  (rich is imported where it writes: the JSON sinks
    run without it.)"""

    def __init__(self, console):
        self.console = console
        self.connection = None
        self.header = False
        # the topic-partition takes what a console wider than 80 columns gives (up to a topic's 249 characters)
        self.partition_width = max(18, min(260, console.width - 62))   # 62: the other columns, "no response"

    def item(self, path: str, item) -> None:
        from rich.text import Text

        console = self.console
        if not self.header:
            console.print(Text(f"{'packet':>7} {'time':8} {'dir':7} {'partition':{self.partition_width}} {'offsets':>13} "
                               f"{'recs':>5} {'crc':4} response", style="bold"), soft_wrap=True)
            self.header = True
        if item.connection != self.connection and item.connection is not None:
            self.connection = item.connection
            client = getattr(getattr(item, "request", None), "client_id", None)
            said = f"{visible(item.connection)}" + (f"  client {visible(client)}" if client is not None else "")
            console.print(Text(textwrap.fill(said, width=max(console.width, 40), subsequent_indent="  ",
                                             break_long_words=True), style="dim"), soft_wrap=True)
        if isinstance(item, CaptureFinding):
            self._finding(item.finding, item.packet)
            return
        batch = item.batch
        first, last = batch.base_offset, batch.last_offset
        if item.direction == "produce":   # a client's batch starts at 0: the offsets shown are the broker's
            if item.error_code is None:
                answer = "no response"
            elif item.error_code:
                answer = f"error {item.error_code}"
            else:
                answer = "taken"
            if item.assigned_offset is not None:
                first, last = item.assigned_offset, item.assigned_offset + last - first
        else:
            answer = "" if not item.error_code else f"error {item.error_code}"
        offsets = f"{first}..{last}"
        crc = Text("ok", style="green") if batch.crc_valid else Text("BAD", style="bold red")
        line = Text(f"{item.packet:>7} {_when(item.time):8} {item.direction:7} {_fit(_where(item), self.partition_width)} "
                    f"{_fit(offsets, 13, right=True)} {max(batch.count or 0, 0):>5} ")
        line.append_text(crc)
        if answer:
            line.append(" " * (5 - len(crc.plain)) + answer)
        console.print(line, soft_wrap=True)
        for finding in batch.findings:
            self._finding(finding, item.packet)

    def match(self, path: str, match) -> None:
        """A hop that changed the batch, or a topic Kafka refuses, in a sentence; one that agrees only as the broker
        or the log cleaner rewrote it, dim (one that agrees byte for byte or has no disk batch says nothing)."""
        from kbatch.render.console import print_wrapped

        if match.topic_refused:   # (its explanation holds the captured name, escaped)
            print_wrapped(self.console, match.explanation, "bold red")
        if match.rewritten:   # (agrees, but not byte for byte: what the broker or the log cleaner rewrote)
            print_wrapped(self.console, f"hop none: {match.explanation}", "dim")
        if match.hop in (None, "none"):
            return
        where = "" if match.disk is None else f" ({visible(match.disk.path)} at pos {match.disk.pos})"
        byte = "" if match.first_differing_byte is None else f", first at byte {match.first_differing_byte}"
        print_wrapped(self.console, f"hop {match.hop}: {match.explanation}{byte}{where}", "bold red")

    def _finding(self, finding, packet: int) -> None:
        from kbatch.render.console import print_wrapped

        style = {"error": "red", "warning": "yellow"}.get(finding.severity.value, "dim")
        print_wrapped(self.console, f"{finding.severity.value} {finding.code} (packet {packet}, pos {finding.pos}) "
                      f"{visible(finding.field)}: expected {visible(finding.expected)}, found "
                      f"{visible(finding.actual)}", style)

    def done(self, summary) -> None:
        from rich.text import Text

        # (each count kept on one line with what it counts: NUL stands for its space while the line is wrapped)
        counts = ", ".join(f"{count}\0{code}" for code, count in sorted(summary.findings.items())) or "no findings"
        if summary.hops is not None:
            counts += "; against the disk: " + ", ".join(f"{count}\0{hop}" for hop, count in sorted(summary.hops.items()))
        line = (f"{visible(summary.path)}: {counted(summary.packets, 'packet')}, {counted(summary.batches, 'batch')} "
                f"({summary.produced} produced, {summary.fetched} fetched), {counted(summary.records, 'record')}; "
                f"{counts}")
        wrapped = textwrap.fill(line, width=max(self.console.width, 40), subsequent_indent="  ",
                                break_long_words=False, break_on_hyphens=False).replace("\0", " ")
        self.console.print(Text(wrapped, style="bold red" if summary.damaged else "bold"), soft_wrap=True)

    def flush(self) -> None:
        pass   # (each line printed as it comes)

    def close(self) -> None:
        pass

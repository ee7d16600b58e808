"""How ``kbatch dump`` shows a file beside a segment: an index, a snapshot, a checkpoint.

The same four formats as batches, written through the sink the run already
has (so ``--format json`` stays one document over mixed inputs): a Rich table
of entries, one JSON object per entry (``"type": "entry"``, Kafka's field
names in snake_case), or kafka-dump-log.sh's lines.
"""

from __future__ import annotations

import json

from rich.table import Table
from rich.text import Text

from kbatch.format.findings import Finding
from kbatch.files import kinds
from kbatch.partition.sidecars import Entry, Header
from kbatch.render.dumplog import DumplogSink, finding_comment
from kbatch.output.jsonout import JsonlSink, JsonSink, region_dict, sidecar_entry_dict, sidecar_header_dict
from kbatch.render.table import TableSink, _codes, finding_line
from kbatch.output.values import iso_timestamp
from kbatch.output.visible import visible

_TIMESTAMP_FIELDS = {"timestamp"}


def render(sink, path: str, size: int, kind: str, items, summary) -> None:
    """Write every item of one file (Entry, Header or Finding, in file order) to ``sink``, then its summary."""
    if isinstance(sink, (JsonlSink, JsonSink)):
        sink.begin(path, size)
        write = sink._write if isinstance(sink, JsonlSink) else sink._entry
        for item in items:
            summary.add(item)
            if isinstance(item, Entry):
                write(sidecar_entry_dict(item))
            elif isinstance(item, Header):
                write(sidecar_header_dict(item))
            else:
                write(region_dict(item))
        sink.end(summary)
    elif isinstance(sink, DumplogSink):
        _dumplog(sink.out, path, kind, items, summary)
    elif isinstance(sink, TableSink):
        _table(sink.console, path, size, kind, items, summary)
    else:  # pragma: no cover - every sink of dump is handled above
        raise TypeError(f"no sidecar rendering for {type(sink).__name__}")


# -- table ------------------------------------------------------------------------------------------------


def _shown(value) -> str:
    """A field's value as text: a list or object (quorum-state's voters) as the JSON it was read from."""
    return json.dumps(value, separators=(",", ":")) if isinstance(value, (list, dict)) else visible(str(value))


def _iso(name: str, value) -> str:
    """A timestamp field's ISO time ("" for any other field, and for no timestamp)."""
    return iso_timestamp(value) if name in _TIMESTAMP_FIELDS and isinstance(value, int) else ""


def _cell(name: str, value, with_iso: bool) -> Text:
    if value is None:
        return Text("-", style="dim")
    if with_iso and _iso(name, value):
        return Text(f"{value}\n{_iso(name, value)}")
    return Text(_shown(value))


# Column headings short enough for the widest layout (a snapshot: ten columns) to fit 80 columns; the JSON
# keys are the full names.
_HEADINGS = {"relative_offset": "relative", "producer_id": "producer", "last_sequence": "last seq",
             "offset_delta": "delta", "coordinator_epoch": "coord epoch", "current_txn_first_offset": "txn first",
             "first_offset": "first offset", "last_offset": "last offset", "last_stable_offset": "LSO"}
_ISO_WIDTH = len("2023-11-14T22:13:52.000Z")


def _entries_table(entries: list[Entry], width: int) -> tuple[Table, bool]:
    """One row per entry, for a terminal ``width`` columns wide; and whether ISO times were left out.
    A number is never cut: each column is as wide as its widest figure and its heading's longest word.
    A timestamp has its ISO time under it where the table has room for it whole, else none: an ISO
    time is never split across lines."""
    names = list(entries[0].fields)
    columns: list[tuple[str, list]] = [("slot", [entry.slot for entry in entries]), ("pos", [entry.pos for entry in entries]),
               *((_HEADINGS.get(name, name.replace("_", " ")), [entry.fields.get(name) for entry in entries])
                 for name in names)]
    widths = [max([len(str(value)) for value in values] + [len(word) for word in heading.split()])
              for heading, values in columns]
    with_findings = any(entry.findings for entry in entries)
    findings_width = max((len(f.code) for entry in entries for f in entry.findings), default=0)
    iso_widths = [max(column_width, _ISO_WIDTH) if heading in _TIMESTAMP_FIELDS else column_width
                  for (heading, _), column_width in zip(columns, widths)] + ([findings_width] if with_findings else [])
    iso_fits = sum(iso_widths) + 2 * (len(iso_widths) - 1) <= width
    table = Table(header_style="bold underline", expand=False, box=None, padding=(0, 1), pad_edge=False)
    for (heading, _), column_width in zip(columns, widths):
        widest = max(column_width, _ISO_WIDTH) if iso_fits and heading in _TIMESTAMP_FIELDS else column_width
        table.add_column(heading, justify="right", min_width=column_width, max_width=widest, overflow="fold")
    if with_findings:
        table.add_column("findings", min_width=findings_width)
    for entry in entries:
        cells: list[str | Text] = [str(entry.slot), str(entry.pos), *(_cell(name, entry.fields.get(name), iso_fits) for name in names)]
        if with_findings:
            cells.append(_codes(entry.findings))
        table.add_row(*cells, style="on grey11" if entry.is_damaged else None)
    left_out = not iso_fits and any(_iso(name, value) for entry in entries for name, value in entry.fields.items())
    return table, left_out


def _plain(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _table(console, path, size, kind, items, summary) -> None:
    # The title is a line of its own: these tables are narrow, and a table's title would wrap to its width.
    console.print(Text(f"{visible(path)} ({size} bytes, {kinds.DESCRIPTIONS[kind]})", style="bold"))
    entries: list[Entry] = []
    details: list[Finding] = []
    for item in items:
        summary.add(item)
        if isinstance(item, Header):
            console.print(Text("  " + "  ".join(f"{name.replace('_', ' ')}: {_plain(value)}"
                                                 for name, value in item.fields.items() if value is not None)))
            for finding in item.findings:
                console.print(finding_line(finding))
        elif isinstance(item, Entry):
            entries.append(item)
            details += item.findings
        else:
            details.append(item)
    if entries:
        table, iso_left_out = _entries_table(entries, console.width)
        console.print(table)
        if iso_left_out:
            console.print(Text(f"(the timestamps' ISO times do not fit {console.width} columns)", style="dim"))
    for finding in details:
        console.print(finding_line(finding))
    verdict = Text("damaged", style="bold red") if summary.damaged else Text("clean", style="green")
    findings = ", ".join(f"{count} {code}" for code, count in sorted(summary.findings.items()))
    counted_entries = f"{summary.entries} {'entry' if summary.entries == 1 else 'entries'}"
    console.print(Text.assemble(f"{visible(path)}: {kinds.DESCRIPTIONS[kind]}, {counted_entries}, {size} bytes; ",
                                verdict, f" ({findings})" if findings else ""))
    console.print()


# -- kafka-dump-log.sh's lines (DumpLogSegments.java: dumpIndex, dumpTimeIndex, dumpTxnIndex,
#    dumpProducerIdSnapshot); Kafka's tool stops an index at its zero tail, as we do ------------------------


def _optional_long(value: int) -> str:
    return f"OptionalLong[{value}]" if value >= 0 else "OptionalLong.empty"


def _decrement_sequence(sequence: int, decrement: int) -> int:
    """DefaultRecordBatch.decrementSequence: sequences wrap below 0 to Integer.MAX_VALUE."""
    return sequence - decrement if sequence >= decrement else 2**31 - 1 - (decrement - sequence) + 1


def dumplog_line(entry: Entry) -> str:
    f = entry.fields
    if entry.kind == kinds.OFFSET_INDEX:
        return f"offset: {f['offset'] if f['offset'] is not None else f['relative_offset']} position: {f['position']}"
    if entry.kind == kinds.TIME_INDEX:
        return f"timestamp: {f['timestamp']} offset: {f['offset'] if f['offset'] is not None else f['relative_offset']}"
    if entry.kind == kinds.TXN_INDEX:
        return (f"version: {f['version']} producerId: {f['producer_id']} firstOffset: {f['first_offset']} "
                f"lastOffset: {f['last_offset']} lastStableOffset: {f['last_stable_offset']}")
    if entry.kind == kinds.PRODUCER_SNAPSHOT:
        line = (f"producerId: {f['producer_id']} producerEpoch: {f['epoch']} "
                f"coordinatorEpoch: {f['coordinator_epoch']} "
                f"currentTxnFirstOffset: {_optional_long(f['current_txn_first_offset'])} "
                f"lastTimestamp: {f['timestamp']}")
        if f["last_offset"] >= 0:   # ProducerStateManager.readSnapshot: batch metadata only with an offset
            line += (f" firstSequence: {_decrement_sequence(f['last_sequence'], f['offset_delta'])} "
                     f"lastSequence: {f['last_sequence']} lastOffset: {f['last_offset']} "
                     f"offsetDelta: {f['offset_delta']} timestamp: {f['timestamp']}")
        return line
    # Kafka's tool cannot dump checkpoints or partition.metadata: their lines as they are.
    return " ".join(f"{name}: {_shown(value)}" for name, value in f.items())


def _dumplog(out, path, kind, items, summary) -> None:
    out.write(f"Dumping {visible(path)}\n")
    entries = 0
    for item in items:
        summary.add(item)
        findings = item.findings if isinstance(item, (Entry, Header)) else [item]
        if isinstance(item, Entry):
            entries += 1
            out.write(dumplog_line(item) + "\n")
        elif entries == 0 and getattr(item, "code", None) == "zero-tail" and kind in (kinds.OFFSET_INDEX, kinds.TIME_INDEX):
            # DumpLogSegments.dumpIndex/dumpTimeIndex stop at a zero slot only after the first: an index
            # preallocated and still empty prints its first slot as an entry.
            base = kinds.base_offset_of(path) or 0
            out.write(f"offset: {base} position: 0\n" if kind == kinds.OFFSET_INDEX else f"timestamp: 0 offset: {base}\n")
        for finding in findings:
            out.write(finding_comment(finding) + "\n")
    if kind == kinds.OFFSET_INDEX and entries == 0 and summary.size < 8:
        out.write(f"{visible(path)} is empty.\n")   # DumpLogSegments.dumpIndex, for an index with no entries


def dump_file(path: str, stream, kind: str, sink):
    """``kbatch dump`` of one file beside a segment: read it as ``kind``, a window at a time, and show it
    through ``sink``."""
    from kbatch.partition.sidecars import SideFile, SidecarSummary, read_sidecar

    data = SideFile(stream)
    summary = SidecarSummary(path, len(data), kind)
    render(sink, path, len(data), kind, read_sidecar(kind, data, kinds.base_offset_of(path)), summary)
    return summary

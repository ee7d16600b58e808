"""What the scan report reads of the tables, added up as the tables are written.

The report (kbatch.spark.report) needs a few sums of each table, never its rows: per segment file its batches
(how many, their records, compressed and inflated bytes, corrupt ones, the first and last offset and time), per
file and finding code its findings, and per producer where its transactions end. Spark would read the tables back
to add them up (a query of its own after the write, most of a small scan's fixed cost and a share of a large one's
time per byte). Instead, each task adds up the Arrow batches it writes (:class:`Tally`, in
kbatch.spark.records_table) and hands its sums back with its files; the driver adds the tasks' sums up
(:func:`merged`). A table Spark's own writer wrote is added up from the table read back (:func:`tally_tables`), by
the same functions. Every sum is one the tasks' sums add up to exactly: a count, a sum, a least or a greatest
value (an empty group's sum, least and greatest are null, as in SQL).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable


@dataclass(frozen=True)
class Sum:
    """A column of a part: ``value`` of an Arrow batch (a table's rows), added up by ``how`` ("sum", "min" or
    "max": what adds the tasks' figures up too)."""

    value: Callable
    how: str


@dataclass(frozen=True)
class Part:
    """A sum of the report: the rows of table ``level`` (those ``where`` keeps), grouped by ``keys``."""

    level: str
    keys: tuple[str, ...]
    sums: dict[str, Sum]
    where: Callable | None = None


def _column(name: str):
    return lambda rows: rows.column(name)


def _when(condition: Callable, value: Callable):
    """``value`` where ``condition`` holds, null elsewhere (and where it is null: as SQL's CASE WHEN)."""
    import pyarrow.compute as pc

    def taken(rows):
        column = value(rows)
        return pc.if_else(pc.fill_null(condition(rows), False), column, _null(column.type))

    return taken


def _null(kind):
    import pyarrow as pa

    return pa.scalar(None, kind)


def _ones(rows):
    import numpy as np
    import pyarrow as pa

    return pa.array(np.ones(rows.num_rows, dtype=np.int64))


def _records(rows):
    """A batch's records as the report counts them: its count field, none where negative or absent."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.max_element_wise(pc.fill_null(rows.column("count"), 0), 0).cast(pa.int64())


def _compressed(rows):
    import pyarrow.compute as pc

    return pc.not_equal(rows.column("codec"), "none")


def _whole(rows):
    import pyarrow.compute as pc

    return pc.invert(rows.column("damaged"))


def _transactional(control: bool, crc_valid: bool | None = None):
    """A transaction's batches: its data (``control`` false) or its markers (true; whose CRC holds or fails, as
    ``crc_valid`` says, when it says)."""
    import pyarrow.compute as pc

    def holds(rows):
        is_control = rows.column("is_control")
        held = pc.and_kleene(rows.column("is_transactional"), is_control if control else pc.invert(is_control))
        if crc_valid is not None:
            valid = rows.column("crc_valid")
            held = pc.and_kleene(held, valid if crc_valid else pc.invert(valid))
        return held

    return holds


def _at_least_zero(name: str):
    import pyarrow.compute as pc

    return lambda rows: pc.greater_equal(rows.column(name), 0)


def _producer_or_transactional(rows):
    """The batches of a producer (an id >= 0) or of a transaction (PartitionProducers' and the report's)."""
    import pyarrow.compute as pc

    return pc.or_kleene(pc.greater_equal(rows.column("producer_id"), 0), rows.column("is_transactional"))


PARTS = {
    # Per segment file: its batches (kbatch.spark.report.partition_report adds the files of a partition up).
    "files": Part("batches", ("topic", "partition", "file"), {
        "batches": Sum(_ones, "sum"),
        "records": Sum(_records, "sum"),
        "compressed_bytes": Sum(_when(_compressed, _column("payload_size")), "sum"),
        "inflated_bytes": Sum(_when(_compressed, _column("decompressed_size")), "sum"),
        "corrupt_batches": Sum(lambda rows: rows.column("damaged").cast("int64"), "sum"),
        "first_offset": Sum(_when(_whole, _column("base_offset")), "min"),
        "last_offset": Sum(_when(_whole, _column("last_offset")), "max"),
        "first_timestamp": Sum(_when(_at_least_zero("base_timestamp"), _column("base_timestamp")), "min"),
        "last_timestamp": Sum(_when(_at_least_zero("max_timestamp"), _column("max_timestamp")), "max"),
    }),
    # Per file, finding code and severity: how many findings.
    "findings": Part("findings", ("topic", "partition", "file", "code", "severity"), {
        "findings": Sum(_ones, "sum"),
    }),
    # Per producer: whether it wrote in transactions, and where its transactions' data and markers end (the
    # report's open and unknown-outcome transactions: kbatch.spark.report.transactions). A marker whose CRC
    # fails is never believed (kbatch.reading.markers): it ends its transaction, outcome unknown.
    "producers": Part("batches", ("topic", "partition", "producer_id"), {
        "transactional": Sum(_column("is_transactional"), "max"),
        "last_data": Sum(_when(_transactional(control=False), _column("last_offset")), "max"),
        "last_marker": Sum(_when(_transactional(control=True, crc_valid=True), _column("last_offset")), "max"),
        "last_doubted": Sum(_when(_transactional(control=True, crc_valid=False), _column("last_offset")), "max"),
    }, where=_producer_or_transactional),
}


def _added_up(part: Part, table):
    """``table`` (``part``'s keys and sums as columns) grouped by the keys, each sum's column added up as its
    ``how``."""
    grouped = table.group_by(list(part.keys), use_threads=False).aggregate(
        [(name, each.how) for name, each in part.sums.items()])
    # (pyarrow names an aggregate NAME_HOW, and puts the keys last)
    return grouped.select([*part.keys, *(f"{name}_{each.how}" for name, each in part.sums.items())]) \
        .rename_columns([*part.keys, *part.sums])


def part_of(part: Part, rows):
    """``part``'s sums over ``rows`` (an Arrow record batch or table of ``part.level``'s table)."""
    import pyarrow as pa

    if part.where is not None:
        rows = rows.filter(part.where(rows))
    table = pa.table({**{key: rows.column(key) for key in part.keys},
                      **{name: each.value(rows) for name, each in part.sums.items()}})
    return _added_up(part, table)


class Tally:
    """The sums of the parts of ``level``'s table over the Arrow batches :meth:`add` is handed; kept added up
    every so often, so that a task's memory holds about a row per file (and producer) it read."""

    KEEP = 64   # batches' sums held before they are added up into one

    def __init__(self, level: str):
        self.parts = {name: part for name, part in PARTS.items() if part.level == level}
        self.held: dict[str, list] = {name: [] for name in self.parts}

    def add(self, rows) -> None:
        if not rows.num_rows:
            return
        for name, part in self.parts.items():
            held = self.held[name]
            held.append(part_of(part, rows))
            if len(held) >= self.KEEP:
                self.held[name] = [_merged_part(part, held)]

    def sums(self) -> dict:
        """The sums so far, per part: an Arrow table each."""
        return {name: _merged_part(part, self.held[name]) for name, part in self.parts.items() if self.held[name]}

    def sent(self) -> list[tuple[str, bytes]]:
        """The sums so far as they cross to the driver: (part, its table as an Arrow IPC stream) for each part."""
        return [(name, _ipc(table)) for name, table in self.sums().items()]


def _ipc(table) -> bytes:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as stream:
        stream.write_table(table)
    return sink.getvalue().to_pybytes()


def _merged_part(part: Part, tables: list):
    """The sums ``tables`` hold (each added up already), added up."""
    import pyarrow as pa

    table = pa.concat_tables(tables)
    # Where no key is in two of them (a file is read by one task, unless it is cut into ranges) they are added up
    # already: pyarrow's grouping of 100,000 keys (a scan of 100,000 segments) peaks at ~80 MB of its memory pool.
    keys = list(zip(*(table.column(key).to_pylist() for key in part.keys)))
    if len(set(keys)) == len(keys):
        return table
    return _added_up(part, table)


def merged(sent) -> dict:
    """The tasks' sums (each's :meth:`Tally.sent`: (part, Arrow IPC stream) pairs) added up, per part (an empty
    table where none came)."""
    import pyarrow as pa

    held: dict[str, list] = {name: [] for name in PARTS}
    for name, stream in sent:
        held[name].append(pa.ipc.open_stream(stream).read_all())
    return {name: _merged_part(PARTS[name], tables) if tables else _empty(PARTS[name]) for name, tables in held.items()}


def _empty(part: Part):
    import pyarrow as pa

    return pa.table({name: pa.array([], pa.null()) for name in (*part.keys, *part.sums)})


def tally_tables(spark, frames: dict) -> dict:
    """The sums of tables Spark wrote, read back (``frames``: level -> DataFrame), added up on the executors by the
    same Tally a writing task keeps, then here (:func:`merged`)."""
    sent = []
    for level, frame in frames.items():
        sent += [(row.part, row.sums) for row in
                 frame.mapInArrow(partial(_tally_batches, level), "part STRING, sums BINARY").collect()]
    return merged(sent)


def _tally_batches(level: str, batches):
    """On an executor: the sums of ``level``'s Arrow batches, a row per part."""
    import pyarrow as pa

    tally = Tally(level)
    for batch in batches:
        tally.add(batch)
    yield pa.RecordBatch.from_pylist([{"part": name, "sums": stream} for name, stream in tally.sent()],
                                     schema=pa.schema([("part", pa.string()), ("sums", pa.binary())]))

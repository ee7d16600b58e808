"""A message version's layout as a flat program of small integers, for the compiled reader of the partitions
``kbatch pcap`` needs (kbatch.kernels.partitions): a Produce request's Records fields, a Produce response's
answers, a Fetch response's Records fields, each partition a row of the few fields asked for.

The program is written from the generic decoder's own plan of each struct (:meth:`MessageDecoder._plan`, as
kbatch.messages.make_readers writes readers.py from it): the fields of that version in order, each one's width,
whether it is nullable and whether its length is compact (a flexible version), the tagged fields' count at the end
of each struct of a flexible version.  Nothing about a layout is declared twice.  A layout it cannot write --
a nullable struct, an array of anything but structs -- has no program, and the straight-line readers read it.

The reader follows the readers' well-formed path and gives up wherever they give up (a length or count past the
bytes, a negative length where the field is not nullable, a string over 32767 bytes, a varint of more than five
bytes, any tagged field present): where it reads a message, the readers would read the same values
(tests/test_capture_partitions.py, and every capture the tests read, hold the two to the same rows).
"""

from __future__ import annotations

import struct
from functools import lru_cache

from kbatch.kernels.partitions import ARRAY, BYTES, FIXED, INT, STRING, TAGS, UUID, Program
from kbatch.messages.decoder import _FIXED, MessageDecoder, uuid_text
from kbatch.messages.schemas import SCHEMAS
from kbatch.messages.spec import F

# (the operations a program is made of are the reader's: kbatch.kernels.partitions says what each does)
_WIDTHS = {kind: struct.calcsize(code) for kind, code in _FIXED.items()} | {"bool": 1}
_INTS = {"int16": 2, "int32": 4, "int64": 8}

# What kbatch pcap takes of each message: {field path: slot}, and the array whose each element is a row.
WANTED = {
    "ProduceRequest": ({"acks": 0, "topicData.name": 1, "topicData.topicId": 2, "topicData.partitionData.index": 3,
                        "topicData.partitionData.records": 4}, "topicData.partitionData"),
    "ProduceResponse": ({"responses.name": 0, "responses.topicId": 1, "responses.partitionResponses.index": 2,
                         "responses.partitionResponses.errorCode": 3, "responses.partitionResponses.baseOffset": 4},
                        "responses.partitionResponses"),
    "FetchResponse": ({"responses.topic": 0, "responses.topicId": 1, "responses.partitions.partitionIndex": 2,
                       "responses.partitions.errorCode": 3, "responses.partitions.records": 4},
                      "responses.partitions"),
    "ShareFetchResponse": ({"responses.topicId": 1, "responses.partitions.partitionIndex": 2,
                            "responses.partitions.errorCode": 3, "responses.partitions.records": 4},
                           "responses.partitions"),
}
SLOTS = 6   # the most slots a program uses (a Records field takes two)


@lru_cache(maxsize=None)
def program(name: str, version: int) -> tuple[int, ...] | None:
    """The program reading message ``name`` at ``version`` (one of :data:`WANTED`'s, a version Kafka defines),
    or None where it has none."""
    low, high = SCHEMAS[name].valid_range
    if name not in WANTED or not low <= version <= high:
        return None
    wanted, rows = WANTED[name]
    decoder = MessageDecoder(SCHEMAS[name], version, name)
    try:
        return tuple(_struct(decoder, SCHEMAS[name].fields, "", wanted, rows))
    except _NoProgram:
        return None


class _NoProgram(Exception):
    """A layout the compiled reader does not read."""


def reader(program_: tuple[int, ...]) -> Program:
    """The compiled reader of a program (:func:`program`'s), its uuids written as Uuid.toString writes them."""
    return Program(program_, SLOTS, uuid_text)


def _struct(decoder: MessageDecoder, fields: tuple[F, ...], path: str, wanted: dict, rows: str) -> list[int]:
    out: list[int] = []
    skipped = -1   # where the last operation is FIXED (a run of fixed widths is one skip)
    for field, is_tagged in decoder._plan(fields)[0]:
        if is_tagged:   # (at its default unless its tag comes, and any tag gives up: see TAGS)
            continue
        here = path + field.json_name
        slot = wanted.get(here, -1)
        kind, nullable, compact = field.type, int(decoder._nullable(field)), int(decoder._flexible(field))
        if kind in _WIDTHS and not (kind in _INTS and slot >= 0):
            if skipped == len(out) - 2:
                out[-1] += _WIDTHS[kind]
            else:
                skipped = len(out)
                out += (FIXED, _WIDTHS[kind])
            continue
        if kind in _INTS:
            out += (INT, _INTS[kind], slot)
        elif kind == "uuid":
            out += (UUID, slot) if slot >= 0 else (FIXED, 16)
        elif kind == "string":
            out += (STRING, nullable, compact, slot)
        elif kind in ("bytes", "records"):
            out += (BYTES, nullable, compact, slot)
        elif kind.startswith("[]") and field.fields:
            body = _struct(decoder, field.fields, here + ".", wanted, rows)
            out += (ARRAY, nullable, compact, len(body), int(here == rows), *body)
        elif field.fields and not kind.startswith("[]") and not nullable:   # a struct: its fields in place
            out += _struct(decoder, field.fields, here + ".", wanted, rows)
            skipped = -1
        else:   # an array of plain values, a nullable struct
            raise _NoProgram(here)
    if decoder.flexible:
        out.append(TAGS)
    return out


@lru_cache(maxsize=None)
def fixed_size(name: str, version: int) -> int | None:
    """The size of message ``name`` at ``version`` where it is fixed-width fields alone (no tagged fields, no
    flexible version's tag count), else None: a response header v0, for instance."""
    decoder = MessageDecoder(SCHEMAS[name], version, name)
    order = decoder._plan(SCHEMAS[name].fields)[0]
    if decoder.flexible or any(tagged or field.type not in _WIDTHS for field, tagged in order):
        return None
    return sum(_WIDTHS[field.type] for field, _ in order)


def rows_of(name: str, fields: dict, records: dict) -> tuple[tuple, list[tuple]]:
    """What the compiled reader gives of message ``name`` -- its slots at its end, a row of them after each
    element of its rows' array -- from its fields as the readers or the generic decoder read them, and its
    Records fields by path (kbatch.capture.batches._read's)."""
    arrays, levels = _levels(name)
    slots: list = [None] * SLOTS
    rows: list[tuple] = []

    def take(struct: dict, depth: int, where: str) -> None:
        for field, slot in levels[depth]:
            if field == "records":
                pos, data = records.get(where + field, (None, None))
                slots[slot], slots[slot + 1] = (None, -1) if data is None else (pos, len(data))
            else:
                slots[slot] = struct.get(field)
        if depth < len(arrays):
            for index, element in enumerate(struct.get(arrays[depth]) or ()):
                take(element, depth + 1, f"{where}{arrays[depth]}[{index}].")
                if depth + 1 == len(arrays):
                    rows.append(tuple(slots))

    take(fields, 0, "")
    return tuple(slots), rows


@lru_cache(maxsize=None)
def _levels(name: str) -> tuple[list[str], list[list[tuple[str, int]]]]:
    """WANTED[name] by depth: the arrays down to the rows' one, and the (field, slot) wanted at each depth."""
    wanted, row_path = WANTED[name]
    arrays = row_path.split(".")
    levels: list[list[tuple[str, int]]] = [[] for _ in range(len(arrays) + 1)]
    for key, slot in wanted.items():
        *path, field = key.split(".")
        levels[len(path)].append((field, slot))
    return arrays, levels

"""Kafka's message schemas, as kbatch needs them to read internal topics and control records.

The table is data: ``schemas.json`` beside this module, WRITTEN BY ``python -m kbatch.messages.make_table``
from Apache Kafka's JSON message definitions (each message names its ``source``; copies in
``fixtures/kafka-messages``).  This module reads it once, on first import, into

    M(kind, validVersions, flexibleVersions, fields, api_key, module)   one message
    F(name, type, versions, nullable, tagged, tag, default, flexible, fields)   one field

Versions are Kafka's strings ("0+", "1-3", "2", "none"); ``fields`` of a struct or struct array are given
inline (Kafka's commonStructs resolved).  :mod:`kbatch.messages.decoder` reads bytes with this table.

A message Kafka changed in place after a release wrote it has its layouts in :data:`LAYOUTS`, newest first:
trunk's (``SCHEMAS``) and each earlier release line's (``Layout(name, schema, since, until)``).
"""

from __future__ import annotations

import json
from pathlib import Path

from kbatch.messages.spec import F, Layout, M, release_number


def _field(field: dict) -> F:
    return F(**{**field, "fields": tuple(map(_field, field.get("fields", ())))})


def _message(message: dict) -> M:
    keywords = {key: value for key, value in message.items() if key != "source"}
    return M(**{**keywords, "fields": tuple(map(_field, message["fields"]))})


_TABLE = json.loads((Path(__file__).with_name("schemas.json")).read_text(encoding="utf-8"))

# The Kafka commit the current definitions come from (a removed one names its own in its source).
KAFKA_COMMIT: str = _TABLE["kafka_commit"]
KAFKA_RELEASE: str = _TABLE["kafka_release"]

SCHEMAS: dict[str, M] = {name: _message(message) for name, message in _TABLE["schemas"].items()}


def _layouts(earlier: dict) -> dict[str, tuple[Layout, ...]]:
    """Each message of an earlier release line, with every layout it has had: the oldest line's until its
    ``until`` release, the next from there, ..., trunk's from the newest line's ``until`` on; newest first."""
    lines: dict[str, list[Layout]] = {}
    for line, entry in sorted(earlier.items(), key=lambda item: release_number(item[1]["until"])):
        for name, message in entry["schemas"].items():
            since = lines[name][-1].until if name in lines else None
            lines.setdefault(name, []).append(Layout(line, _message(message), since, entry["until"]))
    return {name: (Layout(f"{olds[-1].until}+", SCHEMAS[name], olds[-1].until, None), *reversed(olds))
            for name, olds in lines.items()}


# The messages Kafka changed in place (ShareSnapshotValue, ...) -> their layouts, newest first.
LAYOUTS: dict[str, tuple[Layout, ...]] = _layouts(_TABLE["earlier_layouts"])

del _TABLE

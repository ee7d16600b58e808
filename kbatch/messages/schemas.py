"""Kafka's message schemas, as kbatch needs them to read internal topics and control records.

The table is data: ``schemas.json`` beside this module, WRITTEN BY ``python -m kbatch.messages.make_table``
from Apache Kafka's JSON message definitions (each message names its ``source``; copies in
``fixtures/kafka-messages``).  This module reads it once, on first import, into

    M(kind, validVersions, flexibleVersions, fields, api_key, module)   one message
    F(name, type, versions, nullable, tagged, tag, default, flexible, fields)   one field

Versions are Kafka's strings ("0+", "1-3", "2", "none"); ``fields`` of a struct or struct array are given
inline (Kafka's commonStructs resolved).  :mod:`kbatch.messages.decoder` reads bytes with this table.
"""

from __future__ import annotations

import json
from pathlib import Path

from kbatch.messages.spec import F, M


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

del _TABLE

"""Write :mod:`kbatch.messages.schemas` from Apache Kafka's JSON message definitions (a development tool).

    python -m kbatch.messages.make_table fixtures/kafka-messages > kbatch/messages/schemas.py

The definitions are copies of Kafka's own files (``fixtures/kafka-messages/SOURCES.txt`` says where each
comes from); ``tests/test_messages.py`` checks that the table in the repository is what this writes.
Only facts the wire format needs are kept: names, types, versions, nullable and tagged versions, tags,
defaults.  Documentation ("about") and Java-only hints (mapKey, entityType, zeroCopy) are dropped.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

_INTEGER_TYPES = ("int8", "int16", "int32", "int64", "uint16", "uint32")


def strip_comments(text: str) -> str:
    """Kafka's JSON files carry // comments (outside strings); JSON does not."""
    out, in_string, index = [], False, 0
    while index < len(text):
        char = text[index]
        if in_string:
            out.append(char)
            if char == "\\":
                out.append(text[index + 1])
                index += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
            out.append(char)
        elif text.startswith("//", index):
            index = text.index("\n", index) if "\n" in text[index:] else len(text)
            continue
        else:
            out.append(char)
        index += 1
    return "".join(out)


def load(path: Path) -> dict:
    return json.loads(strip_comments(path.read_text()))


def _default(field_type: str, default):
    """A JSON default as the Python value it stands for."""
    if default == "null":
        return None
    if field_type in _INTEGER_TYPES:
        return int(default, 0) if isinstance(default, str) else int(default)
    if field_type == "float64":
        return float(default)
    if field_type == "bool":
        return default in (True, "true")
    return default


def _field(spec: dict, structs: dict[str, list], indent: str) -> str:
    field_type = spec["type"]
    # FieldSpec: a field without "versions" has its taggedVersions as versions
    args = [repr(spec["name"]), repr(field_type), repr(spec.get("versions") or spec["taggedVersions"])]
    for key, name in (("nullableVersions", "nullable"), ("taggedVersions", "tagged"),
                      ("flexibleVersions", "flexible")):
        if key in spec:
            args.append(f"{name}={spec[key]!r}")
    if "tag" in spec:
        args.append(f"tag={int(spec['tag'])}")
    if "default" in spec:
        args.append(f"default={_default(field_type, spec['default'])!r}")
    element = field_type[2:] if field_type.startswith("[]") else field_type
    subfields = spec.get("fields") or structs.get(element)
    if subfields:
        inner = indent + "    "
        args.append("fields=(" + "".join(f"\n{inner}{_field(sub, structs, inner)}," for sub in subfields)
                    + f"\n{indent})")
    return f"F({', '.join(args)})"


def entry(spec: dict, source: str) -> str:
    structs = {struct["name"]: struct["fields"] for struct in spec.get("commonStructs", [])}
    head = [repr(spec["type"]), repr(spec["validVersions"]), repr(spec.get("flexibleVersions", "none"))]
    if "apiKey" in spec:
        head.append(f"api_key={spec['apiKey']}")
    fields = "".join(f"\n        {_field(field, structs, '        ')}," for field in spec["fields"])
    return f"    # {source}\n    {spec['name']!r}: M({', '.join(head)}, fields=({fields}\n    )),\n"


HEADER = '''"""Kafka's message schemas, as kbatch needs them to read internal topics and control records.

WRITTEN BY ``python -m kbatch.messages.make_table`` from Apache Kafka's JSON message definitions (the file
above each entry; copies in ``fixtures/kafka-messages``).  Do not edit by hand.

    M(kind, validVersions, flexibleVersions, fields, api_key)   one message
    F(name, type, versions, nullable, tagged, tag, default, flexible, fields)   one field

Versions are Kafka's strings ("0+", "1-3", "2", "none"); ``fields`` of a struct or struct array are given
inline (Kafka's commonStructs resolved).  :mod:`kbatch.messages.decoder` reads bytes with this table.
"""

from .spec import F, M

SCHEMAS = {
'''


def table(directory: Path) -> str:
    sources = {Path(line).name: line for line in (directory / "SOURCES.txt").read_text().split()}
    parts = [HEADER]
    for name in sorted(sources):
        parts.append(entry(load(directory / name), sources[name]))
    parts.append("}\n")
    return "".join(parts)


if __name__ == "__main__":
    sys.stdout.write(table(Path(sys.argv[1] if len(sys.argv) > 1 else "fixtures/kafka-messages")))

"""The two shapes of the schema table: a message and its fields (facts from Kafka's JSON definitions)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache


@lru_cache(maxsize=None)
def version_range(text: str | None) -> tuple[int, int] | None:
    """Kafka's version strings: "3+" -> (3, MAX), "1-3" -> (1, 3), "2" -> (2, 2), "none" -> None."""
    if text is None or text == "none":
        return None
    if text.endswith("+"):
        return int(text[:-1]), 0x7FFF
    low, _, high = text.partition("-")
    return int(low), int(high or low)


def in_range(version: int, versions: tuple[int, int] | None) -> bool:
    return versions is not None and versions[0] <= version <= versions[1]


@dataclass(frozen=True)
class F:
    """One field of a message or struct (Kafka's FieldSpec: the wire facts only)."""

    name: str
    type: str                       # int8..int64, uint16, uint32, float64, bool, uuid, string, bytes,
    versions: str = "0+"            # records, []T, or a struct name
    nullable: str | None = None
    tagged: str | None = None
    tag: int | None = None
    default: object = ...           # ... : the type's own default (0, "", [], false, the zero UUID)
    flexible: str | None = None     # a field-level flexibleVersions override
    fields: tuple["F", ...] = ()

    @cached_property
    def json_name(self) -> str:
        """FieldSpec.camelCaseName: what Kafka's JSON converters call the field."""
        return self.name[:1].lower() + self.name[1:]


@dataclass(frozen=True)
class M:
    """One message: its kind (Kafka's MessageSpecType: "coordinator-key", "coordinator-value", "metadata",
    "data"), versions, fields, apiKey (a coordinator record's type, a metadata record's id) and the Kafka
    module whose definition it is ("group-coordinator", "metadata", "storage", ...)."""

    kind: str
    valid: str
    flexible: str
    fields: tuple[F, ...]
    api_key: int | None = None
    module: str = ""

    @property
    def valid_range(self) -> tuple[int, int]:
        versions = version_range(self.valid)
        if versions is None:   # (MessageSpec takes "none"; no message kbatch reads has it)
            raise ValueError(f"validVersions {self.valid!r}: the message has none")
        return versions


def release_number(text: str) -> tuple[int, int]:
    """A Kafka release's line: "4.0.2" -> (4, 0), "4.1" and "4.1+" -> (4, 1); ValueError when it names none."""
    major, minor = text.rstrip("+").split(".")[:2]
    return int(major), int(minor)


@dataclass(frozen=True)
class Layout:
    """One layout of a message Kafka changed in place: the releases that write it (from ``since``, before
    ``until``; None: no bound) and the schema they write with.  ``name`` says which: "4.0", "4.1+"."""

    name: str
    schema: M
    since: str | None
    until: str | None

    def covers(self, release: tuple[int, int]) -> bool:
        return ((self.since is None or release_number(self.since) <= release)
                and (self.until is None or release < release_number(self.until)))

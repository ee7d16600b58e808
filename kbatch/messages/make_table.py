"""Write the schema table from Apache Kafka's JSON message definitions (a development tool).

    python -m kbatch.messages.make_table KAFKA_SOURCE [--commit REV]

KAFKA_SOURCE is a Kafka checkout or a git directory (a bare mirror); REV (default: the checkout's files, or
``trunk`` in a bare mirror) is the commit read.  The command copies every definition kbatch reads (the
directories and files in :data:`DEFINITIONS`, plus the removed ones in :data:`HISTORY` at the commit that
last had them) into ``fixtures/kafka-messages``, lists each with its commit and release in ``SOURCES.txt``,
copies the definitions Kafka changed in place after a release wrote them (:data:`EARLIER_LAYOUTS`) as that
release line had them into a folder named after it (``fixtures/kafka-messages/4.0``, its own ``SOURCES.txt``),
and writes the table, ``kbatch/messages/schemas.json`` (the data :mod:`kbatch.messages.schemas` reads), from
those copies.  ``tests/test_messages_table.py`` checks that the table is what the copies say, and the copies
what the mirror holds at their commits.
Only facts the wire format needs are kept: names, types, versions, nullable and tagged versions, tags,
defaults.  Documentation ("about") and Java-only hints (mapKey, entityType, zeroCopy) are dropped.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "kafka-messages"
TABLE = ROOT / "kbatch" / "messages" / "schemas.json"

# What kbatch reads: every definition in these directories, and these single files.
DEFINITIONS = (
    "group-coordinator/src/main/resources/common/message/",        # __consumer_offsets
    "share-coordinator/src/main/resources/common/message/",        # __share_group_state
    "transaction-coordinator/src/main/resources/common/message/",  # __transaction_state
    "metadata/src/main/resources/common/metadata/",                # __cluster_metadata
    "storage/src/main/resources/message/RemoteLogSegmentMetadataRecord.json",   # __remote_log_metadata
    "storage/src/main/resources/message/RemoteLogSegmentMetadataUpdateRecord.json",
    "storage/src/main/resources/message/RemotePartitionDeleteMetadataRecord.json",
    "storage/src/main/resources/message/RemoteLogSegmentMetadataSnapshotRecord.json",
    "clients/src/main/resources/common/message/ConsumerProtocolAssignment.json",   # classic group members
    "clients/src/main/resources/common/message/ConsumerProtocolSubscription.json",
    "clients/src/main/resources/common/message/KRaftVersionRecord.json",           # KRaft control records
    "clients/src/main/resources/common/message/LeaderChangeMessage.json",
    "clients/src/main/resources/common/message/SnapshotFooterRecord.json",
    "clients/src/main/resources/common/message/SnapshotHeaderRecord.json",
    "clients/src/main/resources/common/message/VotersRecord.json",
    # the requests and responses whose record batches kbatch pcap reads out of captured traffic
    "clients/src/main/resources/common/message/RequestHeader.json",
    "clients/src/main/resources/common/message/ResponseHeader.json",
    "clients/src/main/resources/common/message/ProduceRequest.json",
    "clients/src/main/resources/common/message/ProduceResponse.json",
    "clients/src/main/resources/common/message/FetchResponse.json",
    "clients/src/main/resources/common/message/ShareFetchResponse.json",
    "clients/src/main/resources/common/message/ApiVersionsRequest.json",
    "clients/src/main/resources/common/message/ApiVersionsResponse.json",
    "clients/src/main/resources/common/message/MetadataResponse.json",   # topic ids to names
)

# Definitions Kafka removed whose records logs still hold: (path, the last commit that had it, its release).
HISTORY = (
    # record type 9; removed by KAFKA-17747 (#19796, 2977cb17d0).  Written by 4.0 (its branch has the same
    # layout as a "data" message of key version 9); this copy is the last trunk one, with the record type
    ("group-coordinator/src/main/resources/common/message/ShareGroupPartitionMetadataKey.json",
     "82ea9d0fcef966cd91b982a1d52038e01bf8c974", "4.1.0-SNAPSHOT (trunk; released in 4.0)"),
    ("group-coordinator/src/main/resources/common/message/ShareGroupPartitionMetadataValue.json",
     "82ea9d0fcef966cd91b982a1d52038e01bf8c974", "4.1.0-SNAPSHOT (trunk; released in 4.0)"),
    # record type 18; removed by KAFKA-17747 (#19802, 425f028556) before 4.1 branched: trunk 4.1.0-SNAPSHOT
    ("group-coordinator/src/main/resources/common/message/StreamsGroupPartitionMetadataKey.json",
     "df93571f503033c6b21034a1c815f7b21da96959", "4.1.0-SNAPSHOT (trunk, never released)"),
    ("group-coordinator/src/main/resources/common/message/StreamsGroupPartitionMetadataValue.json",
     "df93571f503033c6b21034a1c815f7b21da96959", "4.1.0-SNAPSHOT (trunk, never released)"),
)

# Definitions Kafka changed in place after a release wrote them -- other fields under the same version number
# -- so that the release's brokers write, and reload, another layout than trunk's.  The release line's copies
# are kept beside trunk's, to read the records that line wrote (kbatch.messages.topics reads a value with
# each layout its message has).  (release line, the commit read: the line's newest release, that release,
# the first release with trunk's layout, the definitions)
EARLIER_LAYOUTS = (
    # KIP-932's share groups, early access in 4.0 (its JSON: "subject to non-backwards-compatible changes"),
    # changed for 4.1 at version 0: KAFKA-17747 #19504 added MetadataHash; KAFKA-18170 #19432 added
    # CreateTimestamp/WriteTimestamp and #20016 made SnapshotEpoch an int32 (it was a uint16).  4.2 and trunk
    # only add tagged fields, which 4.1's layout reads.  (KAFKA-18827 #19339 also changed
    # ShareGroupStatePartitionMetadataValue, but no 4.0 broker writes one: only its serde knows the type.)
    # 4.0.0 to 4.0.2 have the same definitions (last changed on the line by #17681, December 2024).
    ("4.0", "8c9c25ea3eba173b57d96e7ee0e9d7ac71d15f1a", "4.0.2", "4.1", (
        "group-coordinator/src/main/resources/common/message/ShareGroupMetadataValue.json",
        "share-coordinator/src/main/resources/common/message/ShareSnapshotValue.json",
        "share-coordinator/src/main/resources/common/message/ShareUpdateValue.json",
    )),
)

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


def _field(spec: dict, structs: dict[str, list]) -> dict:
    """One field as the keywords of :class:`kbatch.messages.spec.F`; those it leaves out take F's defaults."""
    field_type = spec["type"]
    # FieldSpec: a field without "versions" has its taggedVersions as versions
    field = {"name": spec["name"], "type": field_type, "versions": spec.get("versions") or spec["taggedVersions"]}
    for key, name in (("nullableVersions", "nullable"), ("taggedVersions", "tagged"),
                      ("flexibleVersions", "flexible")):
        if key in spec:
            field[name] = spec[key]
    if "tag" in spec:
        field["tag"] = int(spec["tag"])
    # FieldSpec: a JSON null default is no default at all (the type's own: an empty struct, not null); only
    # the string "null" is null
    if spec.get("default") is not None:
        field["default"] = _default(field_type, spec["default"])
    element = field_type[2:] if field_type.startswith("[]") else field_type
    subfields = spec.get("fields") or structs.get(element)
    if subfields:
        field["fields"] = [_field(sub, structs) for sub in subfields]
    return field


def entry(spec: dict, source: str) -> dict:
    """One message of the table as the keywords of :class:`kbatch.messages.spec.M`, and where it comes from
    (``source``, its SOURCES.txt line: path, commit, release)."""
    path, commit, release = source.split(" ", 2)
    structs = {struct["name"]: struct["fields"] for struct in spec.get("commonStructs", [])}
    message = {"source": f"{path} @ {commit[:12]}, {release}", "kind": spec["type"],
               "valid": spec["validVersions"], "flexible": spec.get("flexibleVersions", "none")}
    if "apiKey" in spec:
        message["api_key"] = spec["apiKey"]
    message["module"] = path.split("/")[0]
    message["fields"] = [_field(field, structs) for field in spec["fields"]]
    return message


NOTE = ("WRITTEN BY python -m kbatch.messages.make_table from Apache Kafka's JSON message definitions (each "
        "message's source; copies in fixtures/kafka-messages). Do not edit by hand. kbatch/messages/schemas.py "
        "reads it.")


def sources(directory: Path) -> dict[str, str]:
    """SOURCES.txt: definition file name -> "path commit release"; the first line is the current commit."""
    lines = (directory / "SOURCES.txt").read_text().splitlines()
    return {Path(line.split(" ", 1)[0]).name: line for line in lines[1:] if line.strip()}


def current(directory: Path) -> tuple[str, str]:
    """(commit, release) of the current definitions, from SOURCES.txt's first line."""
    commit, release = (directory / "SOURCES.txt").read_text().splitlines()[0].split(" ", 1)
    return commit, release


def _messages(directory: Path) -> dict[str, dict]:
    """Every message of a folder's definitions by name, in the order of its definition file's name."""
    schemas = {}
    for name, source in sorted(sources(directory).items()):
        spec = load(directory / name)
        schemas[spec["name"]] = entry(spec, source)
    return schemas


def table(directory: Path = FIXTURES) -> str:
    """The table as JSON text: the current commit and release, every message by name, then the earlier
    layouts: for each release line of :data:`EARLIER_LAYOUTS`, the first release with trunk's layout and
    its own messages."""
    commit, release = current(directory)
    earlier = {line: {"until": until, "schemas": _messages(directory / line)}
               for line, _, _, until, _ in EARLIER_LAYOUTS}
    text = json.dumps({"note": NOTE, "kafka_commit": commit, "kafka_release": release,
                       "schemas": _messages(directory), "earlier_layouts": earlier}, indent=1, ensure_ascii=False)
    return text + "\n"


class Kafka:
    """A Kafka source: a checkout (files on disk) or, with a commit, any git directory read with git show."""

    def __init__(self, source: Path, commit: str | None):
        self.source = source
        bare = not (source / "build.gradle").exists()
        self.commit = self._git("rev-parse", f"{commit or ('trunk' if bare else 'HEAD')}^{{commit}}").strip()
        self.on_disk = commit is None and not bare

    def _git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", str(self.source), *args], check=True, capture_output=True,
                              text=True).stdout

    def read(self, path: str, commit: str | None = None) -> str:
        if self.on_disk and commit is None:
            return (self.source / path).read_text()
        return self._git("show", f"{commit or self.commit}:{path}")

    def listing(self, directory: str) -> list[str]:
        if self.on_disk:
            return sorted(f"{directory}{p.name}" for p in (self.source / directory).glob("*.json"))
        names = self._git("ls-tree", "--name-only", f"{self.commit}:{directory}").split()
        return sorted(f"{directory}{name}" for name in names if name.endswith(".json"))

    def release(self) -> str:
        """gradle.properties' version at the commit (Apache's numbering on trunk)."""
        for line in self.read("gradle.properties").splitlines():
            if line.startswith("version="):
                return line.split("=", 1)[1]
        return "unknown"


def regenerate(kafka: Kafka, directory: Path = FIXTURES, out: Path = TABLE) -> None:
    """Copy the definitions from ``kafka`` into ``directory``, list them in SOURCES.txt, write the table."""
    paths = [p for entry_ in DEFINITIONS for p in (kafka.listing(entry_) if entry_.endswith("/") else [entry_])]
    lines = [f"{kafka.commit} {kafka.release()}"]
    for old in directory.glob("*.json"):
        old.unlink()
    for path in paths:
        (directory / Path(path).name).write_text(kafka.read(path))
        lines.append(f"{path} {kafka.commit} {kafka.release()}")
    for path, commit, release in HISTORY:
        if Path(path).name not in {Path(p).name for p in paths}:
            (directory / Path(path).name).write_text(kafka.read(path, commit))
            lines.append(f"{path} {commit} {release}")
    (directory / "SOURCES.txt").write_text("\n".join(lines) + "\n")
    for line, commit, release, _, earlier in EARLIER_LAYOUTS:
        folder = directory / line
        folder.mkdir(exist_ok=True)
        for old in folder.glob("*.json"):
            old.unlink()
        for path in earlier:
            (folder / Path(path).name).write_text(kafka.read(path, commit))
        (folder / "SOURCES.txt").write_text("\n".join([f"{commit} {release}"]
                                                      + [f"{path} {commit} {release}" for path in earlier]) + "\n")
    out.write_text(table(directory))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m kbatch.messages.make_table", description=__doc__.split("\n")[0])
    parser.add_argument("kafka", type=Path, help="a Kafka checkout or git directory")
    parser.add_argument("--commit", help="the commit to read (default: the checkout, or trunk in a bare mirror)")
    args = parser.parse_args(argv)
    kafka = Kafka(args.kafka, args.commit)
    regenerate(kafka)
    print(f"kbatch/messages/schemas.json: Kafka {kafka.commit} ({kafka.release()})")


if __name__ == "__main__":
    main()

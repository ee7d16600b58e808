"""Every example in the commands' help and in README.md runs, as written, on stand-in files.

A file an example names (segment.log, a.json, /var/kafka-logs, ...) is made in a scratch directory from
a fixture; absolute paths are taken relative to it.  Each example exits with the status its stand-ins
call for (STATUSES), never a usage error (2), and says nothing on stderr that is an error.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kbatch.cli import cli, commands

from .helpers import FIXTURES, ROOT

RUNNABLE = ("kbatch ", "xxd ", "echo ")
SPARK = "kbatch scan"   # needs a JVM and half a minute: tests/test_scan.py runs it


def _help_examples() -> list[str]:
    texts = [cli.epilog or ""] + [command.epilog or "" for command in commands().values()]
    return [line.strip() for text in texts for line in text.splitlines() if line.strip().startswith(RUNNABLE)]


def _readme_examples() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip().startswith(RUNNABLE)]


EXAMPLES = sorted({line for line in _help_examples() + _readme_examples() if SPARK not in line})


def _segment() -> bytes:
    # offsets 900-906 and a damaged range at byte 2351, as the examples expect
    return (FIXTURES / "v2-txn-commit.log").read_bytes() + (FIXTURES / "damaged-garbage-between.log").read_bytes()


# The exit status of each example on its stand-ins (README's "Exit status"), by the first pattern that
# matches it, and why.  The stand-in segment (segment.log, 00000000000000000000.log, capture.bin, a.log, ...)
# is v2-txn-commit.log and then damaged-garbage-between.log, so a command that reads it whole finds damage.
STATUSES: list[tuple[str, int, str]] = [
    (r"^kbatch --version", 0, "nothing is read"),
    (r"^kbatch (encode-from-json|snapshot) ", 0, "a dump of a clean fixture; snapshots written just before"),
    (r"^kbatch txn ", 0, "the transaction fixture's partitions: outcomes, not damage"),
    (r"^kbatch (offsets|producers|replicas) |^kbatch retention (?!.*/var/kafka-logs)", 0,
     "the transaction fixture's clean partitions (offsets: its records are of no record type the group "
     "coordinator knows, a warning; replicas: copies that agree; --where reads nothing)"),
    (r"^kbatch hexdump-annotate ", 0, "each shows a batch of v2-txn-commit.log, the stand-in's clean first part"),
    (r"^kbatch dump -r .*__\w+-\d+", 0, "the internal topics' clean fixtures"),
    (r"--offset-range 100:200 ", 0, "the walk stops at the stand-in's first batch (offset 900), before the damage"),
    (r"^kbatch stats /var/kafka-logs/orders-0", 0, "the transaction fixture's partition: its segments are clean"),
    (r"^kbatch grep (-L|-c) ", 0, "-L names each segment (none holds order-42); the empty pattern selects each record"),
    (r"^kbatch grep --isolation read_committed -c '' ", 0, "the empty pattern selects each record"),
    (r"^kbatch grep ", 1, "grep's 1: the stand-ins hold no record it looks for"),
    (r"^kbatch diff captured/", 1, "a batch extracted from the stand-in capture against the log directory's segment"),
    (r"^kbatch diff ", 0, "both sides are the stand-in segment, byte for byte: the same, damaged alike"),
    (r"^kbatch map --replicas ", 1, "three copies of the transaction fixture's partition: they agree, and each "
     "lacks the .txnindex entry of its abort (the map cross-checks each copy as a partition)"),
    (r"^kbatch pcap --against ", 1, "the log directory's orders-0 holds other batches at the offsets the stand-in "
     "capture's Fetch response carries: hop fetch"),
    (r"^kbatch pcap |^kbatch verify-crc --deep captured/", 0,
     "the stand-in capture: a Produce request, its response and a Fetch response, every batch intact"),
    (r"^kbatch map /var/lib/kafka/", 1, "the transaction fixture's partition lacks the .txnindex entry of its abort"),
    (r"^kbatch verify-crc --index-only /var/kafka-logs/orders-0", 1, "the same partition, cross-checked"),
    (r"\b(segment|00000000000000000000|capture|damaged|corrupt|a)\.(log|bin)"
     r"|(testdata|fixtures)/|/var/kafka-logs", 1,
     "the stand-in segment's damaged range; corrupt.log's flipped bit; the log directory's damaged segments"),
]


def _status(example: str) -> int:
    found = next((status for pattern, status, _ in STATUSES if re.search(pattern, example)), None)
    assert found is not None, f"say in STATUSES what exit status this example has on its stand-ins: {example}"
    return found


def _capture() -> bytes:
    """The stand-in packet capture: a Produce request, its response and a Fetch response (tests/test_pcap.py)."""
    from .test_pcap import clean_capture

    return clean_capture().pcap()


def _stand_in(token: str, scratch: Path) -> None:
    """Make the file or directory an example names, from the fixture that fits it best."""
    path = scratch / token.lstrip("/")
    if re.fullmatch(r"data/broker-\d+", token.lstrip("/")) and not path.exists():
        # a broker's log directory: a copy of the transaction fixture's partition, as orders-0
        shutil.copytree(FIXTURES / "internal" / "txn" / "payments-0", path / "orders-0")
        return
    partition = re.fullmatch(r"(.*/)?([\w.]+)-(\d+|\*)", token)
    if partition and not path.exists():
        # a partition directory (TOPIC-N, or a glob TOPIC-*): the transaction fixture's data partition, or its
        # __transaction_state
        topic = "__transaction_state" if partition[2] == "__transaction_state" else "payments"
        target = path.with_name(f"{partition[2]}-0") if partition[3] == "*" else path
        if not target.exists():
            shutil.copytree(FIXTURES / "internal" / "txn" / f"{topic}-0", target)
        return
    if re.search(r"\.pcap(ng)?$", token) and not path.exists():
        path.write_bytes(_capture())
        return
    if re.match(r"captured/", token) and not (scratch / "captured").exists():
        # what `kbatch pcap --extract captured` writes of the stand-in capture
        (scratch / "stand-in.pcap").write_bytes(_capture())
        subprocess.run([sys.executable, "-m", "kbatch", "pcap", "--extract", str(scratch / "captured"),
                        str(scratch / "stand-in.pcap")], check=True, capture_output=True)
        return
    if path.exists() or not re.search(r"\.(log|json|bin)$|/$|kafka-logs", token):
        return
    tail = "/".join(Path(token).parts[-2:])
    match = next((p for p in FIXTURES.rglob(Path(token).name) if p.as_posix().endswith(tail)), None)
    path.parent.mkdir(parents=True, exist_ok=True)
    if match is not None and match.is_file():
        shutil.copy(match, path)
    elif "kafka-logs" in token:
        shutil.copytree(FIXTURES / "logdir", scratch / "var" / "kafka-logs", dirs_exist_ok=True)
    elif token.endswith("spec.json"):
        path.write_text(re.search(r"```json\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1))
    elif token.endswith(".json"):
        from kbatch.cli import main  # noqa: F401 - the dump below is kbatch's own
        document = subprocess.run([sys.executable, "-m", "kbatch", "dump", "--format", "json", "--records",
                                   str(FIXTURES / "v2-none.log")], capture_output=True, text=True).stdout
        entry = json.loads(document)["files"][0]["entries"][0]
        path.write_text(json.dumps(entry if "batch" in token else json.loads(document)))
    elif "corrupt" in token:
        shutil.copy(FIXTURES / "damaged-bitflip-record.log", path)
    else:
        path.write_bytes(_segment())


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda example: example[:70])
def test_every_example_runs(example, tmp_path):
    command = re.sub(r"(?<=[\s'])/(var|data)/", r"\1/", example)   # absolute paths, inside the scratch dir
    for token in shlex.split(command.split("#")[0], comments=False):
        _stand_in(token.strip("'"), tmp_path)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "NO_COLOR": "1"}
    if "kbatch snapshot check" in command:   # a check needs the snapshots written before it
        files = command.split("#")[0].split("kbatch snapshot check", 1)[1]
        subprocess.run(["bash", "-c", f"kbatch snapshot write {files}"], cwd=tmp_path, env=env, check=True,
                       capture_output=True)
    result = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == _status(example), (example, result.stderr)
    assert not re.search(r"Usage:|Error:|internal error|Traceback|No such", result.stderr), (example, result.stderr)


def test_each_status_is_the_one_of_some_example():
    """No line of STATUSES is dead: each is the first to match an example."""
    first = {next(pattern for pattern, _, _ in STATUSES if re.search(pattern, example)) for example in EXAMPLES}
    assert [pattern for pattern, _, _ in STATUSES if pattern not in first] == []

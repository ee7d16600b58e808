"""Every example in the commands' help and in README.md runs, as written, on stand-in files.

A file an example names (segment.log, a.json, /var/kafka-logs, ...) is made in a scratch directory from
a fixture; absolute paths are taken relative to it.  An example may find damage (exit 1) but must not be
a usage error (exit 2), and must say nothing on stderr that is an error.
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


def _stand_in(token: str, scratch: Path) -> None:
    """Make the file or directory an example names, from the fixture that fits it best."""
    path = scratch / token.lstrip("/")
    partition = re.fullmatch(r"(.*/)?([\w.]+)-(\d+|\*)", token)
    if partition and not path.exists():
        # a partition directory (TOPIC-N, or a glob TOPIC-*): the transaction fixture's data partition, or its
        # __transaction_state
        topic = "__transaction_state" if partition[2] == "__transaction_state" else "payments"
        target = path.with_name(f"{partition[2]}-0") if partition[3] == "*" else path
        if not target.exists():
            shutil.copytree(FIXTURES / "internal" / "txn" / f"{topic}-0", target)
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
    assert result.returncode in (0, 1), (example, result.stderr)
    assert not re.search(r"Usage:|Error:|internal error|Traceback|No such", result.stderr), (example, result.stderr)

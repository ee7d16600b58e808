"""kbatch in its users' tests: the pytest plugin (kafka_snapshot, field-level asserts) run in a test project
of its own, and kbatch.testing's helpers."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kbatch.render.snapshot import EXTENSION, describe, snapshot_bytes
from kbatch.testing import KafkaBytesError, assert_valid

from .helpers import FIXTURES, ROOT, fixture_id, fixture_paths

pytest_plugins = ["pytester"]

# The test project: an encoder's batch (kafka-python's builder, as a client library's test would make it),
# snapshotted; each case changes one thing when changes.json asks.
ENCODER_TESTS = '''
import json
import pathlib

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

HERE = pathlib.Path(__file__).parent


def encode(change=None):
    """Five records, an idempotent producer's batch, given offset 1000 as a broker would."""
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                        producer_id=1001 if change == "producer" else 1000, producer_epoch=0,
                                        base_sequence=0, batch_size=1 << 20)
    for delta in range(5):
        changed = delta == 3
        builder.append(delta, timestamp=1700000000000 + delta + (changed and change == "timestamp"),
                       key=b"k-%d" % delta, value=b"v-4" if changed and change == "value" else b"v-%d" % delta,
                       headers=[("h", b"abd" if changed and change == "header" else b"abc")])
    data = bytearray(builder.build())
    data[0:8] = (1000).to_bytes(8, "big")   # baseOffset: outside the CRC, set by the broker
    return bytes(data)


@pytest.mark.parametrize("case", ["value", "timestamp", "header", "producer"])
def test_encoded(case, kafka_snapshot):
    changes = json.loads((HERE / "changes.json").read_text())
    data = encode(case if case in changes else None)
    (HERE / f"encoded-{case}.bin").write_bytes(data)
    assert data == kafka_snapshot
'''

COMPARISONS = '''
from test_encoder import encode


def test_two_record_sets():
    assert encode() == encode("value")


def test_bytes_that_are_no_kafka_bytes():
    assert b"\\x00\\x00\\x00\\x00 some bytes" == b"\\x00\\x00\\x00\\x00 some bytez"
'''

CASES = ("value", "timestamp", "header", "producer")


def _plugin_args() -> list[str]:
    """The plugin by its module's name, which is also its entry point's: the same plugin whether or not an
    installed kbatch registers it (this checkout's, through PYTHONPATH)."""
    return ["-p", "kbatch.pytest_plugin"]


@pytest.fixture
def project(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))   # this checkout's kbatch, as if installed
    pytester.makepyfile(test_encoder=ENCODER_TESTS, test_comparisons=COMPARISONS)
    (pytester.path / "changes.json").write_text("{}")

    def run(*args: str):
        return pytester.runpytest_subprocess(*_plugin_args(), "-p", "no:cacheprovider",
                                             "-W", "ignore::DeprecationWarning", *args)

    return run


def _sections(output: str) -> dict[str, str]:
    """Each failed test's report, by test name."""
    parts = output.split("\n_")
    return {part.split(" ", 2)[1]: part for part in parts[1:] if part.startswith("_") and " " in part}


def test_a_snapshot_names_fields_holds_the_bytes_and_says_which_field_changed(project, pytester):
    written = project("--snapshot-update", "test_encoder.py")
    written.assert_outcomes(passed=4)
    directory = pytester.path / "__snapshots__" / "test_encoder"
    for case in CASES:
        text = (directory / f"test_encoded[{case}]{EXTENSION}").read_text()
        assert text.startswith("kbatch snapshot 1\n156 bytes: 1 batch, 5 records; clean")
        for line in ("batch at byte 0: offsets 1000–1004", "  producer_id: 1000", "  record offset 1003 at byte",
                     '    value: "v-3"', '    header "h": "abc"', "    timestamp: 1700000000003 ("):
            assert line in text, line
        assert snapshot_bytes(text) == (pytester.path / f"encoded-{case}.bin").read_bytes()

    (pytester.path / "changes.json").write_text(json.dumps(dict.fromkeys(CASES, True)))
    failed = project()
    failed.assert_outcomes(failed=6)
    sections = _sections(failed.stdout.str())
    expected = {
        "value": "record offset 1003 (offsetDelta 3) at byte 118: value 'v-3' → 'v-4'",
        "timestamp": "record offset 1003 (offsetDelta 3) at byte 118: timestamp (timestampDelta) "
                     "1700000000003 → 1700000000004",
        "header": "record offset 1003 (offsetDelta 3) at byte 118: headers[0] ['h'='abc'] → ['h'='abd']",
        "producer": "producer_id (producerId): 1000 → 1001",
    }
    for case, line in expected.items():
        report = sections[f"test_encoded[{case}]"]
        assert line in report, report
        assert "as a consequence: crc " in report and "(it covers the fields that changed)" in report
        assert "A = the snapshot, B = now" in report
        assert "--snapshot-update accepts" in report
        # the fixture shown in the traceback: a summary and where it differs, not the stored text's hex dump
        assert (f"kafka_snapshot = <kafka_snapshot test_encoded[{case}]: 156 bytes: 1 batch, 5 records; clean; "
                f"differs from byte 17 (156 → 156 bytes)>") in report, report
        assert "bytes (hex)" not in report and "00000000  " not in report
    # and the bytes that differ, named by the field they hold (hexdump-annotate's names)
    fields = {"value": "batch[0].records[3].value", "timestamp": "batch[0].records[3].timestamp_delta",
              "header": "batch[0].records[3].headers[0].value", "producer": "batch[0].producer_id"}
    for case, field in fields.items():
        differing = next(line for line in sections[f"test_encoded[{case}]"].splitlines() if "differing bytes" in line)
        assert "bytes 17–20 batch[0].crc; " in differing and field in differing, differing
    # two record sets compared by a plain assert: kbatch diff's fields
    two = sections["test_two_record_sets"]
    assert "Kafka bytes differ (A = left, B = right)" in two and "value 'v-3' → 'v-4'" in two
    # bytes that are no Kafka bytes: pytest's own message, untouched
    plain = sections["test_bytes_that_are_no_kafka_bytes"]
    assert "assert b'\\x00\\x00\\x00\\x00 some bytes' == b'\\x00\\x00\\x00\\x00 some bytez'" in plain
    assert "Kafka" not in plain and "kbatch" not in plain

    project("--snapshot-update", "test_encoder.py").assert_outcomes(passed=4)
    project("test_encoder.py").assert_outcomes(passed=4)
    text = (directory / f"test_encoded[producer]{EXTENSION}").read_text()
    assert "  producer_id: 1001" in text
    assert snapshot_bytes(text) == (pytester.path / "encoded-producer.bin").read_bytes()


def test_the_plugin_loads_nothing_until_used():
    """Every pytest run of a project with kbatch installed imports the plugin: it must cost nothing."""
    code = ("import sys; import kbatch.pytest_plugin; "
            "print(sorted(name for name in sys.modules if name.startswith('kbatch')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert result.stdout.strip() == "['kbatch', 'kbatch.pytest_plugin']"


def test_pyproject_registers_the_plugin():
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["pytest11"]
    assert declared == {"kbatch.pytest_plugin": "kbatch.pytest_plugin"}


@pytest.mark.parametrize("named", [False, True], ids=["entry point", "entry point and -p"])
def test_the_entry_point_alone_turns_the_plugin_on(pytester, monkeypatch, named):
    """Installed, kbatch's entry point (as pyproject.toml declares it) is all a project needs; naming the plugin
    with -p as well is no error."""
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["pytest11"]
    site = pytester.path / "site"
    info = site / "kbatch_installed-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: kbatch-installed\nVersion: 0\n")
    (info / "entry_points.txt").write_text(
        "[pytest11]\n" + "".join(f"{name} = {module}\n" for name, module in declared.items()))
    monkeypatch.setenv("PYTHONPATH", f"{ROOT}:{site}")
    pytester.makepyfile(test_encoder=ENCODER_TESTS, test_comparisons=COMPARISONS)
    (pytester.path / "changes.json").write_text("{}")
    args = ["-p", "kbatch.pytest_plugin"] if named else []
    result = pytester.runpytest_subprocess(*args, "-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning",
                                           "--snapshot-update", "test_encoder.py", "--trace-config")
    result.assert_outcomes(passed=4)
    assert any("kbatch/pytest_plugin.py" in line and "kbatch.pytest_plugin" in line for line in result.outlines)


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_a_snapshot_gives_back_its_bytes(path):
    data = path.read_bytes()
    assert snapshot_bytes(describe(data)) == data


def test_a_snapshot_whose_hex_was_edited_is_refused():
    text = describe((FIXTURES / "v2-none.log").read_bytes())
    with pytest.raises(ValueError, match="hex line 2"):
        snapshot_bytes(text.replace("\n00000020  ", "\n00000020  zz", 1))
    with pytest.raises(ValueError, match="not a kbatch snapshot"):
        snapshot_bytes("hello")


def test_assert_valid_raises_with_verify_crcs_findings(kbatch):
    data = (FIXTURES / "damaged-crc-field.log").read_bytes()
    with pytest.raises(KafkaBytesError) as raised:
        assert_valid(data)
    table = kbatch("verify-crc", "--deep", "fixtures/damaged-crc-field.log", expect=1).out
    lines = str(raised.value).splitlines()[1:]
    assert lines and all(f"fixtures/damaged-crc-field.log: {line}" in table for line in lines)
    assert raised.value.findings and lines[0].startswith("✗ error crc-mismatch at pos")


def test_assert_valid_passes_clean_bytes_and_returns_the_notes():
    assert assert_valid((FIXTURES / "v2-headers.log").read_bytes()) == []
    zero_tail = assert_valid((FIXTURES / "damaged-zero-tail.log").read_bytes())
    assert [finding.code for finding in zero_tail] == ["zero-tail"]


def test_assert_valid_deep_checks_what_only_the_records_show():
    """A CRC that covers a lie (lastOffsetDelta below the last record's): verify-crc passes it, --deep does not.
    A maxTimestamp that is not the records' largest is told, a warning: no Kafka component refuses it."""
    from kbatch.format.checksums import crc32c

    whole = (FIXTURES / "v2-none.log").read_bytes()
    size = 12 + int.from_bytes(whole[8:12], "big")

    def lying(at: int, value: bytes) -> bytes:
        batch = bytearray(whole[:size])
        batch[at:at + len(value)] = value
        batch[17:21] = crc32c(bytes(batch[21:])).to_bytes(4, "big")
        return bytes(batch)

    short = lying(23, (0).to_bytes(4, "big"))
    assert assert_valid(short, deep=False) == []
    with pytest.raises(KafkaBytesError, match="last-offset-delta-mismatch"):
        assert_valid(short)
    late = lying(35, (1).to_bytes(8, "big"))
    assert assert_valid(late, deep=False) == []
    assert [(finding.code, finding.severity.value) for finding in assert_valid(late)] == [
        ("max-timestamp-mismatch", "warning")]


def test_describe_refuses_what_is_not_bytes():
    from kbatch.testing import describe as describe_data

    with pytest.raises(TypeError, match="Kafka bytes expected"):
        describe_data("text")
    assert describe_data(bytearray((FIXTURES / "v2-none.log").read_bytes())) == \
        describe((FIXTURES / "v2-none.log").read_bytes())


def test_the_readmes_ci_example_runs_and_fails_as_it_shows(project, pytester):
    """README's "In your CI": its pytest example writes its snapshot, and the failure it shows is the one a
    changed timestampDelta gives, line for line."""
    import re

    section = (ROOT / "README.md").read_text().split("## In your CI", 1)[1].split("\n## ", 1)[0]
    shown = re.search(r"```\n(Kafka bytes differ.*?)```", section, re.S).group(1).splitlines()
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    tests = pytester.path / "tests"
    tests.mkdir()
    (tests / "test_encoder.py").write_text(code)
    project("--snapshot-update", "tests").assert_outcomes(passed=1)
    assert (tests / "__snapshots__" / "test_encoder" /
            f"test_the_encoder_writes_what_it_wrote_before{EXTENSION}").exists()
    (tests / "test_encoder.py").write_text(code.replace("timestamp=1700000000000 + delta,",
                                                        "timestamp=1700000000000 + delta + (delta == 3),"))
    failed = project("tests")
    failed.assert_outcomes(failed=1)
    said = [line[1:].strip() for line in failed.stdout.lines if line.startswith("E ")]
    assert [line.strip() for line in shown] == said[1:1 + len(shown)], said


def test_without_syrupy_the_fixture_says_what_is_missing(project):
    result = project("-p", "no:syrupy", "test_encoder.py")
    result.assert_outcomes(errors=4)
    result.stdout.fnmatch_lines(["*kafka_snapshot keeps its snapshots with syrupy, which is not installed*"])


def _batch(value: bytes = b"v-3", codec: int = 0) -> bytes:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(magic=2, compression_type=codec, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for delta in range(5):
        builder.append(delta, timestamp=1700000000000 + delta, key=None, value=value if delta == 3 else b"v" * 40,
                       headers=[])
    return bytes(builder.build())


def test_explain_a_longer_value_changes_the_lengths_as_a_consequence():
    from kbatch.testing import explain

    lines = explain(_batch(), _batch(value=b"v-33"))
    assert "  record offset 3 (offsetDelta 3) at byte 202: value 'v-3' → 'v-33'" in lines, lines
    (consequence,) = [line for line in lines if "as a consequence" in line]
    assert "crc " in consequence and "size 259 → 260, batch_length (batchLength) 247 → 248 (a field's length changed)" \
        in consequence
    assert lines[2] == ("the first and the last differing byte (positions and fields in A): byte 11 batch[0].batch_length; "
                        "byte 209 batch[0].records[3].value")


def test_explain_a_compressed_batch_names_its_records_by_offset():
    from kbatch.testing import explain

    lines = explain(_batch(codec=1), _batch(value=b"v-4", codec=1))
    assert any(line.startswith("  record offset 3 (offsetDelta 3) (in the gzip records from byte 61): value")
               for line in lines), lines


def test_explain_names_a_field_diff_does_not_compare():
    """lastOffsetDelta is not one of diff's fields; the differing bytes still name it."""
    from kbatch.format.checksums import crc32c
    from kbatch.testing import explain

    old = _batch()
    new = bytearray(old)
    new[26] += 1
    new[17:21] = crc32c(bytes(new[21:])).to_bytes(4, "big")
    lines = explain(old, bytes(new))
    assert "bytes 17–20 batch[0].crc; byte 26 batch[0].last_offset_delta" in lines[2]
    assert explain(old, old) == []


def _batches(count: int, last_value: bytes = b"v-3") -> bytes:
    """``count`` copies of _batch (five records each), offsets running on (baseOffset is outside the CRC)."""
    copies = []
    for n in range(count):
        one = bytearray(_batch(last_value if n == count - 1 else b"v-3"))
        one[0:8] = (5 * n).to_bytes(8, "big")
        copies.append(bytes(one))
    return b"".join(copies)


@pytest.mark.parametrize("count, explained", [(1, True), (2_000, True), (2_001, False), (50_000, False)])
def test_an_assert_is_explained_up_to_a_number_of_records(count, explained):
    """A failing ``==`` is explained field by field while both sides hold at most EXPLAINED_RECORDS records
    (their batches' headers counted first); past that pytest's own message stands, whatever the bytes."""
    from kbatch.pytest_plugin import EXPLAINED_RECORDS, pytest_assertrepr_compare

    assert EXPLAINED_RECORDS == 10_000   # 2,000 batches of five records
    left, right = _batches(count), bytearray(_batches(count))
    right[-1] ^= 1   # the last record's value, the CRC left as it was: B is damaged ...
    assert pytest_assertrepr_compare(None, "==", left, bytes(right)) is None   # ... and a damaged side keeps pytest's
    right = _batches(count, last_value=b"v-4")
    lines = pytest_assertrepr_compare(None, "==", left, right)
    assert (lines is not None) == explained
    if explained:
        assert any("value 'v-3' → 'v-4'" in line for line in lines), lines


def _batch_holding(value: bytes) -> bytes:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    builder.append(0, timestamp=1_700_000_000_000, key=b"k", value=value, headers=[])
    return bytes(builder.build())


@pytest.mark.parametrize("runner", [None, "GITHUB_ACTIONS", "TF_BUILD", "TEAMCITY_VERSION"])
def test_in_a_runners_job_an_explanation_holds_no_runners_command(monkeypatch, runner):
    """A value ``##[error]...`` shown in pytest's report of a failed assert, or of a changed snapshot, would
    be read by the CI runner as its own command; where one reads the log it is written inert."""
    from kbatch.output.inert import RUNNER_VARIABLES
    from kbatch.pytest_plugin import pytest_assertrepr_compare
    from kbatch.render.snapshot import describe
    from kbatch.testing.extension import KafkaSnapshotExtension

    for name in RUNNER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    if runner:
        monkeypatch.setenv(runner, "true")
    old, new = _batch_holding(b"##[error]old"), _batch_holding(b"##vso[task.setvariable variable=x]new")
    shown = "\n".join(pytest_assertrepr_compare(None, "==", old, new))
    snapshot = "\n".join(KafkaSnapshotExtension().diff_lines(describe(new), describe(old)))
    for text in (shown, snapshot):
        assert ("##[error]old" in text and "##vso[task" in text) == (runner is None), text
        assert ("##\\u005berror]old" in text and "##vso\\u005btask" in text) == (runner is not None), text

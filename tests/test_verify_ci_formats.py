"""verify-crc --format junit and --format github: what CI tools outside Python read."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree

import pytest

from kbatch.render.ci import escape_data, escape_property, workflow_command

from .helpers import FIXTURES, REPRESENTATIVE, ROOT, expected_status, fixture_id, fixture_paths

# Jenkins' JUnit schema (xunit-plugin, junit-10.xsd), which CI tools' JUnit readers follow: the attributes each
# element may carry, those it must, and the elements a testcase may hold.
SCHEMA_ATTRIBUTES = {
    "testsuites": ({"name", "time", "tests", "failures", "errors"}, set()),
    "testsuite": ({"name", "tests", "failures", "errors", "group", "time", "skipped", "timestamp", "hostname", "id",
                   "package", "file", "log", "url"}, {"name", "tests", "failures", "errors"}),
    "testcase": ({"name", "time", "classname", "group"}, {"name"}),
    "failure": ({"type", "message"}, set()),
    "error": ({"type", "message"}, set()),
    "skipped": ({"type", "message"}, set()),
    "system-out": (set(), set()),
    "system-err": (set(), set()),
}
TESTCASE_CHILDREN = {"skipped", "error", "failure", "rerunFailure", "rerunError", "flakyFailure", "flakyError",
                     "system-out", "system-err"}


def _check_junit_schema(text: str) -> ElementTree.Element:
    """Parse the report and hold it to junit-10.xsd: the root, the nesting, required and allowed attributes,
    and counts that agree with the testcases."""
    root = ElementTree.fromstring(text.encode("utf-8"))
    assert root.tag == "testsuites"
    for element in root.iter():
        allowed, required = SCHEMA_ATTRIBUTES[element.tag]
        assert required <= set(element.attrib) <= allowed, (element.tag, element.attrib)
    assert all(child.tag == "testsuite" for child in root)
    for suite in root:
        assert all(child.tag in ("testsuite", "properties", "testcase", "system-out", "system-err") for child in suite)
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(case.find("failure") is not None for case in cases)
        assert int(suite.get("errors")) == sum(case.find("error") is not None for case in cases)
        for case in cases:
            assert all(child.tag in TESTCASE_CHILDREN for child in case)
            assert not list(case.find("failure") or [])   # text only (mixed content without elements)
    return root


def test_junit_has_a_testcase_per_file_and_a_failure_per_damaged_one(kbatch):
    result = kbatch("verify-crc", "--deep", "--format", "junit", "fixtures/")
    root = _check_junit_schema(result.out)
    (suite,) = root
    summaries = {line["file"]: line for line in map(json.loads, kbatch("verify-crc", "--deep", "--format", "jsonl",
                                                                       "fixtures/").out.splitlines())
                 if line["type"] == "summary"}
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert set(cases) == set(summaries) and len(cases) > 40
    for path, summary in summaries.items():
        failure = cases[path].find("failure")
        assert (failure is not None) == summary["damaged"], path
        if failure is not None:
            codes = [code for code in summary["findings"]]
            assert all(f" {code} at pos " in failure.text for code in codes), failure.text
    assert result.code == 1
    assert kbatch("verify-crc", "--deep", "--format", "junit", "fixtures/").out == result.out   # no clock in it


def test_junit_reports_an_unreadable_file_as_an_error_and_any_path_as_xml(kbatch, tmp_path):
    odd = tmp_path / "a&b <c> \"d\" \x01.log"
    odd.write_bytes((FIXTURES / "damaged-crc-field.log").read_bytes())
    missing = tmp_path / "missing.log"
    result = kbatch("verify-crc", "--format", "junit", str(odd), str(missing))
    root = _check_junit_schema(result.out)
    names = [case.get("name") for case in root.iter("testcase")]
    assert names == [str(odd).replace("\x01", "\\x01"), str(missing)]   # as the terminal shows it
    assert root.find("testsuite/testcase/failure").get("type") == "crc-mismatch"
    assert root.find("testsuite/testcase/error").get("type") == "unreadable"
    assert result.code == 2


def test_junit_of_a_clean_file_keeps_its_notes_out_of_failures(kbatch):
    root = _check_junit_schema(kbatch("verify-crc", "--format", "junit", "fixtures/damaged-zero-tail.log",
                                      expect=0).out)
    case = root.find("testsuite/testcase")
    assert case.find("failure") is None and "zero-tail at pos 2842" in case.find("system-out").text


GITHUB_LINE = re.compile(r"::(error|warning|notice)( [a-z]+=[^,:\r\n]*(,[a-z]+=[^,:\r\n]*)*)?::[^\r\n]*")


def _properties(line: str) -> dict[str, str]:
    shown = line.split("::")[1].partition(" ")[2]
    unescape = {"%3A": ":", "%2C": ",", "%0D": "\r", "%0A": "\n", "%25": "%"}
    return {name: re.sub("%(3A|2C|0D|0A|25)", lambda m: unescape[m.group()], value)
            for name, value in (item.split("=", 1) for item in shown.split(",") if item)}


def test_github_lines_are_workflow_commands(kbatch):
    result = kbatch("verify-crc", "--deep", "--format", "github", "fixtures/")
    lines = result.out.splitlines()
    assert lines and all(GITHUB_LINE.fullmatch(line) for line in lines), \
        [line for line in lines if not GITHUB_LINE.fullmatch(line)]
    findings = [line for line in map(json.loads, kbatch("verify-crc", "--deep", "--format", "jsonl",
                                                        "fixtures/").out.splitlines()) if line["type"] == "finding"]
    commands = lines[:-1]
    assert len(commands) == len(findings)
    severity = {"error": "error", "warning": "warning", "info": "notice"}
    for line, finding in zip(commands, findings):
        assert line.startswith(f"::{severity[finding['severity']]} ")
        assert _properties(line) == {"file": finding["file"], "title": f"kbatch {finding['code']}"}
        assert f"::{finding['code']} at pos {finding['pos']}" in line
    assert lines[-1].startswith("::notice title=kbatch verify-crc::") and "damaged" in lines[-1]
    assert result.code == 1


def test_github_escapes_as_the_workflow_command_rules_say(kbatch, tmp_path):
    assert escape_data("100% a\r\nb: c, d") == "100%25 a%0D%0Ab: c, d"
    assert escape_property("100% a\r\nb: c, d") == "100%25 a%0D%0Ab%3A c%2C d"
    assert workflow_command("error", "x\ny", file="a,b:c.log", title="t") == "::error file=a%2Cb%3Ac.log,title=t::x%0Ay"
    odd = tmp_path / "a,b:c%d.log"
    odd.write_bytes((FIXTURES / "damaged-crc-field.log").read_bytes())
    line = kbatch("verify-crc", "--format", "github", str(odd), expect=1).out.splitlines()[0]
    assert GITHUB_LINE.fullmatch(line) and _properties(line)["file"] == str(odd)


@pytest.mark.parametrize("path", REPRESENTATIVE, ids=fixture_id)
def test_ci_formats_snapshot(path, kbatch, text_snapshot):
    rel = path.relative_to(ROOT).as_posix()
    shown = []
    for output in ("junit", "github"):
        args = ["verify-crc", "--deep", "--format", output, rel]
        result = kbatch(*args, expect=expected_status(path, offsets=True))
        shown.append(f"$ kbatch {' '.join(args)}\n{result.out}(exit {result.code})\n")
    assert "\n".join(shown) == text_snapshot


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_ci_formats_say_what_the_jsonl_says(path, kbatch):
    """On every input: JUnit's one test case fails exactly when the file is damaged, its failure typed by the
    first error's code; GitHub gets one annotation per finding, an error for damage, and a closing notice."""
    rel = path.relative_to(ROOT).as_posix()
    expect = expected_status(path, offsets=True)
    lines = [json.loads(line) for line in kbatch("verify-crc", "--deep", "--format", "jsonl", rel,
                                                 expect=expect).out.splitlines()]
    findings, summary = lines[:-1], lines[-1]
    errors = [finding for finding in findings if finding["severity"] == "error"]
    suites = ElementTree.fromstring(kbatch("verify-crc", "--deep", "--format", "junit", rel, expect=expect).out)
    assert (suites.get("tests"), suites.get("failures"), suites.get("errors")) == ("1", str(int(bool(expect))), "0")
    (case,) = suites.iter("testcase")
    assert case.get("name") == rel
    failure = case.find("failure")
    assert (failure is not None) == bool(expect)
    if errors and failure is not None:
        assert failure.get("type") == errors[0]["code"]
    github = kbatch("verify-crc", "--deep", "--format", "github", rel, expect=expect).out.splitlines()
    annotations = [line for line in github if line.startswith(("::error file=", "::warning file=", "::notice file="))]
    assert [re.search(r"title=kbatch ([a-z0-9-]+)::", line)[1] for line in annotations] == \
        [finding["code"] for finding in findings]
    assert sum(line.startswith("::error ") for line in annotations) == len(errors)
    many = "batch" if summary["batch_count"] == 1 else "batches"
    assert github[-1].startswith(f"::notice title=kbatch verify-crc::1 file, {summary['batch_count']} {many}, ")

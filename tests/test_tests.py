"""The tests themselves: every test that runs the command line checks the exit status it expects.

The exit status is half of what kbatch answers (README's "Exit status": 0 clean, 1 damage found, 2 usage
or I/O error), so a test that runs the CLI and reads only its output would pass on a run that found
damage and said clean.  This reads the tests' source with ``ast``: a test runs the CLI when it calls the
``kbatch`` fixture, ``run_kbatch``, ``run_kbatch_pure``, a click runner's ``invoke``, ``main`` of
kbatch.cli or its click group (imported under any name, or called as ``kbatch.cli.main``), kbatch.__main__'s
``run``, ``runpy`` on kbatch, a process whose command names kbatch, or a helper or fixture of its file that
does one of these; it checks the status when it refers to the result's ``.code``, ``.returncode`` or
``.exit_code`` (``subprocess.run(..., check=True)`` checks for 0), when it passes the status it expects as
``expect=`` (a number, or a parameter of its own every caller must give) to a runner or helper that
asserts it, or when every helper or fixture it runs the CLI through asserts the status itself.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .helpers import ROOT

EXIT_STATUS = {"code", "returncode", "exit_code"}
RUNNERS = {"kbatch", "run_kbatch", "run_kbatch_pure"}   # the fixture (tests/conftest.py) and tests/helpers.py
EXPECT = "expect"   # the keyword the runners (and helpers built on them) take the status to assert by
# What runs the command line in the caller's process: kbatch.cli's main and its click group (and the group's
# own main), the program's entry point.
ENTRY_POINTS = {"kbatch.cli.main", "kbatch.cli.cli", "kbatch.cli.cli.main", "kbatch.__main__.run"}
PROCESSES = {"run", "Popen", "check_output", "check_call", "call"}   # subprocess's
# a command that runs kbatch: ``python -m kbatch``, the console script, a shell line, a program importing it
_NAMES_KBATCH = re.compile(r"^kbatch$|(^|[\s;|&(`$])kbatch\s|kbatch\.cli\b")


@dataclass
class Function:
    """What one function of a test file does with the CLI."""

    node: ast.FunctionDef
    runs: bool = False          # calls the CLI itself
    refers: bool = False        # refers to an exit status (anywhere)
    asserts: bool = False       # asserts one (in an assert statement, or with check=True)
    calls: set[str] = field(default_factory=set)      # the names it calls
    params: set[str] = field(default_factory=set)     # its parameters (a test's fixtures)

    @property
    def is_test(self) -> bool:
        return self.node.name.startswith("test")


def _assignments(scope: ast.AST) -> dict[str, list[ast.AST]]:
    found: dict[str, list[ast.AST]] = {}
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, []).append(node.value)
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and isinstance(node.target, ast.Name) and node.value:
            found.setdefault(node.target.id, []).append(node.value)
    return found


def _names_kbatch(expression: ast.AST, names: dict[str, list[ast.AST]], seen: set[str]) -> bool:
    """Whether a process's command line (its names followed to what they were assigned) runs kbatch."""
    for node in ast.walk(expression):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _NAMES_KBATCH.search(node.value):
            return True
        if isinstance(node, ast.Name) and node.id not in seen:
            seen.add(node.id)
            if any(_names_kbatch(value, names, seen) for value in names.get(node.id, ())):
                return True
    return False


def _called_name(call: ast.Call) -> str | None:
    return call.func.id if isinstance(call.func, ast.Name) else \
        call.func.attr if isinstance(call.func, ast.Attribute) else None


def _is_process(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr in PROCESSES \
        and isinstance(call.func.value, ast.Name) and call.func.value.id == "subprocess"


def _imported(tree: ast.AST) -> dict[str, str]:
    """The dotted name each name bound by an import of a file stands for (imports inside functions too)."""
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:   # ``import kbatch.cli`` binds kbatch
                    bound[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def _dotted(expression: ast.AST) -> str | None:
    if isinstance(expression, ast.Name):
        return expression.id
    if isinstance(expression, ast.Attribute):
        base = _dotted(expression.value)
        return base and f"{base}.{expression.attr}"
    return None


def _runs_in_process(call: ast.Call, imported: dict[str, str]) -> bool:
    """Whether a call runs kbatch's command line in this process: an entry point, a click runner's invoke,
    or runpy on the package."""
    dotted = _dotted(call.func)
    if dotted is None:
        return isinstance(call.func, ast.Attribute) and call.func.attr == "invoke"   # CliRunner().invoke
    first, _, rest = dotted.partition(".")
    resolved = ".".join(filter(None, (imported.get(first, first), rest)))
    if resolved in ENTRY_POINTS or dotted.endswith(".invoke") or dotted == "invoke":
        return True
    return resolved in ("runpy.run_module", "runpy.run_path") and bool(call.args) \
        and isinstance(call.args[0], ast.Constant) and str(call.args[0].value).split(".")[0] == "kbatch"


def _a_status(value: ast.AST, node: ast.FunctionDef) -> bool:
    """Whether ``expect=value`` names an exit status: a number, either of two (``1 if damaged else 0``), what a
    function of the test's input says (``expected_status(path)``), or a parameter of ``node`` with no default
    (so that every caller gives one)."""
    if isinstance(value, ast.Constant):
        return type(value.value) is int
    if isinstance(value, ast.IfExp):
        return _a_status(value.body, node) and _a_status(value.orelse, node)
    if isinstance(value, ast.Call):
        return True
    if isinstance(value, ast.Name):
        arguments = node.args
        positional = arguments.posonlyargs + arguments.args
        required = positional[:len(positional) - len(arguments.defaults)] + [
            arg for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults) if default is None]
        return value.id in {arg.arg for arg in required}
    return False


def _expects(call: ast.Call, node: ast.FunctionDef) -> bool:
    return any(keyword.arg == EXPECT and _a_status(keyword.value, node) for keyword in call.keywords)


def _function(node: ast.FunctionDef, module_names: dict[str, list[ast.AST]], imported: dict[str, str],
              local: set[str]) -> Function:
    names = {**module_names, **_assignments(node)}
    function = Function(node, params={arg.arg for arg in node.args.args + node.args.kwonlyargs})
    asserted = {id(inner) for statement in ast.walk(node) if isinstance(statement, ast.Assert)
                for inner in ast.walk(statement)}
    for inner in ast.walk(node):
        if isinstance(inner, ast.Attribute) and inner.attr in EXIT_STATUS:
            function.refers = True
            function.asserts |= id(inner) in asserted
        if not isinstance(inner, ast.Call):
            continue
        called = _called_name(inner)
        function.calls.add(called or "")
        if (called in RUNNERS or called in local) and _expects(inner, node):
            function.refers = function.asserts = True
        if isinstance(inner.func, ast.Name) and called in RUNNERS or called == "run_kbatch_pure" \
                or _runs_in_process(inner, imported):
            function.runs = True
        elif _is_process(inner) and inner.args and _names_kbatch(inner.args[0], names, set()):
            function.runs = True
            if any(keyword.arg == "check" and isinstance(keyword.value, ast.Constant) and keyword.value.value
                   for keyword in inner.keywords):
                function.refers = function.asserts = True
    return function


def _is_fixture(node: ast.FunctionDef) -> bool:
    return any("fixture" in ast.unparse(decorator) for decorator in node.decorator_list)


@dataclass
class CliTest:
    file: str
    name: str
    line: int
    checked: bool


def cli_tests(path: Path) -> list[CliTest]:
    """The tests of one file that run the CLI, and whether each checks the exit status."""
    tree = ast.parse(path.read_text(), str(path))
    module_names = {name: values for name, values in _assignments(tree).items()}
    imported = _imported(tree)
    nodes = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    local = {node.name for node in nodes if not node.name.startswith("test")}
    functions = [_function(node, module_names, imported, local) for node in nodes]
    helpers = {function.node.name: function for function in functions if not function.is_test}
    fixtures = {name for name, helper in helpers.items() if _is_fixture(helper.node)}
    # A helper runs the CLI when it calls one that does; it vouches for the status when each one it runs the
    # CLI through asserts it.
    runs = {name for name, helper in helpers.items() if helper.runs}
    vouches = {name for name in runs if helpers[name].asserts}
    while True:
        more = {name for name, helper in helpers.items() if name not in runs and helper.calls & runs}
        if not more:
            break
        runs |= more
        vouches |= {name for name in more if helpers[name].asserts
                    or all(callee in vouches for callee in helpers[name].calls & runs)}
    found = []
    for function in functions:
        if not function.is_test:
            continue
        through = (function.calls | (function.params & fixtures)) & runs
        if not function.runs and not through:
            continue
        checked = function.refers or (not function.runs and through <= vouches)
        found.append(CliTest(path.name, function.node.name, function.node.lineno, checked))
    return found


def every_cli_test() -> list[CliTest]:
    return [test for path in sorted((ROOT / "tests").glob("test_*.py")) for test in cli_tests(path)]


# The tests that ran the CLI without checking its exit status when this test was written: each is to be given
# the status its input calls for (and taken off this list); no test may join it.
NOT_YET_CHECKED = {
    "test_cli.py::test_a_closed_pipe_ends_quietly_with_the_sigpipe_status",
    "test_cli.py::test_json_timestamps_have_iso_8601_utc_twins",
    "test_cli.py::test_the_list_of_commands_gives_each_its_line_as_its_own_help_does",
    "test_control.py::test_dumplog_prints_leader_change_at_its_own_version",
    "test_diff.py::test_first_differing_byte_and_byte_identity",
    "test_diff.py::test_a_record_changed_inside_a_span_batched_differently_is_found",
    "test_diff.py::test_a_value_that_differs_past_what_a_cell_shows_is_shown_where_it_differs",
    "test_diff.py::test_binary_values_that_differ_late_are_shown_where_they_differ",
    "test_diff.py::test_the_what_column_never_breaks_a_word",
    "test_dump.py::test_dump_jsonl_snapshot",
    "test_dump.py::test_dump_json_snapshot",
    "test_dump.py::test_json_lines_and_json_document_agree",
    "test_dump.py::test_headers_show_keys_and_values",
    "test_dump.py::test_control_records_show_commit_and_coordinator_epoch",
    "test_dump.py::test_decode_modes_in_json",
    "test_dump.py::test_long_values_are_cut_unless_full",
    "test_dump.py::test_limit_and_offset_range",
    "test_dump.py::test_hex_input_from_stdin_and_from_a_file",
    "test_dump.py::test_no_colour_off_a_terminal_and_with_no_color",
    "test_dump.py::test_the_input_file_is_never_modified",
    "test_dumplog.py::test_lines_have_kafkas_fields_in_kafkas_order",
    "test_dumplog.py::test_segment_named_by_its_base_offset_gets_the_starting_offset_line",
    "test_dumplog.py::test_delete_horizon_prints_as_an_optional_long",
    "test_dumplog.py::test_non_consecutive_offsets_are_reported_as_kafka_does",
    "test_dumplog.py::test_an_unknown_control_type_prints_as_kafkas_unknown_constant",
    "test_dumplog.py::test_decode_stands_in_for_kafkas_decoder_classes",
    "test_encode.py::test_every_field_of_a_dump_is_type_checked_with_its_json_path",
    "test_engine.py::test_each_command_walks_with_its_run_through_the_one_engine",
    "test_grep.py::test_a_match_is_the_record_dump_writes_with_its_batch",
    "test_grep.py::test_field_reads_an_internal_topics_decoded_records",
    "test_grep.py::test_count_files_and_max_count",
    "test_grep.py::test_context_shows_the_records_around_a_match",
    "test_grep.py::test_colour_marks_the_match",
    "test_grep.py::test_offset_range_and_time_select_as_dump_does",
    "test_grep.py::test_read_committed_leaves_out_aborted_and_open_transactions_and_says_what_is_unknown",
    "test_grep.py::test_dump_read_committed_lists_what_grep_finds",
    "test_grep.py::test_read_committed_grep_is_read_committed_dump_filtered",
    "test_grep.py::test_the_txn_fixture_read_committed",
    "test_grep.py::test_grep_lines_hold_to_the_json_schema",
    "test_hostile_paths.py::test_a_closed_pipe_stays_silent",
    "test_hostile_text.py::test_on_a_terminal_nothing_but_kbatchs_own_styles_are_written",
    "test_internal.py::test_damage_is_found_at_the_record_it_was_done_to",
    "test_internal.py::test_dump_internal_jsonl_snapshot",
    "test_internal.py::test_hexdump_shows_bytes_and_uuids_as_kafkas_json_prints_them",
    "test_internal.py::test_hexdump_of_a_value_cut_short_keeps_the_rest_raw",
    "test_internal.py::test_the_table_shows_an_offset_commit_key_as_group_topic_partition",
    "test_kernels_load.py::test_the_version_says_the_kernels_are_compiled",
    "test_kernels_load.py::test_a_copy_of_a_compiled_kernel_and_its_source_is_still_compiled",
    "test_kernels_load.py::test_a_kernel_not_compiled_at_install_says_why",
    "test_map.py::test_map_model_snapshot",
    "test_map.py::test_model_holds_what_the_readers_say",
    "test_map.py::test_a_blocks_command_opens_it",
    "test_map.py::test_header_time_range_starts_at_the_first_record",
    "test_map.py::test_partition_in_a_browser",
    "test_map.py::test_damaged_segments_in_a_browser",
    "test_map.py::test_colour_by_kind_in_a_browser",
    "test_markers.py::test_a_marker_with_crc_zero_is_reported_with_what_it_would_say",
    "test_messages_table.py::test_remote_log_metadata_dumplog_is_what_kafka_4_4_printed",
    "test_outlier.py::test_a_base_offset_far_out_is_named_with_the_sequence_it_breaks",
    "test_outlier.py::test_offsets_where_a_damaged_range_lies_are_not_called_absent",
    "test_outlier.py::test_the_gap_an_outlier_opens_is_its_consequence_not_a_finding",
    "test_outlier.py::test_an_outlier_that_hides_more_than_its_own_offsets_leaves_a_gap_that_says_so",
    "test_outlier.py::test_a_gap_is_told_once_with_its_batch_whoever_reads_the_batch_after_it",
    "test_outputs.py::test_an_output_takes_the_inputs_mode_less_the_umask",
    "test_partition_crosscheck.py::test_the_clean_partition_verifies_with_no_error",
    "test_partition_crosscheck.py::test_a_log_directory_checks_each_partition",
    "test_partition_crosscheck.py::test_a_partition_whose_every_segment_is_named_is_cross_checked_as_its_directory",
    "test_partition_crosscheck.py::test_each_injected_inconsistency_is_found_in_the_right_file",
    "test_partition_crosscheck.py::test_findings_give_the_position_in_both_files",
    "test_partition_crosscheck.py::test_plain_verify_crc_does_not_cross_check",
    "test_partition_crosscheck.py::test_txnindex_entry_without_abort_marker",
    "test_partition_crosscheck.py::test_snapshot_without_a_producer_of_the_log",
    "test_partition_crosscheck.py::test_epoch_of_the_log_missing_from_the_checkpoint",
    "test_partition_crosscheck.py::test_segments_that_overlap",
    "test_partition_crosscheck.py::test_segments_with_a_gap_between",
    "test_partition_crosscheck.py::test_rolled_time_index_without_its_largest_timestamp",
    "test_partition_crosscheck.py::test_an_epoch_entry_must_lie_between_the_epochs_before_it_and_its_first_batch",
    "test_partition_crosscheck.py::test_a_healthy_log_directorys_checkpoints_verify",
    "test_partition_crosscheck.py::test_epochs_below_the_log_start_offset",
    "test_partition_crosscheck.py::test_an_aborted_transaction_whose_batches_the_cleaner_removed_verifies_clean",
    "test_partition_crosscheck.py::test_an_aborted_transaction_the_cleaner_kept_the_last_batch_header_of_verifies_clean",
    "test_partition_crosscheck.py::test_a_cleaned_abort_entry_must_say_where_the_batches_were",
    "test_partition_crosscheck.py::test_an_entry_with_no_marker_is_still_an_error_after_cleaning",
    "test_partition_crosscheck.py::test_a_deleted_partition_reloaded_has_an_empty_epoch_checkpoint",
    "test_partition_files.py::test_dump_partition_file_jsonl_snapshot",
    "test_partition_files.py::test_dumplog_of_an_offset_index_with_no_entry_prints_what_kafka_prints",
    "test_partition_seek.py::test_batches_outside_the_range_are_not_decoded",
    "test_parts.py::test_verify_crc_jobs_prints_the_same",
    "test_parts.py::test_dump_jsonl_lists_every_fixture_the_same_in_parts",
    "test_parts.py::test_a_child_lists_up_to_its_spill_limit_and_the_parent_the_rest",
    "test_parts.py::test_the_children_hold_at_most_a_quarter_of_the_free_temporary_space",
    "test_parts.py::test_every_child_hands_its_part_over",
    "test_paths.py::test_diff_shows_both_names_as_they_are",
    "test_pytest_plugin.py::test_assert_valid_raises_with_verify_crcs_findings",
    "test_reader.py::test_a_wrapper_bomb_is_written_record_by_record_as_one_json_would_write_it",
    "test_real_kafka.py::test_a_healthy_log_directory_has_no_error_and_no_warning",
    "test_real_kafka.py::test_dumplog_agrees_with_kafka_dump_log_on_every_file",
    "test_real_kafka.py::test_txn_agrees_with_kafka_transactions",
    "test_real_kafka.py::test_the_cleaner_removed_the_aborted_records_and_kept_the_marker",
    "test_real_kafka.py::test_a_deleted_topic_reloaded_by_a_restarted_broker_verifies_clean",
    "test_real_kafka.py::test_dumplog_agrees_with_kafka_40s_dump_log",
    "test_record_stream.py::test_a_records_table_is_printed_in_slices_with_every_record_and_one_header",
    "test_record_stream.py::test_json_records_are_written_one_by_one_as_json_dumps_would",
    "test_record_stream.py::test_dumplog_reports_a_repeated_pair_once_as_kafka_keeps_it",
    "test_record_stream.py::test_dumplog_holds_a_bounded_number_of_non_consecutive_pairs_and_says_so",
    "test_recordwalk.py::test_every_command_prints_the_same_with_the_pure_decoder",
    "test_recordwalk.py::test_jsonl_records_from_the_columns_are_what_record_dict_gives",
    "test_recordwalk.py::test_the_listing_is_the_same_with_json_dumps_and_with_the_pure_build",
    "test_repair.py::test_new_files_get_the_umask_mode",
    "test_scan.py::test_batches_table_is_what_dump_says",
    "test_scan.py::test_findings_table_is_what_verify_crc_says",
    "test_scan.py::test_records_table_carries_what_dump_decodes",
    "test_scan.py::test_a_last_marker_whose_crc_fails_leaves_its_transaction_of_unknown_outcome",
    "test_seed_examples.py::test_readme_stats_output_is_real",
    "test_snapshot_cli.py::test_the_text_does_not_depend_on_the_terminal",
    "test_snapshot_cli.py::test_the_bytes_come_back_without_kbatch_as_the_readme_says",
    "test_stats.py::test_a_clean_file_has_no_byte_left_unexplained",
    "test_stats.py::test_stats_json_snapshot",
    "test_stats.py::test_stats_builds_no_record_objects_for_data_batches",
    "test_stats.py::test_a_directory_means_its_log_files",
    "test_stats.py::test_damaged_ranges_are_counted_where_they_lie",
    "test_terminal.py::test_records_headings_keep_every_header_field",
    "test_terminal.py::test_counts_are_in_the_singular_when_one",
    "test_terminal.py::test_the_table_fits_the_terminal_with_every_position_and_offset_whole",
    "test_terminal.py::test_wider_terminals_show_more",
    "test_terminal.py::test_a_null_reads_differently_from_the_string_null",
    "test_terminal.py::test_a_long_table_has_one_header_every_row_and_widens_where_it_must",
    "test_terminal.py::test_a_forced_kind_shows_bytes_that_are_no_text_once_escaped_as_hex",
    "test_terminal.py::test_dump_records_never_splits_an_iso_time",
    "test_terminal.py::test_dump_records_wraps_an_internal_value_between_its_fields",
    "test_terminal.py::test_the_files_beside_a_segment_never_split_an_iso_time",
    "test_terminal.py::test_dump_records_gives_the_value_the_room_of_headers_no_record_has",
    "test_txn.py::test_without_the_coordinator_nothing_is_called_hanging",
    "test_txn.py::test_the_jsonl_is_pinned",
    "test_txn.py::test_a_transactional_offset_commit_is_a_transaction_of_the_offsets_topic",
    "test_txn.py::test_the_same_partition_in_two_log_dirs_is_two_partitions",
    "test_verify_ci_formats.py::test_junit_of_a_clean_file_keeps_its_notes_out_of_failures",
    "test_verify_ci_formats.py::test_github_escapes_as_the_workflow_command_rules_say",
    "test_verify_crc.py::test_every_finding_names_its_batchs_offsets",
    "test_whatif.py::test_v2_as_stored_is_the_stored_size_for_uncompressed_v2",
    "test_whatif.py::test_v0_v1_drop_headers_and_control_batches",
    "test_fastlist.py::test_a_plain_segment_is_listed_whole_by_the_run",
    "test_fastlist.py::test_every_kind_of_clean_v2_batch_is_listed_by_the_run",
    "test_fastlist.py::test_batches_across_windows_are_all_listed",
    "test_fastlist.py::test_an_entry_with_something_to_say_is_listed_by_the_full_reader",
    "test_fastlist.py::test_a_tail_that_is_no_batch_is_the_full_readers",
    "test_fastlist.py::test_a_length_that_lies_is_recovered_by_the_full_reader",
    "test_fastlist.py::test_listings_the_run_does_not_make_are_the_full_readers",
    "test_fastlist.py::test_the_same_as_the_full_reader_on_random_batches_and_header_changes",
    "test_fastlist.py::test_the_same_as_the_full_reader_on_every_fixture",
    "test_fastlist.py::test_the_fixtures_clean_batches_are_listed_by_the_run",
}


def test_every_cli_test_checks_the_exit_status():
    tests = every_cli_test()
    unchecked = [test for test in tests if not test.checked and f"{test.file}::{test.name}" not in NOT_YET_CHECKED]
    assert not unchecked, "these tests run kbatch and never check its exit status:\n" + "\n".join(
        f"{test.file}:{test.line} {test.name}" for test in unchecked)
    now_checked = NOT_YET_CHECKED - {f"{test.file}::{test.name}" for test in tests if not test.checked}
    assert not now_checked, f"these check the exit status now: take them off NOT_YET_CHECKED: {sorted(now_checked)}"


# Each way the suite runs the command line, unchecked and checked, and code that runs no kbatch: a test file of
# one test, ``test_it``, and whether the checker finds that it runs the CLI (None: it does not) and checks it.
SAMPLES = {
    # the kbatch fixture, and helpers of the file over it
    "fixture, output only": ("def test_it(kbatch):\n    assert 'x' in kbatch('dump', 'x.log').out\n", False),
    "fixture, its .code": ("def test_it(kbatch):\n    assert kbatch('verify-crc', 'x.log').code == 1\n", True),
    "fixture, expect=": ("def test_it(kbatch):\n    assert kbatch('dump', 'x.log', expect=0).out\n", True),
    "fixture, expect= either": ("def test_it(kbatch, bad):\n    kbatch('dump', 'x.log', expect=1 if bad else 0)\n", True),
    "fixture, expect= of the input": ("def test_it(kbatch, path):\n    kbatch('dump', path, expect=expected_status(path))\n",
                                      True),
    "fixture, expect=True": ("def test_it(kbatch):\n    kbatch('dump', 'x.log', expect=True)\n", False),
    "fixture, expect=None": ("def test_it(kbatch):\n    kbatch('dump', 'x.log', expect=None)\n", False),
    "a helper": ("def _run(kbatch):\n    return kbatch('dump', 'x.log')\n\n"
                 "def test_it(kbatch):\n    assert 'x' in _run(kbatch).out\n", False),
    "a helper that asserts": ("def _run(kbatch):\n    result = kbatch('dump', 'x.log')\n    assert result.code == 0\n"
                              "    return result\n\ndef test_it(kbatch):\n    assert 'x' in _run(kbatch).out\n", True),
    "a helper passing expect on": ("def _run(kbatch, expect):\n    return kbatch('dump', 'x.log', expect=expect)\n\n"
                                   "def test_it(kbatch):\n    assert 'x' in _run(kbatch, 0).out\n", True),
    "a helper passing an optional expect on": (
        "def _run(kbatch, expect=None):\n    return kbatch('dump', 'x.log', expect=expect)\n\n"
        "def test_it(kbatch):\n    assert 'x' in _run(kbatch).out\n", False),
    "a helper given expect=": ("def _run(kbatch, expect=None):\n    return kbatch('dump', 'x.log', expect=expect)\n\n"
                               "def test_it(kbatch):\n    assert 'x' in _run(kbatch, expect=1).out\n", True),
    "run_kbatch_pure": ("def test_it():\n    assert run_kbatch_pure(['dump', 'x.log']).out\n", False),
    # kbatch.cli's main, in this process
    "kbatch.cli.main": ("import kbatch.cli\n\ndef test_it():\n    try:\n        kbatch.cli.main(['dump', 'x.log'])\n"
                        "    except SystemExit:\n        pass\n", False),
    "kbatch.cli.main, its status": ("import kbatch.cli\nimport pytest\n\ndef test_it():\n"
                                    "    with pytest.raises(SystemExit) as done:\n        kbatch.cli.main(['dump', 'x.log'])\n"
                                    "    assert done.value.code == 0\n", True),
    "main imported in the test": ("def test_it():\n    from kbatch.cli import main\n    main(['dump', 'x.log'])\n", False),
    "main imported under a name": ("from kbatch.cli import main as kbatch_main\n\ndef test_it():\n"
                                   "    kbatch_main(['dump'])\n", False),
    "the click group's main": ("from kbatch.cli import cli\n\ndef test_it():\n"
                               "    cli.main(['dump'], standalone_mode=False)\n", False),
    "the module's main": ("from kbatch import cli\n\ndef test_it():\n    cli.main(['dump'])\n", False),
    "the program's entry point": ("def test_it():\n    from kbatch.__main__ import run\n    run()\n", False),
    "runpy": ("import runpy\n\ndef test_it():\n    runpy.run_module('kbatch', run_name='__main__')\n", False),
    # click's runner
    "CliRunner().invoke": ("from click.testing import CliRunner\nfrom kbatch.cli import cli\n\ndef test_it():\n"
                           "    assert CliRunner().invoke(cli, ['dump', 'x.log']).output\n", False),
    "CliRunner().invoke, its exit_code": ("from click.testing import CliRunner\nfrom kbatch.cli import cli\n\n"
                                          "def test_it():\n    assert CliRunner().invoke(cli, ['dump']).exit_code == 2\n", True),
    # a process
    "python -m kbatch": ("import subprocess, sys\n\ndef test_it():\n"
                         "    assert subprocess.run([sys.executable, '-m', 'kbatch', 'dump']).stdout\n", False),
    "python -m kbatch, check=True": ("import subprocess, sys\n\ndef test_it():\n"
                                     "    subprocess.run([sys.executable, '-m', 'kbatch', 'dump'], check=True)\n", True),
    "a shell line": ("import subprocess\n\ndef test_it():\n"
                     "    subprocess.run(['bash', '-c', 'kbatch dump x.log | head'])\n", False),
    "a shell line, its returncode": ("import subprocess\n\ndef test_it():\n"
                                     "    assert subprocess.run(['bash', '-c', 'kbatch dump x.log']).returncode == 0\n", True),
    "a program importing kbatch.cli": ("import subprocess, sys\nPROGRAM = 'from kbatch.cli import main; main()'\n\n"
                                       "def test_it():\n    subprocess.run([sys.executable, '-c', PROGRAM])\n", False),
    # no kbatch
    "nothing": ("def test_it():\n    assert 1\n", None),
    "another program": ("import subprocess\n\ndef test_it():\n    subprocess.run(['ls'])\n", None),
    "another main": ("def main(args):\n    return args\n\ndef test_it():\n    assert main([1])\n", None),
    "another invoke-less call": ("from kbatch.cli import commands\n\ndef test_it():\n    assert commands()\n", None),
}


@pytest.mark.parametrize("name", SAMPLES)
def test_the_checker_tells_a_cli_test_that_checks_the_status_from_one_that_does_not(name, tmp_path):
    source, checked = SAMPLES[name]
    path = tmp_path / "test_sample.py"
    path.write_text(source)
    assert [(test.name, test.checked) for test in cli_tests(path)] == ([] if checked is None else [("test_it", checked)])

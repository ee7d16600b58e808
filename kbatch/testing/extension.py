"""The syrupy extension behind the ``kafka_snapshot`` fixture: Kafka bytes kept as a golden text.

One file per snapshot (``__snapshots__/<test module>/<test>.kbatch-snapshot``), the text of
kbatch.render.snapshot: reviewable in a pull request, and holding the bytes exactly.  Two snapshots match
when their bytes do (a newer kbatch that words the text otherwise does not fail anyone's tests); where
they do not, the report says which fields of which records changed, as kbatch diff does.
"""

from __future__ import annotations

from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from kbatch.output.inert import inert_where_a_runner_reads
from kbatch.render.snapshot import EXTENSION, as_bytes, describe, explain, snapshot_bytes


class KafkaSnapshotExtension(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = EXTENSION.lstrip(".")

    def serialize(self, data, **_options) -> str:
        return describe(as_bytes(data))

    def matches(self, *, serialized_data, snapshot_data) -> bool:
        try:
            return snapshot_bytes(serialized_data) == snapshot_bytes(snapshot_data)
        except ValueError:   # a snapshot edited by hand, or of another kind
            return False

    def diff_lines(self, serialized_data, snapshot_data):
        # (what a record holds is shown: in a CI runner's job, never as the runner's command)
        yield from inert_where_a_runner_reads(self._diff_lines(serialized_data, snapshot_data))

    def _diff_lines(self, serialized_data, snapshot_data):
        if not snapshot_data:   # none yet: syrupy says so
            yield "(pytest --snapshot-update writes it)"
            return
        try:
            old = snapshot_bytes(snapshot_data)
        except ValueError as error:
            yield f"the stored snapshot holds no Kafka bytes kbatch can read back ({error}); "
            yield "pytest --snapshot-update writes it anew"
            return
        yield from explain(old, snapshot_bytes(serialized_data), "the snapshot", "now")
        yield "(pytest --snapshot-update accepts the new bytes)"


class KafkaSnapshotAssertion(SnapshotAssertion):
    """The ``kafka_snapshot`` fixture: syrupy's assertion, shown in a failure's traceback by a summary of the
    stored snapshot and where the bytes first differ -- not the whole text with its hex dump, which syrupy
    would print (the fields that changed are explained under the assert)."""

    def __repr__(self) -> str:
        result = self.executions.get(self.num_executions - 1) if self.num_executions else None
        if result is None or not isinstance(result.recalled_data, str):
            return "<kafka_snapshot: none stored yet>"
        stored, asserted = result.recalled_data, result.asserted_data
        lines = stored.splitlines()
        summary = lines[1] if len(lines) > 1 else "not a kbatch snapshot"
        where = ""
        try:
            old = snapshot_bytes(stored)
            new = snapshot_bytes(asserted) if isinstance(asserted, str) else None   # None: nothing asserted yet
        except ValueError:
            new = None
        if new is not None:
            first = next((at for at, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
            where = "; the same bytes" if old == new else f"; differs from byte {first} ({len(old)} → {len(new)} bytes)"
        return f"<kafka_snapshot {result.snapshot_name}: {summary}{where}>"

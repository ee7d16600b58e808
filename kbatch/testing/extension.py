"""The syrupy extension behind the ``kafka_snapshot`` fixture: Kafka bytes kept as a golden text.

One file per snapshot (``__snapshots__/<test module>/<test>.kbatch-snapshot``), the text of
kbatch.render.snapshot: reviewable in a pull request, and holding the bytes exactly.  Two snapshots match
when their bytes do (a newer kbatch that words the text otherwise does not fail anyone's tests); where
they do not, the report says which fields of which records changed, as kbatch diff does.
"""

from __future__ import annotations

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

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

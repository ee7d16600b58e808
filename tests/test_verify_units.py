"""kbatch.ops.verify's small parts on literal values: how a batch's findings sort, and when a child's part
stands on the offsets the parent walked before it (_Found.goes_on_from)."""

from __future__ import annotations

from kbatch.format.findings import Finding
from kbatch.ops.verify import _Found, in_file_order
from kbatch.reading.invariants import OffsetOrder
from kbatch.reading.model import Batch
from kbatch.reading.summary import FileSummary


def _finding(pos: int, inner_pos: int | None) -> Finding:
    return Finding("record-crc-mismatch", 0, pos, 1, "crc", "1", "2", inner_pos=inner_pos)


def test_a_batchs_findings_sort_by_position_then_by_the_position_inside_its_records():
    """A finding outside the records (no inner position) sorts as inner position 0, before the records' own."""
    outside, first, third, later = _finding(70, None), _finding(70, 0), _finding(70, 2), _finding(71, None)
    assert [in_file_order(finding) for finding in (outside, first, third, later)] == [(70, 0), (70, 0), (70, 2),
                                                                                       (71, 0)]
    assert sorted([later, third, outside, first], key=in_file_order) == [outside, first, third, later]


def _batch(pos: int, base_offset: int, last_offset: int) -> Batch:
    return Batch(pos=pos, size=70, magic=2, length_field=58, offset_field=base_offset, base_offset=base_offset,
                 last_offset=last_offset, count=last_offset - base_offset + 1, attributes=0, codec="none", crc=0,
                 computed_crc=0, timestamp_type="CreateTime", base_timestamp=0, max_timestamp=0)


def _part(first: Batch | None, second_base: int | None) -> _Found:
    return _Found([], FileSummary("x", 0), 0, first, second_base, OffsetOrder(), None)


def _walked(*batches: Batch) -> OffsetOrder:
    """The parent's order after walking ``batches``."""
    order = OffsetOrder()
    for batch in batches:
        order.check(batch)
    return order


def test_a_part_stands_where_nothing_came_before_it_or_it_has_no_batch():
    assert _part(_batch(0, 0, 4), 5).goes_on_from(OffsetOrder())   # the file's first part
    assert _part(None, None).goes_on_from(_walked(_batch(0, 0, 4)))   # a part that is all damage


def test_a_part_stands_where_its_first_batch_goes_on_in_order():
    assert _part(_batch(70, 5, 9), 10).goes_on_from(_walked(_batch(0, 0, 4)))
    assert _part(_batch(70, 8, 9), 10).goes_on_from(_walked(_batch(0, 0, 4)))   # a gap, not an outlier


def test_a_part_whose_first_batch_does_not_raise_the_offsets_is_read_again():
    """An overlap: the part's own walk took its first batch as the highest offsets so far."""
    assert not _part(_batch(70, 3, 4), 5).goes_on_from(_walked(_batch(0, 0, 4)))
    assert not _part(_batch(70, 2, 3), None).goes_on_from(_walked(_batch(0, 0, 4)))


def test_a_part_whose_first_batch_may_be_an_outlier_stands_only_when_the_second_says_it_is_not():
    """The first batch jumps up (0..4, then 100..109): the second batch tells whether it is an outlier."""
    before = _walked(_batch(0, 0, 4))
    assert not _part(_batch(70, 100, 109), 5).goes_on_from(before)   # goes on from 4: 100..109 broke the sequence
    assert not _part(_batch(70, 100, 109), 109).goes_on_from(before)   # still at or below the jumper's last
    assert _part(_batch(70, 100, 109), 110).goes_on_from(before)   # goes on from the jumper
    assert _part(_batch(70, 100, 109), 4).goes_on_from(before)   # at or below the batch before it: an overlap
    assert _part(_batch(70, 100, 109), None).goes_on_from(before)   # no second batch read by the full reader


def _cut(pos: int) -> Finding:
    return Finding("truncated-while-reading", pos, pos, 0, "file size", "100 bytes", f"{pos} bytes")


def _part_cut_at(pos: int) -> _Found:
    """A child's part that found the file cut at ``pos`` (and a damaged range before it)."""
    damage = Finding("resync", 10, 10, 20, "entry", "an entry", "no entry")
    summary = FileSummary("x", 100)
    for finding in (damage, _cut(pos)):
        summary.add_finding(finding)
    return _Found([damage, _cut(pos)], summary, pos, None, None, OffsetOrder(), None)


def test_the_cut_a_part_found_is_told_once_a_file():
    """The first part to find the file cut tells it; a later one's cut is neither yielded nor counted again."""
    summary = FileSummary("x", 100)
    assert [finding.code for finding in _part_cut_at(60).replay(summary, None, None)] == \
        ["resync", "truncated-while-reading"]
    assert (summary.findings["truncated-while-reading"], summary.errors, summary.size_now) == (1, 2, 60)
    assert [finding.code for finding in _part_cut_at(50).replay(summary, None, None)] == ["resync"]
    assert (summary.findings["truncated-while-reading"], summary.findings["resync"], summary.errors,
            summary.size_now) == (1, 2, 3, 60)


def test_a_part_that_found_no_cut_is_counted_whole_after_one_that_did():
    summary = FileSummary("x", 100)
    list(_part_cut_at(60).replay(summary, None, None))
    clean = FileSummary("x", 100)
    clean.add_finding(Finding("resync", 70, 70, 5, "entry", "an entry", "no entry"))
    found = _Found([Finding("resync", 70, 70, 5, "entry", "an entry", "no entry")], clean, 75, None, None,
                   OffsetOrder(), None)
    assert [finding.code for finding in found.replay(summary, None, None)] == ["resync"]
    assert (summary.findings["truncated-while-reading"], summary.findings["resync"], summary.errors) == (1, 2, 3)


def test_a_gap_held_before_a_parts_damaged_range_is_told_and_counted_first():
    """The parent's last batch opened a gap (held: it may be an outlier's); a child's part begins with bytes that
    are no entry, so the gap is told before them (OffsetOrder.damaged_range), and counted."""
    order = _walked(_batch(0, 0, 4), _batch(70, 10, 14))
    damage = Finding("resync", 140, 140, 20, "entry", "an entry", "no entry")
    part = FileSummary("x", 200)
    part.add_finding(damage)
    summary = FileSummary("x", 200)
    told = list(_Found([damage], part, 160, None, None, OffsetOrder(), None).replay(summary, order, None))
    assert [(finding.code, finding.pos) for finding in told] == [("offset-gap", 70), ("resync", 140)]
    assert (summary.findings["offset-gap"], summary.findings["resync"], summary.errors) == (1, 1, 1)


def test_a_parts_first_batch_is_checked_against_the_offsets_before_it_its_findings_in_file_order():
    """The parent checks a part's first batch across (an overlap here, at the batch's start) and sorts it in among
    the batch's own findings (one inside its records), as verify_stream sorts a batch's findings."""
    first = _batch(70, 3, 9)
    own = _finding(100, 4)
    found = _Found([(first, [own])], FileSummary("x", 200), 140, first, None, OffsetOrder(), 9)
    summary = FileSummary("x", 200)
    handed = []
    told = list(found.replay(summary, _walked(_batch(0, 0, 4)), lambda batch: handed.append(batch.findings)))
    assert [(finding.code, finding.pos) for finding in told] == [("offset-overlap", 70), ("record-crc-mismatch", 100)]
    assert handed == [told]
    assert (summary.findings["offset-overlap"], summary.errors) == (1, 1)


def test_a_parts_clean_first_batch_is_not_handed_on():
    """A first batch that goes on in order and has nothing to say is not handed to on_batch (verify_stream's
    fast runs hand on no such batch either)."""
    first = _batch(70, 5, 9)
    found = _Found([(first, [])], FileSummary("x", 200), 140, first, None, OffsetOrder(), 9)
    handed = []
    assert list(found.replay(FileSummary("x", 200), _walked(_batch(0, 0, 4)), handed.append)) == []
    assert handed == []

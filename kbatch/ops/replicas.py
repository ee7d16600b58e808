"""``kbatch replicas`` as a library: each partition's copies compared (kbatch.partition.replicas), and the
advice a person reads: what Kafka's log recovery does to each copy, which copy holds the most acknowledged data,
what electing each would lose, where a good copy of a damaged batch lies."""

from __future__ import annotations

import os
from itertools import groupby

from kbatch.output.values import counted
from kbatch.partition.replicas import (Copy, Damage, NotACopy, Report, compare, epoch_file_lines, find_copies,
                                       high_watermarks, lost_sequences, offset_checkpoint_lines, offset_ranges,
                                       records_held_by_some)

__all__ = ["NotACopy", "Report", "advice", "compare", "compare_all", "exit_found", "high_watermarks",
           "records_held_by_some", "recovery_lines"]


def compare_all(paths: list[str], partition: str | None = None) -> tuple[list[Report], list[str]]:
    """A report for every partition present in two or more of ``paths``, and notes on those in only one."""
    found = find_copies(paths, partition)
    reports, notes = [], []
    for (topic, number), directories in sorted(found.items()):
        if len(directories) < 2:
            notes.append(f"{topic}-{number}: only one copy ({directories[0]}): nothing to compare")
            continue
        reports.append(compare(directories))
    return reports, notes


def exit_found(reports: list[Report]) -> bool:
    """Whether any partition's copies diverge, or a copy is damaged, its leader-epoch-checkpoint too (damaged, or
    held against its batches by verify-crc --deep's rule and failing it), or an offset checkpoint of its log
    directory (exit status 1)."""
    return any(not report.agree or report.problems or any(_checkpoint_lines(copy) for copy in report.copies)
               for report in reports)


def _checkpoint_lines(copy: Copy) -> list[str]:
    """What is told of the copy's checkpoints: its leader-epoch-checkpoint, then its log directory's offset ones."""
    return epoch_file_lines(copy) + offset_checkpoint_lines(copy)


def _ranges(offsets: list[tuple[int, int]]) -> str:
    return ", ".join(f"{first}" if first == last else f"{first}..{last}" for first, last in offsets[:5]) + \
        (f" and {len(offsets) - 5} more" if len(offsets) > 5 else "")


def _within(spans: list[tuple[int, int]], first: int, last: int | None = None) -> list[tuple[int, int]]:
    """The parts of offset ranges from ``first`` to ``last`` (None: no end)."""
    return [(max(low, first), high if last is None else min(high, last)) for low, high in spans
            if high >= first and (last is None or low <= last)]


def _count(spans: list[tuple[int, int]]) -> int:
    """How many offsets merged ranges hold."""
    return sum(last - first + 1 for first, last in spans)


def _entry(damage: Damage) -> str:
    """The entry, where it lies, and that Kafka's validation fails it."""
    where = f"position {damage.pos} of {os.path.basename(damage.segment)}"
    if damage.base_offset is None:
        return f"the bytes at {where} ({damage.why}) fail validation"
    return f"the damaged batch at offset {damage.base_offset} ({where}: {damage.why}) fails validation"


def _them(damage: Damage, batch: str = "it", bytes_: str = "they") -> str:
    return batch if damage.base_offset is not None else bytes_


def recovery_lines(copy: Copy) -> list[str]:
    """What Kafka's log recovery does to the copy when its broker starts (kbatch.partition.replicas.recovered):
    where it cuts the log, or the damage it does not reach and leaves."""
    lines = []
    cut = copy.recovery
    if cut is not None:
        dropped = "" if cut.dropped is None else f" (offsets {cut.dropped[0]}..{cut.dropped[1]})"
        if cut.later_segments_dropped:
            lines.append(f"Kafka's log recovery on start (no clean shutdown; the segment holds or follows the "
                         f"recovery point {copy.recovery_point or 0}) truncates it at offset {cut.truncate_to}: " +
                         (f"{_entry(cut)}, and {_them(cut)} and all after {_them(cut, 'it', 'them')}{dropped} are "
                          "dropped"
                          if cut.is_damage else f"zero bytes end the segment, and the later segments{dropped} "
                          "are dropped"))
        else:
            lines.append(f"Kafka recovers {os.path.basename(cut.segment)} as it opens it (its offset index is "
                         f"missing) and cuts it at offset {cut.truncate_to}: {_entry(cut)}, and {_them(cut)} and the "
                         f"rest of the segment{dropped} are dropped; the later segments stay")
    kept = copy.kept_damage
    if kept is not None:
        because = "its log directory was shut down cleanly (.kafka_cleanshutdown)" if copy.clean_shutdown else \
            f"its segment lies wholly below the recovery point {copy.recovery_point or 0}"
        lines.append(f"{_entry(kept)}, but {because}: Kafka's log recovery does not reach {_them(kept, 'it', 'them')} "
                     f"and the damage stays; a follower fetching {_them(kept, 'it', 'them')} from {copy.name}, or a "
                     f"consumer reading {_them(kept, 'it', 'them')}, fails")
    return lines


def _good_copies(report: Report) -> list[str]:
    """For each damaged batch, where an intact one lies.  Where the intact copies hold different versions of the
    batch at that offset, the version that counts is the one the copy with the newest leader epoch holds: the
    copy Kafka elects, the others follow and truncate to; the rest are other batches, not good copies of it."""
    copies = report.copies
    lines = []
    for base_offset, group in groupby(report.divergences, key=lambda each: each.base_offset):
        variants = list(group)
        damaged = sorted({index for each in variants for index in each.damaged})
        if not damaged:
            continue
        versions = [each for each in variants if each.holders]
        names = ", ".join(copies[index].name for index in damaged)
        if not versions:
            lines.append(f"the batch at offset {base_offset} is damaged on every copy holding it")
        elif len(versions) == 1:
            holders = ", ".join(copies[index].name for index in versions[0].holders)
            lines.extend(f"a good copy of the damaged batch at offset {base_offset} of {copies[index].name} is on "
                         f"{holders}" for index in damaged)
        else:
            leader = report.leader
            kept = [each for each in versions if leader in each.holders]
            other_holders = [index for each in versions if each not in kept for index in each.holders]
            others = ", ".join(copies[index].name for index in other_holders)
            if kept and leader is not None:
                also = "".join(f"; also on {copies[index].name}" for index in kept[0].holders if index != leader)
                lines.append(f"the damaged batch at offset {base_offset} of {names}: the version Kafka keeps is the "
                             f"one on {copies[leader].name} (the copy with the newest leader epoch, which the "
                             f"others follow{also}); {others} {'holds' if len(other_holders) == 1 else 'hold'} a "
                             f"different version of offset {base_offset}, not a good copy of the same batch")
            else:
                newest = "none of them that of the copy with the newest leader epoch" if leader not in damaged or \
                    leader is None else f"the copy with the newest leader epoch, {copies[leader].name}, holding it damaged"
                lines.append(f"the damaged batch at offset {base_offset} of {names}: {others} hold different "
                             f"versions of offset {base_offset}, {newest}: which one, if any, is a good copy of it "
                             "cannot be told")
    return lines


def advice(report: Report) -> list[str]:
    """Plain lines: what Kafka's log recovery does to each copy, what each copy holds that the others do not, what
    electing each loses, where good copies lie."""
    lines: list[str] = []
    copies = report.copies
    if report.agree and not report.problems:
        # an epoch file damaged or against the batches is still said: CheckpointFile.read refuses a damaged one,
        # and CheckpointFileWithFailureHandler takes the log directory offline; the follower fetching from a copy
        # whose file names the wrong start offsets truncates by them (OffsetsForLeaderEpoch)
        damage = [f"{copy.name}: {told}" for copy in copies for told in _checkpoint_lines(copy)]
        same = [line for line in (_compacted_line(report), *_removed_lines(report)) if line] or \
            ["every copy holds the same batches"]
        if damage:
            return [*same, *damage]
        return [*same[:-1], f"{same[-1]}: nothing to repair"]
    if report.compacted:
        lines.append(_compacted_line(report))
    lines.extend(_removed_lines(report))
    for copy in copies:
        lines.extend(f"{copy.name}: {line}" for line in recovery_lines(copy))
    marks = high_watermarks(report)
    unread = _unread_names(marks.unread)
    if marks.highest is not None:
        lines.append(f"highest high watermark recorded: {marks.highest} (a checkpoint can trail what was "
                     "acknowledged)" + (f"; {unread}" if unread else ""))
    elif unread:
        lines.append(unread)
    lines.extend(_good_copies(report))
    for copy in copies:
        for told in _checkpoint_lines(copy):
            lines.append(f"{copy.name}: {told}")
    # what electing each copy loses: the records others hold and it does not (variants of one offset once), counted
    # as a consumer is given them: control records (transaction markers) apart
    losses = []
    bounds = []    # per copy, the least and the most of its acknowledged losses (equal where every mark is read)
    for index, copy in enumerate(copies):
        # (not what lies below its log start: retention or DeleteRecords deleted that, not the election)
        start = copy.log_start_offset or 0
        missing = [each for each in report.divergences if not each.held_by(index) and each.holders]
        spans = offset_ranges(_within([span for each in missing for span in each.records], start))
        control = offset_ranges(_within([span for each in missing for span in each.control_records], start))
        records = _count(spans)
        # acknowledged: below a high watermark recorded by a copy that holds the record; where a holder's cannot
        # be read, any of its records may be (at most), and those a high watermark read covers are (at least)
        known, possible = [], []
        for each in missing:
            held = high_watermarks(report, each.holders)
            if held.highest is not None:
                known += _within(each.records, start, held.highest - 1)
            if held.unread:
                possible += _within(each.records, start)
        acked = _count(offset_ranges(known))
        at_most = _count(offset_ranges(known + possible))
        losses.append((acked, records, index))
        bounds.append((acked, at_most))
        markers = f"{counted(_count(control), 'control record')} ({_ranges(control)}), given to no consumer"
        if spans:
            below = f"{acked}" if at_most == acked else f"{acked} to {at_most}"
            lines.append(f"electing {copy.name} loses {counted(records, 'record')} ({_ranges(spans)}), {below} of "
                         "them below a high watermark" + (f" ({unread})" if at_most != acked else "") +
                         (f"; and {markers}" if control else ""))
        elif control:
            lines.append(f"electing {copy.name} loses no record a consumer is given, only {markers}")
        else:
            lines.append(f"electing {copy.name} loses nothing another copy holds")
    if any(least != most for least, most in bounds):
        # the copy that loses the least acknowledged data is known only when its most is below every other's least
        fewest = [index for index, (_, most) in enumerate(bounds)
                  if all(most < least for other, (least, _) in enumerate(bounds) if other != index)]
        if not fewest:
            lines.append(f"which copy holds the most acknowledged data cannot be told: {unread}")
            return lines + _lost_sequence_lines(report)
        best = fewest[0]
        least, most = bounds[best]
        loses = counted(most, "record") if least == most else f"at most {counted(most, 'record')}"
        lines.append(f"{copies[best].name} holds the most acknowledged data: electing it loses {loses} below a "
                     "high watermark, the fewest")
        return lines + _lost_sequence_lines(report)
    acked, records, best = min(losses)
    if acked:
        lines.append(f"{copies[best].name} holds the most acknowledged data: electing it loses "
                     f"{counted(acked, 'record')} below a high watermark, the fewest")
    elif records == min(lost for _, lost, _ in losses):
        lines.append(f"electing {copies[best].name} loses no record below a high watermark and the fewest records")
    else:   # (a copy that loses fewer records loses one acknowledged)
        lines.append(f"electing {copies[best].name} loses no record below a high watermark (the fewest records of "
                     "the copies that lose none)")
    return lines + _lost_sequence_lines(report)


def _compacted_line(report: Report) -> str:
    """That some batches every copy holds are compacted differently ("" for none)."""
    if not report.compacted:
        return ""
    every = "every copy holds the same records" if report.agree and not report.removed else \
        "where every copy holds a batch"
    many = len(report.compacted) > 1
    return (f"{every}: {counted(len(report.compacted), 'batch')} ({_ranges(report.compacted)}) "
            f"{'are' if many else 'is'} compacted differently (each broker's log cleaner compacts its own copy; the "
            "records the copies keep in common are the same)")


def _removed_lines(report: Report) -> list[str]:
    """Per copy, the batches others hold that its own log cleaner removed whole (Report.removed)."""
    lines = []
    for index, group in groupby(report.removed, key=lambda each: each[2]):
        spans = [(base, last) for base, last, _ in group]
        copy, many = report.copies[index], len(spans) > 1
        lines.append(f"{counted(len(spans), 'batch')} ({_ranges(spans)}) that another copy holds "
                     f"{'were' if many else 'was'} removed whole by {copy.name}'s own log cleaner (each broker's log "
                     f"cleaner compacts its own copy): below its cleaner-offset-checkpoint {copy.cleaner_checkpoint}, "
                     f"each of {'their' if many else 'its'} records has a later record of the same key there, which a "
                     f"consumer is given instead: no divergence, electing {copy.name} loses none of "
                     f"{'them' if many else 'it'}")
    return lines


def _unread_names(copies: list[Copy]) -> str:
    """That the high watermarks of ``copies`` cannot be read ("" for none)."""
    if not copies:
        return ""
    return f"the high watermark of {', '.join(copy.name for copy in copies)} cannot be read"


def _lost_sequence_lines(report: Report) -> list[str]:
    """Per copy following the copy with the newest leader epoch, the producer sequences it loses."""
    if report.leader is None:
        return []
    copies = report.copies
    return [f"{copy.name} follows {copies[report.leader].name}: producer {producer} loses sequences {_ranges(sequences)}"
            for index, copy in enumerate(copies) for producer, sequences in sorted(lost_sequences(report, index).items())]

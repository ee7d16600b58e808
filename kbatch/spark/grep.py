"""``kbatch grep --spark``: the same search as a Spark job, a task per file, the same lines printed (the command
line's own search run on the executors).

Each task runs the command line's own search (kbatch.ops.grep.GrepJob.one) on its file, its lines and
what it says on stderr caught; the driver prints them in the files' order, so the output is the one
``kbatch grep`` prints without Spark.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import sys


def spark_grep(job, files: list[str], master: str | None) -> tuple[bool, bool, bool]:
    """Run ``job`` over ``files`` on Spark: (a record selected, damage met, an input unreadable)."""
    from kbatch.spark.session import spark_session

    spark = spark_session(master, quiet=True, log_path=os.devnull)   # Spark's chatter is not grep's stderr
    # Executors have working directories of their own: they get absolute paths, the lines the ones given.
    tasks = [(index, path, os.path.abspath(path)) for index, path in enumerate(files)]
    work = dataclasses.replace(job, out=dataclasses.replace(job.out, out=None), jobs=1)
    results = spark.sparkContext.parallelize(tasks, max(1, min(len(tasks), 256))) \
        .map(lambda task: _search(work, *task)).collect()
    matched = damaged = trouble = False
    for _, out, err, found, hurt, unreadable in sorted(results):
        sys.stderr.write(err)
        job.out.out.write(out)
        matched, damaged, trouble = matched or found > 0, damaged or hurt, trouble or unreadable
    job.out.out.flush()
    return matched, damaged, trouble


def _search(job, index: int, shown: str, path: str):
    """One file searched in a task: (index, its lines, its stderr, matched, damaged, unreadable)."""
    from kbatch.ops.visibility import ConsumerViews

    out, err = io.StringIO(), io.StringIO()
    mine = dataclasses.replace(job, out=dataclasses.replace(job.out, out=out))
    with contextlib.redirect_stderr(err):
        # what a consumer of --isolation is given, told on the task's stderr as the command line tells it
        views = None if job.isolation is None else ConsumerViews(job.decompressed_limit, job.isolation, tell=_tell)
        found, hurt, unreadable = mine.one(path, views, shown)   # the lines name the file as it was given
        hurt |= views is not None and views.damaged
    return index, out.getvalue(), err.getvalue().replace(path, shown), found, hurt, unreadable


def _tell(line: str) -> None:
    import click

    click.echo(line, err=True)   # (as the command line's kbatch.cli.options.tell: the task's stderr is caught)

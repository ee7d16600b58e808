"""The Python daemon of a local session's tasks: PySpark's own (``pyspark.daemon``), with the modules every task
of ``kbatch scan`` imports imported once, before it forks a worker for each of the session's cores.

PySpark's daemon forks its workers bare, and each imports PySpark's worker, pyarrow, numpy, kbatch's readers and
the compiled kernels again on its own (about 0.4 s of CPU): on two cores, the second worker of the tables' job
does so while the first has its file half read, and the job waits on it. Forked from a daemon that holds them,
every worker starts with them in place. (PySpark imports the worker module after the fork, as some libraries
start threads when imported: pyarrow's allocator and numpy's BLAS do, and both take care of a fork.)

Spark runs it for a local master only (``spark.python.daemon.module``, kbatch.spark.session): a cluster's
executors may have kbatch only as files a task adds to its path, and a daemon module must import.
"""

from __future__ import annotations

import importlib

# What a task of the tables' writer (kbatch.spark.records_table) imports, directly or not.  pandas too: pyarrow
# imports it (its check for a pandas object) at the first ``pa.array`` of a Python list, which every task makes
# (the rows it reports, a damaged batch's row): 0.13 s of CPU in each worker otherwise.
WARM = ("pyspark.worker", "pyspark.sql.pandas.serializers", "pyspark.sql.pandas.types", "pyarrow",
        "pyarrow.parquet", "pyarrow.compute", "numpy", "pandas", "pyarrow.pandas_compat",
        "kbatch.spark.records_table", "kbatch.spark.source", "kbatch.spark.batch_columns",
        "kbatch.spark.record_columns", "kbatch.reading.reader", "kbatch.walk.crcrun", "kbatch.ops.verify",
        "kbatch.ops.visibility", "kbatch.ops.txn", "kbatch.partition.crosscheck", "kbatch.messages.topics",
        "kbatch.output.jsonout")


def main() -> None:
    """Import WARM (what does not import, the worker meets as it would have anyway), then PySpark's daemon."""
    from pyspark.daemon import manager

    for name in WARM:
        try:
            importlib.import_module(name)
        except Exception:
            pass
    manager()


if __name__ == "__main__":
    main()

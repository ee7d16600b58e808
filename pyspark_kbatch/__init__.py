"""Spark finds Python data sources in top-level modules named ``pyspark_*`` that define ``DefaultSource``
(SPARK-45917): with kbatch installed, ``spark.read.format("kbatch")`` works with no registration."""

from kbatch.spark.source import KbatchDataSource as DefaultSource

__all__ = ["DefaultSource"]

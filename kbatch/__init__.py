"""kbatch: a forensic inspector for Apache Kafka log segments and record batches."""

__version__ = "0.1.0"

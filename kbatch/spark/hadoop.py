"""Segments only Hadoop's file systems open (``s3a://``, ``wasb://``, ...): listed and read by Spark itself.

pyarrow.fs, through which the data source reads remote segments, opens ``s3://``, ``gs://`` and ``hdfs://``
only. For any other scheme (kbatch.files.inputs.through_hadoop) ``kbatch scan`` has Spark list the files and
read their bytes with the cluster's own connector (Hadoop's S3A for ``s3a://``: the ``hadoop-aws`` jar and
its ``fs.s3a.*`` settings), through its ``binaryFile`` source: Hadoop lists them (the scan's ``--pattern``
picks the files), Spark packs them into tasks by size as its file sources do, and hands each task the bytes
of its files, which the data source's own code reads (:class:`kbatch.spark.source.KbatchReader`, each
file's bytes handed over to it) into the same rows as a local file's. A file is read whole: no
``--split-bytes`` for them, and a file is at most what Spark's ``binaryFile`` holds (2 GiB).
"""

from __future__ import annotations

from functools import partial

from kbatch.files.inputs import Segment


def hadoop_files(spark, uris: list[str], pattern: str):
    """The files under ``uris`` that match ``pattern`` as Spark's binaryFile source reads them (path, length,
    content, ...): a DataFrame whose content Spark reads only where it is used."""
    files = _hadoop_listing(spark, uris, pattern)
    if files:
        return spark.read.format("binaryFile").load(files)
    return (spark.read.format("binaryFile").option("pathGlobFilter", pattern)
            .option("recursiveFileLookup", "true").load(uris))


def _hadoop_listing(spark, uris: list[str], pattern: str) -> list[str] | None:
    """The files under ``uris`` whose names match ``pattern``, listed by Hadoop's file systems in the driver's
    JVM; None through Spark Connect (no JVM here).

    Spark's own listing passes over every file and directory whose name begins with ``_`` or ``.``
    (HadoopFSUtils.shouldFilterOutPathName): Kafka's internal topics (``__consumer_offsets-12``) with them.
    Files named one by one are read whatever their directories' names."""
    import fnmatch

    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        return None
    conf = spark._jsc.hadoopConfiguration()
    found = []
    for uri in uris:
        root = jvm.org.apache.hadoop.fs.Path(uri)
        listing = root.getFileSystem(conf).listFiles(root, True)
        while listing.hasNext():
            path = listing.next().getPath()
            if fnmatch.fnmatch(path.getName(), pattern):
                found.append(path.toString())
    return sorted(found)


def listed(files) -> list[Segment]:
    """The segments of :func:`hadoop_files`, as Spark listed them (their paths are URIs, as it names them)."""
    return [Segment(row.path, row.length) for row in files.select("path", "length").collect()]


def level_frame(files, level: str, options: dict, schema):
    """The ``level`` table (its StructType ``schema``) of the files, each read by the data source's code on the
    executor that Spark handed its bytes to."""
    return files.select("path", "content").mapInArrow(partial(_read_contents, level, options, schema), schema)


def _read_contents(level: str, options: dict, schema, batches):
    """On an executor: each file of ``batches`` (path, content) read as the data source reads a whole file."""
    from kbatch.spark.source import FileRange, KbatchReader, SegmentPartition

    reader = KbatchReader({**options, "level": level}, schema)
    for batch in batches:
        paths, contents = batch.column("path").to_pylist(), batch.column("content")
        for index, path in enumerate(paths):
            data = contents[index].as_buffer()
            reader.contents = {path: data}
            yield from reader.read(SegmentPartition([FileRange(path, 0, data.size, data.size)]))
        reader.contents = {}

"""A Spark session for kbatch scan: local by default, quiet, and bound to the loopback address."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
import tempfile

_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""


def spark_session(master: str | None = None, *, quiet: bool = True, log_path: str | None = None,
                  app_name: str = "kbatch scan"):
    """The active session (spark-submit, Spark Connect via SPARK_REMOTE), or a new one on ``master``.

    A new local session runs its Python workers with this interpreter, binds
    to 127.0.0.1, keeps the UI off, registers the kbatch data source, and
    (``quiet``) sends the JVM's start-up chatter and logs below ERROR to
    ``log_path`` instead of the terminal.
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return _register(active)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    if os.environ.get("SPARK_REMOTE"):
        return _register(builder.getOrCreate())
    master = master or "local[*]"
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    config_dir = tempfile.mkdtemp(prefix="kbatch-spark-")
    atexit.register(shutil.rmtree, config_dir, ignore_errors=True)
    log4j = os.path.join(config_dir, "log4j2.properties")
    with open(log4j, "w") as out:
        out.write(_LOG4J)
    builder = (builder.master(master)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", str(sys.stderr.isatty()).lower())
               .config("spark.sql.shuffle.partitions", "8")
               .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{log4j}")
               .config("spark.sql.session.timeZone", "UTC"))
    with _stderr_to(log_path if quiet else None):
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return _register(session)


def _register(session):
    from kbatch.spark.source import KbatchDataSource

    session.dataSource.register(KbatchDataSource)
    return session


@contextlib.contextmanager
def _stderr_to(path: str | None):
    """While the JVM starts, its stderr (and so its chatter) goes to ``path``; ours comes back after."""
    if path is None:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(target, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(target)

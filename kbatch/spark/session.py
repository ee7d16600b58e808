"""A Spark session for kbatch scan: local by default, quiet, and bound to the loopback address."""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import shlex
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

    A new local session runs its Python workers with this interpreter (importing PySpark with its
    bytecode: :func:`_worker_python`), forked by a daemon that imported what the tasks import
    (kbatch/spark/daemon.py), and its JVM with the quick compiler only (:data:`_LOCAL_JVM`),
    binds to 127.0.0.1, keeps the UI off, registers the kbatch data source, and (``quiet``) sends the
    JVM's start-up chatter and logs below ERROR to ``log_path`` instead of the terminal.
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return _register(active)
    builder = SparkSession.builder.appName(app_name)
    if os.environ.get("SPARK_REMOTE"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        return _register(builder.getOrCreate())
    master = master or "local[*]"
    config_dir = tempfile.mkdtemp(prefix="kbatch-spark-")
    atexit.register(shutil.rmtree, config_dir, ignore_errors=True)
    java_options = f"-Dlog4j2.configurationFile=file:{os.path.join(config_dir, 'log4j2.properties')}"
    if master.startswith("local"):
        ours = _worker_python(config_dir)
        if os.environ.setdefault("PYSPARK_PYTHON", ours) == ours != sys.executable:
            # The tasks' workers forked with kbatch's modules imported already (kbatch/spark/daemon.py;
            # the launcher runs PySpark's own daemon where the workers' path has no kbatch).
            builder = builder.config("spark.python.daemon.module", DAEMON_MODULE)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
        java_options += " " + _LOCAL_JVM
    else:   # (the executors are other machines' processes: they run this interpreter's path)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    with open(os.path.join(config_dir, "log4j2.properties"), "w") as out:
        out.write(_LOG4J)
    builder = (builder.master(master)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", str(sys.stderr.isatty()).lower())
               .config("spark.sql.shuffle.partitions", "8")
               .config("spark.driver.extraJavaOptions", java_options)
               .config("spark.sql.session.timeZone", "UTC"))
    with _stderr_to(log_path if quiet else None):
        session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return _register(session)


# A local session's JVM, which runs the tasks too, lives for one scan, and the heavy work is the Python
# workers': C2's compiling (the optimising JIT) and G1's collector threads cost seconds of CPU they never
# earn back. With C1 alone and the serial collector a scan of one tiny segment takes a third less CPU.
_LOCAL_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


DAEMON_MODULE = "kbatch.spark.daemon"
_DAEMON_OR_PYSPARKS = f"""\
try:
    from {DAEMON_MODULE} import main
except ImportError:
    from pyspark.daemon import manager as main
main()
"""


def _worker_python(config_dir: str) -> str:
    """The interpreter a local session's Python processes run: this one, through a launcher (written to
    ``config_dir``) that takes the zipped copy of PySpark inside PySpark's own package
    (``pyspark/python/lib/pyspark.zip``, and py4j's beside it) off the PYTHONPATH Spark gives them.

    Spark puts those zips first on the path of every Python worker and planner it starts
    (PythonWorkerFactory); they hold sources only, so each process (seven or eight a scan) compiles the
    PySpark it imports again, about 0.3 s of CPU each. Without them the processes import the installed
    package, the same code, with its bytecode. Where Spark is not this PySpark's own (SPARK_HOME
    elsewhere) or there is no zip to take off, the interpreter itself.

    Asked to run the tasks' daemon, DAEMON_MODULE, the launcher runs it if the workers' path holds kbatch,
    and PySpark's own daemon if not: Spark's daemon module is a name that must import.
    """
    import py4j
    import pyspark

    home = os.path.dirname(os.path.realpath(pyspark.__file__))
    zips = sorted(glob.glob(os.path.join(home, "python", "lib", "*.zip")))
    spark_home = os.path.realpath(os.environ.get("SPARK_HOME", home))
    if os.name != "posix" or not zips or spark_home != home or ".zip" in py4j.__file__:
        return sys.executable
    launcher = os.path.join(config_dir, "python")
    with open(launcher, "w") as out:
        out.write("#!/bin/sh\n"
                  "# The PYTHONPATH Spark gives its Python processes, without the zipped PySpark "
                  "(kbatch.spark.session._worker_python)\n"
                  "set -f\nkept=\nIFS=:\nfor entry in $PYTHONPATH; do\n"
                  f"  case $entry in {'|'.join(map(shlex.quote, zips))}) ;;\n"
                  '  *) kept=${kept:+$kept:}$entry ;;\n  esac\ndone\n'
                  f'case "$1 $2" in "-m {DAEMON_MODULE}") shift 2; set -- -c {shlex.quote(_DAEMON_OR_PYSPARKS)} "$@" ;; esac\n'
                  f'PYTHONPATH=$kept exec {shlex.quote(sys.executable)} "$@"\n')
    os.chmod(launcher, 0o755)
    return launcher


def _register(session):
    from kbatch.spark.source import KbatchDataSource

    # The records level applies filters itself (KbatchReader.pushFilters): Spark hands them over only when
    # this is on, and refuses to read a source that takes filters when it is off.
    session.conf.set("spark.sql.python.filterPushdown.enabled", "true")
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

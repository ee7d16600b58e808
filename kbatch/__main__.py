"""``python -m kbatch ...``, and the script ``spark-submit`` runs (``spark-submit ... kbatch/__main__.py scan ...``)."""

from kbatch.cli import run

if __name__ == "__main__":
    run()

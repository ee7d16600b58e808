"""kbatch on Spark: a Python data source (``spark.read.format("kbatch")``) and the ``kbatch scan`` pipeline.

Needs the ``spark`` extra (``pip install 'kbatch[spark]'``) and Java; nothing
else in kbatch imports this package.
"""

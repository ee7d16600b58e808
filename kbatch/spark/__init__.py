"""kbatch on Spark: a Python data source (``spark.read.format("kbatch")``) and the ``kbatch scan`` pipeline.

Needs the ``spark`` extra (``pip install '.[spark]'`` in kbatch's checkout) and Java; nothing
else in kbatch imports this package.
"""

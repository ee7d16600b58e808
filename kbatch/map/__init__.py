"""``kbatch map``: a picture of segments, partitions and a log directory.

:mod:`kbatch.map.gather` reads the inputs with kbatch's own readers into a compact model (plain data, the
same at any input size: a segment of more batches than a screen shows is kept as bins of its bytes);
:mod:`kbatch.map.draw` turns the model into Vega-Lite charts, an HTML page or an SVG picture.  Only the
drawing needs the optional ``map`` extra (vl-convert-python).
"""

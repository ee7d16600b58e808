"""What is compiled where it can be (Cython's pure-Python mode: the same source runs as Python without it).

* :mod:`.recordwalk` -- a v2 batch's records walked into columns, the batch rules on plain values, the
  clean runs of ``verify-crc --deep``, and the JSON Lines writer.

``kbatch --version`` says whether the compiled build or the pure-Python one runs.
"""

"""What is compiled where it can be (Cython's pure-Python mode: the same source runs as Python without it).

* :mod:`.recordwalk` -- a v2 batch's records walked into columns, the batch rules on plain values, the
  clean runs of ``verify-crc --deep``, and the JSON Lines writer.

A kernel is imported as any module (``from kbatch.kernels.recordwalk import RecordWalker``); the finder
installed here (:mod:`._load`) decides which build: the compiled one when it was built from the source
beside it, else that source as plain Python (and ``KBATCH_PURE_PYTHON=1`` asks for the source).
``kbatch --version`` says which runs, and why.
"""

import sys

from kbatch.kernels._load import KernelFinder

if KernelFinder not in sys.meta_path:
    sys.meta_path.insert(0, KernelFinder)

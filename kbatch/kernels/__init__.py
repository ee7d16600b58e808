"""What is compiled where it can be (Cython's pure-Python mode: the same source runs as Python without it).

* :mod:`.recordwalk` -- a v2 batch's records walked into columns, and gathered as the records table's rows;
* :mod:`.batchrules` -- the rules of a v2 batch on plain values, and the sequence arithmetic;
* :mod:`.cleanruns` -- the clean runs of ``verify-crc --deep``, and a clean batch's records into those rows;
* :mod:`.jsonl` -- the JSON Lines writer;
* :mod:`.plaincapture` -- a classic pcap's common case, from the packet record to the Kafka frame (``kbatch pcap``);
* :mod:`.match` -- what ``kbatch grep`` looks for, asked of a record's bytes where they lie (in the clean runs
  of :mod:`.cleanruns`, and on the records the full reader reads).

A kernel is imported as any module (``from kbatch.kernels.recordwalk import RecordWalker``); the finder
installed here (:mod:`._load`) decides which build, for all of them at once: the compiled ones when each
was built from the source beside it, else the sources as plain Python (``KBATCH_PURE_PYTHON=1`` asks for
the sources).  ``kbatch --version`` says which runs, and why.
"""

import sys

from kbatch.kernels._load import KernelFinder

if KernelFinder not in sys.meta_path:
    sys.meta_path.insert(0, KernelFinder)

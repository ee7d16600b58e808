"""The files beside a segment's ``.log``: indexes, producer snapshots, checkpoints, and their cross-checks.

A partition directory holds, per segment, ``<base>.log`` and its
``.index``, ``.timeindex`` and (when it has aborted transactions)
``.txnindex``; per roll, a producer-state ``<offset>.snapshot``; and once
per partition, ``leader-epoch-checkpoint`` and ``partition.metadata``.
:mod:`.layouts` declares their bytes, :mod:`kbatch.files.kinds` tells them apart,
:mod:`.sidecars` reads each on its own (by kind: :mod:`.indexes`,
:mod:`.snapshots`, :mod:`.textfiles`, on the base of :mod:`.sidefile`),
:mod:`.crosscheck` holds them against the log.
"""

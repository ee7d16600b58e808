"""What the commands do, as a library (no click, no rich): each module one command's work.

:mod:`.verify` (verify-crc), :mod:`.listing` (dump), :mod:`.diff`, :mod:`.repair` (repair-length, salvage), :mod:`.encode`
(encode-from-json), :mod:`.stats` and :mod:`.reencode` (stats --what-if), :mod:`.annotate`
(hexdump-annotate), :mod:`.txn`.
"""

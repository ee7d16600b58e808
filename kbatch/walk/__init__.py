"""Walking a segment fast: a run over clean entries that hands every other entry to the full reader.

* :mod:`.crc` -- the CRC-only run (``verify-crc``);
* :mod:`.deep` -- the deep run (``verify-crc --deep``), the batch rules in the compiled loop;
* :mod:`.listing` -- the listing run (``dump --format jsonl``);
* :mod:`.parts` -- a large local file read in parts, a process each, adding up to one walk.
"""

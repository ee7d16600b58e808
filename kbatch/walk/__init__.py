"""Walking a segment fast: a run over clean entries that hands every other entry to the full reader.

* :mod:`.engine` -- the one walk engine (:class:`~.engine.Walk`): a run's entries in bulk, the full reader
  for each other one; and the clean v2 batches the runs take;
* :mod:`.crcrun` -- the CRC run (``verify-crc``), a use of the engine;
* :mod:`.deep` -- the deep run (``verify-crc --deep``), the batch rules in the compiled loop, a use of it;
* :mod:`.listing` -- the listing run (``dump --format jsonl``), a use of it;
* :mod:`.parts` -- a large local file read in parts, a process each, adding up to one walk
  (:func:`~.parts.walk_in_parts`, for verify-crc and dump).
"""

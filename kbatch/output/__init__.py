"""The shape of kbatch's output, below every renderer: :mod:`.values` (how keys, values, timestamps and
findings read as text and JSON) and :mod:`.jsonout` (the JSON form of batches, records and findings, which
``--format json``/``jsonl``, scan's Spark tables and the partition reports share)."""

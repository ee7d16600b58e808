"""The shape of kbatch's output, below every renderer: :mod:`.columns` (every key and table column, declared
once: name, type, nullability, how it is read, meaning), :mod:`.values` (how keys, values, timestamps and
findings read as text and JSON), :mod:`.visible` (the one escaping rule for text kbatch did not write:
record contents, names), :mod:`.jsonout` (the JSON form of batches, records and findings, made from
the columns, which ``--format json``/``jsonl``, scan's Spark tables and the partition reports share) and
:mod:`.docs` (what is written out from the columns: :mod:`._dicts`, the functions jsonout hands out, the JSON
Schema file and README's lists of keys; ``python -m kbatch.output.docs``)."""

# The C-level face of recordwalk.py, for the kernels that use its classes without Python calls
# (cleanruns.py, jsonl.py).  Every C attribute and C method of the two classes is declared here.
cimport cython


@cython.final
cdef class RecordColumns:
    cdef readonly Py_ssize_t capacity
    cdef Py_ssize_t header_capacity
    cdef readonly Py_ssize_t n               # records held
    cdef readonly Py_ssize_t n_headers
    cdef readonly Py_ssize_t first_index     # the batch index of row 0
    cdef readonly Py_ssize_t fills           # how often a walk filled them
    cdef readonly dict records               # name -> array('q')
    cdef readonly dict headers
    cdef long long[::1] _pos, _size, _length, _attributes, _timestamp_delta, _offset_delta
    cdef long long[::1] _key_pos, _key_length, _value_pos, _value_length, _headers_count, _first_header
    cdef long long[::1] _offset, _timestamp
    cdef long long[::1] _h_key_pos, _h_key_length, _h_value_pos, _h_value_length


@cython.final
cdef class RecordWalker:
    cdef const unsigned char[::1] _data
    cdef object _source                      # the object _data holds the buffer of
    cdef Py_ssize_t _end
    cdef Py_ssize_t _pos
    cdef Py_ssize_t _count
    cdef long long _base_offset
    cdef long long _base_timestamp
    cdef long long _value                    # what the last _varint call read ...
    cdef Py_ssize_t _next                    # ... and where the bytes after it start
    cdef readonly bint done
    cdef readonly Py_ssize_t decoded
    cdef readonly long long max_timestamp
    cdef readonly long long last_offset_delta
    cdef readonly long long last_offset      # the last record's (Java's long)
    cdef readonly list findings
    cdef readonly list order_breaks
    cdef readonly Py_ssize_t not_kept        # findings past MAX_HELD
    cdef readonly Py_ssize_t breaks_not_kept # order breaks past MAX_HELD

    cpdef reset(self, data, long long count, long long base_offset, long long base_timestamp,
                Py_ssize_t start=*, Py_ssize_t end=*)
    cpdef Py_ssize_t fill(self, RecordColumns columns)
    cdef bint _varint(self, Py_ssize_t pos, Py_ssize_t end, int max_bytes, Py_ssize_t index, long long header,
                      str name) noexcept
    cdef bint _long_varint(self, Py_ssize_t pos, Py_ssize_t end, int max_bytes, Py_ssize_t index,
                           long long header, str name) noexcept
    cdef bint _skip_bytes(self, Py_ssize_t length_pos, Py_ssize_t pos, Py_ssize_t end, long long length,
                          Py_ssize_t index, long long header, str name) noexcept
    cdef bint _overrun(self, Py_ssize_t length_pos, Py_ssize_t pos, Py_ssize_t end, long long length,
                       Py_ssize_t index, long long header, str name) noexcept


@cython.final
cdef class RecordRows:
    cdef readonly Py_ssize_t capacity        # rows there is room for
    cdef readonly Py_ssize_t header_capacity
    cdef readonly Py_ssize_t n               # rows held
    cdef readonly Py_ssize_t n_headers
    cdef readonly dict columns               # name -> array (ROW_COLUMNS)
    cdef readonly dict header_columns        # name -> array (HEADER_ROW_COLUMNS)
    cdef readonly dict bytes                 # name -> bytearray (ROW_BYTES)
    cdef long long[::1] _offset, _timestamp, _batch_pos, _batch_base_offset, _producer_id
    cdef int[::1] _sequence, _file, _key_offsets, _value_offsets, _headers_offsets, _h_key_offsets, _h_value_offsets
    cdef unsigned char[::1] _codec, _log_append_time, _is_transactional, _key_null, _value_null, _h_value_null
    cdef signed char[::1] _visible
    cdef unsigned char[::1] _keys, _values, _h_keys, _h_values

    cpdef add(self, RecordColumns columns, data, long long batch_pos, long long base_offset, int codec,
              bint log_append_time, long long max_timestamp, long long base_sequence, long long producer_id,
              bint transactional, int visible, int file)

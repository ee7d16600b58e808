# The C-level face of match.py, for the kernel that asks it without Python calls (cleanruns.py).
cimport cython

from kbatch.kernels.recordwalk cimport RecordColumns


@cython.final
cdef class RecordMatch:
    cdef bytes _literal
    cdef bint _literal_on
    cdef bint _fold
    cdef object _search                      # a compiled bytes pattern's search, or None ...
    cdef list _required                      # ... and the bytes every match of it holds (each of them)
    cdef bint _buffer_hit                    # whether the batch's records hold them at all (begin)
    cdef bint _in_key
    cdef bint _in_value
    cdef list _headers                       # [(name, RecordMatch of the value or None)]
    cdef list _value_literals                # bytes the value must hold (--field's prefilter)
    cdef readonly bint undecided             # kbatch.ops.grep decides the records that pass (--field)
    cdef readonly bint invert
    cdef readonly long long producer_id      # -2: any

    cpdef bint wants_producer(self, long long producer_id)
    cpdef bint begin(self, source, Py_ssize_t first, Py_ssize_t last)
    cpdef bint record(self, key, value, headers)
    cpdef bint any_row(self, RecordColumns columns, source)
    cpdef list rows(self, RecordColumns columns, source)
    cdef bint _candidate(self, RecordColumns columns, const unsigned char[::1] data, source, Py_ssize_t row)
    cdef bint _key_value(self, const unsigned char[::1] key_data, key_source, Py_ssize_t key_pos,
                         Py_ssize_t key_length, const unsigned char[::1] value_data, value_source,
                         Py_ssize_t value_pos, Py_ssize_t value_length)
    cdef bint _text(self, const unsigned char[::1] data, source, Py_ssize_t pos, Py_ssize_t length)
    cdef bint _header_is(self, bytes name, test, const unsigned char[::1] key_data, Py_ssize_t key_pos,
                         Py_ssize_t key_length, const unsigned char[::1] value_data, value_source,
                         Py_ssize_t value_pos, Py_ssize_t value_length)

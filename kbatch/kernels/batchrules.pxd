# The C-level face of batchrules.py, for the kernels that ask its rules without Python calls
# (cleanruns.py, jsonl.py).
cimport cython


@cython.final
cdef class HeaderField:
    cdef readonly Py_ssize_t at              # its offset in the layout
    cdef readonly int size
    cdef readonly bint signed
    cdef object _unpack_from                 # the field's own struct, for plain Python

    cpdef long long read(self, const unsigned char[::1] data, Py_ssize_t start) noexcept


@cython.final
cdef class V2Header:
    cdef readonly HeaderField base_offset, batch_length, partition_leader_epoch, magic, crc, attributes
    cdef readonly HeaderField last_offset_delta, base_timestamp, max_timestamp, producer_id, producer_epoch
    cdef readonly HeaderField base_sequence, records_count


cpdef long long increment_sequence(long long sequence, long long increment) noexcept
cpdef long long v2_last_sequence(long long base_sequence, long long last_offset_delta) noexcept
cpdef long long v2_reserved_bits(long long attributes) noexcept
cpdef producer_fields_problem(bint is_transactional, bint is_control, long long producer_id,
                              long long producer_epoch, long long base_sequence)
cpdef bint last_offset_delta_short(base_offset, last_offset_delta, last_record_offset) except? -1
cpdef bint max_timestamp_differs(bint create_time, long long header_max_timestamp,
                                 long long records_max_timestamp) noexcept
cpdef segment_range_problem(offset_field, last_offset, segment_base)
cpdef offset_order_problem(last_offset, base_offset)
cpdef bint framed_v2_batch(long long magic, long long batch_length, long long least, long long most) noexcept

# cython: language_level=3
"""Python-facing bitset kernel: packing 0/1 matrices into ``uint64`` words and counting.

The data layer packs antecedents and labels with these functions; the solvers then work on the
packed words through the inline primitives in ``bitset.pxd``.
"""

import numpy as np
from libc.stdint cimport uint64_t, int64_t, uint8_t

from bitops cimport (
    words_for, tail_mask, popcount, and_popcount, andnot_popcount, not_into,
)



def n_words(Py_ssize_t n_bits) -> int:
    """Words needed to hold ``n_bits`` bits."""
    if n_bits < 0:
        raise ValueError("n_bits must be >= 0")
    return words_for(n_bits)


def pack_rows(const uint8_t[:, :] bits):
    """Pack each row of a 0/1 ``(rows, n_bits)`` matrix into a ``(rows, words)`` uint64 array.

    Any non-zero byte counts as 1, so boolean arrays viewed as uint8 pack as expected.
    """
    cdef Py_ssize_t rows = bits.shape[0], n = bits.shape[1]
    cdef Py_ssize_t nw = words_for(n)
    out_arr = np.zeros((rows, nw), dtype=np.uint64)
    cdef uint64_t[:, ::1] out = out_arr
    cdef Py_ssize_t r, i
    with nogil:
        for r in range(rows):
            for i in range(n):
                if bits[r, i]:
                    out[r, i >> 6] |= (<uint64_t>1) << (i & 63)
    return out_arr


def pack_columns(const uint8_t[:, :] bits):
    """Pack each column of a 0/1 ``(n_bits, cols)`` matrix: one bit vector per feature.

    This is the common case, samples by features in, one packed vector per feature out, done
    without materialising the transpose.
    """
    cdef Py_ssize_t n = bits.shape[0], cols = bits.shape[1]
    cdef Py_ssize_t nw = words_for(n)
    out_arr = np.zeros((cols, nw), dtype=np.uint64)
    cdef uint64_t[:, ::1] out = out_arr
    cdef Py_ssize_t c, i
    cdef uint64_t bit
    with nogil:
        for i in range(n):
            bit = (<uint64_t>1) << (i & 63)
            for c in range(cols):
                if bits[i, c]:
                    out[c, i >> 6] |= bit
    return out_arr


def unpack_rows(const uint64_t[:, :] words, Py_ssize_t n_bits):
    """Inverse of ``pack_rows``: a ``(rows, n_bits)`` uint8 0/1 matrix (bit ``i`` of a row is bit
    ``i & 63`` of its word ``i >> 6``: the words' little-endian bytes, each read low bit first)."""
    if words_for(n_bits) != words.shape[1]:
        raise ValueError(f"{words.shape[1]} words cannot hold exactly {n_bits} bits")
    as_bytes = np.ascontiguousarray(words, dtype="<u8").view(np.uint8).reshape(words.shape[0], 8 * words.shape[1])
    return np.unpackbits(as_bytes, axis=1, count=n_bits, bitorder="little")


def popcount_rows(const uint64_t[:, ::1] words):
    """Number of set bits in each row."""
    cdef Py_ssize_t rows = words.shape[0], nw = words.shape[1], r
    out_arr = np.empty(rows, dtype=np.int64)
    cdef int64_t[::1] out = out_arr
    with nogil:
        for r in range(rows):
            out[r] = popcount(&words[r, 0], nw) if nw else 0
    return out_arr


ctypedef int64_t (*masked_count)(const uint64_t* row, const uint64_t* mask, Py_ssize_t n) noexcept nogil


cdef _masked_counts(const uint64_t[:, ::1] words, const uint64_t[::1] mask, masked_count count):
    """``count(row, mask)`` for every row, the rows and the mask of the same width."""
    cdef Py_ssize_t rows = words.shape[0], nw = words.shape[1], r
    if mask.shape[0] != nw:
        raise ValueError(f"mask has {mask.shape[0]} words, rows have {nw}")
    out_arr = np.empty(rows, dtype=np.int64)
    cdef int64_t[::1] out = out_arr
    with nogil:
        for r in range(rows):
            out[r] = count(&words[r, 0], &mask[0], nw) if nw else 0
    return out_arr


def and_popcount_rows(const uint64_t[:, ::1] words, const uint64_t[::1] mask):
    """``|row & mask|`` for every row: supports of many antecedents within one set at once."""
    return _masked_counts(words, mask, and_popcount)


def andnot_popcount_rows(const uint64_t[:, ::1] words, const uint64_t[::1] mask):
    """``|row & ~mask|`` for every row."""
    return _masked_counts(words, mask, andnot_popcount)


def invert_rows(const uint64_t[:, ::1] words, Py_ssize_t n_bits):
    """The complement of every row over ``n_bits`` bits, tail bits kept zero (negated features)."""
    cdef Py_ssize_t rows = words.shape[0], nw = words.shape[1], r
    if words_for(n_bits) != nw:
        raise ValueError(f"{nw} words cannot hold exactly {n_bits} bits")
    out_arr = np.empty((rows, nw), dtype=np.uint64)
    cdef uint64_t[:, ::1] out = out_arr
    with nogil:
        for r in range(rows):
            if nw:
                not_into(&out[r, 0], &words[r, 0], n_bits)
    return out_arr


def tail_bits_clear(const uint64_t[:, ::1] words, Py_ssize_t n_bits) -> bool:
    """True when no row has a bit set past ``n_bits`` (the invariant every kernel relies on)."""
    cdef Py_ssize_t rows = words.shape[0], nw = words.shape[1], r
    if nw == 0:
        return True
    cdef uint64_t m = ~tail_mask(n_bits)
    for r in range(rows):
        if words[r, nw - 1] & m:
            return False
    return True

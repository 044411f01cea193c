"""The bitset kernel agrees with numpy on random matrices, including ragged tails."""

from __future__ import annotations

import numpy as np
import pytest
from glasswork.cython_ext import bitset
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

matrices = st.tuples(st.integers(0, 6), st.integers(0, 200)).flatmap(
    lambda shape: arrays(np.uint8, shape, elements=st.integers(0, 1))
)


@settings(max_examples=60, deadline=None)
@given(matrices)
def test_pack_unpack_round_trip_and_counts(bits):
    rows, n = bits.shape
    words = bitset.pack_rows(bits)
    assert words.shape == (rows, (n + 63) // 64) and words.dtype == np.uint64
    assert np.array_equal(bitset.unpack_rows(words, n), bits)
    assert np.array_equal(bitset.popcount_rows(words), bits.sum(axis=1))
    assert bitset.tail_bits_clear(words, n)
    assert np.array_equal(bitset.pack_columns(np.ascontiguousarray(bits.T)), words)


@settings(max_examples=60, deadline=None)
@given(matrices, st.data())
def test_masked_counts_and_inversion(bits, data):
    rows, n = bits.shape
    mask_bits = data.draw(arrays(np.uint8, (1, n), elements=st.integers(0, 1)))
    words = bitset.pack_rows(bits)
    mask = bitset.pack_rows(mask_bits)[0]
    assert np.array_equal(bitset.and_popcount_rows(words, mask), (bits & mask_bits).sum(axis=1))
    assert np.array_equal(bitset.andnot_popcount_rows(words, mask), (bits & (1 - mask_bits)).sum(axis=1))
    inverted = bitset.invert_rows(words, n)
    assert bitset.tail_bits_clear(inverted, n)
    assert np.array_equal(bitset.unpack_rows(inverted, n), 1 - bits)


def test_bit_layout_is_little_endian_within_words():
    bits = np.zeros((1, 130), dtype=np.uint8)
    bits[0, [0, 63, 64, 129]] = 1
    words = bitset.pack_rows(bits)
    assert words[0, 0] == (1 | (1 << 63)) and words[0, 1] == 1 and words[0, 2] == 2


def test_boolean_arrays_pack_as_ones():
    bits = np.array([[True, False, True]])
    assert bitset.pack_rows(bits.view(np.uint8))[0, 0] == 0b101


def test_shape_errors_are_clear():
    with pytest.raises(ValueError, match="cannot hold exactly"):
        bitset.unpack_rows(np.zeros((1, 2), np.uint64), 10)
    with pytest.raises(ValueError, match="mask has"):
        bitset.and_popcount_rows(np.zeros((1, 2), np.uint64), np.zeros(3, np.uint64))
    with pytest.raises(ValueError):
        bitset.n_words(-1)
    assert bitset.n_words(0) == 0 and bitset.n_words(64) == 1 and bitset.n_words(65) == 2

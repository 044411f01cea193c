# cython: language_level=3
"""The kernels' one priority queue, ``paged_heap.h``: a paged 4-ary min-heap over plain structs.

An entry type is a struct with ``key`` (double) and ``tie`` (ordered: an integer counter or a
``pair``) and any payload; the smallest ``(key, tie)`` is on top. CORELS queues prefixes in it,
riskcert its support and lattice nodes, MOSS its branch-and-bound nodes.
"""

cdef extern from "paged_heap.h" nogil:
    cdef cppclass PagedHeap "gw_paged_heap"[T]:
        size_t size()
        bint empty()
        size_t pages()
        size_t bytes()
        T& at(size_t i)
        T& top()
        void set(size_t i, const T& e)
        bint reserve(size_t max_entries)
        bint reserve_one()
        void push_reserved(const T& e)
        bint push(const T& e)
        void push_or_terminate(const T& e)
        T pop()
        void truncate(size_t n)
        void clear()
        void heapify()

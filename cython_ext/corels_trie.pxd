# cython: language_level=3
"""The CORELS search's prefix trie: a pool of 32-byte nodes in fixed pages, indexed by ``int32``.

A node keeps only its parent, so a prefix is read by walking up. Reference counts (1 while queued,
plus one per live child) free a node and prune up through childless ancestors. Pages come
``CHUNK_PAGES`` at a time from ``gw_big_alloc`` and never move: a worker reads nodes without the
lock while pages are added. Freed slots form an intrusive free list through ``parent``; ``gen``
counts a slot's incarnations so the symmetry map can tell its node from a later occupant.
Everything is inline, ``nogil`` and allocation-checked (``trie_new`` returns -1 when out of memory).
"""

from libc.stdint cimport int64_t, int32_t, uint32_t, uint16_t, uint8_t
from libc.stdlib cimport calloc, free

cdef extern from "corels_kernels.h" nogil:
    void* gw_big_alloc(size_t nbytes)
    void gw_big_free(void* p, size_t nbytes)

cdef enum:
    F_DELETED = 1         # Node.flags: deleted by the symmetry map (so are its descendants)
    F_QUEUED = 2          # Node.flags: counted in the live queue figures
    PAGE_BITS = 16
    PAGE_MASK = 65535
    CHUNK_PAGES = 32
    MAX_PAGES = 32768     # 2^31 node slots: indices stay positive int32


cdef struct Node:       # 32 bytes, no padding
    double err          # weighted errors of the prefix rules (count units)
    double lb           # err + depth * lam + b0  (hierarchical + equivalent-points bound)
    int32_t parent      # while the slot is free: the next free slot (an intrusive free list)
    uint32_t refs       # 1 while queued + number of live children
    uint32_t gen        # incarnation of the slot; map entries compare it to detect slot reuse
    uint16_t ant        # last antecedent
    uint8_t depth
    uint8_t flags


cdef struct PrefixTrie:
    Node** pages        # MAX_PAGES page pointers, allocated once (never moved)
    char** chunks       # the chunks holding the pages, MAX_PAGES // CHUNK_PAGES of them at most
    int64_t n_pages, n_chunks, n_slots
    int32_t free_head   # first free slot, -1 when none
    int64_t n_free
    int64_t live        # nodes in use


cdef inline bint trie_init(PrefixTrie* t) noexcept nogil:
    """Allocate the page tables (pointers only); False when out of memory."""
    t.pages = <Node**>calloc(MAX_PAGES, sizeof(Node*))
    t.chunks = <char**>calloc(MAX_PAGES // CHUNK_PAGES + 1, sizeof(char*))
    t.n_pages = t.n_chunks = t.n_slots = t.n_free = t.live = 0
    t.free_head = -1
    return t.pages != NULL and t.chunks != NULL


cdef inline void trie_clear(PrefixTrie* t) noexcept nogil:
    """Return every page; the trie is empty and usable again."""
    cdef int64_t i
    for i in range(t.n_chunks):
        gw_big_free(t.chunks[i], CHUNK_PAGES * (sizeof(Node) << PAGE_BITS))
    t.n_chunks = t.n_pages = t.n_slots = t.n_free = t.live = 0
    t.free_head = -1


cdef inline void trie_destroy(PrefixTrie* t) noexcept nogil:
    if t.chunks != NULL:
        trie_clear(t)
    free(t.pages)
    free(t.chunks)
    t.pages = NULL
    t.chunks = NULL


cdef inline size_t trie_bytes(const PrefixTrie* t) noexcept nogil:
    return t.n_pages * (sizeof(Node) << PAGE_BITS)


cdef inline Node* trie_node(const PrefixTrie* t, int32_t idx) noexcept nogil:
    return &t.pages[idx >> PAGE_BITS][idx & PAGE_MASK]


cdef inline int32_t trie_new(PrefixTrie* t, int32_t parent, uint16_t ant, uint8_t depth, double err,
                             double lb) noexcept nogil:
    """A node under ``parent`` (-1: the root), holding one reference; -1 when out of memory."""
    cdef int32_t idx
    cdef Node nd
    cdef char* chunk
    nd.err = err
    nd.lb = lb
    nd.parent = parent
    nd.refs = 1
    nd.ant = ant
    nd.depth = depth
    nd.flags = 0
    if t.free_head >= 0:
        idx = t.free_head
        t.free_head = trie_node(t, idx).parent
        t.n_free -= 1
        nd.gen = trie_node(t, idx).gen
    else:
        nd.gen = 0
        if (t.n_slots & PAGE_MASK) == 0:
            if t.n_pages >= MAX_PAGES:
                return -1
            if t.n_pages % CHUNK_PAGES == 0:
                chunk = <char*>gw_big_alloc(CHUNK_PAGES * (sizeof(Node) << PAGE_BITS))
                if chunk == NULL:
                    return -1
                t.chunks[t.n_chunks] = chunk
                t.n_chunks += 1
            t.pages[t.n_pages] = <Node*>(t.chunks[t.n_chunks - 1] + (t.n_pages % CHUNK_PAGES)
                                         * (sizeof(Node) << PAGE_BITS))
            t.n_pages += 1
        idx = <int32_t>t.n_slots
        t.n_slots += 1
    trie_node(t, idx)[0] = nd
    if parent >= 0:
        trie_node(t, parent).refs += 1
    t.live += 1
    return idx


cdef inline void trie_release(PrefixTrie* t, int32_t idx) noexcept nogil:
    """Drop one reference; free the node and prune up through childless ancestors."""
    cdef int32_t parent
    cdef Node* nd
    while idx >= 0:
        nd = trie_node(t, idx)
        nd.refs -= 1
        if nd.refs > 0:
            return
        parent = nd.parent
        t.live -= 1
        # a new incarnation; a slot whose counter would wrap is retired, so a map entry's
        # (node, gen) can never match a later occupant of its slot
        if nd.gen == <uint32_t>0xFFFFFFFF:
            idx = parent
            continue
        nd.gen += 1
        nd.parent = t.free_head
        t.free_head = idx
        t.n_free += 1
        idx = parent


cdef inline bint trie_dead(const PrefixTrie* t, int32_t idx) noexcept nogil:
    """True when the node or an ancestor was deleted by the symmetry map."""
    while idx >= 0:
        if trie_node(t, idx).flags & F_DELETED:
            return True
        idx = trie_node(t, idx).parent
    return False

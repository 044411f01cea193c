# cython: language_level=3
"""The CORELS search's prefix trie: a pool of 16-byte nodes in fixed pages, indexed by ``int32``.

A node keeps only its parent, so a prefix is read by walking up. Reference counts (1 while queued,
plus one per live child) free a node and prune up through childless ancestors. Pages come
``CHUNK_PAGES`` at a time from ``gw_big_alloc`` and never move: a worker reads nodes without the
lock while pages are added. Freed slots form an intrusive free list through ``parent`` and carry
``F_FREE``; the symmetry map tells its node from a later occupant of the slot by the occupant's
prefix (``Search._recorded``), so a node needs no generation counter.

What a node does not need is not in it (issue 27): a prefix's bound is its queue key under the
lower-bound policy, so it is stored (in a side array of doubles, paged like the nodes) only when
the trie is told to ``keep_lb``; a prefix's error is an exact integer when the class weights are
integers, and then it sits in the node as a ``uint32``, otherwise in a side array of doubles.
``trie_init`` keeps both side arrays (any caller gets the old semantics); the search calls
``trie_compact`` before its first node. Read them with ``trie_err`` and ``trie_lb``.
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
    F_FREE = 4            # Node.flags: the slot is on the free list
    F_UNCHECKED = 8       # Node.flags: queued without the symmetry map's check (never deleted by it)
    PAGE_BITS = 16
    PAGE_MASK = 65535
    CHUNK_PAGES = 32
    MAX_PAGES = 32768     # 2^31 node slots: indices stay positive int32


cdef struct Node:       # 16 bytes, no padding
    int32_t parent      # while the slot is free: the next free slot (an intrusive free list)
    uint32_t refs       # 1 while queued + number of live children
    uint32_t err        # the prefix's error in count units, when the trie's errors are integral
    uint16_t ant        # last antecedent
    uint8_t depth
    uint8_t flags


cdef struct PrefixTrie:
    Node** pages        # MAX_PAGES page pointers, allocated once (never moved)
    double** lbs        # side pages of bounds (keep_lb), parallel to pages
    double** errs       # side pages of errors (not int_err), parallel to pages
    char** chunks       # the chunks holding the pages, MAX_PAGES // CHUNK_PAGES of them at most
    char** lb_chunks
    char** err_chunks
    int64_t n_pages, n_chunks, n_slots
    int32_t free_head   # first free slot, -1 when none
    int64_t n_free
    int64_t live        # nodes in use
    bint keep_lb        # bounds stored (else the caller keeps them, e.g. as the queue key)
    bint int_err        # errors are integers below 2^32, stored in Node.err


cdef inline bint trie_init(PrefixTrie* t) noexcept nogil:
    """Allocate the page tables (pointers only); False when out of memory. Bounds and errors
    are kept as doubles until ``trie_compact`` says otherwise."""
    cdef int n_chunks = MAX_PAGES // CHUNK_PAGES + 1
    t.pages = <Node**>calloc(MAX_PAGES, sizeof(Node*))
    t.lbs = <double**>calloc(MAX_PAGES, sizeof(double*))
    t.errs = <double**>calloc(MAX_PAGES, sizeof(double*))
    t.chunks = <char**>calloc(n_chunks, sizeof(char*))
    t.lb_chunks = <char**>calloc(n_chunks, sizeof(char*))
    t.err_chunks = <char**>calloc(n_chunks, sizeof(char*))
    t.n_pages = t.n_chunks = t.n_slots = t.n_free = t.live = 0
    t.free_head = -1
    t.keep_lb = True
    t.int_err = False
    return (t.pages != NULL and t.lbs != NULL and t.errs != NULL and t.chunks != NULL
            and t.lb_chunks != NULL and t.err_chunks != NULL)


cdef inline void trie_compact(PrefixTrie* t, bint keep_lb, bint int_err) noexcept nogil:
    """Choose what the nodes store (only while the trie holds no pages): ``keep_lb`` False when
    the caller keeps each queued node's bound itself; ``int_err`` True when every error is an
    integer in [0, 2^32) (integral class weights), so it fits the node exactly."""
    if t.n_chunks == 0:
        t.keep_lb = keep_lb
        t.int_err = int_err


cdef inline size_t _chunk_bytes(size_t item) noexcept nogil:
    return CHUNK_PAGES * (item << PAGE_BITS)


cdef inline void trie_clear(PrefixTrie* t) noexcept nogil:
    """Return every page; the trie is empty and usable again."""
    cdef int64_t i
    for i in range(t.n_chunks):
        gw_big_free(t.chunks[i], _chunk_bytes(sizeof(Node)))
        if t.lb_chunks[i] != NULL:
            gw_big_free(t.lb_chunks[i], _chunk_bytes(sizeof(double)))
            t.lb_chunks[i] = NULL
        if t.err_chunks[i] != NULL:
            gw_big_free(t.err_chunks[i], _chunk_bytes(sizeof(double)))
            t.err_chunks[i] = NULL
    t.n_chunks = t.n_pages = t.n_slots = t.n_free = t.live = 0
    t.free_head = -1


cdef inline void trie_destroy(PrefixTrie* t) noexcept nogil:
    if t.chunks != NULL and t.lb_chunks != NULL and t.err_chunks != NULL:
        trie_clear(t)
    free(t.pages)
    free(t.lbs)
    free(t.errs)
    free(t.chunks)
    free(t.lb_chunks)
    free(t.err_chunks)
    t.pages = NULL
    t.lbs = NULL
    t.errs = NULL
    t.chunks = NULL
    t.lb_chunks = NULL
    t.err_chunks = NULL


cdef inline size_t trie_node_bytes(const PrefixTrie* t) noexcept nogil:
    """Bytes per node slot: the node and its side entries."""
    return sizeof(Node) + (sizeof(double) if t.keep_lb else 0) + (0 if t.int_err else sizeof(double))


cdef inline size_t trie_bytes(const PrefixTrie* t) noexcept nogil:
    return t.n_pages * (trie_node_bytes(t) << PAGE_BITS)


cdef inline Node* trie_node(const PrefixTrie* t, int32_t idx) noexcept nogil:
    return &t.pages[idx >> PAGE_BITS][idx & PAGE_MASK]


cdef inline double trie_err(const PrefixTrie* t, int32_t idx) noexcept nogil:
    """The prefix's error (count units), exactly as it was stored."""
    if t.int_err:
        return <double>t.pages[idx >> PAGE_BITS][idx & PAGE_MASK].err
    return t.errs[idx >> PAGE_BITS][idx & PAGE_MASK]


cdef inline double trie_lb(const PrefixTrie* t, int32_t idx) noexcept nogil:
    """The prefix's bound; only for a trie that keeps them (``keep_lb``)."""
    return t.lbs[idx >> PAGE_BITS][idx & PAGE_MASK]


cdef inline uint32_t trie_refs(const PrefixTrie* t, int32_t idx) noexcept nogil:
    return trie_node(t, idx).refs


cdef inline bint _trie_add_chunk(PrefixTrie* t) noexcept nogil:
    cdef char* chunk = <char*>gw_big_alloc(_chunk_bytes(sizeof(Node)))
    cdef char* lbc = NULL
    cdef char* errc = NULL
    if chunk == NULL:
        return False
    if t.keep_lb:
        lbc = <char*>gw_big_alloc(_chunk_bytes(sizeof(double)))
    if not t.int_err:
        errc = <char*>gw_big_alloc(_chunk_bytes(sizeof(double)))
    if (t.keep_lb and lbc == NULL) or (not t.int_err and errc == NULL):
        gw_big_free(chunk, _chunk_bytes(sizeof(Node)))
        if lbc != NULL:
            gw_big_free(lbc, _chunk_bytes(sizeof(double)))
        if errc != NULL:
            gw_big_free(errc, _chunk_bytes(sizeof(double)))
        return False
    t.chunks[t.n_chunks] = chunk
    t.lb_chunks[t.n_chunks] = lbc
    t.err_chunks[t.n_chunks] = errc
    t.n_chunks += 1
    return True


cdef inline int32_t trie_new(PrefixTrie* t, int32_t parent, uint16_t ant, uint8_t depth, double err,
                             double lb) noexcept nogil:
    """A node under ``parent`` (-1: the root), holding one reference; -1 when out of memory.
    ``lb`` is stored only when the trie keeps bounds; ``err`` must be integral under ``int_err``."""
    cdef int32_t idx
    cdef Node nd
    cdef int64_t k
    nd.parent = parent
    nd.err = <uint32_t>err if t.int_err else 0
    nd.ant = ant
    nd.depth = depth
    nd.flags = 0
    if t.free_head >= 0:
        idx = t.free_head
        t.free_head = trie_node(t, idx).parent
        t.n_free -= 1
    else:
        if (t.n_slots & PAGE_MASK) == 0:
            if t.n_pages >= MAX_PAGES:
                return -1
            if t.n_pages % CHUNK_PAGES == 0 and not _trie_add_chunk(t):
                return -1
            k = t.n_pages % CHUNK_PAGES
            t.pages[t.n_pages] = <Node*>(t.chunks[t.n_chunks - 1] + k * (sizeof(Node) << PAGE_BITS))
            if t.keep_lb:
                t.lbs[t.n_pages] = <double*>(t.lb_chunks[t.n_chunks - 1] + k * (sizeof(double) << PAGE_BITS))
            if not t.int_err:
                t.errs[t.n_pages] = <double*>(t.err_chunks[t.n_chunks - 1] + k * (sizeof(double) << PAGE_BITS))
            t.n_pages += 1
        idx = <int32_t>t.n_slots
        t.n_slots += 1
    nd.refs = 1
    trie_node(t, idx)[0] = nd
    if t.keep_lb:
        t.lbs[idx >> PAGE_BITS][idx & PAGE_MASK] = lb
    if not t.int_err:
        t.errs[idx >> PAGE_BITS][idx & PAGE_MASK] = err
    if parent >= 0:
        trie_node(t, parent).refs += 1
    t.live += 1
    return idx


cdef inline int32_t trie_new_counted(PrefixTrie* t, int32_t parent, uint16_t ant, uint8_t depth, double err,
                                     double lb, int64_t* max_live) noexcept nogil:
    """``trie_new``, the live nodes' high-water mark kept in ``max_live``."""
    cdef int32_t idx = trie_new(t, parent, ant, depth, err, lb)
    if t.live > max_live[0]:
        max_live[0] = t.live
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
        nd.flags = F_FREE
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


cdef inline int trie_walk(const PrefixTrie* t, int32_t ni, int depth, uint16_t* path, double* perr) noexcept nogil:
    """The prefix of ``ni`` into ``path`` and the errors of its first k rules into ``perr[k]``,
    leaf to root; -1 when a deleted ancestor kills the whole subtree."""
    cdef int32_t cur = ni
    cdef int k = depth
    perr[0] = 0.0
    while cur >= 0 and k > 0:
        if trie_node(t, cur).flags & F_DELETED:
            return -1
        perr[k] = trie_err(t, cur)
        k -= 1
        path[k] = trie_node(t, cur).ant
        cur = trie_node(t, cur).parent
    if cur >= 0 and trie_node(t, cur).flags & F_DELETED:
        return -1
    return 0

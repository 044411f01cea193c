# cython: language_level=3
"""The storage of the CORELS symmetry map: open addressing over 8-byte slots plus a record arena.

Linear probing, no allocation per entry: a slot holds the high half of the 64-bit key (its low
bits pick the home slot) and the offset of the entry's record in a paged arena of ``uint16``. A
record is the representative prefix's length, its antecedent ids, then a ``MapRecord`` (unaligned:
read and written with memcpy). Records never straddle a page and never move. What counts as the
same class, and when an entry is replaced, is the search's (``Search._map_admit``, Algorithm 6).
"""

from libc.stdint cimport uint64_t, int32_t, uint32_t, uint16_t
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcpy

from bitops cimport splitmix64

cdef extern from "corels_kernels.h" nogil:
    void* gw_big_alloc(size_t nbytes)
    void gw_big_free(void* p, size_t nbytes)

cdef enum:
    ARENA_BITS = 16
    ARENA_MASK = 65535
    ARENA_PAGES = 65535   # offsets stay below 2^32 - 2^16


cdef struct MapEntry:   # one slot of the open-addressing map, 8 bytes
    uint32_t tag        # high half of the 64-bit key; its low bits pick the home slot
    uint32_t off        # the entry's record in the arena; 0 = empty slot


cdef struct MapRecord:  # stored after the representative's ids in the arena (unaligned)
    double lb
    int32_t node
    uint32_t gen        # the node's incarnation when stored


cdef struct SymmetryTable:
    MapEntry* slots
    size_t cap, count
    uint16_t** pages    # ARENA_PAGES page pointers, allocated once
    size_t n_pages
    uint32_t top        # the arena's next free offset


cdef inline uint64_t vector_hash(const uint64_t* vec, int n_words) noexcept nogil:
    """The map key of a bit vector (captured map: the uncaptured samples)."""
    cdef uint64_t h = <uint64_t>0x243F6A8885A308D3
    cdef int i
    for i in range(n_words):
        h = splitmix64(h ^ vec[i])
    return h


cdef inline bint table_init(SymmetryTable* t) noexcept nogil:
    """Allocate the arena's page table (pointers only); False when out of memory."""
    t.slots = NULL
    t.cap = t.count = t.n_pages = 0
    t.top = 1             # offset 0 marks an empty slot
    t.pages = <uint16_t**>calloc(ARENA_PAGES, sizeof(uint16_t*))
    return t.pages != NULL


cdef inline void table_clear(SymmetryTable* t) noexcept nogil:
    """Drop every entry and record; the table is empty and usable again."""
    gw_big_free(t.slots, t.cap * sizeof(MapEntry))
    t.slots = NULL
    t.cap = 0
    t.count = 0
    while t.n_pages > 0:
        t.n_pages -= 1
        free(t.pages[t.n_pages])
    t.top = 1


cdef inline void table_destroy(SymmetryTable* t) noexcept nogil:
    if t.pages != NULL:
        table_clear(t)
    free(t.pages)
    t.pages = NULL


cdef inline size_t table_bytes(const SymmetryTable* t) noexcept nogil:
    return t.n_pages * (2 << ARENA_BITS) + t.cap * sizeof(MapEntry)


cdef inline uint16_t* table_ids(const SymmetryTable* t, uint32_t off) noexcept nogil:
    """The record at ``off``: ``ids[0]`` is the length, ``ids[1:1 + length]`` the antecedents."""
    return &t.pages[off >> ARENA_BITS][off & ARENA_MASK]


cdef inline uint32_t table_put(SymmetryTable* t, int n_ids) noexcept nogil:
    """Room for a record of ``n_ids`` ids; 0 when out of memory (or past 2^32 - 2^16)."""
    cdef uint64_t off = t.top
    cdef uint16_t* page
    cdef uint64_t need = n_ids + 1 + sizeof(MapRecord) // 2
    if (off & ARENA_MASK) + need > ARENA_MASK + 1:
        off = ((off >> ARENA_BITS) + 1) << ARENA_BITS
    if (off >> ARENA_BITS) >= ARENA_PAGES:
        return 0
    if (off >> ARENA_BITS) >= t.n_pages:
        page = <uint16_t*>malloc(2 << ARENA_BITS)
        if page == NULL:
            return 0
        t.pages[t.n_pages] = page
        t.n_pages += 1
    t.top = <uint32_t>(off + need)
    return <uint32_t>off


cdef inline bint table_grow(SymmetryTable* t) noexcept nogil:
    """Double the table (or create it); False when out of memory. The home slot comes from
    the tag, so moving entries reads nothing but the table."""
    cdef size_t cap = 1024 if t.cap == 0 else 2 * t.cap, i, pos
    cdef MapEntry* slots = <MapEntry*>gw_big_alloc(cap * sizeof(MapEntry))
    cdef MapEntry* old = t.slots
    if slots == NULL:
        return False
    for i in range(t.cap):
        if old[i].off == 0:
            continue
        pos = old[i].tag & (cap - 1)
        while slots[pos].off != 0:
            pos = (pos + 1) & (cap - 1)
        slots[pos] = old[i]
    gw_big_free(old, t.cap * sizeof(MapEntry))
    t.slots = slots
    t.cap = cap
    return True


cdef inline void table_record(const SymmetryTable* t, uint32_t off, MapRecord* rec) noexcept nogil:
    cdef uint16_t* ids = table_ids(t, off)
    memcpy(rec, ids + 1 + ids[0], sizeof(MapRecord))


cdef inline void table_set_record(SymmetryTable* t, uint32_t off, const MapRecord* rec) noexcept nogil:
    cdef uint16_t* ids = table_ids(t, off)
    memcpy(ids + 1 + ids[0], rec, sizeof(MapRecord))

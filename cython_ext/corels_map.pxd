# cython: language_level=3
"""The storage of the CORELS symmetry map: open addressing over 8-byte slots plus a record arena.

Linear probing, no allocation per entry: a slot holds the high half of the 64-bit key (its low
bits pick the home slot) and the offset of the entry's record in a paged arena of ``uint16``. A
record is the representative prefix's length and antecedent ids, then its tail: the prefix's
score and its node (``MapRecord`` once decoded). Records never straddle a
page and never move. What counts as the same class, and when an entry is replaced, is the
search's (``Search._map_admit``, Algorithm 6).

Compact records (issue 27, ``table_compact``): with at most 256 antecedents the length and ids
are bytes; an integral score is a ``uint32``, and when it needs at most 17 bits the score and
the node (31 bits) share 48 bits. A record of a 5-rule prefix is then 12 bytes instead of 28. Read records with ``table_len``, ``table_id``
and ``table_record``, write them with ``table_set_ids`` and ``table_set_record``.
"""

from libc.stdint cimport uint64_t, int32_t, uint32_t, uint16_t, uint8_t
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


cdef struct MapRecord:  # a record's tail, decoded (stored after the ids, unaligned)
    double score        # what the search compares (the representative's prefix error)
    int32_t node


cdef struct SymmetryTable:
    MapEntry* slots
    size_t cap, count
    uint16_t** pages    # ARENA_PAGES page pointers, allocated once
    size_t n_pages
    uint32_t top        # the arena's next free offset
    bint byte_ids       # length and ids stored as bytes (at most 256 antecedents)
    bint int_score      # the score stored as a uint32 (it is an integer below 2^32)
    int score_bits      # > 0: score and node packed in 48 bits (score below 2^score_bits)


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
    t.byte_ids = False
    t.int_score = False
    t.score_bits = 0
    t.pages = <uint16_t**>calloc(ARENA_PAGES, sizeof(uint16_t*))
    return t.pages != NULL


cdef inline void table_compact(SymmetryTable* t, bint byte_ids, bint int_score,
                               double max_score) noexcept nogil:
    """Choose the record layout (only while the table holds no record): ids as bytes when every
    antecedent id is below 256; the score as a uint32 when every score is an integer below 2^32,
    packed with the node when it is also at most ``max_score`` < 2^17."""
    cdef int bits = 1
    if t.top == 1:
        t.byte_ids = byte_ids
        t.int_score = int_score
        t.score_bits = 0
        if int_score and 0 <= max_score < 131072:
            while (<double>(1 << bits)) <= max_score:
                bits += 1
            t.score_bits = bits


cdef inline int _id_units(const SymmetryTable* t, int n_ids) noexcept nogil:
    return (n_ids + 2) >> 1 if t.byte_ids else n_ids + 1


cdef inline int _tail_units(const SymmetryTable* t) noexcept nogil:
    if t.score_bits > 0:
        return 3                              # 48 bits: score | node << score_bits
    return (2 if t.int_score else 4) + 2      # score, node


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
    """The raw record at ``off`` (for prefetching; read it with ``table_len`` and ``table_id``)."""
    return &t.pages[off >> ARENA_BITS][off & ARENA_MASK]


cdef inline int table_len(const SymmetryTable* t, uint32_t off) noexcept nogil:
    """The representative prefix's length."""
    if t.byte_ids:
        return (<uint8_t*>table_ids(t, off))[0]
    return table_ids(t, off)[0]


cdef inline uint16_t table_id(const SymmetryTable* t, uint32_t off, int i) noexcept nogil:
    """The representative's ``i``-th antecedent."""
    if t.byte_ids:
        return (<uint8_t*>table_ids(t, off))[1 + i]
    return table_ids(t, off)[1 + i]


cdef inline void table_set_ids(SymmetryTable* t, uint32_t off, int n_ids, const uint16_t* ids) noexcept nogil:
    """Write the length and ids of the record at ``off`` (room made by ``table_put``)."""
    cdef int i
    cdef uint8_t* b
    cdef uint16_t* u = table_ids(t, off)
    if t.byte_ids:
        b = <uint8_t*>u
        b[0] = <uint8_t>n_ids
        for i in range(n_ids):
            b[1 + i] = <uint8_t>ids[i]
    else:
        u[0] = <uint16_t>n_ids
        for i in range(n_ids):
            u[1 + i] = ids[i]


cdef inline uint32_t table_put(SymmetryTable* t, int n_ids) noexcept nogil:
    """Room for a record of ``n_ids`` ids; 0 when out of memory (or past 2^32 - 2^16)."""
    cdef uint64_t off = t.top
    cdef uint16_t* page
    cdef uint64_t need = _id_units(t, n_ids) + _tail_units(t)
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


cdef inline size_t table_put_bytes(const SymmetryTable* t, int n_ids) noexcept nogil:
    """The bytes ``table_put`` would allocate for a record of ``n_ids`` ids: a new arena page,
    or nothing when the record fits the current one."""
    cdef uint64_t off = t.top
    cdef uint64_t need = _id_units(t, n_ids) + _tail_units(t)
    if (off & ARENA_MASK) + need > ARENA_MASK + 1:
        off = ((off >> ARENA_BITS) + 1) << ARENA_BITS
    return (2 << ARENA_BITS) if (off >> ARENA_BITS) >= t.n_pages else 0


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
    """Decode the tail of the record at ``off`` (whose length and ids are written)."""
    cdef uint16_t* p = table_ids(t, off) + _id_units(t, table_len(t, off))
    cdef uint32_t u32
    cdef uint64_t w
    if t.score_bits > 0:
        w = (<uint64_t>p[0]) | ((<uint64_t>p[1]) << 16) | ((<uint64_t>p[2]) << 32)
        rec.score = <double>(w & ((<uint64_t>1 << t.score_bits) - 1))
        rec.node = <int32_t>((w >> t.score_bits) & 0x7FFFFFFF)
        return
    if t.int_score:
        memcpy(&u32, p, 4)
        rec.score = <double>u32
        p += 2
    else:
        memcpy(&rec.score, p, 8)
        p += 4
    memcpy(&rec.node, p, 4)


cdef inline void table_set_record(SymmetryTable* t, uint32_t off, const MapRecord* rec) noexcept nogil:
    """Encode ``rec`` as the tail of the record at ``off`` (whose length and ids are written)."""
    cdef uint16_t* p = table_ids(t, off) + _id_units(t, table_len(t, off))
    cdef uint32_t u32
    cdef uint64_t w
    if t.score_bits > 0:      # node >= 0 (31 bits), score < 2^score_bits <= 2^17
        w = (<uint64_t>rec.score) | ((<uint64_t>rec.node) << t.score_bits)
        p[0] = <uint16_t>(w & 0xFFFF)
        p[1] = <uint16_t>((w >> 16) & 0xFFFF)
        p[2] = <uint16_t>((w >> 32) & 0xFFFF)
        return
    if t.int_score:
        u32 = <uint32_t>rec.score
        memcpy(p, &u32, 4)
        p += 2
    else:
        memcpy(p, &rec.score, 8)
        p += 4
    memcpy(p, &rec.node, 4)


cdef inline dict table_breakdown(const SymmetryTable* t):
    """Where the map's bytes go: its slot table and record arena, the bytes one record's tail
    takes (score, node, generation; the ids come before it), whether ids are single bytes."""
    cdef size_t slots = t.cap * sizeof(MapEntry)
    return {
        "map_slots": int(slots),
        "map_records": int(table_bytes(t) - slots),
        "record_tail_bytes": 6 if t.score_bits > 0 else (4 if t.int_score else 8) + 4,
        "byte_ids": bool(t.byte_ids),
    }

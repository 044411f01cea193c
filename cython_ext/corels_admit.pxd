# cython: language_level=3
"""The CORELS search's symmetry map and its admission (Algorithm 6, Theorem 15).

``corels.Search`` holds one ``SymmetryMap``: the table (``corels_map.pxd``: slots, records, arena)
and the rules a child meets there. A child's class is its antecedent set (the prefix map) or the
samples it leaves uncaptured (the captured map); ``map_admit`` finds the class's entry and says
whether the child is rejected, new, better than the record or unverifiable, ``map_write`` records
it. Under a fairness constraint (``fair``) a class also fixes the same confusion cells in every
group: the key mixes them in and a match compares them. Ties of prefix error go to the first prefix in lexicographic order (``map_earlier_tie``), the
order the search's reordering check uses too (docs/maintainers/corels-proofs.md). Search keeps what
touches its queue: which node a replaced record named (``map_recorded``) leaves its live figures.
A struct and inline ``nogil`` functions, as ``corels_disk.pxd``: a cdef class shared between
extension modules cannot be imported under its installed name.
"""

from libc.stdint cimport uint64_t, int64_t, int32_t, uint32_t, uint16_t, uint8_t

from corels_problem cimport CorelsProblem, problem_exact_errors
from corels_fairness cimport (
    FAIR_CELLS, FairProblem, FairScratch, fair_prefix, fair_same_cells, fair_cells_key, fair_child_cells, fair_raise,
)
from corels_trie cimport Node, PrefixTrie, F_FREE, F_UNCHECKED, trie_node
from corels_map cimport (
    MapEntry, MapRecord, SymmetryTable, vector_hash, table_bytes, table_ids, table_grow, table_id, table_len, table_put, table_put_bytes,
    table_record, table_set_ids, table_set_record,
)

cdef extern from "corels_kernels.h" nogil:
    void gw_prefetch(const void* p)

cdef enum:
    MAP_NONE = 0
    MAP_PREFIX = 1
    MAP_CAPTURED = 2


cdef struct SymmetryMap:
    SymmetryTable table
    int kind                # MAP_NONE, MAP_PREFIX or MAP_CAPTURED
    bint length_capped      # a length cap below M: Theorem 15 needs the kept prefix no longer
    bint exact_ties         # weighted counts exact in doubles: ties of prefix errors are decidable
    const FairProblem* fair # a fairness constraint (NULL: none): a class also fixes the same cells
    bint unseen_orderings   # the prefix map had no room for a new set (``map_full``): orderings of the
                            # sets it does not hold no longer meet here, so the search checks them


cdef struct MapChild:       # a child as the map reads it
    const uint16_t* ids     # its prefix, in order
    const uint8_t* in_prefix   # 1 at the ids of its parent's prefix (its last id is ids[n_ids - 1])
    const uint64_t* f       # the samples it leaves uncaptured (the captured map)
    uint64_t* tmp           # W words of scratch
    int n_ids
    const double* cells     # under a constraint: the cells the child fixes (corels_fairness.pxd)
    FairScratch* fs         # and the scratch and counters to compute a representative's
    int64_t* acc


cdef inline bint _cells_of(const SymmetryMap* sm, const CorelsProblem* pb, const uint16_t* ids, int length,
                           const MapChild* c) noexcept nogil:
    """The prefix ``ids[:length]`` fixes the child's cells."""
    cdef double cells[FAIR_CELLS]
    fair_prefix(sm.fair, pb, ids, length, c.fs, cells, c.acc)
    return fair_same_cells(sm.fair, cells, c.cells)


cdef inline bint map_same_cells(const SymmetryMap* sm, const CorelsProblem* pb, uint32_t off, int length,
                                const MapChild* c) noexcept nogil:
    """Under a constraint: the representative at ``off`` fixes the child's cells in every group
    (docs/maintainers/corels-fairness.md, "The maps keyed on the fixed cells")."""
    cdef uint16_t ids[256]
    cdef int i
    for i in range(length):
        ids[i] = table_id(&sm.table, off, i)
    return _cells_of(sm, pb, ids, length, c)


cdef inline bint map_same_class(const SymmetryMap* sm, const CorelsProblem* pb, const MapEntry* e,
                                const MapChild* c) noexcept nogil:
    """True when the entry's representative has the child's antecedent set (prefix map) or
    leaves the same samples uncaptured (captured map)."""
    cdef int length = table_len(&sm.table, e.off), i, j
    cdef uint16_t a
    if sm.kind == MAP_PREFIX:
        if length != c.n_ids:
            return False
        for i in range(c.n_ids):   # every stored id must be in the child prefix
            a = table_id(&sm.table, e.off, i)
            if a >= pb.M or (c.in_prefix[a] == 0 and a != c.ids[c.n_ids - 1]):
                return False
        return sm.fair == NULL or map_same_cells(sm, pb, e.off, length, c)
    for i in range(pb.W):
        c.tmp[i] = pb.mask[i]
    for i in range(length):
        a = table_id(&sm.table, e.off, i)
        for j in range(pb.W):
            c.tmp[j] &= ~pb.caps[<size_t>a * pb.W + j]
    for i in range(pb.W):
        if c.tmp[i] != c.f[i]:
            return False
    return sm.fair == NULL or map_same_cells(sm, pb, e.off, length, c)


cdef inline MapEntry* map_probe(const SymmetryMap* sm, const CorelsProblem* pb, uint32_t tag,
                                const MapChild* c) noexcept nogil:
    """The entry of the child's class, or the empty slot where it would go (``off == 0``). Keys
    that share a tag are told apart by the representative, so a hash collision never prunes."""
    cdef MapEntry* e
    cdef size_t pos = tag & (sm.table.cap - 1)
    while True:
        e = &sm.table.slots[pos]
        if e.off == 0 or (e.tag == tag and map_same_class(sm, pb, e, c)):
            return e
        pos = (pos + 1) & (sm.table.cap - 1)


cdef inline double map_record_lb(const CorelsProblem* pb, const MapRecord* rec, int length, double b0) noexcept nogil:
    """A record's bound, recomputed from its prefix error exactly as the expansion computed it:
    the representative and the child leave the same samples uncaptured (that is what the same
    class means for both maps), so they share ``b0`` to the bit."""
    return (rec.score + length * pb.lamW) + b0


cdef inline bint map_earlier_tie(const SymmetryMap* sm, uint32_t off, double err, const MapRecord* rec,
                                 const MapChild* c) noexcept nogil:
    """The prefix map's tie-break: the child has the record's error exactly and comes first in
    lexicographic order of antecedent ids. Prefixes of one set are ordered by (error, ids), the
    order the reordering check uses too, so every dominance the search applies points the same
    way and no chain of ties can lose the optimum."""
    cdef int i
    cdef uint16_t a
    if sm.kind != MAP_PREFIX or not sm.exact_ties or err != rec.score:
        return False
    for i in range(c.n_ids):
        a = table_id(&sm.table, off, i)
        if c.ids[i] != a:
            return c.ids[i] < a
    return False


cdef inline MapEntry* map_full(SymmetryMap* sm, int* verdict) noexcept nogil:
    """No room for a new class: the child goes in unchecked (verdict 3, sound). From then on the
    prefix map no longer meets every ordering of a set, so the search checks orderings itself
    (``unseen_orderings``: the reordering check, corels_reorder.pxd; not under a constraint,
    whose orderings differ in cells)."""
    verdict[0] = 3
    sm.unseen_orderings = sm.kind == MAP_PREFIX and sm.fair == NULL
    return NULL


cdef inline MapEntry* map_admit(SymmetryMap* sm, const CorelsProblem* pb, size_t budget, uint64_t key,
                                const MapChild* c, double lb, double err, double b0, int* verdict) noexcept nogil:
    """Algorithm 6. verdict: 0 reject, 1 new entry, 2 better than the entry, 3 unverifiable.

    The entry stores its representative prefix in order. A new entry is an empty slot, filled only
    by ``map_write``. ``budget``: the map's bytes past which it takes no new class (0: no limit).
    """
    cdef MapEntry* e
    cdef uint32_t tag = <uint32_t>(key >> 32)
    cdef int length, n_ids = c.n_ids
    cdef MapRecord rec
    cdef bint grow = (sm.table.cap >> 32) == 0 and 4 * (sm.table.count + 1) > 3 * sm.table.cap
    # under a budget the map stops taking classes before it would pass it: a new class needs
    # room for its record, a doubling room for both slot tables while it moves the entries
    cdef bint frozen = budget > 0 and (
        table_bytes(&sm.table) + table_put_bytes(&sm.table, n_ids) > budget
        or grow and table_bytes(&sm.table) + max(2 * sm.table.cap, <size_t>1024) * sizeof(MapEntry) > budget)
    if not frozen and grow and not table_grow(&sm.table):
        return map_full(sm, verdict)     # no memory for the map
    if 8 * (sm.table.count + 1) > 7 * sm.table.cap:
        return map_full(sm, verdict)     # a full table of 2^32 slots (or none yet, at its budget)
    e = map_probe(sm, pb, tag, c)
    if e.off == 0:
        if frozen:
            return map_full(sm, verdict) # the map at its budget: existing classes still prune
        verdict[0] = 1
        e.tag = tag
        return e
    length = table_len(&sm.table, e.off)
    table_record(&sm.table, e.off, &rec)
    # Theorem 15 maps each extension of one prefix to an extension of the other of the same
    # added length; under a length cap below M that needs the kept prefix to be no longer
    if lb < map_record_lb(pb, &rec, length, b0) or map_earlier_tie(sm, e.off, err, &rec, c):
        if sm.length_capped and n_ids > length:
            verdict[0] = 3
            return NULL
        if frozen and sm.kind != MAP_PREFIX and n_ids > length:
            verdict[0] = 3           # a longer record would need new room: the child goes unchecked
            return NULL
        verdict[0] = 2
        return e
    if sm.length_capped and length > n_ids:
        verdict[0] = 3
        return NULL
    if sm.fair != NULL and sm.kind != MAP_PREFIX and lb == map_record_lb(pb, &rec, length, b0):
        verdict[0] = 3               # under a constraint the captured map prunes no tie (it breaks
        return NULL                  # ties by arrival, which the twins' order does not follow)
    verdict[0] = 0
    return NULL


cdef inline bint map_recorded(const SymmetryMap* sm, const CorelsProblem* pb, const PrefixTrie* trie, int32_t x,
                              int32_t child, const MapChild* c) noexcept nogil:
    """True when slot ``x``, named by a record of the child's class, still holds the node the
    record was written for: a live node, admitted through the map, in the child's class, and not
    the ``child`` itself (allocated just before, it may have taken the freed slot).

    Every admission to a class rewrites its record to name the admitted node, so a live, checked
    node of that class in the named slot is the last one written, with the record's bound; a node
    queued unchecked (``F_UNCHECKED``) or a free slot is never it. Called only when a child
    replaces a record, so the walk up the trie is rare.
    """
    cdef const Node* nd
    cdef int i, k, n_ids = c.n_ids, depth
    cdef uint16_t a
    cdef uint16_t ids[256]
    if x < 0 or x >= trie.n_slots or x == child:
        return False
    nd = trie_node(trie, x)
    if nd.flags & (F_FREE | F_UNCHECKED):
        return False
    depth = nd.depth
    if sm.kind == MAP_PREFIX:
        if nd.depth != n_ids:
            return False
        for k in range(n_ids):   # distinct antecedents, each in the child's set: the same set
            a = nd.ant
            if c.in_prefix[a] == 0 and a != c.ids[n_ids - 1]:
                return False
            ids[n_ids - 1 - k] = a
            nd = trie_node(trie, nd.parent)
        return sm.fair == NULL or _cells_of(sm, pb, ids, n_ids, c)
    for i in range(pb.W):
        c.tmp[i] = pb.mask[i]
    for k in range(depth):   # ends on the root (a real node)
        a = nd.ant
        for i in range(pb.W):
            c.tmp[i] &= ~pb.caps[<size_t>a * pb.W + i]
        ids[depth - 1 - k] = a
        nd = trie_node(trie, nd.parent)
    for i in range(pb.W):
        if c.tmp[i] != c.f[i]:
            return False
    return sm.fair == NULL or _cells_of(sm, pb, ids, depth, c)


cdef inline bint map_write(SymmetryMap* sm, MapEntry* e, int verdict, const MapChild* c, double err,
                           int32_t node) noexcept nogil:
    """Record ``node`` (prefix error ``err``) in the entry ``map_admit`` returned; False when out
    of memory. A record is the length, the representative's ids in its order, then a ``MapRecord``."""
    cdef int i, n_ids = c.n_ids
    cdef uint16_t ids[256]
    cdef uint32_t off
    cdef MapRecord rec
    rec.score = err
    rec.node = node
    if verdict == 2 and (sm.kind == MAP_PREFIX or table_len(&sm.table, e.off) >= n_ids):
        off = e.off       # same set, or a representative no shorter: rewrite in place
    else:
        off = table_put(&sm.table, n_ids)
        if off == 0:
            return False
        if verdict == 1:
            sm.table.count += 1
    e.off = off
    for i in range(n_ids):   # the representative in its order (the prefix map's tie-break reads it)
        ids[i] = c.ids[i]
    table_set_ids(&sm.table, off, n_ids, ids)
    table_set_record(&sm.table, off, &rec)
    return True


# ---------------------------------------------------------------- the map under a fairness constraint

cdef inline void map_constrain(SymmetryMap* sm, const FairProblem* fair, const CorelsProblem* pb) noexcept nogil:
    """Put the map under the constraint ``fair`` (``fair.G == 0``: none, the map unchanged): a
    class also fixes the same cells, which holds when ties of prefix error are decided exactly;
    otherwise the map is off (docs/maintainers/corels-fairness.md)."""
    sm.fair = NULL
    if fair.G > 0:
        if problem_exact_errors(pb):
            sm.fair = fair
        else:
            sm.kind = MAP_NONE


cdef inline uint64_t map_key(const SymmetryMap* sm, const CorelsProblem* pb, uint64_t phash, const uint64_t* u,
                             const uint64_t* capv, uint64_t* f, const double* cells) noexcept nogil:
    """A child's key: its antecedent set's hash ``phash`` (prefix map) or the hash of what it
    leaves uncaptured of ``u`` (captured map: written to ``f``), mixed with the ``cells`` it fixes
    under a constraint; 0 without a map. Its slot is prefetched, so that the probe's cache miss
    overlaps the scoring of the next children."""
    cdef uint64_t key = 0
    cdef int i
    if sm.kind == MAP_PREFIX:
        key = phash
    elif sm.kind == MAP_CAPTURED:
        for i in range(pb.W):
            f[i] = u[i] & ~capv[i]
        key = vector_hash(f, pb.W)
    if sm.fair != NULL:
        key = fair_cells_key(sm.fair, key, cells)
    if sm.table.cap > 0:
        gw_prefetch(&sm.table.slots[(key >> 32) & (sm.table.cap - 1)])
    return key


cdef inline void map_prefetch_record(const SymmetryMap* sm, uint64_t key) noexcept nogil:
    """Prefetch the record in the slot of ``key`` when its tag matches (before ``map_admit``)."""
    cdef const MapEntry* e
    if sm.table.cap > 0:
        e = &sm.table.slots[(key >> 32) & (sm.table.cap - 1)]
        if e.off != 0 and e.tag == <uint32_t>(key >> 32):
            gw_prefetch(table_ids(&sm.table, e.off))


cdef inline MapEntry* map_admit_child(SymmetryMap* sm, const CorelsProblem* pb, size_t budget, uint64_t key,
                                      const MapChild* c, uint64_t* f, const uint64_t* u, double lb, double err,
                                      double b0, int* verdict) noexcept nogil:
    """``map_admit`` for the child ``c`` (its last rule ``c.ids[c.n_ids - 1]``, its parent leaving
    ``u`` uncaptured) with bound ``lb``: fills what the map compares (``f``, the captured map's
    uncaptured rows; under a constraint the child's cells, in ``c.fs.admit``) and, under a
    constraint, compares the bound before the constraint's raise (same class, same raise),
    recomputed exactly as the expansion computed it."""
    cdef int i, s = c.ids[c.n_ids - 1]
    if sm.kind == MAP_CAPTURED:
        for i in range(pb.W):
            f[i] = u[i] & ~pb.caps[<size_t>s * pb.W + i]
    if sm.fair != NULL:
        fair_child_cells(sm.fair, pb, c.fs, u, s, c.fs.admit, c.acc)
        lb = (err + c.n_ids * pb.lamW) + b0
    return map_admit(sm, pb, budget, key, c, lb, err, b0, verdict)


cdef inline int32_t map_replaced(const SymmetryMap* sm, const CorelsProblem* pb, const PrefixTrie* trie,
                                 const MapEntry* e, int verdict, int32_t node, const MapChild* c, double b0, double floss,
                                 double* lb) noexcept nogil:
    """When the child (queued as ``node``) replaces the entry's record (verdict 2): the node the
    record still names (``map_recorded``), with in ``lb`` the bound it was queued with,
    ``map_record_lb`` raised under a constraint by the class's own ``fair_loss`` ``floss`` (same
    cells, same open rows); -1 when there is none."""
    cdef MapRecord rec
    cdef int length
    if verdict != 2:
        return -1
    table_record(&sm.table, e.off, &rec)
    if not map_recorded(sm, pb, trie, rec.node, node, c):
        return -1
    length = table_len(&sm.table, e.off)
    lb[0] = map_record_lb(pb, &rec, length, b0)
    if sm.fair != NULL:
        lb[0] = fair_raise(lb[0], rec.score + length * pb.lamW, floss)
    return rec.node


cdef inline void map_child_init(MapChild* c, const uint16_t* ids, const uint8_t* in_prefix, const uint64_t* f,
                                uint64_t* tmp, FairScratch* fs, int64_t* acc) noexcept nogil:
    """A thread's ``MapChild`` over its scratch vectors (``n_ids`` is set per child)."""
    c.ids = ids
    c.in_prefix = in_prefix
    c.f = f
    c.tmp = tmp
    c.n_ids = 0
    c.cells = fs.admit
    c.fs = fs
    c.acc = acc

# cython: language_level=3
"""A distributed driver's prefixes in the CORELS search (issue 27): checked, scored from the root
and read back off the trie.

``corels.Search`` hands a driver four handles (``seed``, ``take``, ``offer_incumbent``,
``evaluate``); what they share is here (with a list's objective and figures scored from the root:
``walk_objective``, ``walk_evaluate``): the check of a prefix a driver names (``seed_check``), a
prefix scored rule by rule from the root by the arithmetic of the expansion (``PrefixWalk``: errors
accumulated rule by rule, ``depth * lambda`` apart, so a list scored here and the same list found by
the search get bit-identical objectives), a seeded prefix's trie path with each node's error and
bound as the expansion would have stored them (``seed_path``), and the prefix of a queued node
(``node_prefix``). Search keeps what touches its queue, its incumbent and its map. A struct and
inline functions, as ``corels_disk.pxd``: a cdef class shared between extension modules cannot be
imported under its installed name.
"""

from libc.stdint cimport uint64_t, int64_t, int32_t, uint16_t, uint8_t
from libcpp.vector cimport vector

from corels_counts cimport weighted_majority, weighted_sum
from corels_problem cimport CorelsProblem, MAX_CLASSES, LABELS, MINORITY, problem_counts, problem_rule
from corels_trie cimport PrefixTrie, F_UNCHECKED, trie_new_counted, trie_node, trie_release


cdef struct PrefixWalk:     # a prefix scored from the root, one rule at a time
    vector[uint64_t] u      # the units its rules leave uncaptured
    vector[uint64_t] v      # scratch for a rule's captures
    double err              # its rules' errors, accumulated rule by rule
    int depth               # its rules so far
    int label               # the last rule's label


cdef inline list seed_check(prefix, int M, int max_len):
    """``prefix`` as a list of ids, or ValueError: distinct antecedents 0..M-1, at most ``max_len``."""
    ids = [int(a) for a in prefix]
    bad = len(set(ids)) != len(ids) or len(ids) > max_len
    for a in ids:    # a loop, not any(): a generator in an inline function of a .pxd does not compile
        bad = bad or a < 0 or a >= M
    if bad:
        raise ValueError(f"bad prefix {ids!r}: distinct antecedents 0..{M - 1}, at most {max_len}")
    return ids


cdef inline void walk_start(const CorelsProblem* pb, PrefixWalk* w) noexcept nogil:
    """The empty prefix: every unit uncaptured, no error."""
    w.u = pb.mask
    w.v.assign(pb.W, 0)
    w.err = 0
    w.depth = 0
    w.label = 0


cdef inline void walk_rule(const CorelsProblem* pb, PrefixWalk* w, int s, int64_t* acc) noexcept nogil:
    """Append rule ``s``: its errors join ``err``, its label is ``label``."""
    w.err = w.err + problem_rule(pb, &w.u[0], &w.u[0], &w.v[0], s, acc, &w.label)
    w.depth += 1


cdef inline double walk_b0(const CorelsProblem* pb, PrefixWalk* w, int64_t* acc) noexcept nogil:
    """The equivalent-points bound on the default's errors after the rules so far."""
    cdef double zc[MAX_CLASSES]
    problem_counts(pb, &w.u[0], MINORITY, zc, acc)
    return weighted_sum(pb.C, pb.weights, zc)


cdef inline double walk_default(const CorelsProblem* pb, PrefixWalk* w, int64_t* acc, double* correct,
                                int* label) noexcept nogil:
    """The weight the default rule sees (returned), the part its ``label`` gets right (``correct``)."""
    cdef double cnt[MAX_CLASSES]
    problem_counts(pb, &w.u[0], LABELS, cnt, acc)
    return weighted_majority(pb.C, pb.weights, cnt, correct, label)


cdef inline int32_t seed_path(const CorelsProblem* pb, PrefixTrie* t, list ids, bint eqpts, int64_t* acc,
                              PrefixWalk* w, double* lb, int64_t* max_trie) except? -2:
    """Build the trie path of the prefix ``ids`` from a new root, each node with its error and
    bound as the expansion stores them, every node unchecked (no map record names a seeded node, so
    the map must never delete it, nor drop it when it comes back from disk). Returns the leaf, held
    once, with ``w`` walked to it and its bound in ``lb``; MemoryError when the pool is full.
    ``max_trie`` counts the live nodes' high-water mark."""
    cdef double b0 = 0
    cdef int32_t node, child
    cdef int s
    walk_start(pb, w)
    if eqpts:
        b0 = walk_b0(pb, w, acc)
    lb[0] = b0
    node = trie_new_counted(t, -1, 0, 0, 0.0, b0, max_trie)
    if node < 0:
        raise MemoryError("cannot allocate the search's node pool")
    for s in ids:
        walk_rule(pb, w, s, acc)
        b0 = 0
        if eqpts:
            b0 = walk_b0(pb, w, acc)
        lb[0] = w.err + w.depth * pb.lamW + b0
        child = trie_new_counted(t, node, <uint16_t>s, <uint8_t>w.depth, w.err, lb[0], max_trie)
        trie_release(t, node)      # the child holds its parent from here on
        if child < 0:
            raise MemoryError("cannot allocate the search's node pool")
        trie_node(t, child).flags |= F_UNCHECKED
        node = child
    return node


cdef inline list node_prefix(const PrefixTrie* t, int32_t idx):
    """The antecedent ids of the prefix that ends at node ``idx``, root first."""
    cdef int depth = trie_node(t, idx).depth
    cdef int j
    cdef int32_t cur = idx
    path = [0] * depth
    for j in range(depth - 1, -1, -1):
        path[j] = int(trie_node(t, cur).ant)
        cur = trie_node(t, cur).parent
    return path


cdef inline double walk_objective(const CorelsProblem* pb, list ids, int64_t* acc) except? -1:
    """A rule list's objective in weighted count units, by the arithmetic of the expansion
    (errors accumulated rule by rule, then ``depth * lambda``): equal lists, equal bits."""
    cdef double correct, wv
    cdef int label, s
    cdef PrefixWalk w
    walk_start(pb, &w)
    for s in ids:
        walk_rule(pb, &w, s, acc)
    wv = walk_default(pb, &w, acc, &correct, &label)
    return w.err + len(ids) * pb.lamW + (wv - correct)


cdef inline dict walk_evaluate(const CorelsProblem* pb, prefix, int64_t* acc):
    """Score one prefix from scratch (``Search.evaluate``): objective, b (prefix errors + lambda *
    K), b0 (equivalent-points bound on the default's errors), the rule labels, the default label
    and the weight the rules capture, as fractions of total weight; ValueError for a bad or
    repeated antecedent."""
    cdef double correct, wv, b0 = 0
    cdef int label, s
    cdef PrefixWalk w
    walk_start(pb, &w)
    labels = []
    seen = set()
    for s in prefix:
        if s < 0 or s >= pb.M or s in seen:
            raise ValueError(f"bad or repeated antecedent {s}")
        seen.add(s)
        walk_rule(pb, &w, s, acc)
        labels.append(w.label)
    wv = walk_default(pb, &w, acc, &correct, &label)
    if pb.Q > 0:
        b0 = walk_b0(pb, &w, acc)
    b = w.err + len(labels) * pb.lamW
    return {"objective": (b + wv - correct) / pb.total, "b": b / pb.total,
            "b0": b0 / pb.total, "rule_labels": labels, "default": label,
            "captured": (pb.total - wv) / pb.total}

# cython: language_level=3
"""The CORELS search's reordering check: Theorem 15 within one child (a seeded search's bound).

A seeded search (a task of a split on a Dask cluster, ``Search.seed``) cannot meet in its own
symmetry map the better orderings of its children that lie in other tasks' subtrees; this check
drops a child when moving its last rule to an earlier place gives an ordering that comes first in
(prefix error, ids), the order the prefix map breaks its ties by (``map_earlier_tie``). The proof
is in docs/maintainers/corels-proofs.md ("One search on a Dask cluster"). ``ReorderCheck`` is one
thread's working memory, prepared once per expanded node (``reorder_setup``) and read for each
child (``reorder_better``) without a lock. A struct and inline functions, as ``corels_disk.pxd``:
a cdef class shared between extension modules cannot be imported under its installed name.
"""

from libc.stdint cimport uint64_t, int64_t, int32_t, uint16_t
from libcpp.vector cimport vector

from corels_problem cimport CorelsProblem, problem_context, problem_error
from corels_trie cimport PrefixTrie, trie_node, trie_err


cdef struct ReorderCheck:   # for the children of one node (p_0 .. p_{K-1}), per j:
    vector[uint64_t] ctx    # what p_0 .. p_{j-1} leave uncaptured (256 rows of W words)
    double cum[257]         # and the error of those first j rules


cdef inline void reorder_setup(ReorderCheck* rc, const CorelsProblem* pb, const PrefixTrie* trie, int32_t ni,
                               int depth, const uint16_t* path) noexcept nogil:
    """Prepare the reordering check for the children of ``ni`` = (p_0 .. p_{K-1}) = ``path``,
    K = ``depth``: per j, what p_0 .. p_{j-1} leave uncaptured (``rc.ctx``) and their error
    (``rc.cum``, from the node errors on the path)."""
    cdef int i, k
    cdef int32_t cur = ni
    cdef uint64_t* x
    cdef const uint64_t* cv
    for k in range(depth, 0, -1):
        rc.cum[k] = trie_err(trie, cur)
        cur = trie_node(trie, cur).parent
    rc.cum[0] = 0.0
    x = &rc.ctx[0]
    problem_context(pb, path, 0, x, NULL)
    for k in range(1, depth):
        cv = &pb.caps[<size_t>path[k - 1] * pb.W]
        for i in range(pb.W):
            x[<size_t>k * pb.W + i] = x[<size_t>(k - 1) * pb.W + i] & ~cv[i]


cdef inline bint reorder_better(const ReorderCheck* rc, const CorelsProblem* pb, int t, int depth, double err_c,
                                const uint16_t* path, uint64_t* y, int64_t* acc, bint exact_ties,
                                double eps) noexcept nogil:
    """Theorem 15 within one child: True when moving its last rule ``t`` to an earlier place,
    X_j = (p_0 .. p_{j-1}, t, p_j .. p_{K-1}), comes first in the order of the orderings of
    one set, (prefix error, ids): a smaller error than the child's ``err_c``, or the same error
    (decided only when errors are exact: ``exact_ties``; else smaller by more than ``eps``) and
    ``t < p_j``.

    X_j and the child hold the same rules, so they leave the same data uncaptured and every
    tail scores the same after both: R(child + T) - R(X_j + T) = err(child) - err(X_j) for
    every T. So the first optimal list in id order never lies below a child dropped here,
    whether or not X_j is ever searched, here or in another task: the test needs no map and
    no other process, and the prefix map breaks its ties by the same order (``map_earlier_tie``).
    err(X_j) = err(p_0 .. p_{j-1}) + err(t | U_j) + sum_{k >= j} err(p_k | U_k minus t), with
    U_k what p_0 .. p_{k-1} leave: two counts per place, the sum kept from the last place
    back. Reads the thread's scratch (``y``: W words, ``acc``) and ``rc`` only (no lock).
    """
    cdef double moved = 0.0, et
    cdef int i, j
    cdef const uint64_t* tv = &pb.caps[<size_t>t * pb.W]
    cdef const uint64_t* pv
    cdef const uint64_t* x
    for j in range(depth - 1, -1, -1):
        x = &rc.ctx[<size_t>j * pb.W]
        pv = &pb.caps[<size_t>path[j] * pb.W]
        for i in range(pb.W):
            y[i] = x[i] & pv[i] & ~tv[i]
        moved += problem_error(pb, y, acc)
        for i in range(pb.W):
            y[i] = x[i] & tv[i]
        et = problem_error(pb, y, acc)
        if exact_ties:
            if rc.cum[j] + et + moved < err_c or (
                    t < path[j] and rc.cum[j] + et + moved == err_c):
                return True
        elif rc.cum[j] + et + moved < err_c - eps:
            return True
    return False

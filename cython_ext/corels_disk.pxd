# cython: language_level=3
"""The CORELS search's external-memory queue (issue 27): the queue's worst entries in bucket files.

``corels.Search`` holds one ``DiskQueue`` and decides *when* to spill and reload (its memory, the
heap's top) and *how* a reloaded prefix is rebuilt (the trie, the symmetry map); this part owns the
files: which bucket a spilled entry goes to (quantiles of a sample of the spilled part's keys), the
records (``corels_spill.h``: key, bound, tie, antecedent ids, unchecked bits), the per-bucket
figures that bound the search and feed the progress report while the entries are on disk, and
reading a bucket back whole, sorted. Everything is written and flushed before the caller changes
the heap, so a write error (a full disk) leaves the queue whole. Inline and ``nogil``.
"""

from libc.stdint cimport uint64_t, int64_t, int32_t, uint16_t, uint8_t
from libc.math cimport INFINITY
from libc.string cimport memcpy, memset
from libc.stdio cimport FILE, fopen, fclose, fwrite, fread, fflush, fseek, ferror, remove, snprintf, SEEK_SET
from libc.errno cimport errno, EIO, ENOMEM
from libc.stdlib cimport malloc, free
from libcpp.string cimport string
from libcpp.vector cimport vector
from libcpp.unordered_map cimport unordered_map

from corels_bounds cimport theorem7_f
from corels_trie cimport PrefixTrie, F_UNCHECKED, trie_node

cdef extern from "corels_spill.h" nogil:
    size_t GW_SPILL_HEAD
    int gw_spill_len(const uint8_t* rec)
    size_t gw_spill_rec_len(int length)
    uint16_t gw_spill_id(const uint8_t* rec, int k)
    bint gw_spill_unchecked(const uint8_t* rec, int k)
    bint gw_spill_sort(uint64_t* offs, size_t n, const uint8_t* buf)
    ctypedef struct gw_spill_key:
        double key
        int32_t tie
    void gw_spill_sort_keys(gw_spill_key* a, size_t n)

cdef enum:
    SPILL_BUCKETS = 4       # files one spill writes, by quantiles of the spilled part's keys
    SPILL_SAMPLE = 4096     # queue entries sampled to place the quantiles
    SPILL_RECORD = 21 + 512 + 32   # the longest record: 255 ids and their bits


cdef struct SpillBucket:  # one file
    FILE* fp            # open, already unlinked where the system allows it
    double min_key      # the smallest (key, tie) in the file: it comes back before the RAM queue
    int32_t min_tie     # passes it
    double min_lb       # the smallest bound in the file (its part of the lower bound)
    int64_t count
    int64_t nbytes
    int64_t depth_count[256]   # its prefixes by length, and the smallest prefix error of each
    double depth_min_err[256]  # length: the progress figures count the disk (disk_summary)


cdef struct DiskQueue:
    vector[SpillBucket] buckets
    string dir              # where the files go (Search.set_spill)
    size_t budget           # search bytes above which the queue spills; 0: never
    size_t min_entries      # no spill of a queue shorter than this
    size_t map_budget       # map bytes past which it takes no new class; 0: no limit
    int error               # the errno of the last failed spill or reload, 0: none
    int64_t seq, spilled_now, bytes_now
    int64_t n_spills, n_reloads, n_spilled, max_bytes, max_spilled
    SpillBucket nb[SPILL_BUCKETS]      # the files of the spill being written
    gw_spill_key cut[SPILL_BUCKETS]    # their lower (key, tie) limits


cdef inline bint key_less(double k1, int32_t t1, double k2, int32_t t2) noexcept nogil:
    """The queue's order on (key, tie)."""
    return k1 < k2 or (k1 == k2 and t1 < t2)


cdef inline int disk_best(const DiskQueue* dq) noexcept nogil:
    """The bucket holding the smallest (key, tie); -1 when none."""
    cdef int b, best = -1
    for b in range(<int>dq.buckets.size()):
        if best < 0 or key_less(dq.buckets[b].min_key, dq.buckets[b].min_tie,
                                dq.buckets[best].min_key, dq.buckets[best].min_tie):
            best = b
    return best


cdef inline bint disk_first(const DiskQueue* dq, bint queue_empty, double key, int32_t tie) noexcept nogil:
    """A bucket holds an entry the queue would pop before its top ``(key, tie)`` (or the queue is
    empty): it is due back."""
    cdef int b
    if dq.buckets.size() == 0:
        return False
    if queue_empty:
        return True
    b = disk_best(dq)
    return key_less(dq.buckets[b].min_key, dq.buckets[b].min_tie, key, tie)


cdef inline double disk_lb(const DiskQueue* dq) noexcept nogil:
    """The smallest bound on disk (INFINITY when nothing is)."""
    cdef double lo = INFINITY
    cdef size_t b
    for b in range(dq.buckets.size()):
        lo = min(lo, dq.buckets[b].min_lb)
    return lo


cdef inline void disk_close(DiskQueue* dq) noexcept nogil:
    cdef size_t b
    for b in range(dq.buckets.size()):
        fclose(dq.buckets[b].fp)
    dq.buckets.clear()
    dq.spilled_now = 0
    dq.bytes_now = 0


cdef inline size_t disk_encode(PrefixTrie* t, int32_t node, double key, double lb, int32_t tie,
                               uint8_t* rec) noexcept nogil:
    """Write the record of the queued prefix at ``node`` into ``rec``; returns its length."""
    cdef int depth = trie_node(t, node).depth, k
    cdef uint8_t* bits = &rec[21 + 2 * depth]
    cdef int32_t cur = node
    cdef uint16_t a
    memcpy(&rec[0], &key, 8)
    memcpy(&rec[8], &lb, 8)
    memcpy(&rec[16], &tie, 4)
    rec[20] = <uint8_t>depth
    memset(bits, 0, (depth + 7) // 8)
    for k in range(depth - 1, -1, -1):
        a = trie_node(t, cur).ant
        memcpy(&rec[21 + 2 * k], &a, 2)
        if trie_node(t, cur).flags & F_UNCHECKED:
            bits[k >> 3] |= <uint8_t>(1 << (k & 7))
        cur = trie_node(t, cur).parent
    return gw_spill_rec_len(depth)


cdef inline void disk_abort(DiskQueue* dq) noexcept nogil:
    """Close the files of a spill that failed (the queue is left as it was)."""
    cdef int b
    for b in range(SPILL_BUCKETS):
        if dq.nb[b].fp != NULL:
            fclose(dq.nb[b].fp)
        dq.nb[b].fp = NULL


cdef inline int disk_begin(DiskQueue* dq, gw_spill_key* sample, size_t S, size_t keep, size_t n) noexcept nogil:
    """Start a spill that keeps about ``keep`` of the queue's ``n`` entries in RAM: the quantiles
    of the ``S`` sampled (key, tie) place the buckets' limits, and their files are opened. 0, or the
    ``errno`` of a file that would not open (then none is left open)."""
    cdef size_t q0
    cdef int b, err = 0
    cdef char path[4200]
    gw_spill_sort_keys(sample, S)
    q0 = min(S - 1, max(<size_t>1, S * keep // n))
    for b in range(SPILL_BUCKETS):
        dq.cut[b] = sample[q0 + (S - q0) * b // SPILL_BUCKETS]
    for b in range(SPILL_BUCKETS):
        dq.nb[b].fp = NULL
        dq.nb[b].count = 0
        dq.nb[b].nbytes = 0
        dq.nb[b].min_key = INFINITY
        dq.nb[b].min_tie = 0
        dq.nb[b].min_lb = INFINITY
        memset(dq.nb[b].depth_count, 0, sizeof(dq.nb[b].depth_count))
    for b in range(SPILL_BUCKETS):
        dq.seq += 1
        snprintf(path, sizeof(path), "%s/queue-%lld.bin", dq.dir.c_str(), <long long>dq.seq)
        dq.nb[b].fp = fopen(path, "w+b")
        if dq.nb[b].fp == NULL:
            err = errno if errno != 0 else EIO
            break
        remove(path)     # the open file lives on until closed, whatever ends the process
    if err != 0:
        disk_abort(dq)
    return err


cdef inline bint disk_stays(const DiskQueue* dq, double key, int32_t tie) noexcept nogil:
    """An entry below the spill's lowest limit stays in RAM."""
    return key_less(key, tie, dq.cut[0].key, dq.cut[0].tie)


cdef inline int disk_write(DiskQueue* dq, const uint8_t* rec, size_t rec_len, double err) noexcept nogil:
    """Write one record (``disk_encode``; ``err`` its prefix error) to its bucket. 0 or an errno."""
    cdef double key, lb
    cdef int32_t tie
    cdef int b = SPILL_BUCKETS - 1, depth = gw_spill_len(rec)
    cdef SpillBucket* bk
    memcpy(&key, rec, 8)
    memcpy(&lb, rec + 8, 8)
    memcpy(&tie, rec + 16, 4)
    while b > 0 and key_less(key, tie, dq.cut[b].key, dq.cut[b].tie):
        b -= 1
    bk = &dq.nb[b]
    if fwrite(rec, 1, rec_len, bk.fp) != rec_len:
        return errno if errno != 0 else EIO
    bk.count += 1
    bk.nbytes += rec_len
    if bk.depth_count[depth] == 0 or err < bk.depth_min_err[depth]:
        bk.depth_min_err[depth] = err
    bk.depth_count[depth] += 1
    if key_less(key, tie, bk.min_key, bk.min_tie):
        bk.min_key = key
        bk.min_tie = tie
    bk.min_lb = min(bk.min_lb, lb)
    return 0


cdef inline int disk_flush(DiskQueue* dq) noexcept nogil:
    """Every byte of the spill on disk, each file rewound for its reload. 0, or an errno (then the
    files are closed: the spill did not happen)."""
    cdef int b, err = 0
    for b in range(SPILL_BUCKETS):
        if fflush(dq.nb[b].fp) != 0 or ferror(dq.nb[b].fp):
            err = errno if errno != 0 else EIO
            break
        if fseek(dq.nb[b].fp, 0, SEEK_SET) != 0:
            err = errno if errno != 0 else EIO
            break
    if err != 0:
        disk_abort(dq)
    return err


cdef inline void disk_commit(DiskQueue* dq) noexcept nogil:
    """The spill's buckets join the disk queue (once their entries left RAM)."""
    cdef int b
    for b in range(SPILL_BUCKETS):
        if dq.nb[b].count == 0:
            fclose(dq.nb[b].fp)
            continue
        dq.buckets.push_back(dq.nb[b])
        dq.spilled_now += dq.nb[b].count
        dq.bytes_now += dq.nb[b].nbytes
        dq.n_spilled += dq.nb[b].count
    dq.n_spills += 1
    dq.max_spilled = max(dq.max_spilled, dq.spilled_now)
    dq.max_bytes = max(dq.max_bytes, dq.bytes_now)


cdef inline int disk_read(DiskQueue* dq, int bi, uint8_t** buf, uint64_t** offs) noexcept nogil:
    """Read bucket ``bi`` whole into ``*buf`` (the caller frees it and ``*offs``), its records'
    offsets into ``*offs`` sorted by the records' ids, so prefixes sharing a parent come together.
    0, or an errno (then nothing is allocated and the bucket stays)."""
    cdef SpillBucket* bk = &dq.buckets[bi]
    cdef uint64_t pos = 0
    cdef int64_t r
    cdef int err = 0
    buf[0] = <uint8_t*>malloc(max(bk.nbytes, 1))
    offs[0] = <uint64_t*>malloc(max(bk.count, 1) * sizeof(uint64_t))
    if buf[0] == NULL or offs[0] == NULL:
        err = ENOMEM
    elif fseek(bk.fp, 0, SEEK_SET) != 0 or fread(buf[0], 1, bk.nbytes, bk.fp) != <size_t>bk.nbytes:
        err = errno if errno != 0 else EIO
    else:
        for r in range(bk.count):
            offs[0][r] = pos
            pos += gw_spill_rec_len(gw_spill_len(buf[0] + pos))
        if pos != <uint64_t>bk.nbytes or not gw_spill_sort(offs[0], bk.count, buf[0]):
            err = EIO
    if err != 0:
        free(buf[0])
        free(offs[0])
        buf[0] = NULL
        offs[0] = NULL
    return err


cdef inline int disk_record(const uint8_t* rec, double* key, double* lb, int32_t* tie) noexcept nogil:
    """A record's head (``corels_spill.h``): its key, bound and tie; its prefix's length returned."""
    memcpy(key, rec, 8)
    memcpy(lb, rec + 8, 8)
    memcpy(tie, rec + 16, 4)
    return gw_spill_len(rec)


cdef inline void disk_take(DiskQueue* dq, int bi) noexcept nogil:
    """Bucket ``bi`` (read back) leaves the disk queue."""
    cdef SpillBucket bk = dq.buckets[bi]
    fclose(bk.fp)
    dq.buckets[bi] = dq.buckets[dq.buckets.size() - 1]
    dq.buckets.pop_back()
    dq.spilled_now -= bk.count
    dq.bytes_now -= bk.nbytes
    dq.n_reloads += 1


cdef inline void disk_summary(const DiskQueue* dq, unordered_map[int64_t, int64_t]& pairs, double best,
                              double lamW, int M) noexcept nogil:
    """Add the prefixes on disk to Theorem 7's ``(length, f)`` counts. A bucket keeps, per
    length, its count and smallest prefix error, so each prefix is counted with the ``f`` of that
    error: at least its own (``f`` falls as the error grows), which keeps the remaining space an
    upper bound."""
    cdef size_t b
    cdef int L
    for b in range(dq.buckets.size()):
        for L in range(256):
            if dq.buckets[b].depth_count[L] > 0:
                pairs[<int64_t>L * 65536 + theorem7_f(dq.buckets[b].depth_min_err[L], L, best, lamW, M)] += (
                    dq.buckets[b].depth_count[L])


cdef inline void disk_lengths(const DiskQueue* dq, dict lengths):
    """Add the prefixes on disk to the histogram of queue prefix lengths (exact)."""
    cdef size_t b
    cdef int L
    for b in range(dq.buckets.size()):
        for L in range(256):
            if dq.buckets[b].depth_count[L] > 0:
                lengths[L] = lengths.get(L, 0) + int(dq.buckets[b].depth_count[L])


cdef inline void disk_configure(DiskQueue* dq, directory, long long budget_bytes, long long min_entries,
                                long long map_budget) except *:
    """Where the buckets go and the budgets (``Search.set_spill``); ValueError for a negative
    budget or a directory path too long for the files' names."""
    import os
    if budget_bytes < 0 or min_entries < 0 or map_budget < 0:
        raise ValueError("budget_bytes and min_entries must be >= 0")
    raw = os.fsencode(directory)
    if len(raw) > 4000:
        raise ValueError("spill directory path too long")
    dq.dir = raw
    dq.budget = budget_bytes
    dq.min_entries = min_entries
    dq.map_budget = map_budget


cdef inline object disk_error_text(const DiskQueue* dq):
    """Why the last spill or reload failed, else None."""
    import os
    if dq.error == 0:
        return None
    return f"{os.strerror(dq.error)} (spill directory {os.fsdecode(dq.dir)})"


cdef inline dict disk_counters(const DiskQueue* dq):
    """The queue on disk's part of ``Search.counters()``."""
    return {"spills": dq.n_spills, "reloads": dq.n_reloads, "spilled": dq.n_spilled, "max_spilled": dq.max_spilled,
            "max_spill_bytes": dq.max_bytes}

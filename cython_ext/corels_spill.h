/* The CORELS search's external-memory queue: helpers for its bucket files (corels.pyx, issue 27).
 *
 * A spilled prefix is written self-contained, as one record: its queue key and bound (doubles),
 * its tie (int32), its length (one byte), its antecedent ids (uint16 each, first rule first), then
 * one bit per rule, set when that rule's node was queued unchecked by the symmetry map
 * (gw_spill_unchecked: a reloaded node is the map's again only when it was checked before).
 * A bucket is read back whole, its records sorted by their ids so that prefixes sharing a parent
 * come together and the trie is rebuilt with shared ancestors (gw_spill_sort).
 */
#ifndef GW_CORELS_SPILL_H
#define GW_CORELS_SPILL_H

#include <stdint.h>
#include <string.h>
#include <algorithm>
#include <exception>

static const size_t GW_SPILL_HEAD = 21; /* key 8, bound 8, tie 4, length 1 */

static inline int gw_spill_len(const uint8_t* rec) { return rec[20]; }

/* A record's bytes: the head, the ids, the unchecked bits. */
static inline size_t gw_spill_rec_len(int len) { return GW_SPILL_HEAD + 2 * (size_t)len + ((size_t)len + 7) / 8; }

static inline uint16_t gw_spill_id(const uint8_t* rec, int k) {
    uint16_t a;
    memcpy(&a, rec + GW_SPILL_HEAD + 2 * (size_t)k, 2);
    return a;
}

/* Whether rule k's node (k from 0) was queued unchecked. */
static inline bool gw_spill_unchecked(const uint8_t* rec, int k) {
    const uint8_t* bits = rec + GW_SPILL_HEAD + 2 * (size_t)gw_spill_len(rec);
    return (bits[k >> 3] >> (k & 7)) & 1;
}

/* Order record offsets by their id sequences (a prefix before its extensions); false when the
 * sort could not allocate. */
static inline bool gw_spill_sort(uint64_t* offs, size_t n, const uint8_t* buf) {
    try {
        std::sort(offs, offs + n, [buf](uint64_t x, uint64_t y) {
            const uint8_t* a = buf + x;
            const uint8_t* b = buf + y;
            int la = gw_spill_len(a), lb = gw_spill_len(b);
            int l = la < lb ? la : lb;
            for (int k = 0; k < l; k++) {
                uint16_t ia = gw_spill_id(a, k), ib = gw_spill_id(b, k);
                if (ia != ib) return ia < ib;
            }
            if (la != lb) return la < lb;
            return x < y;
        });
    } catch (...) {
        return false;
    }
    return true;
}

/* A sampled queue position, (key, tie), ordered as the heap orders entries. */
struct gw_spill_key {
    double key;
    int32_t tie;
};

static inline void gw_spill_sort_keys(gw_spill_key* a, size_t n) {
    std::sort(a, a + n, [](const gw_spill_key& x, const gw_spill_key& y) {
        return x.key < y.key || (x.key == y.key && x.tie < y.tie);
    });
}

#endif

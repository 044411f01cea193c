/* The kernels' one priority queue (declared for Cython in paged_heap.pxd).
 *
 * A 4-ary min-heap in fixed pages of 64-byte-aligned entries. Entry i sits at slot i + 3, so the
 * four children of an entry (4i+1 .. 4i+4, slots 4(i+1) .. 4(i+1)+3) start a cache line: with
 * 16-byte entries a sift-down touches one line per level, and the height is half a binary heap's.
 * Pages never move (no doubling, no copy spike as a queue of millions grows) and are returned as
 * the queue shrinks, keeping one spare page.
 *
 * T is a plain struct with members ``key`` (double) and ``tie`` (anything with ``<``, e.g. an
 * insertion counter or a std::pair): the entry with the smallest (key, tie) is on top. With
 * distinct ties the order of pops is fully determined, whatever the heap's shape.
 * Nothing here throws: a failed allocation is a false return (or, by request, the end).
 */
#ifndef GW_PAGED_HEAP_H
#define GW_PAGED_HEAP_H

#include <stddef.h>
#include <stdlib.h>
#include <exception>
#include <new>
#include <vector>
#if defined(_WIN32)
#include <malloc.h>
#endif

template <class T>
class gw_paged_heap {
  public:
    static constexpr int page_bits = 14;
    static constexpr size_t page_entries = (size_t)1 << page_bits;
    static constexpr size_t page_bytes = sizeof(T) << page_bits;

    gw_paged_heap() = default;
    gw_paged_heap(const gw_paged_heap&) = delete;
    gw_paged_heap& operator=(const gw_paged_heap&) = delete;
    ~gw_paged_heap() {
        while (!pages_.empty()) {
            free_page(pages_.back());
            pages_.pop_back();
        }
    }

    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    /* Pages held and their bytes (memory accounting). */
    size_t pages() const { return pages_.size(); }
    size_t bytes() const { return pages_.size() * page_bytes; }

    T& at(size_t i) {
        i += 3;
        return pages_[i >> page_bits][i & (page_entries - 1)];
    }
    T& top() { return at(0); }
    void set(size_t i, const T& e) { at(i) = e; }

    static bool less(const T& a, const T& b) {
        if (a.key < b.key) return true;
        if (a.key > b.key) return false;
        return a.tie < b.tie;
    }

    /* Room for the page pointers of a queue of up to ``max_entries`` (never reallocated below). */
    bool reserve(size_t max_entries) {
        try {
            pages_.reserve(((max_entries + 3) >> page_bits) + 2);
        } catch (...) {
            return false;
        }
        return true;
    }

    /* Make sure one more entry fits; false when no memory is left. */
    bool reserve_one() {
        if (((n_ + 3) >> page_bits) < pages_.size()) return true;
        T* page = alloc_page();
        if (page == NULL) return false;
        try {
            pages_.push_back(page);
        } catch (...) {
            free_page(page);
            return false;
        }
        return true;
    }

    /* Add ``e``; room must have been made by ``reserve_one``. */
    void push_reserved(const T& e) {
        size_t i = n_++;
        while (i > 0) {
            size_t parent = (i - 1) >> 2;
            if (!less(e, at(parent))) break;
            at(i) = at(parent);
            i = parent;
        }
        at(i) = e;
    }

    bool push(const T& e) {
        if (!reserve_one()) return false;
        push_reserved(e);
        return true;
    }

    /* ``push`` for callers with no out-of-memory path: no memory ends the process, as a
     * std::vector growing in noexcept code would, rather than silently dropping an entry. */
    void push_or_terminate(const T& e) {
        if (!push(e)) std::terminate();
    }

    /* Remove and return the top entry (the heap must not be empty). */
    T pop() {
        T first = at(0);
        at(0) = at(n_ - 1);
        truncate(n_ - 1);
        if (n_ > 1) sift_down(0);
        return first;
    }

    /* Keep the first ``n`` entries (n <= size()); with ``heapify`` after an in-place compaction. */
    void truncate(size_t n) {
        n_ = n;
        while (pages_.size() > ((n + 3) >> page_bits) + 2) {
            free_page(pages_.back());
            pages_.pop_back();
        }
    }

    void clear() { truncate(0); }

    /* Restore the heap order after entries were rewritten through ``at`` (Floyd's method). */
    void heapify() {
        if (n_ < 2) return;
        size_t i = (n_ - 2) / 4 + 1;
        while (i > 0) sift_down(--i);
    }

  private:
    std::vector<T*> pages_;
    size_t n_ = 0;

    void sift_down(size_t i) {
        const size_t n = n_;
        const T e = at(i);
        for (;;) {
            size_t c = 4 * i + 1;
            if (c >= n) break;
            T* kids = &at(c); /* the four children are contiguous (one page, one cache line) */
            size_t last = n - c < 4 ? n - c : 4;
            size_t k = 0;
            for (size_t j = 1; j < last; j++)
                if (less(kids[j], kids[k])) k = j;
            if (!less(kids[k], e)) break;
            at(i) = kids[k];
            i = c + k;
        }
        at(i) = e;
    }

    static T* alloc_page() {
#if defined(_WIN32)
        return (T*)_aligned_malloc(page_bytes, 64);
#else
        void* p = NULL;
        if (posix_memalign(&p, 64, page_bytes) != 0) return NULL;
        return (T*)p;
#endif
    }

    static void free_page(T* p) {
#if defined(_WIN32)
        _aligned_free(p);
#else
        free(p);
#endif
    }
};

#endif

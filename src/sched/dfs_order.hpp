// weft::detail — the global depth-first order of the dfs policy: every live ult
// it has seen, in the order a serial depth-first execution would run them, with
// an integer label per ult that compares in that order (an order-maintenance
// list, Bender, Cole, Demaine, Farach-Colton & Zito, ESA 2002, "Two simplified
// algorithms for maintaining order in a list", §2).
//
// Why labels: the policy must find the leftmost *ready* ult, while most live
// ults may be blocked or running (a barrier can hold thousands). With labels
// the ready ults sit in a heap keyed by label, and a ult that becomes ready
// goes straight to its place; without them, finding its place means walking
// the list of all ults past every blocked one (what the paper's lock-protected
// list does at each pick; see docs/design/dfs.md for the measurements).
//
// Layout in the ult (policy-owned words, see policy.hpp):
//   sched_word[0]  the previous ult in the order (null: first)
//   sched_word[1]  the next ult (null: last)
//   sched_word[2]  the label, in [1, 2^63); 0 = not in the order yet
// Labels are written under the policy's lock but read without it by the ult's
// own worker (is it placed yet?), hence atomic_ref (relaxed: only "zero or
// not" matters there, and a ult's label goes from zero to non-zero on the
// ult's own worker, before that worker asks).
//
// Inserting: only ever "immediately before y" (a child before its parent) or
// "at the end" (a ult first seen: main, or a ult created by a kernel thread
// outside weft). The new label is the midpoint of the gap (before y: at most
// max_step above the gap's lower end, see there); when the gap is
// empty, the smallest aligned label range around y whose density is below
// 1/T^i (i = log2 of its size; T = 1.5) is relabelled evenly. Amortized
// O(log n) labels rewritten per insertion; in practice (fork trees) about one
// relabel per 60 nested or sibling forks, touching a few dozen ults.
// Relabelling keeps the relative order, so a heap ordered by labels stays a
// heap; its cached keys are refreshed (dfs.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "base/primitives.hpp"
#include "core/ult.hpp"

namespace weft::detail {

class dfs_order {
public:
    static constexpr std::uint64_t label_end = std::uint64_t(1) << 63;  // exclusive bound of labels
    // insert_before takes the midpoint of the gap, but at most max_step above
    // its lower end. Siblings inserted one after another before their parent
    // (a spawn loop whose children stay in the order, e.g. those of a pinned
    // parent, all ready at once) then each take max_step of the gap: 2^22 of
    // them fit before a relabel, where midpoints would halve the gap at every
    // one and relabel every ~20 insertions, and each relabel refreshes the
    // key of every ready ult in dfs.cpp's heaps (quadratic in the loop's
    // length: 14,900 instructions per child for 20,000 children). A nested
    // fork still has 2^40 labels below its parent: 40 levels before a relabel.
    static constexpr std::uint64_t max_step = std::uint64_t(1) << 40;

    static std::uint64_t label(const ult* t) {
        // Relaxed: see the header comment (placement is decided on t's own worker).
        return atomic_ref<std::uintptr_t>(const_cast<std::uintptr_t&>(t->sched_word[2])).load(memory_order_relaxed);
    }
    static bool placed(const ult* t) { return label(t) != 0; }

    // All of the following: with the policy's lock held.

    // Puts t immediately before y (y placed, t not).
    // Returns true if labels were rewritten (the caller refreshes cached keys).
    bool insert_before(ult* t, ult* y) {
        bool relabelled = false;
        ult* p = prev(y);
        std::uint64_t lo = p != nullptr ? label(p) : 0, hi = label(y);
        if (hi - lo < 2) {
            relabel(y);
            relabelled = true;
            lo = p != nullptr ? label(p) : 0;
            hi = label(y);
        }
        set_prev(t, p);
        set_next(t, y);
        if (p != nullptr) set_next(p, t);
        else head_ = t;
        set_prev(y, t);
        set_label(t, lo + std::min((hi - lo) / 2, max_step));
        ++size_;
        return relabelled;
    }

    // Puts t (not placed) after every other ult.
    bool append(ult* t) {
        bool relabelled = false;
        std::uint64_t lo = tail_ != nullptr ? label(tail_) : 0;
        if (label_end - lo < 2) {
            relabel(tail_);
            relabelled = true;
            lo = label(tail_);
        }
        set_prev(t, tail_);
        set_next(t, nullptr);
        if (tail_ != nullptr) set_next(tail_, t);
        else head_ = t;
        tail_ = t;
        set_label(t, lo + (label_end - lo) / 2);
        ++size_;
        return relabelled;
    }

    void remove(ult* t) {
        ult* p = prev(t);
        ult* n = next(t);
        if (p != nullptr) set_next(p, n);
        else head_ = n;
        if (n != nullptr) set_prev(n, p);
        else tail_ = p;
        set_label(t, 0);
        --size_;
    }

    std::size_t size() const { return size_; }
    ult* head() const { return head_; }
    static ult* next(const ult* t) { return reinterpret_cast<ult*>(t->sched_word[1]); }
    static ult* prev(const ult* t) { return reinterpret_cast<ult*>(t->sched_word[0]); }

private:
    static void set_prev(ult* t, ult* p) { t->sched_word[0] = reinterpret_cast<std::uintptr_t>(p); }
    static void set_next(ult* t, ult* n) { t->sched_word[1] = reinterpret_cast<std::uintptr_t>(n); }
    static void set_label(ult* t, std::uint64_t l) {
        atomic_ref<std::uintptr_t>(t->sched_word[2]).store(l, memory_order_relaxed);
    }

    // Spreads the labels of the smallest sparse-enough aligned range around
    // `anchor` evenly over it, leaving a gap of at least 2 between neighbours
    // and at both ends of the range. Bender et al.'s threshold: a range of 2^i
    // labels may hold at most 2^i / T^i ults (T = 1.5: the top range, 2^63
    // labels, then holds up to ~7e7 live ults, far beyond what fits in memory
    // with a stack each).
    void relabel(ult* anchor) {
        const std::uint64_t at = label(anchor);
        ult* first = anchor;
        ult* last = anchor;
        std::uint64_t count = 1;
        double capacity = 1.0;
        for (int i = 1; i <= 63; ++i) {
            const std::uint64_t span = std::uint64_t(1) << i;
            const std::uint64_t base = at & ~(span - 1);
            while (prev(first) != nullptr && label(prev(first)) >= base) {
                first = prev(first);
                ++count;
            }
            while (next(last) != nullptr && label(next(last)) - base < span) {
                last = next(last);
                ++count;
            }
            capacity = capacity * 2.0 / 1.5;
            // One more slot than the ults in range: the one about to be inserted.
            if (static_cast<double>(count + 1) > capacity) continue;
            const std::uint64_t gap = span / (count + 1);
            if (gap < 2) continue;
            std::uint64_t l = base;
            for (ult* t = first;; t = next(t)) {
                l += gap;
                set_label(t, l);
                if (t == last) break;
            }
            ++relabels_;
            return;
        }
        std::fprintf(stderr, "weft: dfs: order labels exhausted (%zu live threads)\n", size_);
        std::abort();
    }

    ult* head_ = nullptr;
    ult* tail_ = nullptr;
    std::size_t size_ = 0;

public:
    std::uint64_t relabels_ = 0;  // relabel passes so far (tests, docs/design/dfs.md)
};

}  // namespace weft::detail

// weft/detail/fil_hunger.hpp — the filaments' hunger word (not for direct use).
//
// Each participant of a fork/join region holds a copy of the region's hunger
// word in its hot prefix (weft_fil_self_t_::hungry, weft/detail/filament_abi.hpp).
// The pruning test of weft::join, inlined into every join of the program, reads
// the calling worker's copy: one load from a line the worker already holds, no
// pointer to follow (docs/design/filaments.md, "One word"). Every change is
// made to every copy (the library's add_hunger), and each copy receives every
// delta, so each converges to the same value whatever the order of the changes.
//
// The word is a count and three biases, each in bits of its own:
//   count       bits 0..19   participants with nothing to run (at most the
//                            region's workers; src/core/tunables.hpp checks
//                            that max_workers fits)
//   counting    bit 20       in every copy while the region counts pruned forks
//                            (the runtime measures: WEFT_STATS=1,
//                            weft_config_t.measure, WEFT_TRACE); opt-in, as the
//                            count is a memory increment at every join
//                            (docs/design/filaments.md, "No counter on the
//                            common path")
//   ready       bit 22       in one copy, while its owner's fork list is empty
//                            and keeps a job ready (src/fil/list.hpp)
//   no_pruning  bit 24       in every copy of a region whose forks are all real
//                            forks (weft::fj_options::pruning off)
// The inline test prunes a fork when the word is 0 or exactly `counting`;
// any other value sends the fork to the library (weft_fil_fork_), which reads
// count() and the list to decide. Each bias is set at most once per copy, so
// set() and clear() are plain additions.
//
// Memory ordering: relaxed throughout. The word is a hint for the pruning
// test: a copy that sees a change late delays one fork (or one call).
//
// Layout: ABI (one std::atomic<int>, read inline by user code). Change it only
// with the soname and the inline namespace d0.
#pragma once

#include <atomic>

namespace weft {
namespace detail {
inline namespace d0 {

class hunger_word {
public:
    enum bias : int {
        counting = 1 << 20,
        ready = 1 << 22,
        no_pruning = 1 << 24,
    };
    // The count's bits: everything below the lowest bias.
    static constexpr int count_mask = counting - 1;

    static_assert((counting & (counting - 1)) == 0 && (ready & (ready - 1)) == 0 &&
                      (no_pruning & (no_pruning - 1)) == 0,
                  "each bias is one bit");
    static_assert(counting < ready && ready < no_pruning, "biases in order: counting, ready, no_pruning");
    static_assert(static_cast<long long>(counting) + ready + no_pruning + count_mask <= 0x7fffffffLL,
                  "the full word fits an int");

    constexpr hunger_word(int v = 0) noexcept : word_(v) {}
    hunger_word(const hunger_word&) = delete;
    hunger_word& operator=(const hunger_word&) = delete;

    // The whole word, biases included (the inline pruning test).
    int load() const noexcept { return word_.load(std::memory_order_relaxed); }
    // Hungry participants as this copy sees them (without the biases).
    int count() const noexcept { return load() & count_mask; }
    // This copy's share of a change of the count (add_hunger makes it on every copy).
    void add(int delta) noexcept { word_.fetch_add(delta, std::memory_order_relaxed); }
    // Puts b in the word; b must not be in it.
    void set(bias b) noexcept { word_.fetch_add(b, std::memory_order_relaxed); }
    // Takes b out of the word; b must be in it.
    void clear(bias b) noexcept { word_.fetch_sub(b, std::memory_order_relaxed); }

private:
    std::atomic<int> word_;
};

}  // namespace d0
}  // namespace detail
}  // namespace weft

// weft::arch — stacks for weft threads: mapped lazily, guarded, cached for reuse.
#pragma once

#include <cstddef>
#include <cstdint>

namespace weft::arch {

// How a stack's overflow is detected. Every stack has a guard region of
// stack_guard_size() bytes just below lo; the kind says what that region is.
// See docs/design/stacks-and-context.md.
enum class guard_kind : std::uint8_t {
    madvise_guard,  // MADV_GUARD_INSTALL guard region (Linux >= 6.13): faults on access,
                    // costs no VMA and no memory
    mprotect,       // PROT_NONE: faults on access, splits the mapping (about 2 VMAs of
                    // vm.max_map_count), so it is rationed process-wide
    canary,         // no guard left in the map-count budget: two canary words at the
                    // top of that region, checked by stack_canary_intact() when the
                    // thread switches out (detection after the fact)
};

struct stack {
    void* lo = nullptr;    // lowest usable byte (just above the guard)
    std::size_t size = 0;  // usable bytes
    guard_kind guard = guard_kind::mprotect;
    bool pooled = false;  // came from the slab pool (default size) vs its own mapping
    void* hi() const { return static_cast<char*>(lo) + size; }
};

// Which guard kinds a pool may use. `automatic` is the runtime's choice; the
// others exist for tests and for WEFT_STACK_GUARD-style overrides.
enum class guard_policy : std::uint8_t {
    automatic,  // MADV_GUARD_INSTALL if the kernel has it, else mprotect within the
                // VMA budget, else canary
    mprotect,   // skip the madvise guard: mprotect within the budget, else canary
    canary,     // canaries only (no guard pages at all)
};

// Tunables of a stack_pool. The defaults are what the runtime uses; each is a
// guess bounded by the reasoning in docs/design/stacks-and-context.md.
struct stack_pool_options {
    // Default-size stacks per slab mapping. 32 x (64 KiB + 64 KiB guard) = 4 MiB
    // of address space per mmap; large enough to amortise the syscall, small
    // enough that a program with a few threads maps little. Must be >= 1.
    std::size_t slab_stacks = 32;
    // Most stacks a worker's cache holds (LIFO). Must be >= batch.
    std::size_t cache_max = 64;
    // Stacks moved between a cache and the shared list at a time. 1..64.
    std::size_t batch = 16;
    // Free stacks the shared list keeps resident ("warm"). Beyond that, a stack
    // put back on the shared list has its pages returned (MADV_DONTNEED), so a
    // spike of live threads does not pin its memory after it ends.
    std::size_t warm_max = 256;
    // Of the free stacks beyond warm_max, how many keep their top page
    // resident ("tepid": every page below it is returned). A thread's first
    // touch is that page (its control block and first frames), so a thread
    // that fits in it reuses a tepid stack without a page fault; a spike
    // keeps at most one page per stack of this many. 0: none.
    std::size_t keep_top_max = 0;
    guard_policy guard = guard_policy::automatic;
    // Most VMAs this pool may spend on mprotect guards (2 per guard); 0 = no
    // limit of its own. The process-wide budget (from vm.max_map_count) applies
    // in every case.
    std::size_t max_guard_vmas = 0;
};

class stack_pool;

// Per-worker cache of warm default-size stacks. Touched only by its worker.
struct stack_cache {
    stack_pool* pool = nullptr;
    void* head = nullptr;  // free list threaded through the stacks' top words
    std::size_t count = 0;
};

// The runtime's stack allocator. Default-size stacks are carved from slabs
// (one mapping of many stacks, each with a guard) and recycled through per-worker
// caches; other sizes get a mapping of their own and are unmapped on release.
// Thread-safe except where noted.
class stack_pool {
public:
    // default_size: usable bytes of a default stack (rounded up to whole pages;
    // 0 = tun::default_stack_size). Decides the guard kind once, here (see guard_policy).
    explicit stack_pool(std::size_t default_size);
    stack_pool(std::size_t default_size, const stack_pool_options& options);
    ~stack_pool();  // unmaps every slab; all stacks must have been released
    stack_pool(const stack_pool&) = delete;
    stack_pool& operator=(const stack_pool&) = delete;

    std::size_t default_size() const { return default_size_; }

    // Returns 0 and a stack of at least `size` usable bytes (0 = default), or
    // ENOMEM/EAGAIN. `cache` (may be null) is the calling worker's cache.
    [[nodiscard]] int acquire(std::size_t size, stack_cache* cache, stack* out);
    void release(const stack& s, stack_cache* cache);
    // Moves a worker's cached stacks back to the shared pool (worker exit).
    void drain(stack_cache* cache);

    // Address space currently mapped for stacks (slabs, guards included, plus
    // the own mappings of non-default sizes), its high-water mark since creation
    // or the last reset_peak(). Mapped is not resident: stacks are touched lazily.
    std::size_t bytes_mapped() const;
    std::size_t bytes_peak() const;
    void reset_peak();

    // Calls fn for every stack the pool has mapped, free or in use (the guard
    // kind passed is the preferred one, not necessarily each stack's own). Holds
    // the pool's lock meanwhile: fn must not call back into the pool. For
    // diagnostics (the deadlock report), not for hot paths.
    void for_each_stack(void (*fn)(const stack& s, void* ctx), void* ctx) const;

    // The guard kind chosen at creation for new stacks (individual stacks may
    // fall back to a weaker kind when the VMA budget runs out).
    guard_kind preferred_guard() const;

private:
    std::size_t default_size_;
    struct impl;
    impl* impl_;
};

// True if the canary at the bottom of a canary-guarded stack is intact
// (always true for the other guard kinds). The canary sits just below lo, at
// the top of the region that would have been the guard, so a thread may use
// all `size` bytes without touching it.
bool stack_canary_intact(const stack& s);

// True if addr lies in the guard region just below s (where an overflow of s
// faults); false for canary stacks, which have no guard. Async-signal-safe.
bool stack_guard_contains(const stack& s, const void* addr);

// The size of the guard region below every stack: 64 KiB (or one page, if
// pages are larger). It is what GCC's -fstack-clash-protection assumes on
// AArch64 (it probes once per 64 KiB there), and it catches, in code built
// without probes, a frame that runs up to 64 KiB past its stack. Valid once a
// stack_pool exists or install_overflow_handler has run. Async-signal-safe.
std::size_t stack_guard_size();

// True if the running flow's stack pointer is below s.lo: a frame of the
// thread that owns s lies outside its stack. The core asks this of the thread
// it switches away from, so that an overflow that got past the guard without
// faulting (a frame larger than the guard, in code built without stack probes)
// is reported before the thread runs again. False for a flow without a weft
// stack (s.lo null). Inline: it is on the switch path (two instructions).
[[gnu::always_inline]] inline bool stack_pointer_below(const stack& s) {
    std::uintptr_t sp;
#if defined(__x86_64__)
    asm("movq %%rsp, %0" : "=r"(sp));
#elif defined(__aarch64__)
    asm("mov %0, sp" : "=r"(sp));
#else
    sp = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
#endif
    return sp < reinterpret_cast<std::uintptr_t>(s.lo);
}

// Does a fault at `addr`, taken with stack pointer `sp`, come from an overflow
// of the stack whose lowest usable byte is `lo`? Yes if
//   1. addr is in the guard region below lo (every overflow of code built with
//      stack probes ends here, whatever the frame size), or
//   2. sp is below lo (by at most tun::max_stack_size) and addr lies between
//      one page below sp and lo: a stack access by a frame that lies below the
//      stack, larger than the guard, in code built without probes, faulting
//      wherever it landed (another stack's guard, an unmapped hole).
// Async-signal-safe.
bool stack_fault_is_overflow(const void* lo, const void* addr, const void* sp);

// --- Overflow reporting -------------------------------------------------------
// What the runtime tells the fault handler about the stack that faulted.
struct overflow_info {
    std::uint64_t thread_id;
    const char* thread_name;  // may be empty
    std::size_t stack_size;
    const void* stack_lo = nullptr;  // lowest usable byte of its stack
};
// Writes the overflow report for `info` to stderr and aborts. Async-signal-safe
// (write(2) and abort() only), so the fault handler and the core's canary check
// print the same line. `how` = canary adds "(canary overwritten)" after the size.
[[noreturn]] void report_stack_overflow(const overflow_info& info, guard_kind how);

// Called by the SIGSEGV/SIGBUS handler: returns true and fills *out (all four
// fields) if the calling kernel thread is running a weft thread on a weft stack.
// Must be async-signal-safe.
using overflow_lookup_fn = bool (*)(overflow_info* out);

// Installs the process-wide SIGSEGV/SIGBUS handler (the sigaction happens once;
// a later call only replaces `lookup`). A fault that stack_fault_is_overflow
// attributes to the stack of the weft thread lookup names (from the faulting
// address and the interrupted stack pointer) writes
//   weft: stack overflow in thread <id> (<name>): its stack is <n> bytes; raise
//   WEFT_STACK_SIZE or use weft_attr_setstacksize
// (one line) to stderr and aborts. Any other fault restores the previous
// disposition and returns, so the faulting instruction runs again and the
// previous handler (or the default action: a core dump) takes it.
void install_overflow_handler(overflow_lookup_fn lookup);
// Gives the calling kernel thread an alternate signal stack, so the handler can
// run when the fault is an overflow of the stack it is on (each worker calls
// it). Keeps an alternate stack the thread already has. Returns 0 or an errno.
int enable_alt_signal_stack();
// Removes and frees the alternate stack enable_alt_signal_stack installed.
void disable_alt_signal_stack();

}  // namespace weft::arch

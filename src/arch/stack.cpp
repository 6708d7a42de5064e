// weft::arch — stack_pool: stacks for weft threads, mapped lazily, guarded, recycled.
//
// Layout. A default-size stack lives in a slab: one anonymous mapping of
// `slab_stacks` slots, each slot a guard region (stack_guard_size(): 64 KiB)
// followed by the usable stack:
//
//     slab:  | guard | stack 0 ...... | guard | stack 1 ...... | ... |
//            ^ base  ^ lo0       hi0 ^ ^      ^ lo1
//
// A stack grows down from hi toward lo, so its overflow runs into its own
// guard, never into the stack below it: always, in code built with stack
// probes (-fstack-clash-protection touches every page a frame allocates, at
// most 64 KiB apart); for frames up to 64 KiB past the stack, in code built
// without. Stacks of other sizes get a mapping of their own with the same shape
// (the guard region, then the stack) and are unmapped on release. The guard
// kind says what the region is:
//   madvise_guard  MADV_GUARD_INSTALL (Linux >= 6.13): page-table markers that
//                  fault on access; no VMA, no memory but the page table they
//                  sit in, survive MADV_DONTNEED.
//   mprotect       PROT_NONE: splits the mapping, about 2 VMAs per guard, so it
//                  is rationed against vm.max_map_count (process-wide budget).
//   canary         ordinary memory with a canary in its top 16 bytes (checked
//                  by the core when the thread switches out). The rest of the
//                  region is a cushion that absorbs an overflow before it
//                  reaches the neighbouring stack. The canary is written each
//                  time the stack is handed out, so a free stack needs no
//                  canary page resident (it is discarded with it).
// The pool decides at creation which kind it prefers; a stack gets a weaker
// kind only when the stronger one fails (budget spent, kernel says no).
//
// Recycling, from hot to cold:
//   1. a worker's stack_cache: LIFO list threaded through the free stacks' top
//      words (no lock, no allocation; the top page is the one the core's thread
//      control block dirtied anyway, so it is warm);
//   2. the shared `warm` list (spinlock): up to warm_max resident free stacks;
//   3. the shared `tepid` list: up to keep_top_max free stacks whose pages
//      were given back with MADV_DONTNEED except the top one, which every
//      thread touches first (its control block and first frames): a thread
//      that stays within it runs on a tepid stack without a page fault;
//   4. the shared `cold` list: free stacks whose pages were given back with
//      MADV_DONTNEED (only address space and the guard marker remain);
//   5. a new slab.
// Caches refill and spill `batch` stacks at a time, so the shared lock is taken
// once per `batch` thread creations at most. The two shared lists are vectors
// whose capacity is reserved when stacks are carved (warm: warm_max; tepid:
// keep_top_max or the stacks carved, whichever is fewer; cold: all
// stacks ever carved), so returning stacks never allocates and cannot fail.
//
// Why a spinlock and not std::mutex: libweft-pthread interposes
// pthread_mutex_*, so runtime internals must not call them; the critical
// sections are a few vector pushes/pops and never include a system call.
#include "arch/stack.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <new>
#include <unordered_map>
#include <vector>

#include "base/primitives.hpp"
#include "core/tunables.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WEFT_STACK_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define WEFT_STACK_ASAN 1
#endif
#if defined(WEFT_STACK_ASAN)
#include <sanitizer/asan_interface.h>
#endif

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102  // Linux 6.13 uapi; older libc headers lack it
#endif
#ifndef MAP_STACK
#define MAP_STACK 0
#endif

namespace weft::arch {

namespace {

using detail::atomic;
using detail::lock_guard;
using detail::memory_order_relaxed;
using detail::spinlock;

// Bounds the on-stack transfer buffers below (512 bytes): acquire and release
// often run on a weft thread's own small stack.
constexpr std::size_t max_batch = 64;
constexpr std::uint64_t canary_pattern = 0x5745'4654'5354'4b21ull;  // "WEFTSTK!"

// Page size and guard size, published for the signal handler (which may not
// call sysconf). Relaxed: every writer stores the same value.
atomic<std::size_t> g_page{0};
atomic<std::size_t> g_guard{0};

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

std::size_t page_size() {
    std::size_t p = g_page.load(memory_order_relaxed);
    if (p == 0) {
        long v = sysconf(_SC_PAGESIZE);
        p = v > 0 ? static_cast<std::size_t>(v) : 4096;
        g_page.store(p, memory_order_relaxed);
    }
    return p;
}

// --- The process-wide VMA budget for mprotect guards --------------------------
// Each mprotect'ed guard in the middle of a mapping splits it into three: +2
// VMAs. vm.max_map_count (65530 by default) bounds the VMAs of the whole
// process, and running into it makes every later mmap/mprotect -- malloc's
// included -- fail with ENOMEM. Weft spends at most half of it on guards and
// leaves the other half to the rest of the program (libraries, malloc arenas,
// kernel-thread stacks at 2 VMAs each, the program's own mappings).
constexpr long vmas_per_guard = 2;

long guard_vma_budget() {
    static const long budget = [] {
        long max_map = 65530;
        int fd = ::open("/proc/sys/vm/max_map_count", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            char buf[32];
            ssize_t n = ::read(fd, buf, sizeof buf - 1);
            ::close(fd);
            if (n > 0) {
                long v = 0;
                for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) v = v * 10 + (buf[i] - '0');
                if (v > 0) max_map = v;
            }
        }
        return max_map / 2;
    }();
    return budget;
}

atomic<long> g_guard_vmas{0};  // VMAs spent on mprotect guards by all pools

// --- Is MADV_GUARD_INSTALL really there? -------------------------------------
// Decided once per process. A success return is not trusted alone (qemu-user,
// for one, returns 0 for advice it ignores): the guard page is then handed to
// write(2), which must fail with EFAULT if the page really faults.
bool madvise_guard_supported() {
    static const bool ok = [] {
        std::size_t pg = page_size();
        void* p = ::mmap(nullptr, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return false;
        bool works = false;
        if (::madvise(p, pg, MADV_GUARD_INSTALL) == 0) {
            int fds[2];
            if (::pipe2(fds, O_CLOEXEC) == 0) {
                ssize_t n = ::write(fds[1], p, 1);
                works = n < 0 && errno == EFAULT;
                ::close(fds[0]);
                ::close(fds[1]);
            }
        }
        ::munmap(p, 2 * pg);
        return works;
    }();
    return ok;
}

// --- Free-list encodings ------------------------------------------------------
// In a cache: a node in the top 16 bytes of the free stack.
struct cache_node {
    cache_node* next;
    guard_kind guard;
};
// On the shared lists: lo | guard kind (lo is page-aligned, kinds fit in 2 bits).
using entry = std::uintptr_t;
entry make_entry(void* lo, guard_kind g) {
    return reinterpret_cast<std::uintptr_t>(lo) | static_cast<std::uintptr_t>(g);
}
void* entry_lo(entry e) { return reinterpret_cast<void*>(e & ~std::uintptr_t{3}); }
guard_kind entry_guard(entry e) { return static_cast<guard_kind>(e & 3); }

void write_canary(void* lo) {
    auto* w = reinterpret_cast<std::uint64_t*>(lo) - 2;
    std::uint64_t v = canary_pattern ^ reinterpret_cast<std::uintptr_t>(lo);
    w[0] = v;
    w[1] = v;
}

// --- Many MADV_DONTNEED ranges in one call -----------------------------------
// Recent kernels take any advice from process_madvise(2) aimed at the calling
// process, and name the caller with the PIDFD_SELF_THREAD_GROUP sentinel
// instead of a pidfd (so it stays right in the child of fork()). Where either
// is missing the call fails (EINVAL, EBADF, ENOSYS; EPERM under a seccomp
// filter) and the pool falls back, once for the process, to a madvise per
// range. A partial result is finished the same way (MADV_DONTNEED again on a
// range already discarded does nothing).
constexpr int pidfd_self_process = -10001;  // PIDFD_SELF_THREAD_GROUP
#ifdef SYS_process_madvise
constexpr long sys_process_madvise = SYS_process_madvise;
#else
constexpr long sys_process_madvise = 440;  // x86-64 and the generic table (AArch64)
#endif
atomic<bool> g_batch_discard_refused{false};

bool batch_discard(iovec* ranges, std::size_t n) {
    if (n < 2 || g_batch_discard_refused.load(memory_order_relaxed)) return false;
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < n; ++i) bytes += ranges[i].iov_len;
    long const r = ::syscall(sys_process_madvise, pidfd_self_process, ranges, n, MADV_DONTNEED, 0u);
    if (r == static_cast<long>(bytes)) return true;
    if (r < 0) g_batch_discard_refused.store(true, memory_order_relaxed);
    return false;
}

}  // namespace

struct stack_pool::impl {
    stack_pool_options opt;
    std::size_t page = 0;
    std::size_t guard = 0;   // guard region below every stack (whole pages)
    std::size_t usable = 0;  // default stack bytes (pages)
    std::size_t slot = 0;    // guard + usable
    guard_kind preferred = guard_kind::mprotect;

    atomic<std::size_t> mapped{0};
    atomic<std::size_t> peak{0};
    atomic<long> guard_vmas{0};  // this pool's share of g_guard_vmas

    // --- Shared free lists and slab registry (guarded by lock) --------------
    spinlock lock;
    std::vector<entry> warm;         // capacity warm_max, reserved at creation
    std::vector<entry> tepid;        // capacity >= min(carved, keep_top_max), reserved when carving
    std::vector<entry> cold;         // capacity >= stacks carved, reserved when carving
    std::size_t tepid_reserved = 0;  // tepid room taken by put_shared calls still discarding
    struct slab {
        void* base;
        std::size_t len;
    };
    std::vector<slab> slabs;
    std::size_t carved = 0;
    // Stacks with a mapping of their own, by lo -> usable size (for for_each_stack).
    std::unordered_map<void*, std::size_t> own;

    void account_map(std::size_t n) {
        std::size_t now = mapped.fetch_add(n, memory_order_relaxed) + n;
        std::size_t p = peak.load(memory_order_relaxed);
        while (now > p && !peak.compare_exchange_weak(p, now, memory_order_relaxed)) {
        }
    }
    void account_unmap(std::size_t n) { mapped.fetch_sub(n, memory_order_relaxed); }

    // Tries to take VMAs for one mprotect guard from both budgets.
    bool take_guard_vmas() {
        if (opt.max_guard_vmas != 0 &&
            guard_vmas.load(memory_order_relaxed) + vmas_per_guard > static_cast<long>(opt.max_guard_vmas))
            return false;
        if (g_guard_vmas.fetch_add(vmas_per_guard, memory_order_relaxed) + vmas_per_guard > guard_vma_budget()) {
            g_guard_vmas.fetch_sub(vmas_per_guard, memory_order_relaxed);
            return false;
        }
        guard_vmas.fetch_add(vmas_per_guard, memory_order_relaxed);
        return true;
    }
    void give_guard_vmas(long n) {
        g_guard_vmas.fetch_sub(n, memory_order_relaxed);
        guard_vmas.fetch_sub(n, memory_order_relaxed);
    }

    // Makes the region below lo a guard, the strongest kind available.
    guard_kind protect(void* lo) {
        void* g = static_cast<char*>(lo) - guard;
        if (preferred == guard_kind::madvise_guard && ::madvise(g, guard, MADV_GUARD_INSTALL) == 0)
            return guard_kind::madvise_guard;
        if (preferred != guard_kind::canary && take_guard_vmas()) {
            if (::mprotect(g, guard, PROT_NONE) == 0) return guard_kind::mprotect;
            give_guard_vmas(vmas_per_guard);  // e.g. ENOMEM: the map count is full after all
        }
        return guard_kind::canary;  // the canary is written when handed out
    }

    // Returns the pages of free default-size stacks to the kernel, from each
    // stack's guard slot up to its top. The madvise (and the TLB shootdown it
    // implies in a multi-threaded process) is the whole cost, so neighbours in
    // a slab go in one call. Including the guard slot is free for real guards
    // (a guard marker survives MADV_DONTNEED; a PROT_NONE page has nothing to
    // drop) and returns a canary stack's canary page, rewritten when the stack
    // is handed out again. Sorts `e` in place.
    void discard(entry* e, std::size_t n) const {
        std::sort(e, e + n);
        for (std::size_t i = 0; i < n;) {
            std::size_t j = i + 1;
            while (j < n && entry_lo(e[j]) == static_cast<char*>(entry_lo(e[j - 1])) + slot) ++j;
            ::madvise(static_cast<char*>(entry_lo(e[i])) - guard, (j - i) * slot, MADV_DONTNEED);
            i = j;
        }
    }

    // Returns every usable page of free default-size stacks but the top one.
    // The ranges are not contiguous: one process_madvise for all of them where
    // the kernel takes MADV_DONTNEED through it (batch_discard), else a call
    // per stack. Pages below the top that were never touched cost the walk
    // only: nothing to free, no TLB flush. The guard region is left out but
    // for canary stacks (their canary page is rewritten at hand-out): a real
    // guard has nothing to drop, and walking its markers is most of the
    // call's work for a stack that ran in its top page.
    void discard_below_top(const entry* e, std::size_t n) const {
        iovec ranges[max_batch];
        for (std::size_t done = 0; done < n;) {
            std::size_t const k = std::min(n - done, max_batch);
            for (std::size_t i = 0; i < k; ++i) {
                entry const x = e[done + i];
                bool const with_guard = entry_guard(x) == guard_kind::canary;
                ranges[i].iov_base = static_cast<char*>(entry_lo(x)) - (with_guard ? guard : 0);
                ranges[i].iov_len = usable - page + (with_guard ? guard : 0);
            }
            if (!batch_discard(ranges, k))
                for (std::size_t i = 0; i < k; ++i) ::madvise(ranges[i].iov_base, ranges[i].iov_len, MADV_DONTNEED);
            done += k;
        }
    }

    // Maps and guards a new slab; hands up to `want` of its stacks to `out`
    // and puts the rest on the cold list (never touched: nothing to discard).
    int carve(entry* out, std::size_t want, std::size_t* got);

    // Takes up to `want` free stacks from the shared lists into `out`.
    std::size_t take_shared(entry* out, std::size_t want) {
        lock_guard<spinlock> g(lock);
        std::size_t n = 0;
        while (n < want && !warm.empty()) {
            out[n++] = warm.back();
            warm.pop_back();
        }
        while (n < want && !tepid.empty()) {
            out[n++] = tepid.back();
            tepid.pop_back();
        }
        while (n < want && !cold.empty()) {
            out[n++] = cold.back();
            cold.pop_back();
        }
        return n;
    }

    // Returns free stacks to the shared lists: warm while there is room, then
    // tepid while there is room, the rest cold; the tepid and cold ones are
    // discarded outside the lock (the stacks are still ours). Tepid room is
    // reserved under the lock before the discard, so that concurrent callers
    // do not overfill the list. Reorders in[].
    void put_shared(entry* in, std::size_t n) {
        std::size_t k, t;
        {
            lock_guard<spinlock> g(lock);
            k = std::min(n, opt.warm_max - warm.size());
            for (std::size_t i = 0; i < k; ++i) warm.push_back(in[i]);
            t = std::min(n - k, opt.keep_top_max - std::min(opt.keep_top_max, tepid.size() + tepid_reserved));
            tepid_reserved += t;
        }
        if (k == n) return;
        discard_below_top(in + k, t);
        discard(in + k + t, n - k - t);
        lock_guard<spinlock> g(lock);
        tepid_reserved -= t;
        // Cannot reallocate: capacity >= min(carved, keep_top_max) for tepid
        // (the reservation above), >= carved >= stacks on the list for cold.
        for (std::size_t i = k; i < k + t; ++i) tepid.push_back(in[i]);
        for (std::size_t i = k + t; i < n; ++i) cold.push_back(in[i]);
    }
};

int stack_pool::impl::carve(entry* out, std::size_t want, std::size_t* got) {
    const std::size_t count = opt.slab_stacks;
    const std::size_t len = count * slot;
    void* base =
        ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (base == MAP_FAILED) return errno == EAGAIN ? EAGAIN : ENOMEM;
    // MAP_STACK already implies no transparent huge pages since Linux 6.7; say
    // it explicitly for older kernels running THP "always", where one touched
    // byte could otherwise make a whole 2 MiB of the slab resident.
    ::madvise(base, len, MADV_NOHUGEPAGE);
    {
        lock_guard<spinlock> g(lock);
        // Reserve room on the cold list for every stack of the slab before
        // publishing anything, so that returning stacks never allocates and a
        // failure here leaves no trace.
        try {
            if (cold.capacity() < carved + count) cold.reserve(std::max(carved + count, 2 * cold.capacity()));
            std::size_t const tepid_room = std::min(carved + count, opt.keep_top_max);
            if (tepid.capacity() < tepid_room)
                tepid.reserve(std::min(opt.keep_top_max, std::max(tepid_room, 2 * tepid.capacity())));
            slabs.push_back(slab{base, len});
        } catch (const std::bad_alloc&) {
            ::munmap(base, len);
            return ENOMEM;
        }
        carved += count;
    }
    account_map(len);

    // Guards are system calls: install them outside the lock (the slab is ours
    // until its stacks are published).
    const std::size_t n = std::min(want, count);
    auto lo_of = [&](std::size_t i) -> void* { return static_cast<char*>(base) + i * slot + guard; };
    for (std::size_t i = 0; i < n; ++i) out[i] = make_entry(lo_of(i), protect(lo_of(i)));
    constexpr std::size_t chunk = 64;
    for (std::size_t i = n; i < count;) {
        entry buf[chunk];
        std::size_t k = 0;
        for (; k < chunk && i < count; ++k, ++i) buf[k] = make_entry(lo_of(i), protect(lo_of(i)));
        lock_guard<spinlock> g(lock);
        for (std::size_t j = 0; j < k; ++j) cold.push_back(buf[j]);
    }
    *got = n;
    return 0;
}

stack_pool::stack_pool(std::size_t default_size) : stack_pool(default_size, stack_pool_options{}) {}

stack_pool::stack_pool(std::size_t default_size, const stack_pool_options& options) : impl_(new impl) {
    impl& p = *impl_;
    p.opt = options;
    p.opt.slab_stacks = std::max<std::size_t>(p.opt.slab_stacks, 1);
    p.opt.batch = std::clamp<std::size_t>(p.opt.batch, 1, max_batch);
    p.opt.cache_max = std::max(p.opt.cache_max, p.opt.batch);
    p.page = page_size();
    p.guard = stack_guard_size();
    p.usable = round_up(default_size == 0 ? detail::tun::default_stack_size : default_size, p.page);
    p.slot = p.guard + p.usable;
    default_size_ = p.usable;
    switch (p.opt.guard) {
    case guard_policy::automatic:
        p.preferred = madvise_guard_supported() ? guard_kind::madvise_guard : guard_kind::mprotect;
        break;
    case guard_policy::mprotect: p.preferred = guard_kind::mprotect; break;
    case guard_policy::canary: p.preferred = guard_kind::canary; break;
    }
    p.warm.reserve(p.opt.warm_max);  // may throw bad_alloc: construction fails cleanly
}

stack_pool::~stack_pool() {
    impl& p = *impl_;
    for (const impl::slab& s : p.slabs) ::munmap(s.base, s.len);
    // Own mappings were unmapped on release; what remains is the slabs' share.
    long vmas = p.guard_vmas.load(memory_order_relaxed);
    if (vmas != 0) g_guard_vmas.fetch_sub(vmas, memory_order_relaxed);
    delete impl_;
}

int stack_pool::acquire(std::size_t size, stack_cache* cache, stack* out) {
    impl& p = *impl_;
    if (size > default_size_) {
        // A stack of its own: guard region + size rounded up to pages.
        if (size > (SIZE_MAX >> 2)) return ENOMEM;
        std::size_t usable = round_up(size, p.page);
        std::size_t len = usable + p.guard;
        void* base = ::mmap(nullptr, len, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
        if (base == MAP_FAILED) return errno == EAGAIN ? EAGAIN : ENOMEM;
        if (usable >= (std::size_t{2} << 20)) ::madvise(base, len, MADV_NOHUGEPAGE);
        void* lo = static_cast<char*>(base) + p.guard;
        {
            lock_guard<spinlock> g(p.lock);
            try {
                p.own.emplace(lo, usable);
            } catch (const std::bad_alloc&) {
                ::munmap(base, len);
                return ENOMEM;
            }
        }
        p.account_map(len);
        *out = stack{lo, usable, p.protect(lo), false};
        if (out->guard == guard_kind::canary) write_canary(lo);
        return 0;
    }

    if (cache == nullptr) {
        entry e;
        std::size_t got = p.take_shared(&e, 1);
        if (got == 0) {
            if (int rc = p.carve(&e, 1, &got); rc != 0) return rc;
        }
        *out = stack{entry_lo(e), default_size_, entry_guard(e), true};
        if (out->guard == guard_kind::canary) write_canary(out->lo);
        return 0;
    }

    if (cache->head == nullptr) {
        // Refill: `batch` stacks from the shared lists or a new slab.
        cache->pool = this;
        entry buf[max_batch];
        std::size_t want = p.opt.batch;
        std::size_t got = p.take_shared(buf, want);
        if (got == 0) {
            if (int rc = p.carve(buf, want, &got); rc != 0) return rc;
        }
        for (std::size_t i = got; i-- > 0;) {
            void* lo = entry_lo(buf[i]);
            auto* n = reinterpret_cast<cache_node*>(static_cast<char*>(lo) + default_size_) - 1;
            n->next = static_cast<cache_node*>(cache->head);
            n->guard = entry_guard(buf[i]);
            cache->head = n;
        }
        cache->count += got;
    }
    auto* n = static_cast<cache_node*>(cache->head);
    cache->head = n->next;
    --cache->count;
    void* hi = n + 1;
    *out = stack{static_cast<char*>(hi) - default_size_, default_size_, n->guard, true};
    if (out->guard == guard_kind::canary) write_canary(out->lo);
    return 0;
}

void stack_pool::release(const stack& s, stack_cache* cache) {
    impl& p = *impl_;
    if (!s.pooled) {
        if (s.guard == guard_kind::mprotect) p.give_guard_vmas(vmas_per_guard);
        {
            lock_guard<spinlock> g(p.lock);
            p.own.erase(s.lo);
        }
        std::size_t len = s.size + p.guard;
        ::munmap(static_cast<char*>(s.lo) - p.guard, len);
        p.account_unmap(len);
        return;
    }
#if defined(WEFT_STACK_ASAN)
    // The thread that ran here may have left poisoned redzones behind (it never
    // returned from its frames); the node below is the pool's to write.
    __asan_unpoison_memory_region(static_cast<char*>(s.hi()) - sizeof(cache_node), sizeof(cache_node));
#endif
    if (cache == nullptr) {
        entry e = make_entry(s.lo, s.guard);
        p.put_shared(&e, 1);
        return;
    }
    cache->pool = this;
    auto* n = reinterpret_cast<cache_node*>(s.hi()) - 1;
    n->next = static_cast<cache_node*>(cache->head);
    n->guard = s.guard;
    cache->head = n;
    if (++cache->count <= p.opt.cache_max) return;
    // Spill `batch` stacks from the head (Go's stackcacherelease does the same):
    // O(batch), and the shared warm list keeps them resident for other workers.
    entry buf[max_batch];
    std::size_t k = p.opt.batch;
    for (std::size_t i = 0; i < k; ++i) {
        auto* h = static_cast<cache_node*>(cache->head);
        cache->head = h->next;
        buf[i] = make_entry(reinterpret_cast<char*>(h + 1) - default_size_, h->guard);
    }
    cache->count -= k;
    p.put_shared(buf, k);
}

void stack_pool::drain(stack_cache* cache) {
    if (cache == nullptr) return;
    impl& p = *impl_;
    entry buf[max_batch];
    while (cache->head != nullptr) {
        std::size_t k = 0;
        while (k < max_batch && cache->head != nullptr) {
            auto* h = static_cast<cache_node*>(cache->head);
            cache->head = h->next;
            buf[k++] = make_entry(reinterpret_cast<char*>(h + 1) - default_size_, h->guard);
        }
        p.put_shared(buf, k);
    }
    cache->count = 0;
}

void stack_pool::for_each_stack(void (*fn)(const stack& s, void* ctx), void* ctx) const {
    impl& p = *impl_;
    lock_guard<spinlock> g(p.lock);
    for (const impl::slab& sl : p.slabs) {
        for (std::size_t off = 0; off + p.slot <= sl.len; off += p.slot) {
            void* lo = static_cast<char*>(sl.base) + off + p.guard;
            fn(stack{lo, p.usable, p.preferred, true}, ctx);
        }
    }
    for (const auto& [lo, size] : p.own) fn(stack{lo, size, p.preferred, false}, ctx);
}

std::size_t stack_pool::bytes_mapped() const { return impl_->mapped.load(memory_order_relaxed); }
std::size_t stack_pool::bytes_peak() const { return impl_->peak.load(memory_order_relaxed); }
void stack_pool::reset_peak() { impl_->peak.store(impl_->mapped.load(memory_order_relaxed), memory_order_relaxed); }
guard_kind stack_pool::preferred_guard() const { return impl_->preferred; }

bool stack_canary_intact(const stack& s) {
    if (s.guard != guard_kind::canary) return true;
    const auto* w = reinterpret_cast<const std::uint64_t*>(s.lo) - 2;
    std::uint64_t v = canary_pattern ^ reinterpret_cast<std::uintptr_t>(s.lo);
    return w[0] == v && w[1] == v;
}

bool stack_guard_contains(const stack& s, const void* addr) {
    if (s.guard == guard_kind::canary || s.lo == nullptr) return false;
    auto a = reinterpret_cast<std::uintptr_t>(addr);
    auto lo = reinterpret_cast<std::uintptr_t>(s.lo);
    return a < lo && lo - a <= g_guard.load(memory_order_relaxed);
}

std::size_t stack_guard_size() {
    std::size_t g = g_guard.load(memory_order_relaxed);
    if (g == 0) {
        g = round_up(detail::tun::stack_guard_bytes, page_size());
        g_guard.store(g, memory_order_relaxed);
    }
    return g;
}

namespace {
// Publishes the page and guard sizes when the library loads, so that the fault
// predicates below (called from the SIGSEGV handler, which may not call
// sysconf) have them even before the first stack pool exists.
[[maybe_unused]] const bool g_sizes_published = stack_guard_size() != 0;
}  // namespace

bool stack_fault_is_overflow(const void* lo, const void* addr, const void* sp) {
    auto l = reinterpret_cast<std::uintptr_t>(lo);
    auto a = reinterpret_cast<std::uintptr_t>(addr);
    auto p = reinterpret_cast<std::uintptr_t>(sp);
    if (l == 0 || a >= l) return false;
    if (l - a <= g_guard.load(memory_order_relaxed)) return true;  // 1. in the guard region
    // 2. A frame below the stack: sp under lo, the access at or above sp (one
    // page of slack for pushes, the x86-64 red zone and AArch64's pre-indexed
    // stores below sp).
    std::size_t slack = g_page.load(memory_order_relaxed);
    return p != 0 && p < l && l - p <= detail::tun::max_stack_size && a + slack >= p;
}

}  // namespace weft::arch

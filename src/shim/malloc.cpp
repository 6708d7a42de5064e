// malloc & co. under the shim: glibc's allocator, with weft's heap accounting
// and the dfs memory quota seeing the program's allocations.
//
// Narlikar & Blelloch ("Pthreads for Dynamic and Irregular Parallelism",
// section 4) changed the Pthreads library's malloc so that the scheduler
// counts every byte a thread allocates against its memory quota: without it a
// thread can allocate without bound between scheduling points. Here every
// allocation function a glibc program uses is defined over glibc's own
// (__libc_malloc & co.: exported by glibc, no dlsym, usable before any
// constructor has run and from any kernel thread), and:
//   - every block is counted at its usable size (malloc_usable_size, glibc's:
//     the shim does not replace it) when it is handed out and when it is
//     freed, in weft's heap figure (WEFT_STATS, weft_stats_t::heap_bytes_peak);
//   - before an allocation the program itself makes, on a weft thread, the
//     policy's quota decision is taken (dfs: preempt the thread, or delay a
//     large allocation behind dummy threads), as for weft_malloc.
// No header is added to blocks: docs/design/shim.md ("malloc") says why.
#include <dlfcn.h>
#include <link.h>
#include <malloc.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "core/dispatch.hpp"
#include "core/runtime.hpp"
#include "core/stats.hpp"
#include "core/worker.hpp"
#include "mem/quota_alloc.hpp"
#include "shim/shim.hpp"

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void __libc_free(void*);
void* __libc_memalign(size_t, size_t);
void* __libc_valloc(size_t);
void* __libc_pvalloc(size_t);
}

namespace weft::shim {
namespace {

// The code of the modules whose allocations never take a quota decision: the
// C library and the dynamic loader (they allocate while holding their own
// locks, such as a stdio stream's, which a switch to another weft thread on
// the same kernel thread would find taken by "itself"), the C++ runtime and
// libgcc (they allocate on behalf of weft's runtime too, inside its
// scheduler's locks), and the shim, which holds weft's runtime. Filled by a
// constructor before the runtime starts; until then no decision is taken.
struct code_range {
    std::uintptr_t lo = 0, hi = 0;
};
constexpr int max_ranges = 16;
code_range g_quiet[max_ranges];
int g_nquiet = 0;

bool name_has(const char* name, const char* what) { return name != nullptr && std::strstr(name, what) != nullptr; }

int collect_quiet(struct dl_phdr_info* info, size_t, void* self) {
    const char* name = info->dlpi_name;
    bool mine = false;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        std::uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
        if (ph.p_type == PT_LOAD && reinterpret_cast<std::uintptr_t>(self) - lo < ph.p_memsz) mine = true;
    }
    if (!mine && !name_has(name, "libc.so") && !name_has(name, "ld-linux") && !name_has(name, "ld64.so") &&
        !name_has(name, "libstdc++") && !name_has(name, "libgcc_s"))
        return 0;
    for (int i = 0; i < info->dlpi_phnum && g_nquiet < max_ranges; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
        std::uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
        g_quiet[g_nquiet++] = code_range{lo, lo + ph.p_memsz};
    }
    return 0;
}

// Before start.cpp's constructor (which has no priority, so runs last).
__attribute__((constructor(102))) void find_quiet_modules() {
    dl_iterate_phdr(&collect_quiet, reinterpret_cast<void*>(&find_quiet_modules));
    detail::heap_source = "malloc";
}

bool from_quiet_module(const void* caller) {
    auto a = reinterpret_cast<std::uintptr_t>(caller);
    for (int i = 0; i < g_nquiet; ++i)
        if (a - g_quiet[i].lo < g_quiet[i].hi - g_quiet[i].lo) return true;
    return false;
}

// The quota decision for `bytes` about to be allocated by code at `caller`
// (null: never): only for the program's own calls on a running weft thread.
// The decision may switch threads; the caller's errno is kept across it.
// A policy without a quota (every one but dfs) is ruled out first: the
// module lookup below is half of what the shim adds to a malloc.
void charge(std::size_t bytes, const void* caller) {
    if (caller == nullptr || g_nquiet == 0 || !ready()) return;
    if (detail::runtime* rt = detail::g_rt; rt == nullptr || rt->policy->space.on_alloc == nullptr) return;
    detail::worker* w = detail::current_worker();
    if (w == nullptr || w->current == nullptr || w->current == w->idle || from_quiet_module(caller)) return;
    errno_keeper keep;
    detail::heap_charge(bytes);
}

void* counted(void* p) {
    if (p != nullptr) detail::heap_note_alloc(malloc_usable_size(p));
    return p;
}

void* do_realloc(void* p, std::size_t n, const void* caller) {
    if (p == nullptr) {
        charge(n, caller);
        return counted(__libc_malloc(n));
    }
    std::size_t old = malloc_usable_size(p);
    if (n == 0) {  // glibc frees the block and returns null
        detail::heap_note_free(old);
        __libc_free(p);
        return nullptr;
    }
    if (n > old) charge(n - old, caller);
    void* q = __libc_realloc(p, n);
    if (q == nullptr) return nullptr;  // p is untouched
    std::size_t now = malloc_usable_size(q);
    if (now > old)
        detail::heap_note_alloc(now - old);
    else
        detail::heap_note_free(old - now);
    return q;
}

void* do_memalign(std::size_t align, std::size_t n, const void* caller) {
    charge(n, caller);
    return counted(__libc_memalign(align, n));
}

}  // namespace
}  // namespace weft::shim

using namespace weft::shim;

extern "C" {

void* malloc(size_t n) {
    charge(n, __builtin_return_address(0));
    return counted(__libc_malloc(n));
}

void free(void* p) {
    if (p == nullptr) return;
    weft::detail::heap_note_free(malloc_usable_size(p));
    __libc_free(p);
}

void* calloc(size_t count, size_t size) {
    size_t n;
    if (__builtin_mul_overflow(count, size, &n)) {
        errno = ENOMEM;
        return nullptr;
    }
    charge(n, __builtin_return_address(0));
    return counted(__libc_calloc(count, size));
}

void* realloc(void* p, size_t n) { return do_realloc(p, n, __builtin_return_address(0)); }

void* reallocarray(void* p, size_t count, size_t size) {
    size_t n;
    if (__builtin_mul_overflow(count, size, &n)) {
        errno = ENOMEM;
        return nullptr;
    }
    return do_realloc(p, n, __builtin_return_address(0));
}

// glibc's checks and answers: EINVAL for an alignment that is not a power of
// two multiple of sizeof(void*), ENOMEM when there is no memory; *memptr is
// untouched on failure.
int posix_memalign(void** memptr, size_t align, size_t n) {
    if (align % sizeof(void*) != 0 || ((align / sizeof(void*)) & (align / sizeof(void*) - 1)) != 0 || align == 0)
        return EINVAL;
    errno_keeper keep;  // posix_memalign reports through its result only
    void* p = do_memalign(align, n, __builtin_return_address(0));
    if (p == nullptr) return ENOMEM;
    *memptr = p;
    return 0;
}

// As glibc's (one function under two names there): an alignment that is not
// a power of two is rounded up to one; EINVAL above SIZE_MAX / 2 + 1.
void* aligned_alloc(size_t align, size_t n) { return do_memalign(align, n, __builtin_return_address(0)); }
void* memalign(size_t align, size_t n) { return do_memalign(align, n, __builtin_return_address(0)); }

void* valloc(size_t n) {
    charge(n, __builtin_return_address(0));
    return counted(__libc_valloc(n));
}

void* pvalloc(size_t n) {
    charge(n, __builtin_return_address(0));
    return counted(__libc_pvalloc(n));
}

}  // extern "C"

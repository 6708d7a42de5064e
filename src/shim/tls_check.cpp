// Detection of thread-local storage weft threads would share (tls_check.hpp).
#include "shim/tls_check.hpp"

#include "shim/tls_block.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <weft/weft.h>

namespace weft::shim {
namespace {

// Modules whose TLS is not the program's per-thread data: the C library (its
// errno is carried per weft thread by the shim; its other per-thread state is
// listed in docs/shim.md), the dynamic loader, the C++ runtime and libgcc
// (exception bookkeeping), and the shim itself (weft's per-worker state).
bool is_runtime_module(const char* path) {
    const char* base = std::strrchr(path, '/');
    base = base != nullptr ? base + 1 : path;
    static const char* const prefixes[] = {"libc.so", "ld-linux", "ld64.so", "libstdc++.so", "libgcc_s.so",
                                           "libweft-pthread.so", "libasan.so", "libubsan.so", "libtsan.so"};
    for (const char* p : prefixes)
        if (std::strncmp(base, p, std::strlen(p)) == 0) return true;
    return false;
}

int report_one(struct dl_phdr_info* info, size_t, void*) {
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_TLS || ph.p_memsz == 0) continue;
        const char* name = info->dlpi_name;
        if (name == nullptr || name[0] == '\0') name = program_invocation_name;  // the executable
        if (is_runtime_module(name)) return 0;
        std::fprintf(stderr,
                     "weft-pthread: warning: %s has %zu bytes of thread-local storage (__thread, thread_local); "
                     "weft threads that run on one worker share it, unlike glibc's threads, because %s "
                     "(docs/shim.md, \"Thread-local storage\")\n",
                     name, static_cast<size_t>(ph.p_memsz), tls_blocks_unavailable());
        return 0;
    }
    return 0;
}

}  // namespace

void report_shared_tls_once() {
    static std::atomic<bool> reported{false};
    if (reported.load(std::memory_order_relaxed) || reported.exchange(true, std::memory_order_relaxed)) return;
    if (tls_blocks_unavailable() == nullptr) return;  // every thread has its own block: nothing is shared
    dl_iterate_phdr(&report_one, nullptr);
    // errno: the shim keeps each weft thread's value across its calls, but
    // compiled code may keep errno's address (glibc declares __errno_location
    // const) from before a call that moved the thread to another worker, and
    // then reads that worker's errno. With one worker there is one address.
    if (weft_num_workers() > 1)
        std::fprintf(stderr,
                     "weft-pthread: note: with %d workers, code that reads errno after a blocking call through an "
                     "address it took before the call may read another thread's errno; WEFT_WORKERS=1 avoids it "
                     "(docs/shim.md, \"Thread-local storage\")\n",
                     weft_num_workers());
}

}  // namespace weft::shim

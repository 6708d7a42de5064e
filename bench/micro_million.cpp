// weft-bench micro: many threads created with many live at once (Narlikar &
// Blelloch's point that lightweight threads make a thread per unit of work
// affordable): a million threads with a hundred thousand live at once.
//
//   million_threads  10 x --iters weft threads in ten batches; each batch
//                    creates --iters threads that all block on one semaphore
//                    (so that --iters are live at once, each having run on its
//                    own stack), then releases and joins them. The figure is
//                    ns per thread (create, block, wake, join).
// Beside it, per round (weft_stats_get and getrusage):
//   million_threads_rss_per_live_bytes  the process's resident memory at the
//                    batch's peak (every thread live) minus before the op's
//                    first batch ever ran, over the live threads
//   million_threads_faults_per_thread   minor page faults during the round per
//                    thread: a stack whose pages were given back and are
//                    touched again faults once per page
//   million_threads_cpu_ns_per_thread   the process's CPU time (user + system)
//                    during the round per thread: on a loaded machine, where
//                    the wall clock also counts waiting for a CPU
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <unistd.h>

#include <weft/weft.h>

#include "harness.hpp"
#include "micro.hpp"

namespace weft::bench::micro {
namespace {

constexpr std::uint64_t batches = 10;

std::uint64_t resident_bytes() {
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    if (f == nullptr) die("cannot open /proc/self/statm");
    unsigned long size = 0, resident = 0;
    int const got = std::fscanf(f, "%lu %lu", &size, &resident);
    std::fclose(f);
    if (got != 2) die("cannot read /proc/self/statm");
    return std::uint64_t(resident) * std::uint64_t(sysconf(_SC_PAGESIZE));
}

rusage usage() {
    rusage u{};
    check(getrusage(RUSAGE_SELF, &u), "getrusage");
    return u;
}

struct batch_state {
    weft_sem_t gate;
    std::atomic<std::uint64_t> waiting{0};
};

void* blocked_body(void* arg) {
    auto* st = static_cast<batch_state*>(arg);
    st->waiting.fetch_add(1, std::memory_order_relaxed);
    check(weft_sem_wait(&st->gate), "weft_sem_wait");
    return arg;
}

op_result million_threads(std::uint64_t live, int) {
    batch_state st;
    check(weft_sem_init(&st.gate, 0), "weft_sem_init");
    std::vector<weft_thread_t> ts(live, WEFT_THREAD_NULL);
    // The baseline is taken once, before the first batch of the first call
    // (the warm-up): later rounds count what the earlier ones kept resident.
    static std::uint64_t const baseline = resident_bytes();
    std::uint64_t peak = 0;
    bool wrong = false;
    rusage const u0 = usage();
    std::uint64_t const cpu0 = process_cpu_ns();
    std::uint64_t const t0 = now_ns();
    for (std::uint64_t b = 0; b < batches; ++b) {
        st.waiting.store(0, std::memory_order_relaxed);
        for (auto& t : ts) check(weft_thread_create(&t, nullptr, &blocked_body, &st), "weft_thread_create");
        // Every thread runs up to its wait (on its own stack) before the
        // first post: all `live` are live at once.
        while (st.waiting.load(std::memory_order_relaxed) < live) check(weft_thread_yield(), "weft_thread_yield");
        if (b == 0 || b + 1 == batches) peak = std::max(peak, resident_bytes());
        for (std::uint64_t i = 0; i < live; ++i) check(weft_sem_post(&st.gate), "weft_sem_post");
        for (auto t : ts) {
            void* r = nullptr;
            check(weft_thread_join(t, &r), "weft_thread_join");
            wrong |= r != &st;
        }
    }
    std::uint64_t const t1 = now_ns();
    rusage const u1 = usage();
    std::uint64_t const cpu1 = process_cpu_ns();
    check(weft_sem_destroy(&st.gate), "weft_sem_destroy");
    std::uint64_t const threads = batches * live;
    op_result r{double(t1 - t0), threads, {}};
    r.extra.emplace_back("rss_per_live_bytes", double(peak > baseline ? peak - baseline : 0) / double(live));
    r.extra.emplace_back("faults_per_thread", double(u1.ru_minflt - u0.ru_minflt) / double(threads));
    r.extra.emplace_back("cpu_ns_per_thread", double(cpu1 - cpu0) / double(threads));
    if (wrong) r.warning = "million_threads: a thread returned the wrong value";
    return r;
}

struct register_million_ops {
    register_million_ops() {
        op_registrar{micro_op{.id = "million_threads",
                              .kind = "million_threads",
                              .family = "weft",
                              .unit = "thread, --iters live",
                              .order = 8,
                              .run = &million_threads}};
    }
} const million_ops;

}  // namespace
}  // namespace weft::bench::micro

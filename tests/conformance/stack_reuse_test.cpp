// Stacks reused across batches of many live threads (arch::stack_pool's tepid
// list, docs/design/stacks-and-context.md): a thread whose stack use fits in
// its top page runs on a stack that an earlier thread left behind without a
// page fault, even when far more stacks were freed than the warm caches keep.
// Counted in page faults (getrusage), not time.
#include <sys/resource.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "support/weft_test.hpp"

namespace {

class StackReuse : public wt::single_runtime_fixture {};

struct batch {
    weft_sem_t gate;
    std::atomic<std::int64_t> waiting{0};
};

void* wait_at_gate(void* arg) {
    auto* b = static_cast<batch*>(arg);
    b->waiting.fetch_add(1, std::memory_order_relaxed);
    weft_sem_wait(&b->gate);
    return arg;
}

long minor_faults() {
    rusage u{};
    EXPECT_EQ(getrusage(RUSAGE_SELF, &u), 0);
    return u.ru_minflt;
}

// Creates n threads that are all live at once, each having run on its stack
// up to a wait, then releases and joins them.
void run_batch(std::vector<weft_thread_t>& ts) {
    batch b;
    ASSERT_EQ(weft_sem_init(&b.gate, 0), 0);
    for (auto& t : ts) ASSERT_EQ(weft_thread_create(&t, nullptr, &wait_at_gate, &b), 0);
    while (b.waiting.load(std::memory_order_relaxed) < static_cast<std::int64_t>(ts.size()))
        ASSERT_EQ(weft_thread_yield(), 0);
    for (std::size_t i = 0; i < ts.size(); ++i) ASSERT_EQ(weft_sem_post(&b.gate), 0);
    for (auto t : ts) {
        void* r = nullptr;
        ASSERT_EQ(weft_thread_join(t, &r), 0);
        ASSERT_EQ(r, &b);
    }
    ASSERT_EQ(weft_sem_destroy(&b.gate), 0);
}

// 4,000 live threads free far more stacks than the worker's cache (64) and
// the shared warm list (256) hold. Without the tepid list each of the others
// has every page returned and faults its top page in again in the next batch:
// about one fault per thread. With it the second batch faults almost nothing
// (the handle table, the vector and the semaphore are already in place).
TEST_F(StackReuse, second_batch_of_live_threads_faults_no_stack_page_in_again) {
    constexpr std::size_t n = 4000;
    std::vector<weft_thread_t> ts(n, WEFT_THREAD_NULL);
    run_batch(ts);
    if (HasFatalFailure()) return;
    long const before = minor_faults();
    run_batch(ts);
    long const faults = minor_faults() - before;
    EXPECT_LT(faults, static_cast<long>(n / 20))
        << faults << " minor page faults in a batch of " << n << " threads on stacks the first batch left behind";
}

}  // namespace

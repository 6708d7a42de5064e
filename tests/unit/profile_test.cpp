// Work/span measurement and the trace. Class: requirement.
//
// A balanced fork tree whose only work is in its leaves has known work T1 (the
// sum of the leaves) and span T-inf (the longest leaf: every root-to-leaf path
// holds one leaf and only forks and joins besides): the runtime's figures must
// be within 10% of them. The runtime times strands on the wall clock, so a
// leaf's truth is its own wall-clock duration: if the OS deschedules the test
// in the middle of a leaf (CI runs tests two at a time on two CPUs), truth and
// measurement both grow. Leaves spin on CPU time, so that they do the same work
// whatever the load.
#include <gtest/gtest.h>

#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <weft/weft.hpp>

namespace {

constexpr double leaf_ms = 4.0;

double thread_cpu_ms() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Spins until the calling kernel thread has run for `ms` of CPU time.
void spin_ms(double ms) {
    double start = thread_cpu_ms();
    while (thread_cpu_ms() - start < ms) {
    }
}

// Truth, from the leaves' own wall-clock durations (ns).
std::atomic<std::uint64_t> leaf_sum{0};
std::atomic<std::uint64_t> leaf_max{0};

void tree(int depth) {
    if (depth == 0) {
        auto start = std::chrono::steady_clock::now();
        spin_ms(leaf_ms);
        auto ns = static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
        leaf_sum += ns;
        std::uint64_t m = leaf_max.load();
        while (ns > m && !leaf_max.compare_exchange_weak(m, ns)) {
        }
        return;
    }
    auto left = weft::spawn(tree, depth - 1);
    tree(depth - 1);
    left.join();
}

struct tree_case {
    int workers;
    const char* sched;
};

class Profile : public testing::TestWithParam<tree_case> {};

TEST_P(Profile, work_and_span_of_a_balanced_tree_within_ten_percent) {
    weft_config_t cfg{};
    cfg.workers = GetParam().workers;
    cfg.sched = GetParam().sched;
    cfg.measure = 1;
    ASSERT_EQ(weft_init(&cfg), 0);
    constexpr int depth = 3;  // 8 leaves
    leaf_sum = 0;
    leaf_max = 0;
    ASSERT_EQ(weft_stats_reset(), 0);
    tree(depth);
    weft_stats_t s{};
    ASSERT_EQ(weft_stats_get(&s), 0);
    ASSERT_EQ(weft_finalize(), 0);

    double const work_ms = s.work_ns / 1e6, span_ms = s.span_ns / 1e6;
    double const true_work = leaf_sum / 1e6, true_span = leaf_max / 1e6;
    EXPECT_GE(true_work, (1 << depth) * leaf_ms);
    EXPECT_NEAR(work_ms, true_work, 0.10 * true_work) << "T1 measured " << work_ms << " ms";
    EXPECT_NEAR(span_ms, true_span, 0.10 * true_span) << "T-inf measured " << span_ms << " ms";
}

INSTANTIATE_TEST_SUITE_P(Schedulers, Profile,
                         testing::Values(tree_case{1, "fifo"}, tree_case{1, "lifo"}, tree_case{2, "fifo"},
                                         tree_case{1, "dfs"}, tree_case{2, "dfs"}),
                         [](const testing::TestParamInfo<tree_case>& i) {
                             return std::string(i.param.sched) + "_" + std::to_string(i.param.workers) + "w";
                         });

TEST(Profile, off_unless_asked) {
    weft_config_t cfg{};
    cfg.workers = 1;
    ASSERT_EQ(weft_init(&cfg), 0);
    tree(2);
    weft_stats_t s{};
    ASSERT_EQ(weft_stats_get(&s), 0);
    ASSERT_EQ(weft_finalize(), 0);
    EXPECT_EQ(s.work_ns, 0u);
    EXPECT_EQ(s.span_ns, 0u);
}

TEST(Trace, writes_chrome_trace_events_one_track_per_worker) {
    char path[] = "/tmp/weft_trace_testXXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    ASSERT_EQ(setenv("WEFT_TRACE", path, 1), 0);
    weft_config_t cfg{};
    cfg.workers = 2;
    ASSERT_EQ(weft_init(&cfg), 0);
    std::vector<weft::task<void>> tasks;
    for (int i = 0; i < 20; ++i) tasks.push_back(weft::spawn([] { spin_ms(0.2); }));
    for (auto& t : tasks) t.join();
    ASSERT_EQ(weft_finalize(), 0);
    unsetenv("WEFT_TRACE");

    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::remove(path);
    std::string const json = text.str();
    ASSERT_FALSE(json.empty());
    EXPECT_EQ(json.front(), '{');
    EXPECT_NE(json.find("\"traceEvents\""), std::string::npos);
    EXPECT_NE(json.find("\"name\":\"worker 0\""), std::string::npos);
    EXPECT_NE(json.find("\"name\":\"worker 1\""), std::string::npos);
    // A complete slice ("X") per run of a thread: at least one per thread.
    std::size_t slices = 0;
    for (std::size_t at = json.find("\"ph\":\"X\""); at != std::string::npos; at = json.find("\"ph\":\"X\"", at + 1))
        ++slices;
    EXPECT_GE(slices, 20u);
    // The file ends with the closing of the top-level object.
    std::size_t last = json.find_last_not_of(" \n");
    ASSERT_NE(last, std::string::npos);
    EXPECT_EQ(json[last], '}');
}

TEST(Trace, unwritable_path_is_a_clear_error) {
    ASSERT_EQ(setenv("WEFT_TRACE", "/nonexistent-dir/trace.json", 1), 0);
    testing::internal::CaptureStderr();
    weft_config_t cfg{};
    cfg.workers = 1;
    int rc = weft_init(&cfg);
    std::string err = testing::internal::GetCapturedStderr();
    unsetenv("WEFT_TRACE");
    if (rc == 0) weft_finalize();
    EXPECT_EQ(rc, EINVAL);
    EXPECT_NE(err.find("WEFT_TRACE"), std::string::npos) << err;
}

}  // namespace

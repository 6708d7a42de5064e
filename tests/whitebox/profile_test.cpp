// Work/span measurement and the trace. Class: requirement.
//
// The profiler's arithmetic along fork/join edges (core/profile.hpp) is tested
// in logical units, which the machine's load cannot move: the runtime's
// logical clock counts only the units each strand declares
// (profile_logical_advance), so a fork tree whose nodes declare known units
// has an exact work T1 (the sum) and span T-inf (the heaviest root-to-leaf
// path), and the runtime's figures must equal them. How close the wall-clock
// figures come to the truth is a benchmark's question, not a test's.
#include <gtest/gtest.h>

#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <weft/weft.hpp>

#include "core/profile.hpp"

namespace {

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

// A fork tree in logical units. An inner node declares `before` units, forks
// its left subtree, runs its right one, joins, then declares `after` units.
// Leaf k (0-based, left to right) declares (k + 1) * `leaf` units, in two
// halves with a yield between them (a strand that a switch cuts in two).
// So the rightmost leaf is the heaviest and every root-to-leaf path holds
// `depth` inner nodes: T-inf = depth * (before + after) + 2^depth * leaf.
constexpr std::uint64_t before = 3, after = 5, leaf = 100;

void tree(int depth, std::uint64_t index) {
    using weft::detail::profile_logical_advance;
    if (depth == 0) {
        std::uint64_t units = (index + 1) * leaf;
        profile_logical_advance(units / 2);
        weft_thread_yield();
        profile_logical_advance(units - units / 2);
        return;
    }
    profile_logical_advance(before);
    auto left = weft::spawn(tree, depth - 1, 2 * index);
    tree(depth - 1, 2 * index + 1);
    left.join();
    profile_logical_advance(after);
}

struct tree_case {
    int workers;
    const char* sched;
};

class Profile : public testing::TestWithParam<tree_case> {};

// The logical clock for one test, removed whatever the test's end.
struct logical_clock_scope {
    logical_clock_scope() { weft::detail::profile_use_logical_clock(true); }
    ~logical_clock_scope() { weft::detail::profile_use_logical_clock(false); }
};

TEST_P(Profile, work_and_span_of_a_fork_tree_are_exact_in_logical_units) {
    weft_config_t cfg{};
    cfg.workers = GetParam().workers;
    cfg.sched = GetParam().sched;
    cfg.measure = 1;
    logical_clock_scope logical;
    ASSERT_EQ(weft_init(&cfg), 0);
    constexpr int depth = 4;  // 16 leaves
    constexpr std::uint64_t leaves = 1u << depth;
    ASSERT_EQ(weft_stats_reset(), 0);
    tree(depth, 0);
    weft_stats_t s{};
    ASSERT_EQ(weft_stats_get(&s), 0);
    ASSERT_EQ(weft_finalize(), 0);

    const std::uint64_t work = (leaves - 1) * (before + after) + leaf * leaves * (leaves + 1) / 2;
    const std::uint64_t span = depth * (before + after) + leaf * leaves;
    EXPECT_EQ(s.work_ns, work) << "T1, in units";
    EXPECT_EQ(s.span_ns, span) << "T-inf, in units";
}

INSTANTIATE_TEST_SUITE_P(Schedulers, Profile,
                         testing::Values(tree_case{1, "fifo"}, tree_case{1, "lifo"}, tree_case{2, "fifo"},
                                         tree_case{1, "dfs"}, tree_case{2, "dfs"}, tree_case{2, "ws"}),
                         [](const testing::TestParamInfo<tree_case>& i) {
                             return std::string(i.param.sched) + "_" + std::to_string(i.param.workers) + "w";
                         });

TEST(Profile, off_unless_asked) {
    weft_config_t cfg{};
    cfg.workers = 1;
    ASSERT_EQ(weft_init(&cfg), 0);
    tree(2, 0);
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

// Class: requirement, negative. Process-level behaviour: each test re-executes
// this binary with WEFT_TEST_SCENARIO=<name> (scenarios.cpp) and checks the
// child's stderr and how it ended:
//   - a stack overflow prints "weft: stack overflow in thread <id> (<name>):
//     its stack is <n> bytes" and dies with SIGABRT, by deep recursion or by
//     one frame larger than the stack, in code built with or without probes;
//   - a deadlock prints "weft: deadlock:" with one line per blocked thread
//     naming what it waits in, and dies with SIGABRT; with WEFT_DEADLOCK=off
//     the same program hangs instead;
//   - a bad WEFT_* value at implicit start exits with status 2 and the message;
//   - WEFT_STATS=1 prints the statistics block once, at exit.
#include <signal.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/weft_test.hpp"

namespace {

using namespace std::chrono_literals;

// Generous: a sanitizer build on a loaded 2-core machine is slow to start.
constexpr auto kLimit = 60s;

wt::child_result run_scenario(const std::string& name, std::vector<std::string> env,
                              std::chrono::milliseconds limit = kLimit) {
    env.push_back("WEFT_TEST_SCENARIO=" + name);
    // Only the variables a case sets: the test run's own WEFT_* must not leak in.
    for (const char* v : {"WEFT_WORKERS", "WEFT_SCHED", "WEFT_STACK_SIZE", "WEFT_STATS", "WEFT_DEADLOCK"}) {
        bool set = false;
        for (const auto& e : env)
            if (e.rfind(std::string(v) + "=", 0) == 0) set = true;
        if (!set) env.push_back(v);  // "NAME" alone: unset
    }
    return wt::run_child({wt::self_exe()}, env, limit);
}

std::string describe(const wt::child_result& r) {
    std::ostringstream o;
    o << "timed_out=" << r.timed_out << " exited=" << r.exited << " code=" << r.exit_code << " signal=" << r.term_signal
      << " seconds=" << r.seconds << "\n--- stdout ---\n"
      << r.out << "--- stderr ---\n"
      << r.err;
    return o.str();
}

// The weft thread id the child announced as "id <what> <n>".
std::string announced_id(const std::string& out, const std::string& what) {
    std::smatch m;
    std::regex re("id " + what + " ([0-9]+)");
    if (std::regex_search(out, m, re)) return m[1];
    return "?";
}

int count_of(const std::string& text, const std::string& needle) {
    int n = 0;
    for (std::size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
    return n;
}

// The lines of the deadlock report that describe threads.
std::vector<std::string> report_thread_lines(const std::string& err) {
    std::vector<std::string> lines;
    std::istringstream in(err);
    std::string line;
    bool in_report = false;
    while (std::getline(in, line)) {
        if (line.rfind("weft: deadlock:", 0) == 0) {
            in_report = true;
            continue;
        }
        if (!in_report) continue;
        if (line.rfind("  thread ", 0) == 0)
            lines.push_back(line);
        else if (line.rfind("weft:", 0) == 0)
            break;
    }
    return lines;
}

// --- stack overflow ---------------------------------------------------------------

struct overflow_case {
    const char* label;
    std::vector<std::string> env;
    const char* name_in_report;  // what the report must show between the parentheses
    std::size_t stack;           // the usable size the report must state (at least)
};

class StackOverflow : public ::testing::TestWithParam<overflow_case> {};

TEST_P(StackOverflow, reports_thread_and_stack_size_then_aborts) {
    const overflow_case& c = GetParam();
    wt::child_result r = run_scenario("overflow", c.env);
    ASSERT_FALSE(r.timed_out) << describe(r);
    EXPECT_EQ(r.term_signal, SIGABRT) << describe(r);
    std::string id = announced_id(r.out, "overflow");
    ASSERT_NE(id, "?") << describe(r);
    std::smatch m;
    std::regex re("weft: stack overflow in thread ([0-9]+) \\(([^)]*)\\): its stack is ([0-9]+) bytes");
    ASSERT_TRUE(std::regex_search(r.err, m, re)) << describe(r);
    EXPECT_EQ(m[1].str(), id) << "the report names the thread that overflowed";
    EXPECT_EQ(m[2].str(), c.name_in_report);
    std::size_t reported = std::stoull(m[3].str());
    EXPECT_GE(reported, c.stack);
    EXPECT_LT(reported, c.stack + 4096) << "the stated size is the stack's, rounded to a page at most";
    EXPECT_EQ(r.out.find("not reached"), std::string::npos);
}

const overflow_case kOverflowCases[] = {
    {"default_stack", {"WEFT_WORKERS=1"}, "deep", 64 * 1024},
    {"default_stack_4_workers", {"WEFT_WORKERS=4"}, "deep", 64 * 1024},
    {"attribute_stack_256k", {"WEFT_WORKERS=2", "WEFT_TEST_STACK=262144"}, "deep", 256 * 1024},
    {"attribute_stack_not_page_multiple", {"WEFT_WORKERS=1", "WEFT_TEST_STACK=100000"}, "deep", 100000},
    {"env_default_128k", {"WEFT_WORKERS=1", "WEFT_STACK_SIZE=128K"}, "deep", 128 * 1024},
    {"unnamed_thread", {"WEFT_WORKERS=1", "WEFT_TEST_NAME=-"}, "unnamed", 64 * 1024},
    {"lifo_named", {"WEFT_WORKERS=2", "WEFT_SCHED=lifo", "WEFT_TEST_NAME=recursor"}, "recursor", 64 * 1024},
};

INSTANTIATE_TEST_SUITE_P(Cases, StackOverflow, ::testing::ValuesIn(kOverflowCases),
                         [](const auto& info) { return std::string(info.param.label); });

// --- stack overflow by one frame larger than the stack ---------------------------------
// A weft thread with a 64 KiB stack runs one frame of 256 KiB, 1 MiB or a
// 300,000-byte alloca (overflow_frames.cpp), built with weft's stack probes and
// without them (overflow_frames_unprobed.cpp). Probed code runs into the guard
// region below the stack; unprobed code lands below it and is reported when it
// faults there (by the stack pointer) or when the thread switches out with its
// frame below its stack (yield256k). Either way: weft's report, never an exit.

struct frame_case {
    const char* frame;   // WEFT_TEST_FRAME
    bool probes;         // WEFT_TEST_PROBES
    const char* workers;
};

class StackOverflowLargeFrame : public ::testing::TestWithParam<frame_case> {};

TEST_P(StackOverflowLargeFrame, reports_thread_and_stack_size_then_aborts) {
    const frame_case& c = GetParam();
    wt::child_result r = run_scenario("overflow_frame", {std::string("WEFT_WORKERS=") + c.workers,
                                                         std::string("WEFT_TEST_FRAME=") + c.frame,
                                                         std::string("WEFT_TEST_PROBES=") + (c.probes ? "1" : "0")});
    ASSERT_FALSE(r.timed_out) << describe(r);
    EXPECT_FALSE(wt::contains(r.out, "not reached")) << "the program went on past the overflow\n" << describe(r);
    EXPECT_EQ(r.term_signal, SIGABRT) << "weft's report ends with abort(), not another signal\n" << describe(r);
    std::string id = announced_id(r.out, "big");
    ASSERT_NE(id, "?") << describe(r);
    std::smatch m;
    std::regex re("weft: stack overflow in thread ([0-9]+) \\(([^)]*)\\): its stack is ([0-9]+) bytes;");
    ASSERT_TRUE(std::regex_search(r.err, m, re)) << describe(r);
    EXPECT_EQ(m[1].str(), id) << "the report names the thread that overflowed";
    EXPECT_EQ(m[2].str(), "big");
    EXPECT_EQ(m[3].str(), "65536");
    EXPECT_FALSE(wt::contains(r.err, "canary")) << describe(r);
}

const frame_case kFrameCases[] = {
    {"array256k", true, "1"}, {"array256k", false, "1"}, {"array256k", true, "2"}, {"array256k", false, "2"},
    {"array1m", true, "2"},   {"array1m", false, "2"},   {"alloca", true, "2"},    {"alloca", false, "2"},
    {"yield256k", true, "2"}, {"yield256k", false, "1"}, {"yield256k", false, "2"},
};

INSTANTIATE_TEST_SUITE_P(Frames, StackOverflowLargeFrame, ::testing::ValuesIn(kFrameCases), [](const auto& info) {
    return std::string(info.param.frame) + (info.param.probes ? "_probed_" : "_unprobed_") + info.param.workers + "w";
});

// --- deadlock report -----------------------------------------------------------------

class Deadlock : public ::testing::TestWithParam<const char*> {};  // WEFT_WORKERS

TEST_P(Deadlock, opposite_lock_order_is_reported_and_aborts) {
    wt::child_result r = run_scenario("deadlock_abba", {std::string("WEFT_WORKERS=") + GetParam()});
    ASSERT_FALSE(r.timed_out) << "the program hung instead of reporting\n" << describe(r);
    EXPECT_EQ(r.term_signal, SIGABRT) << describe(r);
    ASSERT_TRUE(wt::contains(r.err, "weft: deadlock:")) << describe(r);
    std::string ab = announced_id(r.out, "ab"), ba = announced_id(r.out, "ba");
    auto lines = report_thread_lines(r.err);
    bool ab_ok = false, ba_ok = false, main_ok = false;
    for (const auto& l : lines) {
        if (wt::contains(l, "thread " + ab + " (ab) waits in weft_mutex_lock") &&
            wt::contains(l, "held by thread " + ba))
            ab_ok = true;
        if (wt::contains(l, "thread " + ba + " (ba) waits in weft_mutex_lock") &&
            wt::contains(l, "held by thread " + ab))
            ba_ok = true;
        if (wt::contains(l, "thread 1 (main) waits in weft_thread_join") && wt::contains(l, "(thread " + ab + ")"))
            main_ok = true;
    }
    EXPECT_TRUE(ab_ok) << describe(r);
    EXPECT_TRUE(ba_ok) << describe(r);
    EXPECT_TRUE(main_ok) << describe(r);
    EXPECT_EQ(lines.size(), 3u) << "one line per blocked thread\n" << describe(r);
    EXPECT_TRUE(wt::contains(r.err, "WEFT_DEADLOCK=off")) << "the report says how to opt out";
}

TEST_P(Deadlock, cycle_of_joins_is_reported_and_aborts) {
    wt::child_result r = run_scenario("deadlock_join_cycle", {std::string("WEFT_WORKERS=") + GetParam()});
    ASSERT_FALSE(r.timed_out) << "the program hung instead of reporting\n" << describe(r);
    EXPECT_EQ(r.term_signal, SIGABRT) << describe(r);
    ASSERT_TRUE(wt::contains(r.err, "weft: deadlock:")) << describe(r);
    std::string j1 = announced_id(r.out, "j1"), j2 = announced_id(r.out, "j2");
    auto lines = report_thread_lines(r.err);
    bool j1_ok = false, j2_ok = false, main_ok = false;
    for (const auto& l : lines) {
        if (wt::contains(l, "thread " + j1 + " (j1) waits in weft_thread_join") &&
            wt::contains(l, "(thread " + j2 + ")"))
            j1_ok = true;
        if (wt::contains(l, "thread " + j2 + " (j2) waits in weft_thread_join") &&
            wt::contains(l, "(thread " + j1 + ")"))
            j2_ok = true;
        if (wt::contains(l, "thread 1 (main) waits in weft_sem_wait")) main_ok = true;
    }
    EXPECT_TRUE(j1_ok) << describe(r);
    EXPECT_TRUE(j2_ok) << describe(r);
    EXPECT_TRUE(main_ok) << describe(r);
    EXPECT_EQ(lines.size(), 3u) << describe(r);
    EXPECT_EQ(r.out.find("cycle broken"), std::string::npos);
}

TEST_P(Deadlock, main_waiting_on_unposted_semaphore_is_reported) {
    wt::child_result r = run_scenario("deadlock_sem", {std::string("WEFT_WORKERS=") + GetParam()});
    ASSERT_FALSE(r.timed_out) << "the program hung instead of reporting\n" << describe(r);
    EXPECT_EQ(r.term_signal, SIGABRT) << describe(r);
    auto lines = report_thread_lines(r.err);
    ASSERT_EQ(lines.size(), 1u) << describe(r);
    EXPECT_TRUE(wt::contains(lines[0], "thread 1 (main) waits in weft_sem_wait")) << describe(r);
    EXPECT_EQ(r.out.find("woken"), std::string::npos);
}

TEST_P(Deadlock, message_wait_names_the_port_by_id_and_the_naming_server) {
    wt::child_result r = run_scenario("deadlock_net_recv", {std::string("WEFT_WORKERS=") + GetParam()});
    ASSERT_FALSE(r.timed_out) << describe(r);
    EXPECT_EQ(r.term_signal, SIGABRT) << describe(r);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex("port ([0-9]+) ([0-9]+) ([0-9]+)"))) << describe(r);
    const std::string id = "port {node " + m[1].str() + ", index " + m[2].str() + ", gen " + m[3].str() + "}";
    auto lines = report_thread_lines(r.err);
    bool main_ok = false, names_ok = false;
    for (const auto& l : lines) {
        if (wt::contains(l, "thread 1 (main) waits in weft_net_recv on " + id)) main_ok = true;
        // The naming server's port: node 0, index 1 (weft/rpc.h).
        if (wt::contains(l, "(weft-names) waits in weft_net_recv on port {node 0, index 1, gen 0}")) names_ok = true;
    }
    EXPECT_TRUE(main_ok) << "the user's port is named by the ID the program knows\n" << describe(r);
    EXPECT_TRUE(names_ok) << "the naming server is named as such\n" << describe(r);
    EXPECT_EQ(lines.size(), 2u) << describe(r);
}

TEST_P(Deadlock, report_lists_blocked_threads_only) {
    // Besides main (blocked on a semaphore): a thread blocked on a condition
    // variable, and a thread that has finished but was never joined. The
    // finished one waits on nothing and must not be listed as waiting.
    wt::child_result r = run_scenario("deadlock_sem", {std::string("WEFT_WORKERS=") + GetParam(), "WEFT_TEST_EXTRA=1"});
    ASSERT_FALSE(r.timed_out) << describe(r);
    EXPECT_EQ(r.term_signal, SIGABRT) << describe(r);
    auto lines = report_thread_lines(r.err);
    bool main_ok = false, cond_ok = false, finished_listed = false;
    std::string cw = announced_id(r.out, "condwaiter");
    for (const auto& l : lines) {
        if (wt::contains(l, "thread 1 (main) waits in weft_sem_wait")) main_ok = true;
        if (wt::contains(l, "thread " + cw + " (condwaiter) waits in weft_cond_wait")) cond_ok = true;
        if (wt::contains(l, "(finished)")) finished_listed = true;
    }
    EXPECT_TRUE(main_ok) << describe(r);
    EXPECT_TRUE(cond_ok) << describe(r);
    EXPECT_FALSE(finished_listed) << "a finished (unjoined) thread is reported as waiting\n" << describe(r);
    EXPECT_EQ(lines.size(), 2u) << describe(r);
}

TEST_P(Deadlock, detection_off_makes_it_hang) {
    wt::child_result r =
        run_scenario("deadlock_sem", {std::string("WEFT_WORKERS=") + GetParam(), "WEFT_DEADLOCK=off"}, 2500ms);
    EXPECT_TRUE(r.timed_out) << "with WEFT_DEADLOCK=off the program must wait, not end\n" << describe(r);
    EXPECT_FALSE(wt::contains(r.err, "weft: deadlock:")) << describe(r);
    EXPECT_TRUE(wt::contains(r.out, "id main 1")) << "the child got as far as the wait\n" << describe(r);
}

TEST_P(Deadlock, abba_with_detection_off_hangs) {
    wt::child_result r =
        run_scenario("deadlock_abba", {std::string("WEFT_WORKERS=") + GetParam(), "WEFT_DEADLOCK=off"}, 2500ms);
    EXPECT_TRUE(r.timed_out) << describe(r);
    EXPECT_FALSE(wt::contains(r.err, "weft: deadlock:")) << describe(r);
}

INSTANTIATE_TEST_SUITE_P(Workers, Deadlock, ::testing::Values("1", "2", "4"),
                         [](const auto& info) { return std::string(info.param) + "w"; });

// --- bad environment at implicit start ----------------------------------------------------

struct bad_env {
    const char* var;
    const char* value;
};

class ImplicitStart : public ::testing::TestWithParam<bad_env> {};

TEST_P(ImplicitStart, bad_value_exits_with_status_2_and_the_message) {
    const bad_env& b = GetParam();
    std::vector<std::string> env = {std::string(b.var) + "=" + b.value};
    if (std::string(b.var) != "WEFT_WORKERS") env.push_back("WEFT_WORKERS=1");
    wt::child_result r = run_scenario("implicit_start", env);
    ASSERT_FALSE(r.timed_out) << describe(r);
    EXPECT_TRUE(r.exited) << describe(r);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(wt::contains(r.err, std::string("weft: ") + b.var + "='" + b.value + "' is invalid")) << describe(r);
    EXPECT_EQ(r.out.find("started"), std::string::npos) << "the program went on";
}

const bad_env kBadEnv[] = {
    {"WEFT_WORKERS", "zero"},    {"WEFT_WORKERS", "0"},   {"WEFT_SCHED", "bogus"},    {"WEFT_STACK_SIZE", "1x"},
    {"WEFT_STACK_SIZE", "1024"}, {"WEFT_STATS", "maybe"}, {"WEFT_DEADLOCK", "never"},
};

INSTANTIATE_TEST_SUITE_P(Vars, ImplicitStart, ::testing::ValuesIn(kBadEnv), [](const auto& info) {
    return std::string(info.param.var).substr(5) + "_" + std::to_string(info.index);
});

TEST(ImplicitStartGood, good_environment_runs) {
    wt::child_result r = run_scenario("implicit_start", {"WEFT_WORKERS=3", "WEFT_SCHED=lifo", "WEFT_STACK_SIZE=1M"});
    ASSERT_FALSE(r.timed_out) << describe(r);
    EXPECT_TRUE(r.exited) << describe(r);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(wt::contains(r.out, "started"));
    EXPECT_EQ(r.err, "");
}

// --- statistics at exit -----------------------------------------------------------------

TEST(StatsAtExit, printed_once_at_process_exit_without_finalize) {
    wt::child_result r = run_scenario("stats_exit", {"WEFT_WORKERS=2", "WEFT_STATS=1", "WEFT_TEST_THREADS=7"});
    ASSERT_FALSE(r.timed_out) << describe(r);
    EXPECT_TRUE(r.exited && r.exit_code == 0) << describe(r);
    EXPECT_EQ(count_of(r.err, "weft statistics"), 1) << describe(r);
    EXPECT_TRUE(wt::contains(r.err, "(ws scheduler, 2 workers)")) << describe(r);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.err, m, std::regex("threads created +([0-9]+)"))) << describe(r);
    EXPECT_EQ(m[1].str(), "7");
    ASSERT_TRUE(std::regex_search(r.err, m, std::regex("most threads live +([0-9]+)"))) << describe(r);
    EXPECT_GE(std::stoi(m[1].str()), 8) << "7 blocked threads plus main";
    for (const char* field : {"threads live now", "context switches", "stack bytes mapped", "parks / wake-ups",
                              "timers fired", "worker 0", "worker 1"})
        EXPECT_TRUE(wt::contains(r.err, field)) << field;
    EXPECT_FALSE(wt::contains(r.err, "filament")) << "no region ran: no filament block\n" << describe(r);
}

TEST(StatsAtExit, printed_once_when_finalized) {
    wt::child_result r =
        run_scenario("stats_exit", {"WEFT_WORKERS=1", "WEFT_STATS=1", "WEFT_TEST_THREADS=3", "WEFT_TEST_FINALIZE=1"});
    ASSERT_FALSE(r.timed_out) << describe(r);
    EXPECT_TRUE(r.exited && r.exit_code == 0) << describe(r);
    EXPECT_EQ(count_of(r.err, "weft statistics"), 1) << "printed at finalize, not again at exit\n" << describe(r);
    EXPECT_TRUE(std::regex_search(r.err, std::regex("threads created +3\n"))) << describe(r);
}

TEST(StatsAtExit, config_field_prints_too) {
    wt::child_result r = run_scenario("stats_config", {});
    ASSERT_FALSE(r.timed_out) << describe(r);
    EXPECT_TRUE(r.exited && r.exit_code == 0) << describe(r);
    EXPECT_EQ(count_of(r.err, "weft statistics"), 1) << describe(r);
    // The two regions (fork/join fib(10), a loop) and their filaments.
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.err, m, std::regex("filament regions +([0-9]+)"))) << describe(r);
    EXPECT_EQ(m[1].str(), "2");
    ASSERT_TRUE(std::regex_search(r.err, m, std::regex("forks / pruned / stolen +([0-9]+) / ([0-9]+) / ([0-9]+)")))
        << describe(r);
    // fib(10) joins 88 times (one per internal node of its call tree).
    EXPECT_EQ(std::stoull(m[1].str()) + std::stoull(m[2].str()), 88u) << describe(r);
    EXPECT_TRUE(wt::contains(r.err, "pool sweeps coarsened")) << describe(r);
}

TEST(StatsAtExit, not_printed_by_default) {
    wt::child_result r = run_scenario("stats_exit", {"WEFT_WORKERS=2"});
    ASSERT_FALSE(r.timed_out) << describe(r);
    EXPECT_TRUE(r.exited && r.exit_code == 0) << describe(r);
    EXPECT_EQ(r.err.find("weft statistics"), std::string::npos) << describe(r);
}

}  // namespace

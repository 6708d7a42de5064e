// Class: requirement, negative, whitebox. The machine-wide core budget (src/adapt/budget.hpp): the
// division rule on its own, shares of members in one process (several core_budget objects are several
// members), members in child processes that are killed, slots forged in the segment (a dead pid, a
// recycled pid, a live process), segments that are not a budget of this layout, and the adaptive
// controller as one of two members (its bound follows its share: it gives workers back at once when
// another member needs them and takes them again when that member wants fewer or leaves).
//
// Every case uses its own segment, /weft-budget-test-<pid>-<n>, and unlinks it at the end. Nothing
// waits on time except the one case about a segment whose creator never finished it, which waits
// out the joiner's bounded wait.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "adapt/budget.hpp"
#include "adapt/controller.hpp"
#include "core/runtime.hpp"
#include "support/scripted_probe.hpp"
#include "support/weft_test.hpp"
#include "weft/weft.h"

namespace {

using weft::detail::adapt::budget_demand_word;
using weft::detail::adapt::budget_magic;
using weft::detail::adapt::budget_owner_word;
using weft::detail::adapt::budget_segment;
using weft::detail::adapt::budget_slot_count;
using weft::detail::adapt::core_budget;
using weft::detail::adapt::default_budget_name;
using weft::detail::adapt::divide_cores;

std::vector<int> divide(const std::vector<int>& want, int cpus) {
    std::vector<int> share(want.size());
    divide_cores(want, cpus, share);
    return share;
}

// Field 22 of /proc/<pid>/stat, counted from the last ')' (the command name may hold spaces).
unsigned long long start_ticks(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(f, line);
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    std::string field;
    for (int i = 3; i < 22; ++i) rest >> field;
    unsigned long long start = 0;
    rest >> start;
    return start;
}

class CoreBudget : public ::testing::Test {
protected:
    void SetUp() override {
        static int counter = 0;
        name_ = "/weft-budget-test-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
        shm_unlink(name_.c_str());
    }
    void TearDown() override {
        if (seg_ != nullptr) munmap(seg_, sizeof(budget_segment));
        shm_unlink(name_.c_str());
    }

    std::unique_ptr<core_budget> join(int want, int cpus) {
        std::string why;
        auto b = core_budget::join(name_, want, cpus, &why);
        EXPECT_NE(b, nullptr) << why;
        return b;
    }
    // The test's own mapping of the segment, to read and forge slots.
    budget_segment* segment() {
        if (seg_ == nullptr) {
            int fd = shm_open(name_.c_str(), O_RDWR, 0);
            EXPECT_GE(fd, 0) << std::strerror(errno);
            void* p = mmap(nullptr, sizeof(budget_segment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            close(fd);
            EXPECT_NE(p, MAP_FAILED);
            seg_ = static_cast<budget_segment*>(p);
        }
        return seg_;
    }
    std::atomic_ref<std::uint64_t> owner(int slot) { return std::atomic_ref(segment()->slots[slot].owner); }
    // Writes a member into a free slot, as a process with this pid and start time would.
    int forge(pid_t pid, unsigned long long start, int want, int cpus) {
        for (int i = 0; i < int(budget_slot_count); ++i) {
            std::uint64_t expected = 0, o = budget_owner_word(std::uint32_t(pid), start);
            if (!owner(i).compare_exchange_strong(expected, o)) continue;
            std::atomic_ref(segment()->slots[i].demand).store(budget_demand_word(o, want, cpus));
            std::atomic_ref<std::uint64_t> bound(segment()->header.slot_bound);
            if (bound.load() < std::uint64_t(i + 1)) bound.store(i + 1);
            return i;
        }
        ADD_FAILURE() << "no free slot to forge";
        return -1;
    }
    // A segment of `bytes` bytes with this content in place of the name, as another program left it.
    void plant(std::size_t bytes, std::uint64_t magic, std::uint32_t version) {
        int fd = shm_open(name_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
        ASSERT_GE(fd, 0) << std::strerror(errno);
        ASSERT_EQ(ftruncate(fd, off_t(bytes)), 0);
        if (bytes >= sizeof(budget_segment)) {
            budget_segment seg{};
            seg.header.magic = magic;
            seg.header.version = version;
            seg.header.slot_count = budget_slot_count;
            ASSERT_EQ(pwrite(fd, &seg, sizeof seg, 0), ssize_t(sizeof seg));
        }
        close(fd);
    }
    std::string refusal() {
        std::string why;
        auto b = core_budget::join(name_, 2, 2, &why);
        EXPECT_EQ(b, nullptr);
        return why;
    }

    std::string name_;
    budget_segment* seg_ = nullptr;
};

// --- The division rule ---------------------------------------------------------------------------

TEST(DivideCores, examples) {
    EXPECT_EQ(divide({2}, 2), (std::vector<int>{2}));
    EXPECT_EQ(divide({5}, 2), (std::vector<int>{2}));
    EXPECT_EQ(divide({1}, 8), (std::vector<int>{1}));
    EXPECT_EQ(divide({2, 2}, 2), (std::vector<int>{1, 1}));
    EXPECT_EQ(divide({2, 2, 2}, 2), (std::vector<int>{1, 1, 1}));
    EXPECT_EQ(divide({2, 4}, 4), (std::vector<int>{2, 2}));
    EXPECT_EQ(divide({1, 4}, 4), (std::vector<int>{1, 3}));
    EXPECT_EQ(divide({2, 2, 2}, 4), (std::vector<int>{2, 1, 1}));  // the remainder goes in slot order
    EXPECT_EQ(divide({8, 1, 8}, 6), (std::vector<int>{3, 1, 2}));
    EXPECT_EQ(divide({1, 1, 1}, 2), (std::vector<int>{1, 1, 1}));
}

// Every case with up to 5 members wanting 1..5 on 1..7 CPUs: each share in [1, want]; the sum as
// documented; and max-min fairness: a member short of its want never has more than one less than
// anyone else.
TEST(DivideCores, every_small_case_is_bounded_summed_and_max_min_fair) {
    for (int n = 1; n <= 5; ++n) {
        std::vector<int> want(n, 1);
        for (;;) {
            for (int cpus = 1; cpus <= 7; ++cpus) {
                std::vector<int> share = divide(want, cpus);
                int total = std::accumulate(want.begin(), want.end(), 0);
                int sum = std::accumulate(share.begin(), share.end(), 0);
                SCOPED_TRACE(::testing::PrintToString(want) + " on " + std::to_string(cpus));
                EXPECT_EQ(sum, n >= cpus ? n : std::min(cpus, total));
                for (int i = 0; i < n; ++i) {
                    EXPECT_GE(share[i], 1);
                    EXPECT_LE(share[i], want[i]);
                    if (share[i] < want[i] && n < cpus) {
                        for (int j = 0; j < n; ++j) EXPECT_LE(share[j], share[i] + 1);
                    }
                }
            }
            int k = 0;
            while (k < n && want[k] == 5) want[k++] = 1;
            if (k == n) break;
            ++want[k];
        }
    }
}

// --- Members in one process -------------------------------------------------------------------------

TEST_F(CoreBudget, one_member_gets_min_of_want_and_cpus) {
    auto a = join(2, 2);
    EXPECT_EQ(a->share(), 2);
    EXPECT_EQ(a->members(), 1);
    a->set_want(1);
    EXPECT_EQ(a->share(), 1);
    a->set_want(7);
    EXPECT_EQ(a->share(), 2);
}

TEST_F(CoreBudget, two_members_split_and_a_leaver_gives_back_at_once) {
    auto a = join(2, 2);
    auto b = join(2, 2);
    EXPECT_EQ(a->members(), 2);
    EXPECT_EQ(a->share(), 1);
    EXPECT_EQ(b->share(), 1);
    b.reset();
    EXPECT_EQ(a->members(), 1);
    EXPECT_EQ(a->share(), 2);
}

TEST_F(CoreBudget, want_changes_are_seen_by_the_others) {
    auto a = join(2, 4);
    auto b = join(4, 4);
    EXPECT_EQ(a->share(), 2);
    EXPECT_EQ(b->share(), 2);
    a->set_want(1);
    EXPECT_EQ(b->share(), 3);
    EXPECT_EQ(a->share(), 1);
    a->set_want(4);
    EXPECT_EQ(b->share(), 2);
}

TEST_F(CoreBudget, shares_of_n_members_sum_to_the_cpus) {
    std::vector<std::unique_ptr<core_budget>> m;
    for (int want : {3, 1, 8, 2, 5}) m.push_back(join(want, 8));
    std::vector<int> share;
    for (auto& b : m) share.push_back(b->share());
    EXPECT_EQ(share, (std::vector<int>{2, 1, 2, 2, 1}));  // level 1, the remainder in slot order
    EXPECT_EQ(std::accumulate(share.begin(), share.end(), 0), 8);
}

TEST_F(CoreBudget, more_members_than_cpus_keep_one_each) {
    std::vector<std::unique_ptr<core_budget>> m;
    for (int i = 0; i < 5; ++i) m.push_back(join(2, 2));
    for (auto& b : m) EXPECT_EQ(b->share(), 1);
    EXPECT_EQ(m[0]->members(), 5);
}

TEST_F(CoreBudget, the_cpus_are_the_most_any_member_joined_with) {
    auto a = join(4, 1);  // e.g. confined to one CPU
    EXPECT_EQ(a->share(), 1);
    auto b = join(1, 4);
    EXPECT_EQ(a->share(), 3);
    b.reset();
    EXPECT_EQ(a->share(), 1);
}

TEST_F(CoreBudget, no_free_slot_is_an_error) {
    std::vector<std::unique_ptr<core_budget>> m;
    for (int i = 0; i < int(budget_slot_count); ++i) m.push_back(join(1, 2));
    std::string why = refusal();
    EXPECT_NE(why.find("all 64 slots are held by live processes"), std::string::npos) << why;
    m.pop_back();
    EXPECT_NE(join(1, 2), nullptr);
}

// --- Members in other processes -----------------------------------------------------------------

// A child that joins the budget, reports through `ready`, and waits to be killed.
pid_t spawn_member(const std::string& name, int want, int cpus) {
    int ready[2];
    EXPECT_EQ(pipe(ready), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(ready[0]);
        std::string why;
        auto b = core_budget::join(name, want, cpus, &why);
        char ok = b != nullptr ? 'y' : 'n';
        if (write(ready[1], &ok, 1) != 1) _exit(2);
        for (;;) pause();
    }
    close(ready[1]);
    char ok = 0;
    EXPECT_EQ(read(ready[0], &ok, 1), 1);
    EXPECT_EQ(ok, 'y');
    close(ready[0]);
    return pid;
}

TEST_F(CoreBudget, killed_member_gives_its_share_back_on_the_next_call) {
    auto a = join(2, 2);
    pid_t c1 = spawn_member(name_, 2, 2);
    pid_t c2 = spawn_member(name_, 2, 2);
    EXPECT_EQ(a->members(), 3);
    EXPECT_EQ(a->share(), 1);
    ASSERT_EQ(kill(c1, SIGKILL), 0);
    ASSERT_EQ(waitpid(c1, nullptr, 0), c1);
    EXPECT_EQ(a->share(), 1);  // c2 still holds one
    EXPECT_EQ(a->members(), 2);
    ASSERT_EQ(kill(c2, SIGKILL), 0);
    ASSERT_EQ(waitpid(c2, nullptr, 0), c2);
    EXPECT_EQ(a->share(), 2);
    EXPECT_EQ(a->members(), 1);
}

// A killed child not yet reaped is a zombie: its pid still answers kill(pid, 0); the /proc check of
// the next share() (one other member: checked on every call) finds it dead.
TEST_F(CoreBudget, zombie_member_gives_its_share_back) {
    auto a = join(2, 2);
    pid_t c = spawn_member(name_, 2, 2);
    EXPECT_EQ(a->share(), 1);
    ASSERT_EQ(kill(c, SIGKILL), 0);
    siginfo_t info{};
    ASSERT_EQ(waitid(P_PID, id_t(c), &info, WEXITED | WNOWAIT), 0);  // exited, left unreaped
    EXPECT_EQ(a->share(), 2);
    EXPECT_EQ(a->members(), 1);
    ASSERT_EQ(waitpid(c, nullptr, 0), c);
}

TEST_F(CoreBudget, fork_childs_copy_leaves_the_parents_slot_alone) {
    auto a = join(2, 2);
    std::uint64_t mine = owner(0).load();
    ASSERT_NE(mine, 0u);
    pid_t c = fork();
    if (c == 0) {
        a.reset();  // the child's copy of the object: must not free the parent's slot
        _exit(owner(0).load() == mine ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(c, &status, 0), c);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_EQ(owner(0).load(), mine);
    EXPECT_EQ(a->members(), 1);
}

// --- Forged slots ---------------------------------------------------------------------------------

// A pid that is gone is found by the kill(pid, 0) every member gets on every call, not only when the
// round robin of /proc checks reaches it: here four live members come before it in slot order.
TEST_F(CoreBudget, slot_of_a_dead_pid_is_reclaimed_on_the_next_call) {
    auto a = join(1, 8);
    pid_t parent = getppid();
    for (int i = 0; i < 4; ++i) ASSERT_GE(forge(parent, start_ticks(parent), 1, 8), 0);
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    ASSERT_EQ(waitpid(dead, nullptr, 0), dead);
    int s = forge(dead, start_ticks(getpid()), 1, 8);
    ASSERT_GE(s, 0);
    EXPECT_NE(owner(s).load(), 0u);
    EXPECT_EQ(a->members(), 5);
    EXPECT_EQ(owner(s).load(), 0u);
}

// A pid that now names another process: here this very process, with a start time it does not have.
TEST_F(CoreBudget, slot_of_a_reused_pid_with_another_start_time_is_reclaimed) {
    auto a = join(2, 2);
    int s = forge(getpid(), start_ticks(getpid()) + 1, 2, 2);
    ASSERT_GE(s, 0);
    EXPECT_EQ(a->members(), 2);  // kill(pid, 0) succeeds; members() leaves the /proc checks to share()
    EXPECT_EQ(a->share(), 2);
    EXPECT_EQ(owner(s).load(), 0u);
    EXPECT_EQ(a->members(), 1);
}

// The checks must not reclaim a live member: the test's parent process, forged with its true start
// time, holds its share for as many calls as it takes to check every member several times.
TEST_F(CoreBudget, slot_of_a_live_process_is_kept) {
    auto a = join(2, 2);
    pid_t parent = getppid();
    int s = forge(parent, start_ticks(parent), 2, 2);
    ASSERT_GE(s, 0);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(a->share(), 1);
    EXPECT_EQ(a->members(), 2);
    EXPECT_EQ(owner(s).load(), budget_owner_word(std::uint32_t(parent), start_ticks(parent)));
}

// A member checks that it still holds its slot; one reclaimed from under it claims a new one.
TEST_F(CoreBudget, member_whose_slot_was_taken_claims_another) {
    auto a = join(2, 2);
    owner(0).store(0);
    EXPECT_EQ(a->share(), 2);
    EXPECT_EQ(a->members(), 1);
    EXPECT_NE(owner(0).load(), 0u);
}

// --- Segments that are not a budget of this layout ------------------------------------------------

TEST_F(CoreBudget, segment_of_another_size_is_refused) {
    plant(4096, budget_magic, weft::detail::adapt::budget_layout_version);
    std::string why = refusal();
    EXPECT_NE(why.find("is 4096 bytes"), std::string::npos) << why;
    EXPECT_NE(why.find("another weft version, or not a weft budget"), std::string::npos) << why;
}

TEST_F(CoreBudget, segment_with_a_wrong_magic_is_refused) {
    plant(sizeof(budget_segment), 0x1234, weft::detail::adapt::budget_layout_version);
    std::string why = refusal();
    EXPECT_NE(why.find("wrong magic number"), std::string::npos) << why;
    EXPECT_NE(why.find("remove /dev/shm" + name_), std::string::npos) << why;
}

TEST_F(CoreBudget, segment_of_another_layout_version_is_refused) {
    plant(sizeof(budget_segment), budget_magic, 99);
    std::string why = refusal();
    EXPECT_NE(why.find("layout version 99"), std::string::npos) << why;
}

// The creator died between its O_EXCL open and its ftruncate: the joiner waits a bounded time.
TEST_F(CoreBudget, segment_never_initialised_is_refused) {
    plant(0, 0, 0);
    std::string why = refusal();
    EXPECT_NE(why.find("its creator never sized it"), std::string::npos) << why;
}

TEST_F(CoreBudget, invalid_arguments_are_refused) {
    std::string why;
    EXPECT_EQ(core_budget::join("no-slash", 1, 1, &why), nullptr);
    EXPECT_NE(why.find("invalid name"), std::string::npos) << why;
    EXPECT_EQ(core_budget::join("/a/b", 1, 1, &why), nullptr);
    EXPECT_NE(why.find("invalid name"), std::string::npos) << why;
    EXPECT_EQ(core_budget::join(name_, 0, 2, &why), nullptr);
    EXPECT_NE(why.find("want=0"), std::string::npos) << why;
    EXPECT_EQ(core_budget::join(name_, 1, 0, &why), nullptr);
    EXPECT_NE(why.find("cpus=0"), std::string::npos) << why;
}

TEST(CoreBudgetName, default_name_is_per_user) {
    EXPECT_EQ(default_budget_name(), "/weft-budget-" + std::to_string(geteuid()));
}

// --- Concurrency ------------------------------------------------------------------------------------

// Threads that join a fresh segment at the same moment (one creates it, the others wait for its magic)
// and then join, survey and leave over and over: every join succeeds, every share is in [1, want],
// and at the end only the observer is left.
TEST_F(CoreBudget, concurrent_join_and_leave) {
    constexpr int threads = 6, rounds = 100;
    std::atomic<int> go{0}, failures{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            go.fetch_add(1);
            while (go.load() < threads) std::this_thread::yield();
            for (int r = 0; r < rounds; ++r) {
                std::string why;
                auto b = core_budget::join(name_, 1 + t % 3, 4, &why);
                if (b == nullptr) {
                    failures.fetch_add(1);
                    continue;
                }
                int s = b->share();
                if (s < 1 || s > 1 + t % 3 || b->members() < 1) failures.fetch_add(1);
            }
        });
    for (auto& th : pool) th.join();
    EXPECT_EQ(failures.load(), 0);
    auto observer = join(1, 4);
    EXPECT_EQ(observer->members(), 1);
}

// --- The controller as a member ----------------------------------------------------------------------
// A running runtime of 4 workers whose controller (src/adapt/controller.hpp) reads a scripted probe and
// holds one membership (want 4, 4 CPUs); the other member is a core_budget object of the test, standing
// for another weft process. Each step is driven by the test: nothing waits on time.

class ControllerInBudget : public CoreBudget {
protected:
    void SetUp() override {
        CoreBudget::SetUp();
        weft_config_t c = wt::config(4);
        c.adapt = "off";  // no controller of the runtime's own: the test drives this one
        ASSERT_EQ(weft_init(&c), 0);
        auto p = std::make_unique<wt::scripted_probe>();
        probe_ = p.get();
        weft::detail::adapt::params prm;
        prm.interval_ms = 100;
        prm.bad_readings = 2;
        prm.good_readings = 3;
        ctl_ = std::make_unique<weft::detail::adapt::controller>(weft::detail::g_rt, std::move(p), prm,
                                                                 join(4, 4));
    }
    void TearDown() override {
        ctl_.reset();
        if (weft_is_initialized() != 0) {
            EXPECT_EQ(weft_finalize(), 0);
        }
        CoreBudget::TearDown();
    }
    int active() const { return weft::detail::g_rt->active.load(); }
    std::uint64_t readings() const { return weft::detail::g_rt->adapt_readings.load(); }
    void step_with(weft::detail::adapt::reading r) {
        probe_->readings.push_back(r);
        ctl_->step();
    }
    // `n` good readings, answering every toe test with yes.
    void good_steps(int n) {
        for (int i = 0; i < n; ++i) {
            probe_->toe_answers.push_back(true);
            step_with(wt::good_reading);
        }
        probe_->toe_answers.clear();
    }

    wt::watchdog dog_{wt::default_test_limit(), "ControllerInBudget"};
    wt::scripted_probe* probe_ = nullptr;
    std::unique_ptr<weft::detail::adapt::controller> ctl_;
};

// requirement: when another member joins and the division lowers this process's share below its
// active workers, the next step gives the difference back at once, before and instead of a reading
// (the probe is not read: a reading about the old count would judge workers it no longer runs); it
// stays at its share whatever the readings say; when the other wants fewer, or leaves, the toe tests
// take the workers again, one at a time, up to the new share and no further.
TEST_F(ControllerInBudget, gives_workers_back_at_once_when_another_member_joins_and_takes_them_again_after) {
    good_steps(1);
    ASSERT_EQ(active(), 4);
    EXPECT_EQ(ctl_->budget_share(), 4);
    EXPECT_EQ(ctl_->budget_members(), 1);

    auto other = join(4, 4);  // wants 4 of the 4 CPUs too: 2 each
    const std::uint64_t before = readings();
    step_with(wt::bad_reading);
    EXPECT_EQ(active(), 2) << "the step after the other member joined gave back down to the share";
    EXPECT_EQ(ctl_->budget_share(), 2);
    EXPECT_EQ(ctl_->budget_members(), 2);
    EXPECT_EQ(readings(), before) << "the give-back step read the probe";
    EXPECT_EQ(probe_->readings.size(), 1u) << "the give-back step consumed a reading";
    probe_->readings.clear();
    weft_stats_t s;
    ASSERT_EQ(weft_stats_get(&s), 0);
    EXPECT_EQ(s.workers_dropped, 2u);

    // At its share, good readings ask for no toe test and add nothing.
    good_steps(6);
    EXPECT_EQ(active(), 2);
    EXPECT_TRUE(probe_->toe_asked.empty());

    // The other wants 1: the division gives this process 3; the toe test adds one worker, then stops.
    other->set_want(1);
    good_steps(3);
    EXPECT_EQ(ctl_->budget_share(), 3);
    EXPECT_EQ(probe_->toe_asked, std::vector<int>{3});
    EXPECT_EQ(active(), 3);
    good_steps(6);
    EXPECT_EQ(active(), 3);
    EXPECT_EQ(probe_->toe_asked.size(), 1u);

    // The other leaves: 4 again, after three good readings and a toe test.
    other.reset();
    good_steps(3);
    EXPECT_EQ(ctl_->budget_members(), 1);
    EXPECT_EQ(ctl_->budget_share(), 4);
    EXPECT_EQ(probe_->toe_asked, (std::vector<int>{3, 4}));
    EXPECT_EQ(active(), 4);
}

// requirement: a member that drops workers on bad readings keeps its share (its want stays what it
// runs when the machine lets it): the other member's share does not grow, and when the readings turn
// good the toe tests take the dropped workers back up to the share. Giving a dropped worker's CPU to
// the other member would hand it a CPU that the probe has just found taken by a competitor.
TEST_F(ControllerInBudget, dropping_workers_keeps_the_share_and_the_toe_tests_take_them_back) {
    auto other = join(4, 4);
    step_with(wt::good_reading);  // the give-back: 2 each
    ASSERT_EQ(active(), 2);
    probe_->readings.clear();
    step_with(wt::bad_reading);
    step_with(wt::bad_reading);
    EXPECT_EQ(active(), 1);
    EXPECT_EQ(ctl_->budget_share(), 2);
    EXPECT_EQ(other->share(), 2) << "the other member's share grew when this one dropped a worker";
    good_steps(3);
    EXPECT_EQ(probe_->toe_asked, std::vector<int>{2});
    EXPECT_EQ(active(), 2);
}

}  // namespace

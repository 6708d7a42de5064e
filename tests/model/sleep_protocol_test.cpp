// Class: requirement, stress. The core's sleep module (src/core/sleep/): the
// stages of a wait (backoff: spin, then yield, then block; each waiter's
// constants) and the sleeper's steps (fall_asleep), then the whole protocol with
// many waiters and wakers for each blocking kind weft uses: a futex on a word
// (idle workers), a weft_sem_t (filament participants, blocking only the weft
// thread) and std::atomic::wait (the coarse-grain sweep barrier).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/asymmetric_fence.hpp"
#include "core/futex.hpp"
#include "core/sleep/backoff.hpp"
#include "core/sleep/stages.hpp"
#include "core/tunables.hpp"
#include "support/weft_test.hpp"

namespace {

namespace sleep = weft::detail::sleep;
namespace tun = weft::detail::tun;
using sleep::stage;

// The stages `b` goes through in n calls, as a string: s(pin), y(ield), b(lock).
template <class Budget> std::string stages_of(sleep::backoff<Budget>& b, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) {
        switch (b.next()) {
        case stage::spin: out += 's'; break;
        case stage::yield: out += 'y'; break;
        case stage::block: out += 'b'; break;
        }
    }
    return out;
}

// --- Stages --------------------------------------------------------------------

TEST(SleepBackoff, spins_then_counted_yields_then_blocks) {
    sleep::backoff b(3, sleep::relax::pause, sleep::yield_count{2});
    EXPECT_EQ(stages_of(b, 7), "sssyybb");
    EXPECT_EQ(b.spins(), 3);
}

TEST(SleepBackoff, reset_starts_from_the_spins_again) {
    sleep::backoff b(2, sleep::relax::os_yield, sleep::yield_count{1});
    EXPECT_EQ(stages_of(b, 2), "ss");
    b.reset();  // found something while spinning
    EXPECT_EQ(stages_of(b, 4), "ssyb");
    b.reset();  // woken
    EXPECT_EQ(b.spins(), 0);
    EXPECT_EQ(stages_of(b, 4), "ssyb");
}

TEST(SleepBackoff, no_spins_and_no_yields_blocks_at_once) {
    sleep::backoff b(0, sleep::relax::pause, sleep::yield_count{0});
    EXPECT_EQ(stages_of(b, 2), "bb");
    sleep::backoff t(0, sleep::relax::pause, sleep::yield_for{0});
    EXPECT_EQ(stages_of(t, 2), "bb");
}

TEST(SleepBackoff, timed_yields_last_at_least_the_budget) {
    constexpr std::int64_t budget_ns = 2'000'000;
    sleep::backoff b(2, sleep::relax::pause, sleep::yield_for{budget_ns});
    EXPECT_EQ(stages_of(b, 2), "ss");
    auto start = std::chrono::steady_clock::now();
    ASSERT_EQ(b.next(), stage::yield);  // the first yield round always yields
    stage s;
    while ((s = b.next()) == stage::yield) std::this_thread::yield();
    EXPECT_EQ(s, stage::block);
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::nanoseconds(budget_ns));
    b.reset();
    EXPECT_EQ(stages_of(b, 3), "ssy");  // the clock starts again at the next yield stage
}

TEST(SleepBackoff, idle_worker_stages_use_the_tunables) {
    auto pause = sleep::idle_worker_stages(0);  // the core's default idle loop
    EXPECT_EQ(stages_of(pause, tun::idle_spins + tun::idle_yields + 1),
              std::string(tun::idle_spins, 's') + std::string(tun::idle_yields, 'y') + "b");
    auto steals = sleep::idle_worker_stages(tun::ws_idle_yield_rounds);  // ws: a yield per failed look
    EXPECT_EQ(stages_of(steals, tun::ws_idle_yield_rounds + tun::idle_yields + 1),
              std::string(tun::ws_idle_yield_rounds, 's') + std::string(tun::idle_yields, 'y') + "b");
}

TEST(SleepBackoff, filament_stages_use_the_tunables) {
    auto b = sleep::filament_stages();
    EXPECT_EQ(stages_of(b, tun::fil_wait_spins + 1), std::string(tun::fil_wait_spins, 's') + "y");
}

// --- The sleeper's steps ----------------------------------------------------------

TEST(SleepFallAsleep, blocks_after_announce_fence_and_a_look_that_finds_nothing) {
    std::string steps;
    bool blocked = sleep::fall_asleep([&] { steps += "announce,"; }, [&] { steps += "fence,"; },
                                      [&] {
                                          steps += "recheck,";
                                          return false;
                                      },
                                      [&] { steps += "block,"; }, [&] { steps += "retract"; });
    EXPECT_TRUE(blocked);
    EXPECT_EQ(steps, "announce,fence,recheck,block,retract");
}

TEST(SleepFallAsleep, retracts_without_blocking_when_the_last_look_finds_something) {
    std::string steps;
    bool blocked = sleep::fall_asleep([&] { steps += "announce,"; }, [&] { steps += "fence,"; },
                                      [&] {
                                          steps += "recheck,";
                                          return true;
                                      },
                                      [&] { steps += "block,"; }, [&] { steps += "retract"; });
    EXPECT_FALSE(blocked);
    EXPECT_EQ(steps, "announce,fence,recheck,retract");
}

// --- The protocol under stress ------------------------------------------------------
//
// W waiters wait for rounds 1..R of a published count; K wakers take turns to
// publish them, each round only once every waiter has acknowledged the one
// before. So a waiter whose wake-up is lost never acknowledges, and no later
// round comes to wake it: a lost wake-up is a hang. A rescuer turns a hang
// into a failure: if the acknowledgements stop moving for `stall`, it records
// the stall and unblocks every waiter by force, so that the test ends and
// fails. Waiters spin 4 times and yield once before they block. On every
// other round the waker publishes only once every waiter is inside
// fall_asleep, so that those rounds end in a block and a wake-up or in a
// retract after the last look, whatever the speed of the threads (a waiter
// yields just before it announces itself, which opens the window that the
// last look closes); on the others it publishes at once, racing with the
// waiters' stages.

constexpr int stage_spins = 4;
constexpr int stage_yields = 1;

// What every blocking kind shares: the published round, the sleepers count
// and a flag per waiter that the waiter sets (announce) and a waker claims.
struct event {
    explicit event(int waiters) : sleeping(static_cast<std::size_t>(waiters)) {}
    alignas(64) std::atomic<std::uint64_t> round{0};
    alignas(64) std::atomic<int> acks{0};
    alignas(64) std::atomic<int> sleepers{0};
    std::atomic<int> in_fall_asleep{0};  // waiters between their block stage and its end
    std::vector<std::atomic<int>> sleeping;
    std::atomic<bool> rescued{false};
    std::atomic<int> stalled_at{-1};      // acknowledgements when the rescuer stepped in
    std::atomic<std::int64_t> blocks{0};  // fall_asleep calls that blocked
    std::atomic<std::int64_t> claims{0};  // sleepers claimed by a waker

    void announce(int i) {
        sleeping[static_cast<std::size_t>(i)].store(1, std::memory_order_relaxed);
        sleepers.fetch_add(1, std::memory_order_seq_cst);
    }
    void retract(int i) {
        (void)sleeping[static_cast<std::size_t>(i)].exchange(0, std::memory_order_acq_rel);
        sleepers.fetch_sub(1, std::memory_order_relaxed);
    }
    // The waker's step 2: light fence, sleepers check, claim each sleeper.
    template <class Unblock> void wake_all(Unblock unblock) {
        weft::detail::light_fence();
        if (sleepers.load(std::memory_order_relaxed) == 0) return;
        for (std::size_t i = 0; i < sleeping.size(); ++i) {
            if (sleeping[i].load(std::memory_order_relaxed) == 1 &&
                sleeping[i].exchange(0, std::memory_order_acq_rel) == 1) {
                claims.fetch_add(1, std::memory_order_relaxed);
                unblock(static_cast<int>(i));
            }
        }
    }
};

// The waiter's loop for rounds 1..R, with the staging and fall_asleep; `yield`
// and `block` are the blocking kind's, `announce`/`fence`/`retract` too.
template <class Yield, class Announce, class Fence, class Block, class Retract>
void wait_rounds(event& ev, std::uint64_t rounds, Yield yield, Announce announce, Fence fence, Block block,
                 Retract retract) {
    for (std::uint64_t r = 1; r <= rounds; ++r) {
        sleep::backoff stages(stage_spins, sleep::relax::pause, sleep::yield_count{stage_yields});
        while (ev.round.load(std::memory_order_acquire) < r) {
            switch (stages.next()) {
            case stage::spin: break;
            case stage::yield: yield(); break;
            case stage::block:
                ev.in_fall_asleep.fetch_add(1);
                yield();  // a sleeper may lose the CPU between its last look and its announcement
                if (sleep::fall_asleep(announce, fence, [&] { return ev.round.load(std::memory_order_acquire) >= r; },
                                       block, retract))
                    ev.blocks.fetch_add(1, std::memory_order_relaxed);
                ev.in_fall_asleep.fetch_sub(1);
                stages.reset();
                break;
            }
        }
        ev.acks.fetch_add(1, std::memory_order_release);
    }
}

// Waker j of k publishes rounds j+1, j+1+k, ... each after every waiter has
// acknowledged the round before; `pause` waits a moment (the waker's own wait
// is not under test); `wake` is the kind's wake-up of every sleeper.
template <class Pause, class Wake>
void publish_rounds(event& ev, int j, int k, int waiters, std::uint64_t rounds, Pause pause, Wake wake) {
    for (std::uint64_t r = static_cast<std::uint64_t>(j) + 1; r <= rounds; r += static_cast<std::uint64_t>(k)) {
        const int want = waiters * static_cast<int>(r - 1);
        while (ev.acks.load(std::memory_order_acquire) < want ||
               (r % 2 == 0 && ev.in_fall_asleep.load() < waiters)) {
            if (ev.rescued.load(std::memory_order_relaxed)) return;
            pause();
        }
        ev.round.store(r, std::memory_order_release);  // step 1: publish
        wake();                                        // step 2
    }
}

// Runs until every waiter has acknowledged every round, or until the
// acknowledgements have not moved for `stall`: then marks the event rescued
// and calls rescue() until the waiters return. `pause` waits a moment.
template <class Pause, class Rescue>
void watch(event& ev, int waiters, std::uint64_t rounds, Pause pause, Rescue rescue) {
    const auto stall = std::chrono::seconds(wt::sanitized ? 40 : 20);
    const int all = waiters * static_cast<int>(rounds);
    int last = -1;
    auto since = std::chrono::steady_clock::now();
    while (ev.acks.load(std::memory_order_acquire) < all) {
        int now = ev.acks.load(std::memory_order_acquire);
        if (now != last) {
            last = now;
            since = std::chrono::steady_clock::now();
        } else if (std::chrono::steady_clock::now() - since > stall) {
            if (!ev.rescued.exchange(true)) ev.stalled_at.store(now);
            ev.round.store(rounds, std::memory_order_release);
            rescue();
        }
        pause();
    }
}

void expect_no_lost_wakeup(const event& ev, int waiters, std::uint64_t rounds) {
    EXPECT_FALSE(ev.rescued.load()) << "a waiter stayed blocked after its round was published (lost wake-up) at "
                                    << ev.stalled_at.load() << " of " << waiters * rounds << " acknowledgements";
    EXPECT_EQ(ev.acks.load(), waiters * static_cast<int>(rounds));
    EXPECT_EQ(ev.round.load(), rounds);
    EXPECT_EQ(ev.sleepers.load(), 0);
    ::testing::Test::RecordProperty("blocks", std::to_string(ev.blocks.load()));
}

struct protocol_size {
    int waiters;
    int wakers;
};

class SleepProtocolConcurrency : public ::testing::TestWithParam<protocol_size> {
protected:
    int waiters() const { return GetParam().waiters; }
    int wakers() const { return GetParam().wakers; }
    std::uint64_t rounds(std::int64_t n = 2000) const { return static_cast<std::uint64_t>(wt::scaled(n, 40)); }
};
INSTANTIATE_TEST_SUITE_P(Sizes, SleepProtocolConcurrency,
                         ::testing::Values(protocol_size{1, 1}, protocol_size{3, 2}, protocol_size{8, 3}),
                         [](const ::testing::TestParamInfo<protocol_size>& info) {
                             return "waiters_" + std::to_string(info.param.waiters) + "_wakers_" +
                                    std::to_string(info.param.wakers);
                         });

// Kernel threads blocking on a futex word of their own, with the asymmetric
// fences: the idle workers' kind (core/worker.cpp, park).
TEST_P(SleepProtocolConcurrency, futex_word_wakes_every_waiter) {
    weft::detail::init_asymmetric_fence();
    const int w = waiters(), k = wakers();
    const std::uint64_t rounds = this->rounds();
    event ev(w);
    std::unique_ptr<std::atomic<std::uint32_t>[]> words(new std::atomic<std::uint32_t>[static_cast<std::size_t>(w)]);
    for (int i = 0; i < w; ++i) words[static_cast<std::size_t>(i)].store(0);
    auto unblock = [&](int i) {
        words[static_cast<std::size_t>(i)].store(1, std::memory_order_release);
        weft::detail::futex_wake(&words[static_cast<std::size_t>(i)]);
    };
    std::vector<std::thread> threads;
    for (int i = 0; i < w; ++i)
        threads.emplace_back([&, i] {
            auto* word = &words[static_cast<std::size_t>(i)];
            wait_rounds(
                ev, rounds, [] { std::this_thread::yield(); },
                [&] {
                    word->store(0, std::memory_order_relaxed);
                    ev.announce(i);
                },
                [] { weft::detail::heavy_fence(); },
                [&] {
                    while (word->load(std::memory_order_acquire) == 0) weft::detail::futex_wait(word, 0);
                },
                [&] { ev.retract(i); });
        });
    for (int j = 0; j < k; ++j)
        threads.emplace_back([&, j] {
            publish_rounds(ev, j, k, w, rounds, [] { std::this_thread::yield(); }, [&] { ev.wake_all(unblock); });
        });
    watch(ev, w, rounds, [] { std::this_thread::sleep_for(std::chrono::milliseconds(1)); },
          [&] {
              for (int i = 0; i < w; ++i) unblock(i);
          });
    for (std::thread& t : threads) t.join();
    expect_no_lost_wakeup(ev, w, rounds);
}

// Weft threads blocking on a weft_sem_t of their own (which blocks the thread,
// not its worker), woken by weft threads and by kernel threads outside weft:
// the filament participants' kind (fil/sleepers.cpp).
TEST_P(SleepProtocolConcurrency, weft_sem_wakes_every_waiter) {
    weft_config_t cfg = wt::config(2, "ws");
    cfg.adapt = "off";  // both workers stay active: a loaded machine would have the controller drop one
    ASSERT_EQ(weft_init(&cfg), 0);
    {
        wt::watchdog dog(wt::default_test_limit(), "SleepProtocolConcurrency.weft_sem_wakes_every_waiter");
        const int w = waiters(), k = wakers();
        const std::uint64_t rounds = this->rounds(400);
        event ev(w);
        std::vector<weft_sem_t> sems(static_cast<std::size_t>(w));
        for (weft_sem_t& s : sems) ASSERT_EQ(weft_sem_init(&s, 0), 0);
        std::vector<std::int64_t> waits(static_cast<std::size_t>(w), 0);
        auto unblock = [&](int i) { (void)weft_sem_post(&sems[static_cast<std::size_t>(i)]); };
        std::vector<weft_thread_t> ults;
        for (int i = 0; i < w; ++i)
            ults.push_back(wt::go([&, i] {
                auto* s = &sems[static_cast<std::size_t>(i)];
                wait_rounds(
                    ev, rounds, [] { (void)weft_thread_yield(); }, [&] { ev.announce(i); },
                    [] { weft::detail::heavy_fence(); },
                    [&] {
                        EXPECT_EQ(weft_sem_wait(s), 0);
                        ++waits[static_cast<std::size_t>(i)];
                    },
                    [&] { ev.retract(i); });
            }));
        // Even wakers are weft threads, odd ones kernel threads outside weft.
        std::vector<std::unique_ptr<wt::kthread>> outside;
        for (int j = 0; j < k; ++j) {
            auto body = [&, j](auto pause) {
                publish_rounds(ev, j, k, w, rounds, pause, [&] { ev.wake_all(unblock); });
            };
            if (j % 2 == 0)
                ults.push_back(wt::go([body] { body([] { (void)weft_thread_yield(); }); }));
            else
                outside.push_back(std::make_unique<wt::kthread>([body] { body([] { std::this_thread::yield(); }); }));
        }
        watch(ev, w, rounds, [] { weft_sleep_ns(1'000'000); },
              [&] {
                  for (int i = 0; i < w; ++i) unblock(i);
              });
        for (weft_thread_t t : ults) wt::join(t);
        for (auto& t : outside) t->join();
        expect_no_lost_wakeup(ev, w, rounds);
        // Counts match: every claim posted once; each post was taken by a
        // wait or is still in the semaphore (its sleeper retracted first).
        std::int64_t taken = 0;
        for (int i = 0; i < w; ++i) {
            taken += waits[static_cast<std::size_t>(i)];
            while (weft_sem_trywait(&sems[static_cast<std::size_t>(i)]) == 0) ++taken;
        }
        if (!ev.rescued.load()) {
            EXPECT_EQ(taken, ev.claims.load());
        }
        EXPECT_EQ(ev.blocks.load(), [&] {
            std::int64_t n = 0;
            for (std::int64_t x : waits) n += x;
            return n;
        }());
        for (weft_sem_t& s : sems) EXPECT_EQ(weft_sem_destroy(&s), 0);
    }
    EXPECT_EQ(weft_finalize(), 0);
}

// Kernel threads blocking in std::atomic::wait on the published round itself,
// which announces and re-checks inside the library: the coarse-grain sweep
// barrier's kind (apps/coarse.hpp).
TEST_P(SleepProtocolConcurrency, atomic_wait_wakes_every_waiter) {
    const int w = waiters(), k = wakers();
    const std::uint64_t rounds = this->rounds();
    event ev(w);
    std::vector<std::thread> threads;
    for (int i = 0; i < w; ++i)
        threads.emplace_back([&] {
            for (std::uint64_t r = 1; r <= rounds; ++r) {
                sleep::backoff stages(stage_spins, sleep::relax::pause, sleep::yield_count{stage_yields});
                std::uint64_t seen;
                while ((seen = ev.round.load(std::memory_order_acquire)) < r) {
                    switch (stages.next()) {
                    case stage::spin: break;
                    case stage::yield: std::this_thread::yield(); break;
                    case stage::block:
                        ev.in_fall_asleep.fetch_add(1);
                        std::this_thread::yield();
                        if (sleep::fall_asleep(
                                [] {}, [] {}, [&] { return ev.round.load(std::memory_order_acquire) != seen; },
                                [&] { ev.round.wait(seen, std::memory_order_acquire); }, [] {}))
                            ev.blocks.fetch_add(1, std::memory_order_relaxed);
                        ev.in_fall_asleep.fetch_sub(1);
                        stages.reset();
                        break;
                    }
                }
                ev.acks.fetch_add(1, std::memory_order_release);
            }
        });
    for (int j = 0; j < k; ++j)
        threads.emplace_back([&, j] {
            publish_rounds(ev, j, k, w, rounds, [] { std::this_thread::yield(); }, [&] { ev.round.notify_all(); });
        });
    watch(ev, w, rounds, [] { std::this_thread::sleep_for(std::chrono::milliseconds(1)); },
          [&] { ev.round.notify_all(); });
    for (std::thread& t : threads) t.join();
    expect_no_lost_wakeup(ev, w, rounds);
}

}  // namespace

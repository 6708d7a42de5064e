// Class: stress. Synchronization under load on 1, 2 and 4 workers (4 workers on
// this 2-core machine is oversubscription, on purpose) with both policies:
// thousands of threads on one mutex, producer/consumer on condition variables
// with timed waits, barriers reused many times, yield storms, and many
// concurrent timed waits that end either way. Every test checks an exact
// invariant (counts, sums, no item lost or duplicated), never a duration.
#include <atomic>
#include <cerrno>
#include <vector>

#include "support/weft_test.hpp"

namespace {

using namespace std::chrono_literals;

class StressSync : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Workers, StressSync, ::testing::ValuesIn(wt::rt_params_all()), wt::rt_param_name);

TEST_P(StressSync, thousands_of_threads_on_one_mutex) {
    const int threads = static_cast<int>(wt::scaled(4000, 200));
    const int iters = 50;
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    long counter = 0;
    std::vector<weft_thread_t> ts(threads);
    for (int i = 0; i < threads; ++i)
        ts[i] = wt::go([&, i] {
            for (int k = 0; k < iters; ++k) {
                weft_mutex_lock(&m);
                long v = counter;
                if ((i + k) % 10 == 0) weft_thread_yield();  // switch while holding it
                counter = v + 1;
                weft_mutex_unlock(&m);
            }
        });
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(counter, long(threads) * iters);
}

TEST_P(StressSync, timedlock_contention_counts_only_successes) {
    const int threads = static_cast<int>(wt::scaled(1000, 100));
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    long counter = 0;
    std::atomic<long> successes{0}, timeouts{0}, other{0};
    std::vector<weft_thread_t> ts(threads);
    for (int i = 0; i < threads; ++i)
        ts[i] = wt::go([&, i] {
            for (int k = 0; k < 20; ++k) {
                timespec d = wt::realtime_in(std::chrono::microseconds((i * 37 + k * 11) % 300));
                int rc = weft_mutex_timedlock(&m, &d);
                if (rc == 0) {
                    ++counter;
                    if (k % 3 == 0) weft_thread_yield();
                    weft_mutex_unlock(&m);
                    successes.fetch_add(1);
                } else if (rc == ETIMEDOUT) {
                    timeouts.fetch_add(1);
                } else {
                    other.fetch_add(1);
                }
            }
        });
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(other.load(), 0);
    EXPECT_EQ(successes.load() + timeouts.load(), long(threads) * 20);
    EXPECT_EQ(counter, successes.load());
    EXPECT_EQ(weft_mutex_trylock(&m), 0) << "the mutex ends unlocked with nobody queued";
    weft_mutex_unlock(&m);
    EXPECT_EQ(weft_mutex_destroy(&m), 0);
}

TEST_P(StressSync, recursive_and_errorcheck_mutexes_under_contention) {
    weft_mutexattr_t ra, ea;
    weft_mutexattr_init(&ra);
    weft_mutexattr_settype(&ra, WEFT_MUTEX_RECURSIVE);
    weft_mutexattr_init(&ea);
    weft_mutexattr_settype(&ea, WEFT_MUTEX_ERRORCHECK);
    weft_mutex_t r, e;
    weft_mutex_init(&r, &ra);
    weft_mutex_init(&e, &ea);
    long cr = 0, ce = 0;
    std::atomic<int> bad{0};
    const int threads = static_cast<int>(wt::scaled(500, 50));
    std::vector<weft_thread_t> ts(threads);
    for (int i = 0; i < threads; ++i)
        ts[i] = wt::go([&] {
            for (int k = 0; k < 20; ++k) {
                weft_mutex_lock(&r);
                weft_mutex_lock(&r);
                ++cr;
                weft_thread_yield();
                weft_mutex_unlock(&r);
                ++cr;
                weft_mutex_unlock(&r);
                if (weft_mutex_lock(&e) != 0) bad.fetch_add(1);
                if (weft_mutex_lock(&e) != EDEADLK) bad.fetch_add(1);
                ++ce;
                if (weft_mutex_unlock(&e) != 0) bad.fetch_add(1);
            }
        });
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(cr, 2L * threads * 20);
    EXPECT_EQ(ce, long(threads) * 20);
}

TEST_P(StressSync, producer_consumer_with_timed_waits) {
    // Bounded buffer; producers and consumers wait with short deadlines and
    // loop (a timeout is a normal outcome). Every item is consumed exactly once.
    const int producers = 8, consumers = 8;
    const int per_producer = static_cast<int>(wt::scaled(5000, 200));
    const int total = producers * per_producer;
    const int cap = 16;
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    weft_cond_t not_empty = WEFT_COND_INITIALIZER, not_full = WEFT_COND_INITIALIZER;
    std::vector<int> buf;
    buf.reserve(cap);
    int produced = 0, consumed_count = 0;
    std::vector<std::atomic<int>> seen(total);
    std::atomic<long> timeouts{0}, errors{0};
    std::vector<weft_thread_t> ts;
    for (int p = 0; p < producers; ++p)
        ts.push_back(wt::go([&, p] {
            for (int k = 0; k < per_producer; ++k) {
                int item = p * per_producer + k;
                weft_mutex_lock(&m);
                while (buf.size() == size_t(cap)) {
                    timespec d = wt::realtime_in(std::chrono::microseconds(200 + (k % 5) * 100));
                    int rc = weft_cond_timedwait(&not_full, &m, &d);
                    if (rc == ETIMEDOUT)
                        timeouts.fetch_add(1);
                    else if (rc != 0)
                        errors.fetch_add(1);
                }
                buf.push_back(item);
                ++produced;
                weft_cond_signal(&not_empty);
                weft_mutex_unlock(&m);
            }
        }));
    for (int c = 0; c < consumers; ++c)
        ts.push_back(wt::go([&] {
            for (;;) {
                weft_mutex_lock(&m);
                while (buf.empty() && consumed_count < total) {
                    timespec d = wt::realtime_in(300us);
                    int rc = weft_cond_timedwait(&not_empty, &m, &d);
                    if (rc == ETIMEDOUT)
                        timeouts.fetch_add(1);
                    else if (rc != 0)
                        errors.fetch_add(1);
                }
                if (buf.empty()) {  // everything has been consumed
                    weft_mutex_unlock(&m);
                    break;
                }
                int item = buf.back();
                buf.pop_back();
                ++consumed_count;
                if (consumed_count == total) weft_cond_broadcast(&not_empty);  // release the others
                weft_cond_signal(&not_full);
                weft_mutex_unlock(&m);
                seen[static_cast<size_t>(item)].fetch_add(1);
            }
        }));
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(produced, total);
    EXPECT_EQ(consumed_count, total);
    int lost = 0, dup = 0;
    for (auto& s : seen) {
        int v = s.load();
        if (v == 0) ++lost;
        if (v > 1) ++dup;
    }
    EXPECT_EQ(lost, 0);
    EXPECT_EQ(dup, 0);
    EXPECT_EQ(weft_cond_destroy(&not_empty), 0);
    EXPECT_EQ(weft_cond_destroy(&not_full), 0);
}

TEST_P(StressSync, barrier_reused_many_times) {
    const int n = 32;
    const int rounds = static_cast<int>(wt::scaled(2000, 50));
    weft_barrier_t b;
    ASSERT_EQ(weft_barrier_init(&b, n), 0);
    std::vector<long> slots(n, 0);
    std::atomic<int> serial_total{0}, wrong{0};
    std::vector<weft_thread_t> ts(n);
    for (int i = 0; i < n; ++i)
        ts[i] = wt::go([&, i] {
            for (int r = 0; r < rounds; ++r) {
                slots[i] = r;  // phase r: everyone writes its slot
                if (weft_barrier_wait(&b) == WEFT_BARRIER_SERIAL_THREAD) serial_total.fetch_add(1);
                // phase r read: every slot must say r
                for (int j = 0; j < n; j += 7)
                    if (slots[j] != r) wrong.fetch_add(1);
                weft_barrier_wait(&b);  // nobody writes r+1 before all have read r
            }
        });
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(serial_total.load(), rounds);
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(weft_barrier_destroy(&b), 0);
}

TEST_P(StressSync, yield_storm) {
    const int threads = static_cast<int>(wt::scaled(500, 20));
    const int yields = static_cast<int>(wt::scaled(1000, 100));
    std::vector<long> per(threads, 0);
    std::vector<weft_thread_t> ts(threads);
    for (int i = 0; i < threads; ++i)
        ts[i] = wt::go([&, i] {
            for (int k = 0; k < yields; ++k) {
                ++per[i];
                weft_thread_yield();
            }
        });
    for (auto t : ts) wt::join(t);
    long total = 0;
    for (long v : per) total += v;
    EXPECT_EQ(total, long(threads) * yields);
}

TEST_P(StressSync, yield_storm_with_main_yielding_too) {
    // Every thread, main included, yields continuously: every thread a worker
    // picks has itself just yielded and may still be switching away. Found a
    // mutual wait between workers resuming each other's thread (fixed in
    // 208faf7): on 4 workers the program stopped making progress.
    const int threads = 8;
    const int yields = static_cast<int>(wt::scaled(200'000, 2'000));
    std::atomic<long> total{0};
    std::vector<weft_thread_t> ts(threads);
    for (int i = 0; i < threads; ++i)
        ts[i] = wt::go([&] {
            for (int k = 0; k < yields; ++k) weft_thread_yield();
            total.fetch_add(yields);
        });
    for (int k = 0; k < yields; ++k) weft_thread_yield();
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(total.load(), long(threads) * yields);
}

TEST_P(StressSync, concurrent_timed_waits_end_either_way) {
    // Half the waiters are posted long before their deadline (rc 0), the other
    // half wait until their deadline (rc ETIMEDOUT) and are posted only after
    // they returned (the unit then stays in the semaphore).
    const int n = static_cast<int>(wt::scaled(2000, 100));
    std::vector<weft_sem_t> sems(n);
    for (auto& s : sems) weft_sem_init(&s, 0);
    std::vector<int> rc(n, -1);
    std::atomic<int> returned_late{0};
    std::vector<weft_thread_t> ts(n);
    for (int i = 0; i < n; ++i)
        ts[i] = wt::go([&, i] {
            bool posted_early = i % 2 == 0;
            timespec d = posted_early ? wt::realtime_in(60s) : wt::realtime_in(std::chrono::milliseconds(5 + (i % 20)));
            rc[i] = weft_sem_timedwait(&sems[i], &d);
            if (!posted_early) returned_late.fetch_add(1);
        });
    for (int i = 0; i < n; i += 2) weft_sem_post(&sems[i]);
    for (int i = 0; i < n; ++i) {
        wt::join(ts[i]);
        if (i % 2) weft_sem_post(&sems[i]);  // after its deadline and return
    }
    for (int i = 0; i < n; ++i) {
        EXPECT_EQ(rc[i], i % 2 == 0 ? 0 : ETIMEDOUT) << "waiter " << i;
        int v = -1;
        weft_sem_getvalue(&sems[i], &v);
        EXPECT_EQ(v, i % 2 == 0 ? 0 : 1) << "waiter " << i;
        if (::testing::Test::HasFailure()) break;
    }
}

TEST_P(StressSync, shared_semaphore_timed_waits_conserve_units) {
    // Many timed waiters on ONE semaphore with mixed deadlines, posts racing
    // the timers: each post either wakes a waiter (which returns 0) or stays in
    // the value. So successes + final value == posts, whatever the timing.
    const int n = static_cast<int>(wt::scaled(2000, 100));
    const int posts = n / 3;
    weft_sem_t s;
    weft_sem_init(&s, 0);
    std::atomic<int> ok{0}, timedout{0}, other{0};
    std::vector<weft_thread_t> ts(n);
    for (int i = 0; i < n; ++i)
        ts[i] = wt::go([&, i] {
            timespec d = wt::realtime_in(std::chrono::microseconds(100 + (i * 7919) % 20'000));
            int rc = weft_sem_timedwait(&s, &d);
            if (rc == 0)
                ok.fetch_add(1);
            else if (rc == ETIMEDOUT)
                timedout.fetch_add(1);
            else
                other.fetch_add(1);
        });
    for (int i = 0; i < posts; ++i) {
        weft_sem_post(&s);
        if (i % 16 == 0) weft_sleep_ns(50'000);
    }
    for (auto t : ts) wt::join(t);
    int v = -1;
    weft_sem_getvalue(&s, &v);
    EXPECT_EQ(other.load(), 0);
    EXPECT_EQ(ok.load() + timedout.load(), n);
    EXPECT_EQ(ok.load() + v, posts);
    EXPECT_EQ(weft_sem_destroy(&s), 0);
}

TEST_P(StressSync, shared_condition_timed_waits_and_signals) {
    // Timed waiters on one condition variable; signals race the timers. Each
    // waiter returns exactly once, with 0 or ETIMEDOUT, holding the mutex.
    const int n = static_cast<int>(wt::scaled(1000, 100));
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    weft_cond_t c = WEFT_COND_INITIALIZER;
    std::atomic<int> ok{0}, timedout{0}, other{0}, not_owner{0};
    std::vector<weft_thread_t> ts(n);
    for (int i = 0; i < n; ++i)
        ts[i] = wt::go([&, i] {
            weft_mutex_lock(&m);
            timespec d = wt::realtime_in(std::chrono::microseconds(100 + (i * 104729) % 10'000));
            int rc = weft_cond_timedwait(&c, &m, &d);
            if (rc == 0)
                ok.fetch_add(1);
            else if (rc == ETIMEDOUT)
                timedout.fetch_add(1);
            else
                other.fetch_add(1);
            if (weft_mutex_trylock(&m) != EBUSY) not_owner.fetch_add(1);
            weft_mutex_unlock(&m);
        });
    for (int i = 0; i < n / 2; ++i) {
        weft_cond_signal(&c);
        if (i % 8 == 0) weft_sleep_ns(20'000);
    }
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(other.load(), 0);
    EXPECT_EQ(not_owner.load(), 0);
    EXPECT_EQ(ok.load() + timedout.load(), n);
    EXPECT_LE(ok.load(), n / 2) << "more wake-ups than signals";
    EXPECT_EQ(weft_cond_destroy(&c), 0);
}

TEST_P(StressSync, rwlock_readers_and_writers) {
    weft_rwlock_t rw = WEFT_RWLOCK_INITIALIZER;
    long a = 0, b = 0;
    std::atomic<long> torn{0}, reads{0};
    const int writers = 16, readers = 64;
    const int iters = static_cast<int>(wt::scaled(300, 20));
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < writers; ++i)
        ts.push_back(wt::go([&] {
            for (int k = 0; k < iters; ++k) {
                weft_rwlock_wrlock(&rw);
                ++a;
                if (k % 4 == 0) weft_thread_yield();
                ++b;
                weft_rwlock_unlock(&rw);
            }
        }));
    for (int i = 0; i < readers; ++i)
        ts.push_back(wt::go([&, i] {
            for (int k = 0; k < iters; ++k) {
                int rc;
                if ((i + k) % 5 == 0) {
                    timespec d = wt::realtime_in(500us);
                    rc = weft_rwlock_timedrdlock(&rw, &d);
                    if (rc == ETIMEDOUT) continue;
                } else {
                    rc = weft_rwlock_rdlock(&rw);
                }
                if (rc != 0) {
                    torn.fetch_add(1000);
                    continue;
                }
                if (a != b) torn.fetch_add(1);
                reads.fetch_add(1);
                if (k % 4 == 0) weft_thread_yield();
                weft_rwlock_unlock(&rw);
            }
        }));
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(torn.load(), 0);
    EXPECT_EQ(a, long(writers) * iters);
    EXPECT_EQ(b, a);
    EXPECT_EQ(weft_rwlock_destroy(&rw), 0);
}

}  // namespace

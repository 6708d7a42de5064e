// Class: requirement, negative. weft_rwlock_t: readers share, writers are
// exclusive, arrival-order fairness (a reader behind a waiting writer queues),
// timed variants, EDEADLK/EPERM/EBUSY/EINVAL.
#include <atomic>
#include <cerrno>
#include <string>
#include <vector>

#include "support/weft_test.hpp"

namespace {

using namespace std::chrono_literals;

class RwLock : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Serial, RwLock, ::testing::ValuesIn(wt::rt_params_one_worker()), wt::rt_param_name);
INSTANTIATE_TEST_SUITE_P(Concurrent, RwLock, ::testing::ValuesIn(wt::rt_params_multi()), wt::rt_param_name);

// Orders that are only defined on one worker (arrival order = program order).
class RwLockOneWorker : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Serial, RwLockOneWorker, ::testing::ValuesIn(wt::rt_params_one_worker()), wt::rt_param_name);

using wt::on_other_thread;

TEST_P(RwLock, readers_share) {
    weft_rwlock_t rw = WEFT_RWLOCK_INITIALIZER;
    ASSERT_EQ(weft_rwlock_rdlock(&rw), 0);
    EXPECT_EQ(on_other_thread([&] {
                  int rc = weft_rwlock_tryrdlock(&rw);
                  if (rc == 0) weft_rwlock_unlock(&rw);
                  return rc;
              }),
              0);
    EXPECT_EQ(on_other_thread([&] {
                  int rc = weft_rwlock_rdlock(&rw);
                  if (rc == 0) weft_rwlock_unlock(&rw);
                  return rc;
              }),
              0);
    // The main thread may hold several read locks.
    EXPECT_EQ(weft_rwlock_rdlock(&rw), 0);
    EXPECT_EQ(weft_rwlock_unlock(&rw), 0);
    EXPECT_EQ(weft_rwlock_unlock(&rw), 0);
}

TEST_P(RwLock, many_readers_inside_at_once) {
    weft_rwlock_t rw;
    ASSERT_EQ(weft_rwlock_init(&rw), 0);
    weft_barrier_t b;
    const int n = 8;
    weft_barrier_init(&b, n);
    std::atomic<int> inside{0}, max_inside{0};
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < n; ++i)
        ts.push_back(wt::go([&] {
            weft_rwlock_rdlock(&rw);
            int now = inside.fetch_add(1) + 1;
            int m = max_inside.load();
            while (now > m && !max_inside.compare_exchange_weak(m, now)) {
            }
            weft_barrier_wait(&b);  // all n readers hold the lock here at once
            inside.fetch_sub(1);
            weft_rwlock_unlock(&rw);
        }));
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(max_inside.load(), n);
    EXPECT_EQ(weft_rwlock_destroy(&rw), 0);
}

TEST_P(RwLock, writer_excludes_everyone) {
    weft_rwlock_t rw = WEFT_RWLOCK_INITIALIZER;
    ASSERT_EQ(weft_rwlock_wrlock(&rw), 0);
    EXPECT_EQ(on_other_thread([&] { return weft_rwlock_tryrdlock(&rw); }), EBUSY);
    EXPECT_EQ(on_other_thread([&] { return weft_rwlock_trywrlock(&rw); }), EBUSY);
    ASSERT_EQ(weft_rwlock_unlock(&rw), 0);
    ASSERT_EQ(weft_rwlock_rdlock(&rw), 0);
    EXPECT_EQ(on_other_thread([&] { return weft_rwlock_trywrlock(&rw); }), EBUSY) << "readers exclude writers";
    ASSERT_EQ(weft_rwlock_unlock(&rw), 0);
}

// While main reads, a reader that tries the lock fails only if someone
// waits (arrivals queue behind waiters): this tells, on any number of workers,
// that the writer has queued.
bool writer_waits(weft_rwlock_t* rw) {
    int rc = on_other_thread([&] {
        int r = weft_rwlock_tryrdlock(rw);
        if (r == 0) weft_rwlock_unlock(rw);
        return r;
    });
    return rc == EBUSY;
}

TEST_P(RwLock, writer_blocks_until_readers_leave) {
    weft_rwlock_t rw = WEFT_RWLOCK_INITIALIZER;
    ASSERT_EQ(weft_rwlock_rdlock(&rw), 0);
    std::atomic<int> wrote{0};
    weft_thread_t t = wt::go([&] {
        weft_rwlock_wrlock(&rw);
        wrote = 1;
        weft_rwlock_unlock(&rw);
    });
    ASSERT_TRUE(wt::yield_until([&] { return writer_waits(&rw); }));
    EXPECT_EQ(wrote.load(), 0);
    ASSERT_EQ(weft_rwlock_unlock(&rw), 0);
    wt::join(t);
    EXPECT_EQ(wrote.load(), 1);
}

TEST_P(RwLockOneWorker, reader_after_waiting_writer_queues_behind_it) {
    weft_rwlock_t rw = WEFT_RWLOCK_INITIALIZER;
    std::string order;
    ASSERT_EQ(weft_rwlock_rdlock(&rw), 0);  // main reads
    weft_thread_t w = wt::go([&] {
        weft_rwlock_wrlock(&rw);
        order += "W";
        weft_rwlock_unlock(&rw);
    });
    wt::settle();  // the writer waits behind main's read lock
    EXPECT_EQ(on_other_thread([&] { return weft_rwlock_tryrdlock(&rw); }), EBUSY)
        << "a reader must not overtake a waiting writer";
    weft_thread_t r = wt::go([&] {
        weft_rwlock_rdlock(&rw);
        order += "R";
        weft_rwlock_unlock(&rw);
    });
    wt::settle();
    EXPECT_EQ(order, "");
    ASSERT_EQ(weft_rwlock_unlock(&rw), 0);
    wt::join(w);
    wt::join(r);
    EXPECT_EQ(order, "WR");
}

TEST_P(RwLockOneWorker, release_admits_the_run_of_readers_at_the_head) {
    weft_rwlock_t rw = WEFT_RWLOCK_INITIALIZER;
    std::string order;
    ASSERT_EQ(weft_rwlock_wrlock(&rw), 0);
    std::vector<weft_thread_t> ts;
    auto reader = [&](char tag) {
        return wt::go([&, tag] {
            weft_rwlock_rdlock(&rw);
            order += tag;
            weft_thread_yield();
            weft_rwlock_unlock(&rw);
        });
    };
    ts.push_back(reader('a'));
    wt::settle();
    ts.push_back(reader('b'));
    wt::settle();
    ts.push_back(wt::go([&] {
        weft_rwlock_wrlock(&rw);
        order += 'W';
        weft_rwlock_unlock(&rw);
    }));
    wt::settle();
    ts.push_back(reader('c'));
    wt::settle();
    ASSERT_EQ(weft_rwlock_unlock(&rw), 0);
    for (auto t : ts) wt::join(t);
    // a and b enter together (in either order), then W, then c.
    ASSERT_EQ(order.size(), 4u);
    EXPECT_EQ(order.substr(2), "Wc");
    EXPECT_TRUE(order.substr(0, 2) == "ab" || order.substr(0, 2) == "ba") << order;
}

TEST_P(RwLock, relock_by_writer_is_edeadlk) {
    weft_rwlock_t rw = WEFT_RWLOCK_INITIALIZER;
    ASSERT_EQ(weft_rwlock_wrlock(&rw), 0);
    EXPECT_EQ(weft_rwlock_wrlock(&rw), EDEADLK);
    EXPECT_EQ(weft_rwlock_rdlock(&rw), EDEADLK);
    timespec ts = wt::realtime_in(10ms);
    EXPECT_EQ(weft_rwlock_timedwrlock(&rw, &ts), EDEADLK);
    EXPECT_EQ(weft_rwlock_timedrdlock(&rw, &ts), EDEADLK);
    ASSERT_EQ(weft_rwlock_unlock(&rw), 0);
}

TEST_P(RwLock, unlock_not_held_is_eperm) {
    weft_rwlock_t rw = WEFT_RWLOCK_INITIALIZER;
    EXPECT_EQ(weft_rwlock_unlock(&rw), EPERM);
    ASSERT_EQ(weft_rwlock_wrlock(&rw), 0);
    EXPECT_EQ(on_other_thread([&] { return weft_rwlock_unlock(&rw); }), EPERM) << "a writer's lock by another";
    ASSERT_EQ(weft_rwlock_unlock(&rw), 0);
    EXPECT_EQ(weft_rwlock_unlock(&rw), EPERM);
}

TEST_P(RwLock, timed_variants_time_out) {
    weft_rwlock_t rw = WEFT_RWLOCK_INITIALIZER;
    ASSERT_EQ(weft_rwlock_wrlock(&rw), 0);
    std::int64_t waited_r = 0, waited_w = 0;
    int rc_r = -1, rc_w = -1;
    weft_thread_t t = wt::go([&] {
        std::int64_t t0 = wt::now_ns();
        timespec ts = wt::realtime_in(40ms);
        rc_r = weft_rwlock_timedrdlock(&rw, &ts);
        waited_r = wt::now_ns() - t0;
        t0 = wt::now_ns();
        ts = wt::realtime_in(40ms);
        rc_w = weft_rwlock_timedwrlock(&rw, &ts);
        waited_w = wt::now_ns() - t0;
    });
    wt::join(t);
    EXPECT_EQ(rc_r, ETIMEDOUT);
    EXPECT_EQ(rc_w, ETIMEDOUT);
    EXPECT_GE(waited_r, 35'000'000);
    EXPECT_GE(waited_w, 35'000'000);
    ASSERT_EQ(weft_rwlock_unlock(&rw), 0);
    EXPECT_EQ(weft_rwlock_destroy(&rw), 0) << "timed-out waiters leave nothing behind";
}

TEST_P(RwLock, timed_variants_succeed_before_deadline) {
    weft_rwlock_t rw = WEFT_RWLOCK_INITIALIZER;
    ASSERT_EQ(weft_rwlock_wrlock(&rw), 0);
    int rc_r = -1, rc_w = -1;
    std::atomic<int> calling{0};
    weft_thread_t t1 = wt::go([&] {
        timespec ts = wt::realtime_in(30s);
        calling.fetch_add(1);
        rc_r = weft_rwlock_timedrdlock(&rw, &ts);
        if (rc_r == 0) weft_rwlock_unlock(&rw);
    });
    weft_thread_t t2 = wt::go([&] {
        timespec ts = wt::realtime_in(30s);
        calling.fetch_add(1);
        rc_w = weft_rwlock_timedwrlock(&rw, &ts);
        if (rc_w == 0) weft_rwlock_unlock(&rw);
    });
    wt::yield_until([&] { return calling.load() == 2; });
    wt::settle();
    ASSERT_EQ(weft_rwlock_unlock(&rw), 0);
    wt::join(t1);
    wt::join(t2);
    EXPECT_EQ(rc_r, 0);
    EXPECT_EQ(rc_w, 0);
}

TEST_P(RwLock, timed_out_writer_lets_queued_readers_in) {
    weft_rwlock_t rw = WEFT_RWLOCK_INITIALIZER;
    ASSERT_EQ(weft_rwlock_rdlock(&rw), 0);  // main reads (and keeps reading)
    int rc_w = -1;
    std::atomic<int> writer_waiting{0}, reader_in{0};
    weft_thread_t w = wt::go([&] {
        writer_waiting = 1;
        timespec ts = wt::realtime_in(60ms);
        rc_w = weft_rwlock_timedwrlock(&rw, &ts);
    });
    wt::yield_until([&] { return writer_waiting.load() == 1; });
    wt::settle();
    // This reader queues behind the waiting writer; when the writer gives up,
    // it must be admitted (main still holds a read lock, so readers may enter).
    weft_thread_t r = wt::go([&] {
        weft_rwlock_rdlock(&rw);
        reader_in = 1;
        weft_rwlock_unlock(&rw);
    });
    wt::join(w);
    EXPECT_EQ(rc_w, ETIMEDOUT);
    wt::join(r);
    EXPECT_EQ(reader_in.load(), 1);
    ASSERT_EQ(weft_rwlock_unlock(&rw), 0);
}

TEST_P(RwLock, timed_bad_timespec_is_einval) {
    weft_rwlock_t rw = WEFT_RWLOCK_INITIALIZER;
    timespec bad{time(nullptr) + 1, 2'000'000'000};
    EXPECT_EQ(weft_rwlock_timedrdlock(&rw, &bad), EINVAL);
    EXPECT_EQ(weft_rwlock_timedwrlock(&rw, &bad), EINVAL);
    EXPECT_EQ(weft_rwlock_timedrdlock(&rw, nullptr), EINVAL);
}

TEST_P(RwLock, destroy_busy_is_ebusy) {
    weft_rwlock_t rw = WEFT_RWLOCK_INITIALIZER;
    ASSERT_EQ(weft_rwlock_rdlock(&rw), 0);
    EXPECT_EQ(weft_rwlock_destroy(&rw), EBUSY);
    ASSERT_EQ(weft_rwlock_unlock(&rw), 0);
    ASSERT_EQ(weft_rwlock_wrlock(&rw), 0);
    EXPECT_EQ(weft_rwlock_destroy(&rw), EBUSY);
    ASSERT_EQ(weft_rwlock_unlock(&rw), 0);
    EXPECT_EQ(weft_rwlock_destroy(&rw), 0);
}

TEST_P(RwLock, writers_and_readers_keep_invariant) {
    weft_rwlock_t rw = WEFT_RWLOCK_INITIALIZER;
    long a = 0, b = 0;  // writers keep a == b
    std::atomic<int> torn{0};
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < 8; ++i)
        ts.push_back(wt::go([&] {
            for (int k = 0; k < 200; ++k) {
                weft_rwlock_wrlock(&rw);
                ++a;
                if (k % 8 == 0) weft_thread_yield();
                ++b;
                weft_rwlock_unlock(&rw);
            }
        }));
    for (int i = 0; i < 8; ++i)
        ts.push_back(wt::go([&] {
            for (int k = 0; k < 200; ++k) {
                weft_rwlock_rdlock(&rw);
                if (a != b) torn.fetch_add(1);
                if (k % 8 == 0) weft_thread_yield();
                weft_rwlock_unlock(&rw);
            }
        }));
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(torn.load(), 0);
    EXPECT_EQ(a, 1600);
    EXPECT_EQ(b, 1600);
}

TEST_P(RwLock, null_arguments_are_einval) {
    EXPECT_EQ(weft_rwlock_init(nullptr), EINVAL);
    EXPECT_EQ(weft_rwlock_rdlock(nullptr), EINVAL);
    EXPECT_EQ(weft_rwlock_wrlock(nullptr), EINVAL);
    EXPECT_EQ(weft_rwlock_tryrdlock(nullptr), EINVAL);
    EXPECT_EQ(weft_rwlock_trywrlock(nullptr), EINVAL);
    EXPECT_EQ(weft_rwlock_unlock(nullptr), EINVAL);
    EXPECT_EQ(weft_rwlock_destroy(nullptr), EINVAL);
}

}  // namespace

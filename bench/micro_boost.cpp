// weft-bench micro: Boost.Fiber as a peer (compiled only where Boost.Fiber is
// found; bench/CMakeLists.txt then defines WEFT_HAVE_BOOST_FIBER).
//
// The operations are those of micro.hpp, run on fibers of one kernel thread
// pinned to the benchmark CPU (micro.cpp's pinned host), with Boost.Fiber's
// default round-robin scheduler. Fiber stacks come from a
// pooled_fixedsize_stack of boost_stack_size bytes kept for the life of the
// host thread, so that Boost's stacks are warm and reused just as weft's are
// (its default fixedsize_stack would malloc and free one per fiber).
// boost::fibers::fiber is launched with launch::post (the default): the
// parent continues and join() switches to the child, as weft's fifo does.
#include <cstdint>
#include <memory>
#include <mutex>

#include <boost/fiber/condition_variable.hpp>
#include <boost/fiber/fiber.hpp>
#include <boost/fiber/mutex.hpp>
#include <boost/fiber/operations.hpp>
#include <boost/fiber/pooled_fixedsize_stack.hpp>

#include "harness.hpp"
#include "micro.hpp"

namespace weft::bench::micro {
namespace {

// The same size as weft's default stack (weft.h: 64 KiB).
constexpr std::size_t boost_stack_size = 64 * 1024;

boost::fibers::pooled_fixedsize_stack& stack_pool() {
    // One pool per kernel thread: boost::pool is not thread-safe. Fibers keep
    // a reference to it, so it outlives the last of them.
    thread_local boost::fibers::pooled_fixedsize_stack pool(boost_stack_size);
    return pool;
}

struct boost_fiber_family {
    static constexpr char const* name = "boost_fiber";

    struct mutex_type {
        boost::fibers::mutex m;
    };
    struct cond_type {
        boost::fibers::condition_variable c;
    };

    static void lock(mutex_type& m) { m.m.lock(); }
    static void unlock(mutex_type& m) { m.m.unlock(); }
    static void wait(cond_type& c, mutex_type& m) {
        // The protocols hold the mutex already: adopt it for the wait and
        // give it back still locked.
        std::unique_lock<boost::fibers::mutex> lk(m.m, std::adopt_lock);
        c.c.wait(lk);
        lk.release();
    }
    static void signal(cond_type& c) { c.c.notify_one(); }
    static void yield() { boost::this_fiber::yield(); }

    // Two fibers on the calling (host) kernel thread, which is pinned to cpu.
    template <class A, class B>
    static void run_pair(A& a, B& b, int /*cpu*/) {
        boost::fibers::fiber fa(std::allocator_arg, stack_pool(), [&a] { a(); });
        boost::fibers::fiber fb(std::allocator_arg, stack_pool(), [&b] { b(); });
        fa.join();
        fb.join();
    }
};

// boost_fiber_create_join: n times, construct a fiber that adds its index to
// a sum and join it, from the host thread's main fiber. Operations: n.
op_result boost_fiber_create_join(std::uint64_t n, int) {
    auto& pool = stack_pool();
    std::uint64_t sink = 0;
    std::uint64_t const t0 = now_ns();
    for (std::uint64_t i = 0; i < n; ++i) {
        boost::fibers::fiber f(std::allocator_arg, pool, [&sink, i] { sink += i; });
        f.join();
    }
    std::uint64_t const t1 = now_ns();
    keep(sink);
    op_result r{double(t1 - t0), n, {}};
    if (n > 0 && sink != n * (n - 1) / 2) r.warning = "boost_fiber create_join: fibers did not all run";
    return r;
}

struct register_boost_ops {
    register_boost_ops() {
        op_registrar{micro_op{.id = "boost_fiber_create_join",
                              .kind = "create_join",
                              .family = "boost_fiber",
                              .unit = "create+join",
                              .hosted = true,
                              .order = 0,
                              .run = &boost_fiber_create_join}};
        register_pair_ops<boost_fiber_family>("boost_fiber_", /*kernel=*/false, /*hosted=*/true, 0);
    }
} const boost_ops;

}  // namespace
}  // namespace weft::bench::micro

// quicksort: the three versions and the registration (apps/quicksort/quicksort.hpp).
#include "apps/quicksort/quicksort.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "apps/app.hpp"
#include "apps/coarse.hpp"
#include "apps/quicksort/quicksort_instance.hpp"
#include "weft/filament.hpp"

namespace weft::apps::quicksort {
namespace {

__attribute__((noinline)) void fil_rec(key* a, std::size_t n) {
    if (n <= insertion_cutoff) {
        insertion_sort(a, n);
        return;
    }
    std::size_t m = partition(a, n);
    // By value: see weft::join's note on captures in hot recursions.
    weft::join([=] { fil_rec(a, m); }, [=] { fil_rec(a + m, n - m); });
}

// Below this many keys a coarse-grain thread sorts without looking at the bag:
// a subarray this small is not worth a trip through the lock.
constexpr std::size_t bag_grain = std::size_t{1} << 12;

struct task {
    key* a;
    std::size_t n;
};

class bag {
public:
    bag(task all, int threads) : threads_(static_cast<std::size_t>(threads)) {
        tasks_.push_back(all);
        size_.store(1, std::memory_order_relaxed);
    }

    // One thread's loop: take a subarray, sort it, until none is left and no
    // thread is sorting one (a sorting thread may still put halves back).
    void work() {
        std::unique_lock lk(m_);
        for (;;) {
            cv_.wait(lk, [&] { return !tasks_.empty() || active_ == 0; });
            if (tasks_.empty()) return;
            task t = tasks_.front();  // the oldest: the biggest
            tasks_.pop_front();
            size_.store(tasks_.size(), std::memory_order_relaxed);
            ++active_;
            lk.unlock();
            sort(t.a, t.n);
            lk.lock();
            if (--active_ == 0 && tasks_.empty()) cv_.notify_all();
        }
    }

private:
    void sort(key* a, std::size_t n) {
        while (n > bag_grain) {
            std::size_t m = partition(a, n);
            // The bag is short (a relaxed read: a hint, re-read at the next
            // partition): give the second half away and keep the first.
            if (size_.load(std::memory_order_relaxed) < threads_) {
                put({a + m, n - m});
                n = m;
            } else {
                sort(a, m);
                a += m;
                n -= m;
            }
        }
        serial(a, n);
    }

    void put(task t) {
        {
            std::lock_guard g(m_);
            tasks_.push_back(t);
            size_.store(tasks_.size(), std::memory_order_relaxed);
        }
        cv_.notify_one();
    }

    const std::size_t threads_;
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<task> tasks_;
    std::atomic<std::size_t> size_{0};
    int active_ = 0;  // tasks taken and not finished (under m_)
};

}  // namespace

void filaments(key* a, std::size_t n) {
    weft::fork_join([=] { fil_rec(a, n); });
}

void coarse(key* a, std::size_t n, int workers) {
    bag b({a, n}, workers);
    on_kernel_threads(workers, [&](int) { b.work(); });
}

void problem::run_serial() { serial(keys.data(), n); }
void problem::run_coarse(int workers) { coarse(keys.data(), n, workers); }
void problem::run_filaments() { filaments(keys.data(), n); }

std::string problem::compare(const instance& reference) const {
    const auto& ref = static_cast<const problem&>(reference);
    if (ref.n != n) return "sizes differ: " + std::to_string(n) + " and " + std::to_string(ref.n);
    for (std::size_t i = 0; i < n; ++i)
        if (keys[i] != ref.keys[i])
            return "key " + std::to_string(i) + " is " + std::to_string(keys[i]) + ", serial has " +
                   std::to_string(ref.keys[i]);
    return {};
}

namespace {
registrar const reg{app{
    .name = "quicksort",
    .description = "quicksort of n random 64-bit keys, a fork at every partition",
    .bench_size = 20'000'000,
    .demo_size = 1'500'000,
    .test_size = 50'000,
    .size_meaning = "number of keys",
    .make = [](long size) -> std::unique_ptr<instance> {
        return std::make_unique<problem>(static_cast<std::size_t>(size));
    },
}};
}  // namespace

}  // namespace weft::apps::quicksort

// fib: the three versions and the registration (apps/fib/fib.hpp).
#include "apps/fib/fib.hpp"

#include <atomic>
#include <string>
#include <vector>

#include "apps/app.hpp"
#include "apps/coarse.hpp"
#include "apps/fib/fib_instance.hpp"
#include "weft/filament.hpp"

namespace weft::apps::fib {
namespace {

__attribute__((noinline)) std::int64_t fil_rec(int n) {
    if (n < 2) return n;
    // By value: see weft::join's note on captures in hot recursions.
    auto [a, b] = weft::join([=] { return fil_rec(n - 1); }, [=] { return fil_rec(n - 2); });
    return a + b;
}

// Expands fib(n) into subproblems until there are at least `want` of them
// (largest first), so that fib(n) = sum of fib(leaf).
std::vector<int> bag_of(int n, std::size_t want) {
    std::vector<int> bag{n};
    for (;;) {
        std::size_t split = bag.size();
        for (std::size_t i = 0; i < bag.size(); ++i)
            if (bag[i] >= 2 && (split == bag.size() || bag[i] > bag[split])) split = i;
        if (bag.size() >= want || split == bag.size()) return bag;
        int m = bag[split];
        bag[split] = m - 1;
        bag.push_back(m - 2);
    }
}

}  // namespace

std::int64_t filaments(int n) {
    return weft::fork_join([=] { return fil_rec(n); });
}

std::int64_t coarse(int n, int workers) {
    const std::vector<int> bag = bag_of(n, static_cast<std::size_t>(16 * workers));
    std::atomic<std::size_t> next{0};
    std::atomic<std::int64_t> sum{0};
    auto work = [&] {
        std::int64_t s = 0;
        for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < bag.size();) s += serial(bag[i]);
        sum.fetch_add(s, std::memory_order_relaxed);
    };
    on_kernel_threads(workers, [&](int) { work(); });
    return sum.load();
}

void problem::run_serial() { result = serial(n); }
void problem::run_coarse(int workers) { result = coarse(n, workers); }
void problem::run_filaments() { result = filaments(n); }

std::string problem::compare(const instance& reference) const {
    const auto& ref = static_cast<const problem&>(reference);
    if (result == ref.result) return {};
    return "fib(" + std::to_string(n) + ") = " + std::to_string(result) + ", serial gives " +
           std::to_string(ref.result);
}

namespace {
registrar const reg{app{
    .name = "fib",
    .description = "fib(n) by double recursion, a fork at every call",
    .bench_size = 35,
    .demo_size = 34,
    .test_size = 20,
    .size_meaning = "n of fib(n)",
    .make = [](long size) -> std::unique_ptr<instance> { return std::make_unique<problem>(static_cast<int>(size)); },
}};
}  // namespace

}  // namespace weft::apps::fib

// quadrature: the coarse-grain and filaments versions and the registration
// (apps/quadrature/quadrature.hpp).
#include "apps/quadrature/quadrature.hpp"

#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "apps/app.hpp"
#include "apps/coarse.hpp"
#include "apps/quadrature/quadrature_instance.hpp"
#include "weft/filament.hpp"

namespace weft::apps::quadrature {
namespace {

__attribute__((noinline)) double fil_quad(double a, double b, double fa, double fb, double area, double tol) {
    const halves h = divide(a, b, fa, fb, area, tol);
    if (h.close) return h.left + h.right;
    // By value (see weft::join's note on captures in hot recursions), and
    // scalars rather than h: with the struct captured, GCC builds bigger
    // closures in memory before the pruning test, and the filaments version
    // runs markedly slower than serial on one worker.
    const double m = h.m, fm = h.fm, left = h.left, right = h.right;
    auto [l, r] = weft::join([=] { return fil_quad(a, m, fa, fm, left, tol); },
                             [=] { return fil_quad(m, b, fm, fb, right, tol); });
    return l + r;
}

// An interval of the bag: [a, b], f at both ends, its trapezoid area.
struct task {
    double a, b, fa, fb, area;
};

// The central bag of tasks (FIFO: the oldest tasks are the largest).
class bag {
public:
    bag(int threads, task first) : threads_(threads), want_(2 * static_cast<std::size_t>(threads)) {
        tasks_.push_back(first);
    }
    // The next task; false once the bag is empty and every thread is idle.
    bool take(task& t) {
        std::unique_lock lock(mu_);
        if (tasks_.empty()) {
            if (++idle_ == threads_) {  // the last one busy: nobody can add work
                cv_.notify_all();
                return false;
            }
            cv_.wait(lock, [&] { return !tasks_.empty() || idle_ == threads_; });
            if (tasks_.empty()) return false;
            --idle_;
        }
        t = tasks_.front();
        tasks_.pop_front();
        return true;
    }
    // Puts t back; true when the bag now holds enough tasks for the putter to
    // prune (keep the other half to itself, by serial recursion).
    bool put(const task& t) {
        std::size_t n;
        bool wake;
        {
            std::lock_guard lock(mu_);
            tasks_.push_back(t);
            n = tasks_.size();
            wake = idle_ > 0;
        }
        if (wake) cv_.notify_one();
        return n >= want_;
    }

private:
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<task> tasks_;
    int idle_ = 0;
    const int threads_;
    const std::size_t want_;
};

}  // namespace

double filaments(double tol) {
    const double fa = f(lo), fb = f(hi);
    const double area = 0.5 * (fa + fb) * (hi - lo);
    return weft::fork_join([=] { return fil_quad(lo, hi, fa, fb, area, tol); });
}

double coarse(double tol, int workers) {
    const double fa = f(lo), fb = f(hi);
    bag b(workers, task{lo, hi, fa, fb, 0.5 * (fa + fb) * (hi - lo)});
    std::vector<double> sums(static_cast<std::size_t>(workers), 0.0);
    auto work = [&](int id) {
        double sum = 0.0;
        task t;
        while (b.take(t)) {
            for (;;) {  // t: the interval this thread keeps
                const halves h = divide(t.a, t.b, t.fa, t.fb, t.area, tol);
                if (h.close) {
                    sum += h.left + h.right;
                    break;
                }
                if (b.put(task{h.m, t.b, h.fm, t.fb, h.right})) {
                    sum += serial_quad(t.a, h.m, t.fa, h.fm, h.left, tol);
                    break;
                }
                t = task{t.a, h.m, t.fa, h.fm, h.left};
            }
        }
        sums[static_cast<std::size_t>(id)] = sum;
    };
    on_kernel_threads(workers, work);
    double total = 0.0;
    for (double s : sums) total += s;
    return total;
}

void problem::run_serial() { result = serial(tol); }
void problem::run_coarse(int workers) { result = coarse(tol, workers); }
void problem::run_filaments() { result = filaments(tol); }

std::string problem::compare(const instance& reference) const {
    const auto& ref = static_cast<const problem&>(reference);
    // Relative 1e-9: the bag of tasks sums the intervals in another order.
    const double err = std::fabs(result - ref.result);
    if (err <= 1e-9 * std::fabs(ref.result)) return {};
    char buf[160];
    std::snprintf(buf, sizeof buf, "integral %.17g, serial gives %.17g (relative difference %.3g > 1e-9)", result,
                  ref.result, err / std::fabs(ref.result));
    return buf;
}

namespace {
registrar const reg{app{
    .name = "quadrature",
    .description = "adaptive quadrature of e^x sin x over [1, 35], a fork at every subdivision",
    .bench_size = 7,
    .demo_size = 4,
    .test_size = 1,
    .size_meaning = "k: tolerance 10^-k per interval (each +1: ~2.15x the work)",
    .make = [](long size) -> std::unique_ptr<instance> { return std::make_unique<problem>(size); },
}};
}  // namespace

}  // namespace weft::apps::quadrature

// weft::detail::adapt — the adaptive controller (controller.hpp).
#include "adapt/controller.hpp"

#include <algorithm>
#include <cstdio>

#include "adapt/budget.hpp"
#include "core/active.hpp"
#include "core/outside.hpp"
#include "core/runtime.hpp"
#include "core/tunables.hpp"

namespace weft::detail::adapt {

controller::controller(runtime* rt, std::unique_ptr<probe> p, params prm, std::unique_ptr<core_budget> budget)
    : rt_(rt), probe_(std::move(p)), prm_(prm), budget_(std::move(budget)) {}

controller::~controller() = default;

void controller::step() {
    int active = rt_->active.load(memory_order_relaxed);
    int bound = rt_->nworkers;
    if (budget_ != nullptr) {
        bound = std::min(bound, budget_->share());
        budget_share_.store(bound, memory_order_relaxed);
        budget_members_.store(budget_->members(), memory_order_relaxed);
    }
    if (active > bound) {  // another weft process joined the budget: give back at once
        set_active_workers(rt_, bound);
        bad_ = good_ = 0;
        toe_in_ = false;
        return;
    }
    reading r = probe_->read(rt_, active);
    rt_->adapt_readings.fetch_add(1, memory_order_relaxed);
    if (r.bad) {
        good_ = 0;
        if ((toe_in_ || ++bad_ >= prm_.bad_readings) && active > 1) {
            set_active_workers(rt_, active - 1);
            bad_ = 0;
        }
        toe_in_ = false;
        return;
    }
    bad_ = 0;
    toe_in_ = false;
    if (++good_ >= prm_.good_readings && active < bound) {
        good_ = 0;
        if (probe_->try_more(rt_, active + 1)) {
            set_active_workers(rt_, active + 1);
            toe_in_ = true;
        }
    }
}

service::service(std::unique_ptr<controller> c) : ctl_(std::move(c)) {
    thread_ = std::thread([this] { run(); });
}

service::~service() {
    {
        std::lock_guard<std::mutex> g(m_);
        stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
}

void service::run() {
    note_service_thread(false);  // not a thread outside weft that could wake one (deadlock.cpp)
    const auto interval = std::chrono::milliseconds(ctl_->parameters().interval_ms);
    std::unique_lock<std::mutex> lk(m_);
    for (;;) {
        if (cv_.wait_for(lk, interval, [this] { return stop_; })) break;
        lk.unlock();
        ctl_->step();
        lk.lock();
    }
    note_service_thread(true);
}

std::unique_ptr<service> start(runtime* rt, const settings& s) {
    if (s.adapt == "off" || rt->nworkers < 2) return nullptr;
    const probe_def* def = registry<probe_def>::find(s.adapt);  // read_settings checked the name
    std::string why;
    std::unique_ptr<probe> p = def->make(&why);
    if (p == nullptr) {
        if (s.adapt_explicit)
            std::fprintf(stderr, "weft: WEFT_ADAPT=%s: %s; the worker count stays fixed\n", def->name, why.c_str());
        return nullptr;
    }
    params prm;
    prm.bad_readings = tun::adapt_bad_readings;
    prm.good_readings = tun::adapt_good_readings;
    prm.interval_ms = def->interval_ms;
    if (s.adapt_interval_ms != 0) prm.interval_ms = s.adapt_interval_ms;
    std::unique_ptr<core_budget> budget;
    if (s.budget_name != "off") {
        budget = core_budget::join(s.budget_name.empty() ? default_budget_name() : s.budget_name, rt->nworkers,
                                   usable_cpus(), &why);
        if (budget == nullptr)
            std::fprintf(stderr, "weft: the machine-wide core budget is not available (%s); this process adapts "
                                 "to the load alone\n",
                         why.c_str());
    }
    return std::make_unique<service>(std::make_unique<controller>(rt, std::move(p), prm, std::move(budget)));
}

}  // namespace weft::detail::adapt

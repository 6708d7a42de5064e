// weft::detail::adapt — the adaptive controller: how many workers are active
// (Severance & Enbody's ASAT; Arora, Blumofe & Plaxton's process control).
//
// Once per interval the controller takes one reading from its probe
// (probe.hpp) and decides, as ASAT does:
//   - a bad reading adds to a count of bad ones in a row; at
//     tun::adapt_bad_readings, one worker is dropped;
//   - after tun::adapt_good_readings good ones in a row, with fewer active
//     workers than the bound, it "dips a toe in the water": it asks the probe
//     whether one more would run well (asat: a barrier test with one more
//     worker; schedstat: whether a CPU was idle), and if so adds one;
//   - right after such an addition, a single bad reading takes it back.
// The bound is WEFT_WORKERS, lowered by this process's share of the
// machine-wide core budget (budget.hpp) when several weft processes run.
// Dropping and adding is core/active.hpp's set_active_workers.
//
// The controller runs on a kernel thread of its own (service), which sleeps
// between readings; tests drive step() directly with a probe of their own.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "adapt/probe.hpp"
#include "base/primitives.hpp"
#include "core/env.hpp"

namespace weft::detail {
struct runtime;
}

namespace weft::detail::adapt {

class core_budget;

struct params {
    int interval_ms = 0;
    int bad_readings = 0;
    int good_readings = 0;
};

class controller {
public:
    controller(runtime* rt, std::unique_ptr<probe> p, params prm, std::unique_ptr<core_budget> budget);
    ~controller();

    // One reading and its decision. Not concurrent with itself.
    void step();

    const char* probe_name() const { return probe_->name(); }
    const params& parameters() const { return prm_; }
    // This process's share of the core budget (0: no budget) and its members.
    int budget_share() const { return budget_share_.load(memory_order_relaxed); }
    int budget_members() const { return budget_members_.load(memory_order_relaxed); }

private:
    runtime* rt_;
    std::unique_ptr<probe> probe_;
    params prm_;
    std::unique_ptr<core_budget> budget_;
    int bad_ = 0;          // bad readings in a row
    int good_ = 0;         // good readings in a row
    bool toe_in_ = false;  // the last step added a worker
    atomic<int> budget_share_{0};
    atomic<int> budget_members_{0};
};

// The controller of a running runtime and the kernel thread that drives it.
class service {
public:
    explicit service(std::unique_ptr<controller> c);
    ~service();  // stops the thread (within one reading)
    controller& ctl() { return *ctl_; }

private:
    void run();
    std::unique_ptr<controller> ctl_;
    std::mutex m_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::thread thread_;
};

// Starts the controller that the settings ask for (s.adapt), or none ("off",
// or a probe this kernel cannot give: a one-line notice on stderr if the mode
// was asked for explicitly). Called by weft_init once the workers run.
std::unique_ptr<service> start(runtime* rt, const settings& s);

}  // namespace weft::detail::adapt

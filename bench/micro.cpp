// weft-bench micro: the cost of weft's basic operations, beside Pthreads and
// (bench/micro_boost.cpp, where Boost.Fiber is installed) Boost.Fiber.
//
// Figures (ns per operation, medians over --rounds rounds, with the spread
// (p90 - p10) / median, min and max), all measured in the same run:
//   create_join_ns          weft_thread_create + weft_thread_join of a thread that
//                           does nothing, from the main weft thread, 1 worker,
//                           stacks warm (a warm-up run precedes the rounds)
//   yield_ns                per switch: two weft threads yielding to each other
//   mutex_handoff_ns        per hand-off of a contended mutex (micro.hpp: relay)
//   cond_pingpong_ns        per one-way hand-off through mutex + condition variable
//   pthread_*_ns            the same protocols on kernel threads pinned to one CPU
//   boost_fiber_*_ns        the same protocols on Boost.Fiber fibers of one kernel thread
//   shim_create_join_ns     pthread_create + pthread_join in a plain Pthreads program
//                           run under libweft-pthread, 1 worker (bench/micro_shim.cpp);
//                           target: create_join_speedup_vs_shim (the median over
//                           rounds of its ratio to create_join_ns, both run back to
//                           back in each round) <= shim_create_join_bound (1.5),
//                           shim_create_join_met
//   KIND_speedup_vs_FAMILY  FAMILY's median / weft's median (>1: weft is faster);
//                           for a paired operation the median of per-round ratios
//   million_threads_*       many threads live at once (bench/micro_million.cpp)
//   fil_*_ns, join_*_ns     filament operations (bench/micro_filaments.cpp)
//   syscall_ready_read_ns, plain_ready_read_ns
//                           a read that does not block, through weft/io.h and
//                           plain (bench/micro_syscall.cpp)
// One JSON line for the whole run. The definitions live in docs/bench.md.
#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <pthread.h>
#include <sched.h>

#include <weft/weft.h>

#include "harness.hpp"
#include "micro.hpp"

namespace weft::bench::micro {

// ---------------------------------------------------------------------------
// The operation registry
// ---------------------------------------------------------------------------

namespace {
std::vector<micro_op>& op_registry() {
    static std::vector<micro_op> r;  // function-local: safe from other TUs' static init
    return r;
}

int family_rank(std::string const& family) {
    int i = 0;
    for (char const* f : families) {
        if (family == f) return i;
        ++i;
    }
    return i;
}
}  // namespace

op_registrar::op_registrar(micro_op op) {
    for (auto const& o : op_registry())
        if (o.id == op.id) die("internal error: two micro operations are named '%s'", op.id.c_str());
    op_registry().push_back(std::move(op));
}

std::vector<micro_op const*> ops() {
    std::vector<micro_op const*> out;
    for (auto const& o : op_registry()) out.push_back(&o);
    std::stable_sort(out.begin(), out.end(), [](auto* a, auto* b) {
        if (a->order != b->order) return a->order < b->order;
        return family_rank(a->family) < family_rank(b->family);
    });
    return out;
}

namespace {

// ---------------------------------------------------------------------------
// weft
// ---------------------------------------------------------------------------

void* return_arg(void* arg) { return arg; }

struct weft_family {
    static constexpr char const* name = "weft";

    struct mutex_type {
        weft_mutex_t m;
        mutex_type() { check(weft_mutex_init(&m, nullptr), "weft_mutex_init"); }
        ~mutex_type() { check(weft_mutex_destroy(&m), "weft_mutex_destroy"); }
        mutex_type(mutex_type const&) = delete;
        mutex_type& operator=(mutex_type const&) = delete;
    };
    struct cond_type {
        weft_cond_t c;
        cond_type() { check(weft_cond_init(&c, nullptr), "weft_cond_init"); }
        ~cond_type() { check(weft_cond_destroy(&c), "weft_cond_destroy"); }
        cond_type(cond_type const&) = delete;
        cond_type& operator=(cond_type const&) = delete;
    };

    static void lock(mutex_type& m) { check(weft_mutex_lock(&m.m), "weft_mutex_lock"); }
    static void unlock(mutex_type& m) { check(weft_mutex_unlock(&m.m), "weft_mutex_unlock"); }
    static void wait(cond_type& c, mutex_type& m) { check(weft_cond_wait(&c.c, &m.m), "weft_cond_wait"); }
    static void signal(cond_type& c) { check(weft_cond_signal(&c.c), "weft_cond_signal"); }
    static void yield() { check(weft_thread_yield(), "weft_thread_yield"); }

    template <class T>
    static void* trampoline(void* p) {
        (*static_cast<T*>(p))();
        return nullptr;
    }
    // Both threads run on the runtime's only worker, which is pinned to `cpu`.
    template <class A, class B>
    static void run_pair(A& a, B& b, int /*cpu*/) {
        weft_thread_t ta = WEFT_THREAD_NULL;
        weft_thread_t tb = WEFT_THREAD_NULL;
        check(weft_thread_create(&ta, nullptr, &trampoline<A>, &a), "weft_thread_create");
        check(weft_thread_create(&tb, nullptr, &trampoline<B>, &b), "weft_thread_create");
        check(weft_thread_join(ta, nullptr), "weft_thread_join");
        check(weft_thread_join(tb, nullptr), "weft_thread_join");
    }
};

// create_join: n times, create a weft thread running return_arg and join it,
// from the main weft thread. Operations: n create+join pairs.
op_result weft_create_join(std::uint64_t n, int) {
    std::uintptr_t sink = 0;
    std::uint64_t const t0 = now_ns();
    for (std::uint64_t i = 0; i < n; ++i) {
        weft_thread_t t = WEFT_THREAD_NULL;
        check(weft_thread_create(&t, nullptr, &return_arg, reinterpret_cast<void*>(i)), "weft_thread_create");
        void* ret = nullptr;
        check(weft_thread_join(t, &ret), "weft_thread_join");
        sink += reinterpret_cast<std::uintptr_t>(ret);
    }
    std::uint64_t const t1 = now_ns();
    keep(sink);
    op_result r{double(t1 - t0), n, {}};
    if (n > 0 && sink != n * (n - 1) / 2) r.warning = "weft create_join: threads returned wrong values";
    return r;
}

// ---------------------------------------------------------------------------
// Pthreads
// ---------------------------------------------------------------------------

struct pthread_family {
    static constexpr char const* name = "pthread";

    struct mutex_type {
        pthread_mutex_t m;
        mutex_type() { check(pthread_mutex_init(&m, nullptr), "pthread_mutex_init"); }
        ~mutex_type() { check(pthread_mutex_destroy(&m), "pthread_mutex_destroy"); }
        mutex_type(mutex_type const&) = delete;
        mutex_type& operator=(mutex_type const&) = delete;
    };
    struct cond_type {
        pthread_cond_t c;
        cond_type() { check(pthread_cond_init(&c, nullptr), "pthread_cond_init"); }
        ~cond_type() { check(pthread_cond_destroy(&c), "pthread_cond_destroy"); }
        cond_type(cond_type const&) = delete;
        cond_type& operator=(cond_type const&) = delete;
    };

    static void lock(mutex_type& m) { check(pthread_mutex_lock(&m.m), "pthread_mutex_lock"); }
    static void unlock(mutex_type& m) { check(pthread_mutex_unlock(&m.m), "pthread_mutex_unlock"); }
    static void wait(cond_type& c, mutex_type& m) { check(pthread_cond_wait(&c.c, &m.m), "pthread_cond_wait"); }
    static void signal(cond_type& c) { check(pthread_cond_signal(&c.c), "pthread_cond_signal"); }
    static void yield() { sched_yield(); }

    template <class T>
    static void* trampoline(void* p) {
        (*static_cast<T*>(p))();
        return nullptr;
    }
    // Two kernel threads, both pinned to `cpu`.
    template <class A, class B>
    static void run_pair(A& a, B& b, int cpu) {
        pthread_attr_t attr;
        check(pthread_attr_init(&attr), "pthread_attr_init");
        check(pin_attr(&attr, cpu), "pthread_attr_setaffinity_np");
        pthread_t ta;
        pthread_t tb;
        check(pthread_create(&ta, &attr, &trampoline<A>, &a), "pthread_create");
        check(pthread_create(&tb, &attr, &trampoline<B>, &b), "pthread_create");
        check(pthread_join(ta, nullptr), "pthread_join");
        check(pthread_join(tb, nullptr), "pthread_join");
        pthread_attr_destroy(&attr);
    }
};

// pthread_create_join: as weft_create_join with pthread_create (default
// attributes: the new thread inherits the creator's one-CPU affinity) and
// pthread_join. Operations: n create+join pairs.
op_result pthread_create_join(std::uint64_t n, int) {
    std::uintptr_t sink = 0;
    std::uint64_t const t0 = now_ns();
    for (std::uint64_t i = 0; i < n; ++i) {
        pthread_t t;
        check(pthread_create(&t, nullptr, &return_arg, reinterpret_cast<void*>(i)), "pthread_create");
        void* ret = nullptr;
        check(pthread_join(t, &ret), "pthread_join");
        sink += reinterpret_cast<std::uintptr_t>(ret);
    }
    std::uint64_t const t1 = now_ns();
    keep(sink);
    op_result r{double(t1 - t0), n, {}};
    if (n > 0 && sink != n * (n - 1) / 2) r.warning = "pthread create_join: threads returned wrong values";
    return r;
}

struct register_builtin_ops {
    register_builtin_ops() {
        op_registrar{micro_op{.id = "create_join",
                              .kind = "create_join",
                              .family = "weft",
                              .unit = "create+join",
                              .order = 0,
                              .run = &weft_create_join}};
        op_registrar{micro_op{.id = "pthread_create_join",
                              .kind = "create_join",
                              .family = "pthread",
                              .unit = "create+join",
                              .kernel = true,
                              .order = 0,
                              .run = &pthread_create_join}};
        register_pair_ops<weft_family>("", /*kernel=*/false, /*hosted=*/false, 0);
        register_pair_ops<pthread_family>("pthread_", /*kernel=*/true, /*hosted=*/false, 0);
    }
} const builtin_ops;

// ---------------------------------------------------------------------------
// A kernel thread pinned to the benchmark CPU that runs jobs on request: the
// home of the fiber peers (Boost.Fiber keeps its scheduler per kernel thread,
// and fibers must not run on a weft worker's stacks).
// ---------------------------------------------------------------------------

class pinned_host {
public:
    explicit pinned_host(int cpu) : thread_([this, cpu] { loop(cpu); }) {}
    ~pinned_host() {
        {
            std::lock_guard lk(m_);
            stop_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }

    op_result run(micro_op const& op, std::uint64_t iters, int cpu) {
        op_result result;
        std::unique_lock lk(m_);
        job_ = [&] { result = op.run(iters, cpu); };
        done_ = false;
        cv_.notify_all();
        cv_.wait(lk, [&] { return done_; });
        return result;
    }

private:
    void loop(int cpu) {
        check(pin_current_thread(cpu), "pinning the peer host thread");
        std::unique_lock lk(m_);
        for (;;) {
            cv_.wait(lk, [&] { return stop_ || job_; });
            if (stop_) return;
            auto job = std::move(job_);
            job_ = nullptr;
            lk.unlock();
            job();
            lk.lock();
            done_ = true;
            cv_.notify_all();
        }
    }

    std::mutex m_;
    std::condition_variable cv_;
    std::function<void()> job_;
    bool done_ = true;
    bool stop_ = false;
    std::thread thread_;
};

// ---------------------------------------------------------------------------
// The experiment
// ---------------------------------------------------------------------------

std::string join_names(std::vector<std::string> const& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
    return out;
}

int run_micro(context& ctx) {
    auto const& o = ctx.opts();
    auto const all = ops();

    if (o.flag("list-ops")) {
        table t({"operation", "family", "unit", "sized by"}, "llll");
        for (auto const* op : all) t.add_row({op->id, op->family, op->unit, op->kernel ? "--kernel-iters" : "--iters"});
        t.print(stdout);
        return 0;
    }

    // Which operations.
    std::vector<micro_op const*> selected;
    if (o.given("only")) {
        std::vector<std::string> valid;
        for (auto const* op : all) valid.push_back(op->id);
        for (auto const& name : o.list("only")) {
            auto it = std::find_if(all.begin(), all.end(), [&](auto* op) { return op->id == name; });
            if (it == all.end())
                throw usage_error("weft-bench micro: --only: unknown operation '" + name +
                                  "'; valid: " + join_names(valid));
            if (std::find(selected.begin(), selected.end(), *it) == selected.end()) selected.push_back(*it);
        }
        std::stable_sort(selected.begin(), selected.end(), [&](auto* a, auto* b) {
            return std::find(all.begin(), all.end(), a) < std::find(all.begin(), all.end(), b);
        });
    } else {
        selected = all;
    }

    auto const rounds = static_cast<int>(o.integer("rounds"));
    auto const iters = static_cast<std::uint64_t>(o.integer("iters"));
    auto const kernel_iters = static_cast<std::uint64_t>(o.integer("kernel-iters"));
    std::uint64_t warm = std::max<std::uint64_t>(1, iters / 10);
    std::uint64_t warm_kernel = std::max<std::uint64_t>(1, kernel_iters / 10);
    if (o.given("warmup")) warm = warm_kernel = static_cast<std::uint64_t>(o.integer("warmup"));

    // The CPU: the last one we may use unless told (CPU 0 tends to take more
    // interrupts).
    auto const cpus = allowed_cpus();
    if (cpus.empty()) die("cannot read this process's CPU affinity");
    int cpu = cpus.back();
    if (o.given("cpu")) {
        cpu = static_cast<int>(o.integer("cpu"));
        if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) {
            std::vector<std::string> names;
            for (int c : cpus) names.push_back(std::to_string(c));
            throw usage_error("weft-bench micro: --cpu " + std::to_string(cpu) +
                              " is not a CPU this process may use; valid: " + join_names(names));
        }
    }

    affinity_guard restore_affinity;  // demo and later experiments want every CPU back
    check(pin_current_thread(cpu), "pinning the main thread");

    // The runtime: this kernel thread becomes worker 0, the only one.
    std::string const sched = o.string("sched");
    weft_config_t cfg{};
    cfg.workers = 1;
    cfg.sched = sched.empty() ? nullptr : sched.c_str();
    if (int const rc = weft_init(&cfg); rc != 0)
        die("weft_init(workers=1%s%s) failed: %s (error %d)", sched.empty() ? "" : ", sched=", sched.c_str(),
            std::strerror(rc), rc);
    // weft may set the worker's affinity itself; the measurement is on `cpu`.
    check(pin_current_thread(cpu), "pinning worker 0");
    std::string const sched_name = weft_sched_name() ? weft_sched_name() : "?";  // copied: finalize ends it

    if (std::string const w = build_warning(); !w.empty()) ctx.warn("%s", w.c_str());
    double load = 0;
    if (getloadavg(&load, 1) == 1 && load > double(cpus.size()) + 0.5)
        ctx.warn(
            "the 1-minute load average is %.1f on %zu CPUs: other work competes for the CPU, expect a "
            "large spread",
            load, cpus.size());

    std::unique_ptr<pinned_host> host;
    if (std::any_of(selected.begin(), selected.end(), [](auto* op) { return op->hosted; }))
        host = std::make_unique<pinned_host>(cpu);
    auto run_once = [&](micro_op const& op, std::uint64_t n) {
        return op.hosted ? host->run(op, n, cpu) : op.run(n, cpu);
    };

    ctx.say(
        "micro: 1 weft worker (sched %s) and every peer thread on CPU %d; %d rounds of %llu ops "
        "(kernel-thread ops: %llu)\n",
        sched_name.c_str(), cpu, rounds, static_cast<unsigned long long>(iters),
        static_cast<unsigned long long>(kernel_iters));

    // Warm-up: stacks cached, code and data in cache, lazy initialisation done.
    std::set<std::string> warnings;
    if (warm > 0)
        for (auto const* op : selected) run_once(*op, op->kernel ? warm_kernel : warm);

    // Rounds: every operation once per round, in a fixed interleaved order, so
    // that slow drift of the machine affects all alike.
    // For weft's operations the runtime's own counters say how many context
    // switches each operation took (a cross-check of the protocol: a yield
    // should be one, a create+join two).
    std::map<std::string, std::vector<double>> samples;
    std::map<std::string, std::vector<double>> switches;
    std::map<std::string, std::uint64_t> op_count;
    std::map<std::string, std::vector<double>> extras;  // ID_NAME -> per round
    // Paired ratios: an operation with paired_with runs back to back with its
    // partner in every round, the partner first in even rounds and second in
    // odd ones, and each round gives one ratio of the two (ID -> per round).
    // Seconds apart on a loaded machine, two medians can come from different
    // machine states; two runs back to back share one, and alternating the
    // order cancels what the first run leaves the second (caches, a CPU's
    // frequency).
    std::map<std::string, std::vector<double>> paired;
    auto partner_of = [&](micro_op const& op) -> micro_op const* {
        for (auto const* other : selected)
            if (other->id == op.paired_with) return other;
        return nullptr;
    };
    // ns per operation of one run, recorded; 0 if the run did nothing.
    auto measure = [&](micro_op const& op) {
        bool const count = op.family == "weft";
        weft_stats_t before{};
        bool const have_before = count && weft_stats_get(&before) == 0;
        op_result const res = run_once(op, op.kernel ? kernel_iters : iters);
        weft_stats_t after{};
        if (res.ops == 0) return 0.0;
        double const ns = res.elapsed_ns / double(res.ops);
        samples[op.id].push_back(ns);
        if (have_before && weft_stats_get(&after) == 0 && after.context_switches >= before.context_switches)
            switches[op.id].push_back(double(after.context_switches - before.context_switches) / double(res.ops));
        op_count[op.id] = res.ops;
        for (auto const& [name, value] : res.extra) extras[op.id + "_" + name].push_back(value);
        if (!res.warning.empty()) warnings.insert(res.warning);
        return ns;
    };
    for (int r = 0; r < rounds; ++r) {
        std::set<micro_op const*> done;  // partners already run this round
        for (auto const* op : selected) {
            if (done.contains(op)) continue;
            micro_op const* partner = partner_of(*op);
            if (partner == nullptr) {
                measure(*op);
                continue;
            }
            done.insert(partner);
            double own = 0;
            double other = 0;
            if (r % 2 == 0) {
                other = measure(*partner);
                own = measure(*op);
            } else {
                own = measure(*op);
                other = measure(*partner);
            }
            if (own > 0 && other > 0) paired[op->id].push_back(own / other);
        }
    }
    host.reset();

    if (int const rc = weft_finalize(); rc != 0) die("weft_finalize failed: %s (error %d)", std::strerror(rc), rc);

    // Figures.
    std::map<std::string, summary> fig;
    for (auto const& [id, s] : samples) fig[id] = summarize(s);

    json_object rec = ctx.record();
    add_provenance(rec);
    rec.add("workers", 1);
    rec.add("sched", sched_name);
    rec.add("cpu", cpu);
    rec.add("rounds", rounds);
    rec.add("iters", static_cast<unsigned long long>(iters));
    rec.add("kernel_iters", static_cast<unsigned long long>(kernel_iters));
    rec.add("warmup_iters", static_cast<unsigned long long>(warm));
    rec.add("warmup_kernel_iters", static_cast<unsigned long long>(warm_kernel));
    rec.add("spread_definition", "(p90-p10)/median");
    // Families in the order of `families`, then any other peer that registered.
    std::vector<std::string> fams;
    for (char const* f : families)
        if (std::any_of(selected.begin(), selected.end(), [&](auto* op) { return op->family == f; }))
            fams.emplace_back(f);
    for (auto const* op : selected)
        if (std::find(fams.begin(), fams.end(), op->family) == fams.end()) fams.push_back(op->family);
    rec.add("families", fams);
    for (auto const* op : selected) {
        if (!fig.contains(op->id)) continue;
        rec.add_summary(op->id + "_ns", fig[op->id]);
        rec.add(op->id + "_ops", static_cast<unsigned long long>(op_count[op->id]));
        if (auto it = switches.find(op->id); it != switches.end() && !it->second.empty())
            rec.add(op->id + "_switches_per_op", summarize(it->second).median);
    }
    for (auto const& [key, values] : extras) rec.add(key, summarize(values).median);

    // Ratios in this run: the peer's median over weft's, or for a paired
    // operation the median of its per-round ratios.
    std::vector<std::string> kinds;
    for (auto const* op : selected)
        if (std::find(kinds.begin(), kinds.end(), op->kind) == kinds.end()) kinds.push_back(op->kind);
    // The operation of `family` that measures `kind` (its id need not be
    // FAMILY_KIND: syscall_ready_read beside plain_ready_read).
    auto id_of = [&](std::string const& family, std::string const& kind) {
        for (auto const* op : selected)
            if (op->family == family && op->kind == kind) return op->id;
        return family == "weft" ? kind : family + "_" + kind;
    };
    std::map<std::string, double> speedups;
    for (auto const& kind : kinds) {
        auto w = fig.find(id_of("weft", kind));
        if (w == fig.end() || w->second.median <= 0) continue;
        for (auto const& f : fams) {
            if (f == "weft") continue;
            auto p = fig.find(id_of(f, kind));
            if (p == fig.end() || paired.contains(p->first)) continue;  // below: paired ratios
            std::string const key = kind + "_speedup_vs_" + f;
            speedups[key] = p->second.median / w->second.median;
            rec.add(key, speedups[key]);
        }
    }
    // A paired operation's ratio is the median of its per-round ratios, with
    // their spread, min and max (KIND_speedup_vs_FAMILY_spread, ...), in place
    // of the ratio of the two medians.
    for (auto const* op : selected) {
        auto it = paired.find(op->id);
        if (it == paired.end() || it->second.empty() || op->family == "weft") continue;
        std::string const key = op->kind + "_speedup_vs_" + op->family;
        summary const ratio = summarize(it->second);
        speedups[key] = ratio.median;
        rec.add_summary(key, ratio);
        rec.add(key + "_rounds", static_cast<unsigned long long>(ratio.n));
    }
    // The shim's target (docs/shim.md): a pthread_create + pthread_join pair of a
    // plain program under libweft-pthread costs at most 1.5x weft's own pair.
    if (auto s = speedups.find("create_join_speedup_vs_shim"); s != speedups.end()) {
        rec.add("shim_create_join_bound", 1.5);
        rec.add("shim_create_join_met", s->second <= 1.5);
    }
    if (!warnings.empty()) rec.add("warnings", std::vector<std::string>(warnings.begin(), warnings.end()));
    ctx.emit(rec);

    // The table: one row per kind, one column per family.
    std::vector<std::string> header = {"operation", "unit"};
    for (auto const& f : fams) header.push_back(f + " ns");
    bool const have_weft = std::find(fams.begin(), fams.end(), "weft") != fams.end();
    for (auto const& f : fams)
        if (have_weft && f != "weft") header.push_back("weft vs " + f);
    table t(header, "ll");
    for (auto const& kind : kinds) {
        std::vector<std::string> row = {kind};
        auto unit_it = std::find_if(selected.begin(), selected.end(), [&](auto* op) { return op->kind == kind; });
        row.push_back((*unit_it)->unit);
        for (auto const& f : fams) {
            auto it = fig.find(id_of(f, kind));
            row.push_back(it == fig.end() ? "-" : fmt_sig(it->second.median) + " ±" + fmt_pct(it->second.spread));
        }
        for (auto const& f : fams) {
            if (!have_weft || f == "weft") continue;
            auto it = speedups.find(kind + "_speedup_vs_" + f);
            row.push_back(it == speedups.end() ? "-" : fmt_ratio(it->second));
        }
        t.add_row(row);
    }
    ctx.print(t,
              "ns per operation: median over rounds, ± spread = (p90-p10)/median; "
              "'weft vs X' = X's median / weft's (>1: weft faster); weft vs shim: the median of the "
              "ratios of the two run back to back in each round");
    for (auto const& w : warnings) ctx.warn("%s", w.c_str());
    return 0;
}

std::string const details =
    "Figures (ns per operation; median over rounds, spread = (p90-p10)/median):\n"
    "  create_join_ns       weft_thread_create + weft_thread_join of a thread that returns at once,\n"
    "                       from the main weft thread; 1 worker; stacks warm (a warm-up run first)\n"
    "  yield_ns             two weft threads yield to each other on 1 worker: ns per yield (= switch)\n"
    "  mutex_handoff_ns     ns per hand-off of a contended mutex: two threads relay three mutexes so\n"
    "                       that every lock() waits for the other thread's unlock() (docs/bench.md)\n"
    "  cond_pingpong_ns     ns per one-way hand-off of a turn through a mutex + condition variable\n"
    "  mutex_contended_ns   12 weft threads on one mutex, each yielding inside every 16th critical\n"
    "                       section: ns per lock+unlock pair (bench/micro_contended.cpp)\n"
    "  mutex_contended_mixed_ns  the same with 4 of the 12 being kernel threads outside weft\n"
    "  pthread_*_ns         the same on kernel threads, all pinned to the same CPU\n"
    "                       (pthread_yield_ns: sched_yield ping-pong)\n"
    "  boost_fiber_*_ns     the same on Boost.Fiber fibers of one kernel thread (when built in)\n"
    "  shim_create_join_ns  pthread_create + pthread_join in a plain Pthreads program (a child process,\n"
    "                       bench/plain_pthreads/create_join.c) under libweft-pthread, 1 worker, same CPU;\n"
    "                       target: create_join_speedup_vs_shim <= 1.5 (shim_create_join_bound;\n"
    "                       shim_create_join_met): the median over rounds of the ratio to create_join_ns,\n"
    "                       the two run back to back in each round, alternating which goes first; with\n"
    "                       _spread, _min, _max and _rounds\n"
    "  million_threads_ns   10 batches of --iters weft threads all live at once (blocked on one semaphore),\n"
    "                       then woken and joined: per thread; with _cpu_ns_per_thread (process CPU time),\n"
    "                       _faults_per_thread (minor page faults) and _rss_per_live_bytes (bench/micro_million.cpp)\n"
    "  fil_create_ns        weft_fil_create into a pool with room for every filament: per filament\n"
    "  fil_sweep_general_ns sweeps of a pool of 1,000 filaments (k, k), run descriptor by descriptor\n"
    "  fil_sweep_dense_ns   sweeps of the dense pool (k, 0), run as a loop: per filament\n"
    "  fil_fork_join_ns     weft_fil_fork + weft_fil_join of a child that returns at once, no pruning\n"
    "  join_forked_ns       fib by weft::join with pruning off: per join\n"
    "  join_pruned_ns       the same with pruning on (one worker: every join a plain call)\n"
    "  syscall_ready_read_ns  weft_read of 1 byte from a pipe holding data, on the main weft thread\n"
    "  plain_ready_read_ns  read(2) of 1 byte from such a pipe on a kernel thread outside weft\n"
    "                       (bench/micro_syscall.cpp)\n"
    "  KIND_speedup_vs_X    X's median / weft's median, from the same run (>1: weft is faster);\n"
    "                       for shim_create_join, the median of paired per-round ratios (above)\n"
    "Each figure ID_ns also has ID_ns_spread, ID_ns_min, ID_ns_max and ID_ops (operations per round);\n"
    "weft's also ID_switches_per_op (context switches per operation, from weft_stats_get).\n"
    "Output: one JSON line for the whole run.";

registrar const reg{experiment{
    .name = "micro",
    .description = "create+join, yield, mutex hand-off, condition ping-pong: weft vs Pthreads vs Boost.Fiber; "
                   "filament create, sweep, fork+join",
    .details = details,
    .options =
        {
            opt_rounds(11),
            opt_iters(100000, "operations per round for user-level threads (weft, fibers)"),
            {.name = "kernel-iters",
             .kind = opt_kind::integer,
             .metavar = "N",
             .default_value = "10000",
             .help = "operations per round for kernel threads (Pthreads), which are much slower",
             .min = 1,
             .max = 1e12},
            {.name = "warmup",
             .kind = opt_kind::integer,
             .metavar = "N",
             .default_value = "",
             .help = "operations in the warm-up run of each op (default: a tenth of --iters / --kernel-iters; 0: none)",
             .min = 0,
             .max = 1e12},
            {.name = "only",
             .kind = opt_kind::list,
             .metavar = "OPS",
             .default_value = "",
             .help = "comma-separated operations to run (see --list-ops), e.g. create_join,pthread_create_join"},
            {.name = "cpu",
             .kind = opt_kind::integer,
             .metavar = "N",
             .default_value = "",
             .help = "the CPU every thread of the measurement runs on (default: the last one allowed)",
             .min = 0,
             .max = CPU_SETSIZE - 1},
            opt_sched(),
            {.name = "list-ops", .kind = opt_kind::flag, .help = "list the operations and exit"},
        },
    .run = run_micro,
    .in_demo = true,
    .demo_args = {"--rounds", "9", "--iters", "30000", "--kernel-iters", "3000"},
    .demo_order = 0,
}};

}  // namespace
}  // namespace weft::bench::micro

// weft::detail — starting and stopping the runtime.
#include "core/runtime.hpp"

#include <pthread.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include "adapt/controller.hpp"
#include "arch/context.hpp"
#include "arch/fiber_sanitizer.hpp"
#include "base/asymmetric_fence.hpp"
#include "base/fork_gate.hpp"
#include "core/clock.hpp"
#include "core/dispatch.hpp"
#include "core/keys.hpp"
#include "core/outside.hpp"
#include "core/profile.hpp"
#include "core/stats.hpp"
#include "core/thread.hpp"
#include "core/timer.hpp"
#include "core/tunables.hpp"
#include "core/wait.hpp"
#include "core/worker.hpp"

namespace weft::detail {

runtime* g_rt = nullptr;
atomic<int (*)()> g_finalize_refusal{nullptr};

namespace {

std::mutex init_mutex;  // serializes init/finalize/auto-init
bool atexit_registered = false;

// Entry of a worker's idle ult when it has a stack of its own (worker 0).
void idle_entry(void* arg) {
    worker* w = static_cast<worker*>(arg);
    arch::san_after_switch(&w->idle->san);
    run_post_switch(w);
    worker_idle_loop(w);
    // The runtime stops: go back to main for good (finalize runs on worker 0).
    ult* self = w->idle;
    w->current = g_rt->main;
    arch::san_before_switch(&self->san, &g_rt->main->san, true);
    arch::switch_context(&self->ctx, &g_rt->main->ctx, w);
    __builtin_trap();
}

void* worker_main(void* arg) {
    worker* w = static_cast<worker*>(arg);
    set_current_worker(w);
    note_worker_thread(w->index);  // the deadlock detector and the schedstat probe (src/adapt) know it
    arch::enable_alt_signal_stack();
    arch::san_fiber_init_current(&w->idle->san);
    w->current = w->idle;
    w->started_ns.store(monotonic_ns(), memory_order_relaxed);
    if (g_measure) w->strand_start = profile_now();
    worker_idle_loop(w);
    arch::disable_alt_signal_stack();
    set_current_worker(nullptr);
    forget_worker_thread(w->index);
    return nullptr;
}

ult* new_heap_ult(ult_kind kind) {
    ult* u = new ult;
    u->kind = kind;
    u->own_stack = true;
    u->suspended.store(0, memory_order_relaxed);  // a flow that is running now
    return u;
}

// Async-signal-safe lookup for the overflow handler: the ult running on this
// kernel thread and its stack (arch decides whether the fault overflowed it).
bool overflow_lookup(arch::overflow_info* out) {
    worker* w = current_worker();
    if (w == nullptr || w->current == nullptr) return false;
    ult* u = w->current;
    if (u->stack.lo == nullptr) return false;
    out->thread_id = u->id;
    out->thread_name = u->name;
    out->stack_size = u->stack.size;
    out->stack_lo = u->stack.lo;
    return true;
}

}  // namespace

void write_exit_reports() {
    runtime* rt = g_rt;
    if (rt == nullptr) return;
    if (g_measure && current_worker() != nullptr) profile_checkpoint(current_worker());
    if (rt->cfg.stats) print_stats(stderr);
    trace_write_and_close(rt);
}

namespace {

// adopt: the flow that becomes the main ult (fork_child: the weft thread that
// forked), or null for a fresh one (the calling kernel thread's own flow).
int start_runtime(const weft_config_t* cfg, ult* adopt = nullptr) {
    settings s;
    if (int rc = read_settings(cfg, &s); rc != 0) return rc;

    if (!s.trace_path.empty()) {
        if (int rc = trace_open(s.trace_path.c_str()); rc != 0) {
            std::fprintf(stderr,
                         "weft: WEFT_TRACE='%s' is invalid: expected a file this process can create or "
                         "truncate (opening it failed: %s)\n",
                         s.trace_path.c_str(), std::strerror(rc));
            return EINVAL;
        }
    }

    auto* rt = new runtime;
    rt->cfg = s;
    rt->deadlock_detection = s.deadlock_abort;
    init_asymmetric_fence();
    g_measure = s.measure;
    g_tracing = !s.trace_path.empty();
    if (g_measure) calibrate_ticks();
    rt->policy = registry<sched_policy_def>::find(s.sched);
    rt->policy_state = rt->policy->create(s.workers);
    rt->nworkers = s.workers;
    rt->active.store(s.workers, memory_order_relaxed);
    arch::stack_pool_options stack_options;
    stack_options.keep_top_max = tun::stack_keep_top_max;
    rt->stacks = std::make_unique<arch::stack_pool>(s.stack_size, stack_options);
    rt->timers = std::make_unique<timer_heap>();
    for (int i = 0; i < s.workers; ++i) {
        auto w = std::make_unique<worker>();
        w->index = i;
        w->stacks.pool = rt->stacks.get();
        w->idle = new_heap_ult(ult_kind::idle);
        if (g_tracing) w->trace = trace_buffer_create();
        std::snprintf(w->idle->name, sizeof w->idle->name, "idle-%d", i);
        rt->workers.push_back(std::move(w));
    }
    arch::install_overflow_handler(&overflow_lookup);

    // The caller becomes worker 0 and its flow the main ult.
    worker* w0 = rt->workers[0].get();
    ult* main = adopt;
    if (main == nullptr) {
        main = new_heap_ult(ult_kind::main);
        std::strcpy(main->name, "main");
    } else {
        main->kind = ult_kind::main;
        main->handle = WEFT_THREAD_NULL;  // made on first use, in this runtime's table
        main->pinned_worker = -1;
        main->q_next = main->q_prev = nullptr;
        main->join_word.store(join_running, memory_order_relaxed);
        main->suspended.store(0, memory_order_relaxed);
    }
    main->id = 1;
    arch::san_fiber_init_current(&main->san);
    rt->main = main;
    w0->live_delta.store(1, memory_order_relaxed);
    w0->max_live_seen.store(1, memory_order_relaxed);
    rt->id_blocks.store(1, memory_order_relaxed);  // ids from 1024 on (1 is main)
    // Worker 0's idle ult needs a stack: the kernel thread's own belongs to main.
    ult* idle0 = w0->idle;
    if (int rc = rt->stacks->acquire(tun::idle_stack_size, nullptr, &idle0->stack); rc != 0) {
        if (adopt == nullptr) delete main;
        for (auto& w : rt->workers) delete w->idle;
        rt->policy->destroy(rt->policy_state);
        delete rt;
        return rc;
    }
    arch::san_fiber_create(&idle0->san, idle0->stack.lo, idle0->stack.size);  // before: see create_ult
    arch::make_context(&idle0->ctx, idle0->stack.lo, idle0->stack.size, &idle_entry);
    idle0->suspended.store(1, memory_order_relaxed);  // a fresh context, not yet run

    g_rt = rt;
    set_current_worker(w0);
    note_worker_thread(0);
    w0->current = main;
    w0->started_ns.store(monotonic_ns(), memory_order_relaxed);
    if (g_measure) w0->strand_start = profile_now();
    arch::enable_alt_signal_stack();

    for (int i = 1; i < s.workers; ++i) {
        worker* w = rt->workers[i].get();
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        int rc = pthread_create(&w->kthread, &attr, &worker_main, w);
        pthread_attr_destroy(&attr);
        if (rc != 0) {
            std::fprintf(stderr, "weft: could not start worker %d: %s\n", i, std::strerror(rc));
            // Run with the workers we have: shrink the count seen by the policy's
            // callers (the policy state stays sized for the original count).
            rt->nworkers = i;
            rt->active.store(i, memory_order_relaxed);
            break;
        }
        w->has_kthread = true;
    }
    rt->adapt = adapt::start(rt, s).release();
    if (!atexit_registered) {
        atexit_registered = true;
        std::atexit(&write_exit_reports);
    }
    return 0;
}

}  // namespace

void fork_quiesce() {
    close_fork_gate();
    if (runtime* rt = g_rt; rt != nullptr)
        for (auto& w : rt->workers) wait_until_released(w->census);
    wait_until_outside_released();
}

void fork_prepare() {
    init_mutex.lock();
    keys_hold_for_fork(true);
}

void fork_parent() {
    keys_hold_for_fork(false);
    init_mutex.unlock();
    open_fork_gate();
}

int fork_child() {
    open_fork_gate();  // copied closed; the other kernel threads it held back do not exist here
    keys_hold_for_fork(false);
    init_mutex.unlock();
    runtime* old = g_rt;
    if (old == nullptr) return 0;
    worker* w = current_worker();
    ult* self = w != nullptr && w->current != w->idle ? w->current : nullptr;
    // Every other thread of the old runtime is gone: a waiter of a mutex or
    // condition variable copied into the child must not be woken (wait.cpp).
    for (std::uint64_t i = 0; i <= handle_index_mask; ++i) {  // chunks are made in order
        handle_slot* slot = old->handles.find(reinterpret_cast<weft_thread_t>(std::uintptr_t(i)));
        if (slot == nullptr) break;
        ult* u = slot->u.load(memory_order_relaxed);
        if ((slot->word.load(memory_order_relaxed) & slot_state_mask) != slot_free && u != nullptr && u != self)
            u->magic = ult_magic_abandoned;
    }
    if (old->main != self) old->main->magic = ult_magic_abandoned;
    g_rt = nullptr;
    set_current_worker(nullptr);
    weft_config_t cfg{};
    cfg.workers = 1;
    cfg.sched = old->cfg.sched.c_str();  // the old runtime is never freed
    cfg.stack_size = old->cfg.stack_size;
    cfg.stats = WEFT_CONFIG_OFF;
    cfg.adapt = "off";
    std::lock_guard<std::mutex> g(init_mutex);
    return start_runtime(&cfg, self);
}

worker* ensure_runtime() {
    if (g_rt != nullptr) return current_worker();
    std::lock_guard<std::mutex> g(init_mutex);
    if (g_rt == nullptr) {
        if (int rc = start_runtime(nullptr); rc != 0) {
            std::fprintf(stderr, "weft: the runtime could not start (error %d: %s); exiting\n", rc, std::strerror(rc));
            std::exit(2);
        }
    }
    return current_worker();
}

}  // namespace weft::detail

using namespace weft::detail;

extern "C" {

WEFT_API int weft_init(const weft_config_t* cfg) {
    std::lock_guard<std::mutex> g(init_mutex);
    if (g_rt != nullptr) return EBUSY;
    return start_runtime(cfg);
}

WEFT_API int weft_finalize(void) {
    runtime* rt = g_rt;
    if (rt == nullptr) return EINVAL;
    worker* w = current_worker();
    if (w == nullptr || w->current != rt->main) return EPERM;
    if (int (*refuse)() = g_finalize_refusal.load(memory_order_acquire); refuse != nullptr)
        if (int rc = refuse(); rc != 0) return rc;
    ult* main = rt->main;

    // 1. Stop the adaptive controller: no more barrier tests, the count stays.
    //    Move to worker 0, so that we end on the kernel thread we began on, and
    //    wait there for every other ult to end (finish() wakes us).
    delete rt->adapt;
    rt->adapt = nullptr;
    main->pinned_worker = 0;
    if (w->index != 0) w = migrate(w);
    wait_for_other_ults();
    w = current_worker();
    // A waker outside the workers (src/io's poller and helpers, a program's
    // kernel thread) may still be finishing the wake of a thread that has
    // since ended.
    wait_for_external_wakers();

    // 2. Stop the workers.
    {
        std::lock_guard<std::mutex> g(init_mutex);
        rt->stopping.store(true, memory_order_seq_cst);
        for (auto& wk : rt->workers) wake_worker(wk.get());
        for (auto& wk : rt->workers)
            if (wk->has_kthread) pthread_join(wk->kthread, nullptr);
        if (g_measure) profile_checkpoint(w);
        if (rt->cfg.stats) print_stats(stderr);
        trace_write_and_close(rt);
        weft::arch::disable_alt_signal_stack();
        set_current_worker(nullptr);
        for (auto& wk : rt->workers) {
            rt->stacks->drain(&wk->stacks);
            if (wk->idle->stack.lo != nullptr) {
                weft::arch::san_fiber_destroy(&wk->idle->san);
                rt->stacks->release(wk->idle->stack, nullptr);
            }
            delete wk->idle;
            trace_buffer_destroy(wk->trace);
        }
        rt->policy->destroy(rt->policy_state);
        g_rt = nullptr;
        free_key_values(main);  // main's thread-specific values table (destructors: only at thread exit)
        delete main;
        delete rt;
    }
    return 0;
}

WEFT_API int weft_is_initialized(void) { return g_rt != nullptr ? 1 : 0; }

WEFT_API int weft_num_workers(void) { return g_rt != nullptr ? g_rt->nworkers : 0; }

WEFT_API int weft_worker_id(void) {
    worker* w = current_worker();
    return w != nullptr ? w->index : -1;
}

WEFT_API const char* weft_sched_name(void) { return g_rt != nullptr ? g_rt->policy->name : nullptr; }

}  // extern "C"

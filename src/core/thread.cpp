// weft::detail — thread lifetime: create, start, exit, join, detach, release.
//
// The C API over it (argument checks, handles, errno values) is thread_api.cpp;
// the paths inlined into its hot calls are thread_inline.hpp.
#include "core/thread.hpp"

#include <cerrno>
#include <cstring>
#include <new>

#include "arch/context.hpp"
#include "arch/fiber_sanitizer.hpp"
#include "base/asymmetric_fence.hpp"
#include "core/dispatch.hpp"
#include "core/interrupt.hpp"
#include "core/thread_inline.hpp"

namespace weft::detail {

namespace {

constexpr std::uint64_t id_block = 1024;  // ids a worker takes from the shared counter at once

std::uint64_t next_id(runtime* rt, worker* w) {
    if (w == nullptr) return rt->id_blocks.fetch_add(1, memory_order_relaxed) * id_block;
    if (w->id_next == w->id_end) {
        std::uint64_t b = rt->id_blocks.fetch_add(1, memory_order_relaxed);
        w->id_next = b * id_block;
        w->id_end = w->id_next + id_block;
    }
    return w->id_next++;
}

// Owner-only counter update: a relaxed load and store, no locked instruction.
void bump(atomic<std::int64_t>& c, std::int64_t d) { c.store(c.load(memory_order_relaxed) + d, memory_order_relaxed); }

// Samples the live count at a creation on w, but only when w's own count
// reaches a new high: summing reads every worker's counter, a cache line its
// owner writes on every switch, so doing it on every creation cost a
// cross-core miss per spawn (measured: ws on 2 workers 3.3x more cycles). Exact
// with one worker (its count is the total); with several, a sample of the sum
// at each local high water, the sum itself a moment old.
void sample_max_live(runtime* rt, worker* w) {
    std::int64_t own = w->live_delta.load(memory_order_relaxed);
    if (own <= w->live_high.load(memory_order_relaxed)) return;
    w->live_high.store(own, memory_order_relaxed);
    std::int64_t live = live_ults(rt);
    if (live > 0 && static_cast<std::uint64_t>(live) > w->max_live_seen.load(memory_order_relaxed))
        w->max_live_seen.store(static_cast<std::uint64_t>(live), memory_order_relaxed);
}

// The finalize handshake, ending side. An ending ult has made its live_delta
// store; light_fence pairs with the heavy_fence of main after it raised
// finalize_waiting, so at least one of them sees the other. The sum is
// recomputed under finalize_lock: ending ults on different workers then see
// each other's decrements, so the last one to end sees 1.
void check_finalize(runtime* rt, worker* w) {
    light_fence();
    if (!rt->finalize_waiting.load(memory_order_relaxed)) return;
    spinlock_ref fl(rt->finalize_lock);
    fl.lock();
    wait_record* rec = rt->finalize_rec;
    if (rec != nullptr && live_ults(rt) <= 1) {
        rt->finalize_rec = nullptr;
        rec->linked = false;
    } else {
        rec = nullptr;
    }
    fl.unlock();
    if (rec != nullptr) wake_from(w, rec);
}

}  // namespace

void ult_entry(void* arg) noexcept {
    worker* w = static_cast<worker*>(arg);
    ult* self = w->current;
    arch::san_after_switch(&self->san);
    run_post_switch(w);
    end_thread(self, self->fn(self->arg));
}

std::int64_t live_ults(runtime* rt) {
    std::int64_t n = rt->external_live.load(memory_order_relaxed);
    for (auto& w : rt->workers) n += w->live_delta.load(memory_order_relaxed);
    return n;
}

// Blocks main until it is the only ult left (weft_finalize, main's weft_thread_exit).
void wait_for_other_ults() {
    runtime* rt = g_rt;
    rt->finalize_waiting.store(true, memory_order_relaxed);
    heavy_fence();
    spinlock_ref fl(rt->finalize_lock);
    fl.lock();
    if (live_ults(rt) <= 1) {
        fl.unlock();
    } else {
        wait_record rec;
        rec.linked = true;
        rec.unlink = [](wait_record*) {};
        rt->finalize_rec = &rec;
        wait(&rec, &rt->finalize_lock, 0, "the other threads to end (main is finishing)", nullptr);
    }
    rt->finalize_waiting.store(false, memory_order_relaxed);
}

int create_ult(worker* w, const weft_attr_t* attr, void* (*fn)(void*), void* arg, std::size_t extra, void** extra_out,
               ult** out) {
    runtime* rt = g_rt;
    std::size_t size = (attr != nullptr && attr->stack_size != 0) ? attr->stack_size : 0;
    arch::stack s;
    if (int rc = rt->stacks->acquire(size, w != nullptr ? &w->stacks : nullptr, &s); rc != 0) return EAGAIN;

    // The control block (and `extra` bytes below it) sit at the top of the stack.
    auto top = reinterpret_cast<std::uintptr_t>(s.hi());
    std::uintptr_t tcb_addr = (top - sizeof(ult)) & ~std::uintptr_t(63);
    std::uintptr_t extra_addr = (tcb_addr - extra) & ~std::uintptr_t(63);
    // The control block's bytes, like the rest of a recycled stack, may carry
    // ASan redzones of frames the stack's last user never returned from:
    // cleared before the constructor writes them (san_fiber_create below
    // clears the part the new thread runs on).
    arch::san_unpoison(reinterpret_cast<void*>(extra_addr), top - extra_addr);
    ult* u = new (reinterpret_cast<void*>(tcb_addr)) ult;
    bool detached = attr != nullptr && attr->detach_state == WEFT_CREATE_DETACHED;
    u->handle = rt->handles.acquire(w != nullptr ? &w->handles : nullptr, u, /*claimed=*/detached);
    if (u->handle == WEFT_THREAD_NULL) {
        u->~ult();
        rt->stacks->release(s, w != nullptr ? &w->stacks : nullptr);
        return EAGAIN;
    }
    u->stack = s;
    u->fn = fn;
    u->arg = arg;
    u->id = next_id(rt, w);
    u->node = (w != nullptr && w->current != nullptr) ? w->current->node : 0;
    if (w != nullptr && w->current != nullptr)
        u->sig_mask.store(w->current->sig_mask.load(memory_order_relaxed), memory_order_relaxed);
    u->name[0] = '\0';
    if (attr != nullptr) {
        if (detached) u->join_word.store(join_detached, memory_order_relaxed);
        if (attr->name != nullptr) {
            std::strncpy(u->name, attr->name, sizeof u->name - 1);
            u->name[sizeof u->name - 1] = '\0';
        }
    }
    if (extra_out != nullptr) *extra_out = reinterpret_cast<void*>(extra_addr);
    std::size_t usable = (extra_addr & ~std::uintptr_t(15)) - reinterpret_cast<std::uintptr_t>(s.lo);
    // Sanitizer bookkeeping first: it unpoisons a recycled stack, which may
    // still carry ASan redzones of frames its last thread never returned from
    // (make_context writes the first frame into that memory; in the other
    // order ASan reported a stack-buffer-underflow there, once, in CI).
    arch::san_fiber_create(&u->san, s.lo, usable);
    arch::make_context(&u->ctx, s.lo, usable, &ult_entry);

    if (g_measure) profile_fork(w, u);
    if (w != nullptr) {
        bump(w->live_delta, 1);
        w->created.store(w->created.load(memory_order_relaxed) + 1, memory_order_relaxed);
        sample_max_live(rt, w);
    } else {
        rt->external_live.fetch_add(1, memory_order_relaxed);
        rt->external_created.fetch_add(1, memory_order_relaxed);
    }
    *out = u;
    return 0;
}

void launch_ult(worker* w, ult* u) { launch_inline(w, u); }

void release_ult(worker* w, ult* u) { release_inline(w, u); }

// Post-switch: u has switched away for good (exit_current recorded how its
// join_word was left). Publish the end; recycle u if detached.
void finish(worker* w, ult* u) {
    if (g_measure) profile_exit(w, u);
    if (u->exit_state == join_detached) release_ult(w, u);
    // Else a joiner, present or future, reclaims it once it sees `finished`.
    else
        u->join_word.store(join_finished, memory_order_release);
}

void report_overflow_at_switch(ult* u) {
    // Any kind but canary prints the plain report.
    arch::guard_kind how =
        arch::stack_canary_intact(u->stack) ? arch::guard_kind::madvise_guard : arch::guard_kind::canary;
    arch::report_stack_overflow(arch::overflow_info{u->id, u->name, u->stack.size, u->stack.lo}, how);
}

// Called by exit_current before the last switch: the ult leaves the live
// count, learns whether a joiner waits, and tells finalize if it was the last.
wait_record* leave(worker* w, ult* self) {
    bump(w->live_delta, -1);
    std::uintptr_t s = self->join_word.load(memory_order_acquire);
    // A detached ult stays detached (finish() recycles it); otherwise announce
    // the exit and take the joiner, if one is blocked.
    while (s != join_detached &&
           !self->join_word.compare_exchange_weak(s, join_exiting, memory_order_acq_rel, memory_order_acquire)) {
    }
    self->exit_state = s;
    check_finalize(g_rt, w);
    return (s > join_detached) ? reinterpret_cast<wait_record*>(s) : nullptr;
}

namespace {

// interruptible_wait::withdraw for a joiner: takes its record back from the
// joined thread's join_word, unless that thread took it on its way out.
bool withdraw_joiner(wait_record* rec) {
    auto* t = static_cast<ult*>(rec->queue);
    auto mine = reinterpret_cast<std::uintptr_t>(rec);
    return t->join_word.compare_exchange_strong(mine, join_running, memory_order_seq_cst);
}

}  // namespace

void join_wait_interruptible(ult* t) {
    for (;;) {
        std::uintptr_t s = t->join_word.load(memory_order_acquire);
        if (s != join_running) return;  // exiting: join_claimed_inline waits for the rest
        wait_record rec;
        rec.queue = t;
        interruptible_wait intr;
        intr.enter(&rec, &withdraw_joiner);
        if (intr.interrupted_unlocked()) {
            (void)take_signals(false);
            continue;
        }
        if (!t->join_word.compare_exchange_strong(s, reinterpret_cast<std::uintptr_t>(&rec), memory_order_seq_cst))
            return;  // it is exiting
        // A signal that came before rec was published: take rec back, unless
        // the interrupter or the ending thread already has it (then it wakes us).
        if (intr.interrupted_unlocked() && withdraw_joiner(&rec)) {
            (void)take_signals(false);
            continue;
        }
        block_joining(current_worker(), t);  // a handler may have moved us to another worker
        if (rec.result != EINTR) return;
        (void)take_signals(false);
    }
}

int join_ult(ult* t, void** retval, void (*collect)(void*, void*), void* ctx) {
    ult* claimed = nullptr;
    if (int rc = g_rt->handles.claim(t->handle, &claimed); rc != 0) return rc;
    join_claimed_inline(current_worker(), t, retval, collect, ctx);
    return 0;
}

void detach_claimed(ult* t) {
    std::uintptr_t s = join_running;
    if (t->join_word.compare_exchange_strong(s, join_detached, memory_order_acq_rel, memory_order_acquire)) return;
    // It has ended (or is ending): nobody will join it, so reclaim it now.
    while (t->join_word.load(memory_order_acquire) != join_finished) cpu_relax();
    release_ult(current_worker(), t);
}

}  // namespace weft::detail

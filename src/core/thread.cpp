// weft::detail — ult lifetime, and the C API for threads.
#include <sched.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "arch/context.hpp"
#include "arch/fiber_sanitizer.hpp"
#include "core/dispatch.hpp"
#include "core/keys.hpp"
#include "core/profile.hpp"
#include "core/runtime.hpp"
#include "core/spawn.hpp"
#include "core/wait.hpp"
#include "sync/asymmetric_fence.hpp"

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

[[noreturn, gnu::always_inline]] inline void end_thread(ult* self, void* retval);

void ult_entry(void* arg) noexcept {
    worker* w = static_cast<worker*>(arg);
    ult* self = w->current;
    arch::san_after_switch(&self->san);
    run_post_switch(w);
    end_thread(self, self->fn(self->arg));
}

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

inline void end_thread(ult* self, void* retval) {
    if (self->key_values != nullptr) run_key_destructors(self);
    self->retval = retval;
    if (self->kind == ult_kind::main) {
        // Pthreads semantics: the process ends when the last thread ends.
        wait_for_other_ults();
        std::exit(0);
    }
    exit_inline(current_worker());
}

}  // namespace

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

int create_ult(worker* w, const weft_attr_t* attr, void* (*fn)(void*), void* arg, std::size_t extra,
               void** extra_out, ult** out) {
    runtime* rt = g_rt;
    std::size_t size = (attr != nullptr && attr->stack_size != 0) ? attr->stack_size : 0;
    arch::stack s;
    if (int rc = rt->stacks->acquire(size, w != nullptr ? &w->stacks : nullptr, &s); rc != 0) return EAGAIN;

    // The control block (and `extra` bytes below it) sit at the top of the stack.
    auto top = reinterpret_cast<std::uintptr_t>(s.hi());
    std::uintptr_t tcb_addr = (top - sizeof(ult)) & ~std::uintptr_t(63);
    std::uintptr_t extra_addr = (tcb_addr - extra) & ~std::uintptr_t(63);
    ult* u = new (reinterpret_cast<void*>(tcb_addr)) ult;
    u->stack = s;
    u->fn = fn;
    u->arg = arg;
    u->id = next_id(rt, w);
    u->name[0] = '\0';
    if (attr != nullptr) {
        if (attr->detach_state == WEFT_CREATE_DETACHED) u->join_word.store(join_detached, memory_order_relaxed);
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

// Inlined into weft_thread_create (see start_inline).
[[gnu::always_inline]] inline void launch_inline(worker* w, ult* u) {
    u->started = true;
    // A pinned ult goes to its worker's inbox, outside the policy.
    if (w == nullptr || u->pinned_worker >= 0) make_ready(w, u, ready_reason::spawned);
    else start_inline(w, u);
}

void launch_ult(worker* w, ult* u) { launch_inline(w, u); }

void release_ult(worker* w, ult* u) {
    runtime* rt = g_rt;
    if (u->storage_release != nullptr) u->storage_release(u->storage);
    if (u->key_values != nullptr) free_key_values(u);
    arch::san_fiber_destroy(&u->san);
    arch::stack s = u->stack;
    u->magic = 0;
    u->~ult();
    rt->stacks->release(s, w != nullptr ? &w->stacks : nullptr);
}

// Post-switch: u has switched away for good (exit_current recorded how its
// join_word was left). Publish the end; recycle u if detached.
void finish(worker* w, ult* u) {
    if (g_measure) profile_exit(w, u);
    if (u->exit_state == join_detached) release_ult(w, u);
    // Else a joiner, present or future, reclaims it once it sees `finished`.
    else u->join_word.store(join_finished, memory_order_release);
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

// Inlined into weft_thread_join (see dispatch.hpp: fewer frames across the switch).
[[gnu::always_inline]] inline int join_inline(ult* t, void** retval, void (*collect)(void*, void*), void* ctx) {
    worker* w = current_worker();
    if (w != nullptr && w->current == t) return EDEADLK;
    std::uintptr_t s = t->join_word.load(memory_order_acquire);
    if (s == join_running) {
        wait_record rec;
        // On a runtime of one worker the child can only exit on this worker,
        // that is, not while we run: a plain store publishes us (the locked
        // CAS would drain every store of the create before it: ~5 ns of the
        // ~60 of a create+join). Joining or detaching t from another kernel
        // thread at the same time is an error the caller made (as in Pthreads).
        bool published;
        if (w != nullptr && g_rt->nworkers == 1) {
            t->join_word.store(reinterpret_cast<std::uintptr_t>(&rec), memory_order_relaxed);
            published = true;
        } else {
            published = t->join_word.compare_exchange_strong(s, reinterpret_cast<std::uintptr_t>(&rec),
                                                             memory_order_acq_rel, memory_order_acquire);
        }
        if (published) {
            // The ending ult wakes us (or switches straight to us). The wake
            // may come before we are suspended: see ult::suspended.
            if (w != nullptr) {
                ult* self = w->current;
                self->wait_kind = "weft_thread_join";
                self->wait_object = t;
                block_inline(w, nullptr);
                self->wait_kind = nullptr;
                self->wait_object = nullptr;
            } else {
                wait(&rec, nullptr, 0, "weft_thread_join", t);
            }
            s = t->join_word.load(memory_order_acquire);
        }
    }
    if (s == join_detached || s > join_detached) return EINVAL;  // detached, or joined by another
    // exiting: its last switch is in progress; finished follows within instructions.
    while ((s = t->join_word.load(memory_order_acquire)) != join_finished) cpu_relax();
    if (retval != nullptr) *retval = t->retval;
    if (collect != nullptr) collect(t->storage, ctx);
    w = current_worker();
    if (g_measure && w != nullptr) profile_join(w, w->current, t);
    release_ult(w, t);
    return 0;
}

int join_ult(ult* t, void** retval, void (*collect)(void*, void*), void* ctx) {
    return join_inline(t, retval, collect, ctx);
}

int detach_ult(ult* t) {
    std::uintptr_t s = join_running;
    if (t->join_word.compare_exchange_strong(s, join_detached, memory_order_acq_rel, memory_order_acquire)) return 0;
    if (s == join_detached || s > join_detached) return EINVAL;
    // It has ended (or is ending): nobody will join it, so reclaim it now.
    while (t->join_word.load(memory_order_acquire) != join_finished) cpu_relax();
    release_ult(current_worker(), t);
    return 0;
}

}  // namespace weft::detail

using namespace weft::detail;

extern "C" {

WEFT_API int weft_attr_init(weft_attr_t* attr) {
    if (attr == nullptr) return EINVAL;
    *attr = weft_attr_t{0, WEFT_CREATE_JOINABLE, 0, nullptr};
    return 0;
}
WEFT_API int weft_attr_destroy(weft_attr_t* attr) { return attr == nullptr ? EINVAL : 0; }
WEFT_API int weft_attr_setstacksize(weft_attr_t* attr, size_t size) {
    if (attr == nullptr || size < WEFT_STACK_MIN || size > (std::size_t(1) << 30)) return EINVAL;
    attr->stack_size = size;
    return 0;
}
WEFT_API int weft_attr_getstacksize(const weft_attr_t* attr, size_t* size) {
    if (attr == nullptr || size == nullptr) return EINVAL;
    *size = attr->stack_size != 0 ? attr->stack_size : (g_rt != nullptr ? g_rt->cfg.stack_size : 0);
    return 0;
}
WEFT_API int weft_attr_setdetachstate(weft_attr_t* attr, int state) {
    if (attr == nullptr || (state != WEFT_CREATE_JOINABLE && state != WEFT_CREATE_DETACHED)) return EINVAL;
    attr->detach_state = state;
    return 0;
}
WEFT_API int weft_attr_getdetachstate(const weft_attr_t* attr, int* state) {
    if (attr == nullptr || state == nullptr) return EINVAL;
    *state = attr->detach_state;
    return 0;
}
WEFT_API int weft_attr_setname(weft_attr_t* attr, const char* name) {
    if (attr == nullptr) return EINVAL;
    attr->name = name;
    return 0;
}

WEFT_API int weft_thread_create(weft_thread_t* thread, const weft_attr_t* attr, void* (*fn)(void*), void* arg) {
    if (thread == nullptr || fn == nullptr) return EINVAL;
    if (attr != nullptr && ((attr->stack_size != 0 && attr->stack_size < WEFT_STACK_MIN) ||
                            (attr->detach_state != WEFT_CREATE_JOINABLE && attr->detach_state != WEFT_CREATE_DETACHED)))
        return EINVAL;
    worker* w = ensure_runtime();
    ult* u = nullptr;
    if (int rc = create_ult(w, attr, fn, arg, 0, nullptr, &u); rc != 0) return rc;
    *thread = to_handle(u);
    launch_inline(w, u);
    return 0;
}

WEFT_API int weft_thread_join(weft_thread_t thread, void** retval) {
    if (thread == WEFT_THREAD_NULL) return ESRCH;
    if (g_rt == nullptr) return ESRCH;
    return join_inline(from_handle(thread), retval, nullptr, nullptr);
}

WEFT_API int weft_thread_create_inplace(weft_thread_t* thread, const weft_attr_t* attr, void* (*fn)(void*),
                                        size_t storage_size, void** storage, void (*release)(void*)) {
    if (thread == nullptr || fn == nullptr || storage == nullptr) return EINVAL;
    if (attr != nullptr && ((attr->stack_size != 0 && attr->stack_size < WEFT_STACK_MIN) ||
                            (attr->detach_state != WEFT_CREATE_JOINABLE && attr->detach_state != WEFT_CREATE_DETACHED)))
        return EINVAL;
    worker* w = ensure_runtime();
    std::size_t stack = (attr != nullptr && attr->stack_size != 0) ? attr->stack_size : g_rt->cfg.stack_size;
    if (storage_size > stack / 4) return EINVAL;
    ult* u = nullptr;
    void* extra = nullptr;
    if (int rc = create_ult(w, attr, fn, nullptr, storage_size, &extra, &u); rc != 0) return rc;
    u->arg = extra;
    u->storage = extra;
    u->storage_release = release;
    *storage = extra;
    *thread = to_handle(u);
    return 0;
}

WEFT_API int weft_thread_start(weft_thread_t thread) {
    if (thread == WEFT_THREAD_NULL) return ESRCH;
    ult* u = from_handle(thread);
    if (u->started || u->kind != ult_kind::regular) return EINVAL;
    launch_ult(current_worker(), u);
    return 0;
}

WEFT_API int weft_thread_join_inplace(weft_thread_t thread, void (*collect)(void*, void*), void* ctx) {
    if (thread == WEFT_THREAD_NULL || g_rt == nullptr) return ESRCH;
    return join_ult(from_handle(thread), nullptr, collect, ctx);
}

WEFT_API int weft_thread_detach(weft_thread_t thread) {
    if (thread == WEFT_THREAD_NULL || g_rt == nullptr) return ESRCH;
    ult* t = from_handle(thread);
    if (t->kind != ult_kind::regular) return EINVAL;
    return detach_ult(t);
}

WEFT_API void weft_thread_exit(void* retval) {
    worker* w = ensure_runtime();
    if (w == nullptr) {
        std::fprintf(stderr, "weft: weft_thread_exit called from a kernel thread that is not a weft thread\n");
        std::abort();
    }
    end_thread(w->current, retval);
}

WEFT_API int weft_thread_yield(void) {
    worker* w = current_worker();
    if (w == nullptr) {
        if (g_rt == nullptr) w = ensure_runtime();
        if (w == nullptr) {
            sched_yield();
            return 0;
        }
    }
    yield(w);
    return 0;
}

WEFT_API weft_thread_t weft_thread_self(void) {
    worker* w = ensure_runtime();
    return w != nullptr ? to_handle(w->current) : WEFT_THREAD_NULL;
}

WEFT_API int weft_thread_equal(weft_thread_t a, weft_thread_t b) { return a == b ? 1 : 0; }

WEFT_API uint64_t weft_thread_id(weft_thread_t thread) {
    return thread == WEFT_THREAD_NULL ? 0 : from_handle(thread)->id;
}

WEFT_API int weft_thread_setname(weft_thread_t thread, const char* name) {
    if (thread == WEFT_THREAD_NULL) return ESRCH;
    if (name == nullptr) return EINVAL;
    ult* t = from_handle(thread);
    std::strncpy(t->name, name, sizeof t->name - 1);
    t->name[sizeof t->name - 1] = '\0';
    return 0;
}

WEFT_API int weft_thread_getname(weft_thread_t thread, char* buf, size_t len) {
    if (thread == WEFT_THREAD_NULL) return ESRCH;
    if (buf == nullptr || len == 0) return ERANGE;
    const ult* t = from_handle(thread);
    std::size_t n = std::strlen(t->name);
    if (n >= len) n = len - 1;
    std::memcpy(buf, t->name, n);
    buf[n] = '\0';
    return 0;
}

}  // extern "C"

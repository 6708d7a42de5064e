// weft::arch — telling AddressSanitizer and ThreadSanitizer about context switches.
//
// Both sanitizers keep per-flow state keyed on "the current stack": ASan its
// stack bounds (to tell stack from heap addresses, to unpoison on noreturn) and
// its fake stack (use-after-return detection); TSan a whole thread state
// (shadow call stack, vector clock). A switch_context they are not told about
// looks to them like the stack pointer jumping into the heap. Each weft thread
// and each native flow that switches (main, workers' own flows) therefore owns
// a san_fiber, and the core brackets every switch_context with the hooks below.
// Without a sanitizer, san_fiber is empty and every hook compiles to nothing.
//
// Exact protocol (the core's switch_to is the only switch site):
//
//   creation of a weft thread, after make_context, before its first switch:
//       san_fiber_create(&t->san, stack_lo, stack_size);
//   a native flow, once, on the kernel thread it runs on, before it first
//   switches away (main at weft_init, each worker's own flow at start):
//       san_fiber_init_current(&native->san);
//   every switch, in the flow that switches away (`from`):
//       san_before_switch(&from->san, &to->san, from_finishing);
//       switch_context(&from->ctx, &to->ctx, arg);
//       san_after_switch(&from->san);      // runs when `from` is resumed
//     from_finishing = true iff `from` will never be resumed (it has exited).
//     Nothing may run between san_before_switch and switch_context that
//     touches the stack in a way the sanitizer would check (plain register
//     code is fine; no calls into instrumented code).
//   the first code a fresh context runs, before anything else (the entry
//   function given to make_context):
//       san_after_switch(&self->san);
//   destruction, after the thread has switched away for good, from another
//   flow, before its stack is reused or unmapped:
//       san_fiber_destroy(&t->san);
//
// Why these points: ASan's __sanitizer_start_switch_fiber must come
// immediately before the switch and names the stack being entered; its
// __sanitizer_finish_switch_fiber must be the first thing on the new stack.
// Passing a null fake-stack slot when the old flow finishes lets ASan free that
// flow's fake stack. TSan's __tsan_switch_to_fiber must come immediately
// before the switch; flags 0 makes it a synchronisation (happens-before from
// the old flow to the new), which is what the core's post-switch hand-offs
// (e.g. releasing the lock of a primitive the old flow blocks on) rely on.
//
// Migration: a weft thread may resume on another kernel thread; both
// sanitizers support that for fibers (the state is per fiber, not per thread).
#pragma once

#include <cstddef>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WEFT_SAN_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define WEFT_SAN_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(WEFT_SAN_ASAN)
#define WEFT_SAN_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(WEFT_SAN_TSAN)
#define WEFT_SAN_TSAN 1
#endif

#if defined(WEFT_SAN_ASAN)
extern "C" {
void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom, std::size_t size);
void __sanitizer_finish_switch_fiber(void* fake_stack_save, const void** bottom_old, std::size_t* size_old);
void __asan_unpoison_memory_region(void const volatile* addr, std::size_t size);
}
#endif
#if defined(WEFT_SAN_TSAN)
extern "C" {
void* __tsan_get_current_fiber(void);
void* __tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void* fiber);
void __tsan_switch_to_fiber(void* fiber, unsigned flags);
}
#endif

namespace weft::arch {

// Per-flow sanitizer state. Empty (and every function below a no-op) when no
// sanitizer is enabled.
struct san_fiber {
#if defined(WEFT_SAN_ASAN)
    const void* stack_bottom = nullptr;  // lowest address of the flow's stack
    std::size_t stack_size = 0;          // 0 = not known yet (a native flow)
    void* fake_stack = nullptr;          // ASan's fake stack while suspended
    // Set by the flow that switches to this one: where to record the bounds
    // ASan reports for the flow just left (how native flows learn theirs).
    san_fiber* switched_from = nullptr;
#endif
#if defined(WEFT_SAN_TSAN)
    void* tsan = nullptr;  // TSan fiber handle
    bool tsan_owned = false;
#endif
};

// For a flow that already runs (main thread, a worker's native flow): adopts
// the sanitizer state of the calling kernel thread. Call on that thread.
inline void san_fiber_init_current(san_fiber* f) {
#if defined(WEFT_SAN_ASAN)
    // The bounds are learned at the first switch away (see san_after_switch):
    // ASan knows this kernel thread's stack better than pthread_getattr_np
    // does for the main thread.
    f->stack_bottom = nullptr;
    f->stack_size = 0;
    f->fake_stack = nullptr;
    f->switched_from = nullptr;
#endif
#if defined(WEFT_SAN_TSAN)
    f->tsan = __tsan_get_current_fiber();
    f->tsan_owned = false;
#endif
    (void)f;
}

// Clears ASan's marks on [lo, lo + size) of a recycled stack: the redzones of
// frames its last user never returned from (nothing without ASan).
inline void san_unpoison(const void* lo, std::size_t size) {
#if defined(WEFT_SAN_ASAN)
    __asan_unpoison_memory_region(lo, size);
#endif
    (void)lo;
    (void)size;
}

// For a fresh context on [stack_lo, stack_lo + size).
inline void san_fiber_create(san_fiber* f, const void* stack_lo, std::size_t size) {
#if defined(WEFT_SAN_ASAN)
    f->stack_bottom = stack_lo;
    f->stack_size = size;
    f->fake_stack = nullptr;
    f->switched_from = nullptr;
    // A recycled stack still carries the redzones of the frames its previous
    // thread never returned from; they would be false positives now.
    __asan_unpoison_memory_region(stack_lo, size);
#endif
#if defined(WEFT_SAN_TSAN)
    f->tsan = __tsan_create_fiber(0);
    f->tsan_owned = true;
#endif
    (void)f;
    (void)stack_lo;
    (void)size;
}

// Releases what san_fiber_create made. Not on the flow itself: call it after
// the flow has switched away for good.
inline void san_fiber_destroy(san_fiber* f) {
#if defined(WEFT_SAN_TSAN)
    if (f->tsan_owned && f->tsan != nullptr) __tsan_destroy_fiber(f->tsan);
    f->tsan = nullptr;
    f->tsan_owned = false;
#endif
    (void)f;
}

// In `from`, immediately before switch_context(from, to). from_finishing: from
// will never be resumed.
inline void san_before_switch(san_fiber* from, san_fiber* to, bool from_finishing) {
#if defined(WEFT_SAN_ASAN)
    // A finishing flow must not be written to after the switch (its control
    // block may be recycled by then), so it does not learn its bounds.
    to->switched_from = from_finishing ? nullptr : from;
    __sanitizer_start_switch_fiber(from_finishing ? nullptr : &from->fake_stack, to->stack_bottom, to->stack_size);
#endif
#if defined(WEFT_SAN_TSAN)
    __tsan_switch_to_fiber(to->tsan, 0);
#endif
    (void)from;
    (void)to;
    (void)from_finishing;
}

// In the resumed flow `now`, first thing after switch_context returns (or at
// the top of a fresh context's entry).
inline void san_after_switch(san_fiber* now) {
#if defined(WEFT_SAN_ASAN)
    const void* old_bottom = nullptr;
    std::size_t old_size = 0;
    __sanitizer_finish_switch_fiber(now->fake_stack, &old_bottom, &old_size);
    now->fake_stack = nullptr;
    if (san_fiber* prev = now->switched_from; prev != nullptr && prev->stack_size == 0) {
        prev->stack_bottom = old_bottom;
        prev->stack_size = old_size;
    }
    now->switched_from = nullptr;
#endif
    (void)now;
}

}  // namespace weft::arch

// Cancellation and cleanup handlers, per weft thread.
//
// glibc keeps a thread's cancellation state and its list of cleanup handlers
// (pthread_cleanup_push in C: a jump buffer on the caller's stack, linked by
// __pthread_register_cancel) in the kernel thread's descriptor, which under
// the shim is the worker's, shared by every weft thread that runs on it. Here
// they are the weft thread's own: the state and the request in its ult
// (core/ult.hpp), the handler list in a weft key made on first use.
//
// Deferred cancellation: pthread_cancel marks the thread and, if it is blocked
// inside a cancellation point (cancel_point, shim.hpp), takes it out of its
// wait as a timer does (core/wait.hpp, cancel_wait). The thread acts on it at
// that point, or at the next one it reaches with cancellation enabled, and
// pthread_exit alike: as glibc does, it unwinds its own stack with
// _Unwind_ForcedUnwind, which runs the C++ destructors of every frame; the
// stop function jumps into each C handler's pushing frame (the macro's setjmp)
// when the unwinding reaches it, the routine runs and __pthread_unwind_next
// goes on unwinding from there. At the thread's entry frame the thread ends
// with its exit value (PTHREAD_CANCELED for a cancellation): thread_local
// destructors, then key destructors. Asynchronous cancellation is refused.
// Kernel threads that are not weft threads keep glibc's functions.
#include <pthread.h>
#include <setjmp.h>
#include <unistd.h>
#include <unwind.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#include "core/dispatch.hpp"
#include "core/handle.hpp"
#include "core/runtime.hpp"
#include "core/thread.hpp"
#include "core/wait.hpp"
#include "core/worker.hpp"
#include "shim/shim.hpp"
#include "shim/signals.hpp"
#include "shim/tls_block.hpp"

namespace weft::shim {
namespace {

struct cancel_state {
    __pthread_unwind_buf_t* cleanup = nullptr;  // innermost pushed handler
    void* exit_value = nullptr;                 // pthread_exit's, while its handlers run
    // The forced unwinding in flight: here, not on the stack it unwinds, whose
    // memory the destructors it runs reuse.
    _Unwind_Exception unwinding{};
};

weft_once_t key_once = WEFT_ONCE_INIT;
weft_key_t key;

void free_state(void* p) { delete static_cast<cancel_state*>(p); }
void make_key() {
    if (weft_key_create(&key, &free_state) != 0) key = WEFT_KEYS_MAX;
}

bool on_weft_thread() { return ready() && weft_thread_self() != WEFT_THREAD_NULL; }

bool pending(const detail::ult* u) {
    return u->cancel_requested.load(std::memory_order_acquire) != 0 && !u->cancel_disabled;
}

// The calling weft thread's state; null if it has none and `create` is false
// (or if no key or memory is left).
cancel_state* mine(bool create) {
    weft_once(&key_once, &make_key);
    if (key == WEFT_KEYS_MAX) return nullptr;
    auto* s = static_cast<cancel_state*>(weft_getspecific(key));
    if (s == nullptr && create) {
        s = new (std::nothrow) cancel_state;
        if (s != nullptr && weft_setspecific(key, s) != 0) {
            delete s;
            s = nullptr;
        }
    }
    return s;
}

// glibc's layout of a pushed handler: the link to the one pushed before is
// the first padding word (glibc's own priv.data.prev).
__pthread_unwind_buf_t*& prev_of(__pthread_unwind_buf_t* buf) {
    return reinterpret_cast<__pthread_unwind_buf_t*&>(buf->__pad[0]);
}

// The end of an exiting or cancelled weft thread once its handlers have run:
// its thread_local destructors, then weft's end (key destructors).
[[noreturn]] void end_weft_thread(void* retval) {
    run_thread_local_destructors();
    weft_thread_exit(retval);
}

// Runs the innermost handler left (jumping into its pushing frame), or ends
// the thread when none is left.
[[noreturn]] void unwind_from(cancel_state* s) {
    __pthread_unwind_buf_t* buf = s->cleanup;
    if (buf == nullptr) end_weft_thread(s->exit_value);
    s->cleanup = prev_of(buf);
    // The macro saved the buffer with __sigsetjmp(buf, 0): the common prefix
    // of a jmp_buf, with no signal mask to restore.
    longjmp(reinterpret_cast<struct __jmp_buf_tag*>(static_cast<void*>(buf->__cancel_jmp_buf)), 1);
}

// A catch (...) that ended without rethrowing the unwinding (the C++ library
// then deletes the exception): the thread can neither go on nor end, and glibc
// aborts alike.
void not_rethrown(_Unwind_Reason_Code, _Unwind_Exception*) {
    static constexpr char msg[] =
        "weft-pthread: FATAL: the unwinding of pthread_exit or a cancellation was caught and not rethrown "
        "(a catch (...) must rethrow abi::__forced_unwind)\n";
    (void)!write(2, msg, sizeof msg - 1);
    std::abort();
}

// The frame that calls the program's start routine: weft's thread entry, or
// the shim's TLS block start in front of it. Nothing of it is unwound (weft's
// entry is noexcept: unwinding it would terminate).
bool is_entry_frame(_Unwind_Context* ctx) {
    auto* fn = reinterpret_cast<const void*>(_Unwind_GetRegionStart(ctx));
    return fn == reinterpret_cast<const void*>(&detail::ult_entry) || is_block_start(fn);
}

// Called by the unwinder before each frame it unwinds. A C handler's buffer
// lies in its pushing frame, below that frame's CFA (the stack pointer of its
// caller) and above the CFA of every frame it called: the first frame whose
// CFA is above the buffer is the pusher. The end of the unwind data (a frame
// without it, or the end of main's stack: main unwinds to the C library's
// start) counts as the entry: the handlers left run, then the thread ends.
_Unwind_Reason_Code stop_at_entry(int, _Unwind_Action actions, _Unwind_Exception_Class, _Unwind_Exception*,
                                  _Unwind_Context* ctx, void* param) {
    auto* s = static_cast<cancel_state*>(param);
    bool end = (actions & _UA_END_OF_STACK) != 0 || is_entry_frame(ctx);
    if (s->cleanup != nullptr && (end || _Unwind_GetCFA(ctx) > reinterpret_cast<std::uintptr_t>(s->cleanup)))
        unwind_from(s);
    if (end) end_weft_thread(s->exit_value);
    return _URC_NO_REASON;
}

// Unwinds the calling thread's stack from here (pthread_exit, a cancellation,
// or the next step after a C handler ran).
[[noreturn]] void unwind(cancel_state* s) {
    s->unwinding.exception_class = 0;  // glibc's: no C++ type, only catch (...) sees it
    s->unwinding.exception_cleanup = &not_rethrown;
    _Unwind_ForcedUnwind(&s->unwinding, &stop_at_entry, s);
    // The unwinder failed (unreadable unwind data): the C handlers still run,
    // without the destructors.
    unwind_from(s);
}

}  // namespace

detail::ult* self_ult() {
    if (!ready()) return nullptr;
    detail::worker* w = detail::current_worker();
    return w != nullptr && w->current != w->idle ? w->current : nullptr;
}

// A cancellation point is also a delivery point for signals (signals.cpp):
// the handlers of the signals sent to the thread run before it waits, and
// after.
cancel_point::cancel_point() : self_(self_ult()) {
    auto* u = static_cast<detail::ult*>(self_);
    if (u == nullptr) return;
    deliver_pending_signals(u);
    if (pending(u)) exit_running_cleanup(PTHREAD_CANCELED);
    u->cancel_point = true;
}

cancel_point::~cancel_point() noexcept(false) {
    auto* u = static_cast<detail::ult*>(self_);
    if (u == nullptr) return;
    u->cancel_point = false;
    deliver_pending_signals(u);
    if (pending(u)) exit_running_cleanup(PTHREAD_CANCELED);
}

void exit_running_cleanup(void* retval) {
    cancel_state* s = mine(true);
    if (s == nullptr) {
        refuse("pthread_exit (or acting on a cancellation) with unwinding",
               "no thread-specific data key or memory is left for its state; the thread ends without running the "
               "destructors of its frames",
               ENOMEM);
        end_weft_thread(retval);
    }
    s->exit_value = retval;
    unwind(s);
}

}  // namespace weft::shim

using namespace weft::shim;

extern "C" {

int pthread_cancel(pthread_t thread) {
    if (!ready()) return real::pthread_cancel(thread);
    weft::detail::ult* u = weft::detail::g_rt->handles.resolve(reinterpret_cast<weft_thread_t>(thread));
    if (u == nullptr) return ESRCH;
    weft::detail::cancel_wait(u);
    return 0;
}

int pthread_setcancelstate(int state, int* oldstate) {
    weft::detail::ult* u = self_ult();
    if (u == nullptr) return real::pthread_setcancelstate(state, oldstate);
    if (state != PTHREAD_CANCEL_ENABLE && state != PTHREAD_CANCEL_DISABLE) return EINVAL;
    if (oldstate != nullptr) *oldstate = u->cancel_disabled ? PTHREAD_CANCEL_DISABLE : PTHREAD_CANCEL_ENABLE;
    u->cancel_disabled = state == PTHREAD_CANCEL_DISABLE;
    return 0;
}

int pthread_setcanceltype(int type, int* oldtype) {
    if (self_ult() == nullptr) return real::pthread_setcanceltype(type, oldtype);
    if (type != PTHREAD_CANCEL_DEFERRED && type != PTHREAD_CANCEL_ASYNCHRONOUS) return EINVAL;
    if (type == PTHREAD_CANCEL_ASYNCHRONOUS)
        return refuse("pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS)",
                      "a weft thread cannot be stopped at an arbitrary instruction", ENOTSUP);
    if (oldtype != nullptr) *oldtype = PTHREAD_CANCEL_DEFERRED;  // the only type a weft thread has
    return 0;
}

void pthread_testcancel(void) {
    weft::detail::ult* u = self_ult();
    if (u == nullptr) return real::pthread_testcancel();
    if (pending(u)) exit_running_cleanup(PTHREAD_CANCELED);
}

void __pthread_register_cancel(__pthread_unwind_buf_t* buf) {
    if (!on_weft_thread()) return real::__pthread_register_cancel(buf);
    cancel_state* s = mine(true);
    if (s == nullptr) {
        // The handler cannot be recorded: it would silently not run at
        // pthread_exit. Nothing can be returned from here.
        refuse("pthread_cleanup_push", "no thread-specific data key or memory is left for the handler list", ENOMEM);
        std::abort();
    }
    prev_of(buf) = s->cleanup;
    s->cleanup = buf;
}

void __pthread_unregister_cancel(__pthread_unwind_buf_t* buf) {
    if (!on_weft_thread()) return real::__pthread_unregister_cancel(buf);
    if (cancel_state* s = mine(false); s != nullptr) s->cleanup = prev_of(buf);
}

// pthread_cleanup_push_defer_np / pop_restore_np: the type is always deferred.
void __pthread_register_cancel_defer(__pthread_unwind_buf_t* buf) {
    if (!on_weft_thread()) return real::__pthread_register_cancel_defer(buf);
    __pthread_register_cancel(buf);
}

void __pthread_unregister_cancel_restore(__pthread_unwind_buf_t* buf) {
    if (!on_weft_thread()) return real::__pthread_unregister_cancel_restore(buf);
    __pthread_unregister_cancel(buf);
}

// Called by the push macro after its routine ran during the unwinding.
void __pthread_unwind_next(__pthread_unwind_buf_t* buf) {
    if (!on_weft_thread()) real::__pthread_unwind_next(buf);
    cancel_state* s = mine(false);
    if (s == nullptr) end_weft_thread(nullptr);  // not reached: only an unwinding thread gets here
    unwind(s);
}

}  // extern "C"

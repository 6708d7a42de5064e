// The C API for threads and their attributes (weft.h, "Threads"): argument
// checks, handles, errno values. The lifetime they drive is thread.cpp /
// thread.hpp; handles are core/handle.hpp.
#include "core/thread_api.hpp"

#include <sched.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/dispatch.hpp"
#include "core/handle.hpp"
#include "core/runtime.hpp"
#include "core/thread.hpp"
#include "core/thread_inline.hpp"
#include "core/tunables.hpp"

namespace weft::detail {
namespace {

// Every check of a weft_attr_t field, in one place: the setters check what
// they set, and the creating calls check the whole attribute (check_attr),
// since a program may fill its fields directly.
bool valid_stack_size(std::size_t size) { return size >= WEFT_STACK_MIN && size <= tun::max_stack_size; }
bool valid_detach_state(int state) { return state == WEFT_CREATE_JOINABLE || state == WEFT_CREATE_DETACHED; }

int check_attr(const weft_attr_t* attr) {
    if (attr == nullptr) return 0;
    if (attr->stack_size != 0 && !valid_stack_size(attr->stack_size)) return EINVAL;
    if (!valid_detach_state(attr->detach_state)) return EINVAL;
    return 0;
}

// A thread cannot wait for its own end (EDEADLK, checked before the claim).
// w: the calling worker, or null.
bool is_self(worker* w, weft_thread_t h) { return h != WEFT_THREAD_NULL && w != nullptr && w->current->handle == h; }

// weft_thread_create, with the new ult's own thread pointer (or null) set
// before the policy can run it.
[[gnu::always_inline]] inline int create_thread(weft_thread_t* thread, const weft_attr_t* attr, void* (*fn)(void*),
                                                void* arg, void* tp) {
    if (thread == nullptr || fn == nullptr) return EINVAL;
    if (int rc = check_attr(attr); rc != 0) return rc;
    worker* w = ensure_runtime();
    ult* u = nullptr;
    if (int rc = create_ult(w, attr, fn, arg, 0, nullptr, &u); rc != 0) return rc;
    u->tp = tp;
    *thread = u->handle;
    launch_inline(w, u);
    return 0;
}

}  // namespace

int create_with_thread_pointer(weft_thread_t* thread, const weft_attr_t* attr, void* (*fn)(void*), void* arg,
                               void* tp) {
    return create_thread(thread, attr, fn, arg, tp);
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
    if (attr == nullptr || !valid_stack_size(size)) return EINVAL;
    attr->stack_size = size;
    return 0;
}
WEFT_API int weft_attr_getstacksize(const weft_attr_t* attr, size_t* size) {
    if (attr == nullptr || size == nullptr) return EINVAL;
    *size = attr->stack_size != 0 ? attr->stack_size : (g_rt != nullptr ? g_rt->cfg.stack_size : 0);
    return 0;
}
WEFT_API int weft_attr_setdetachstate(weft_attr_t* attr, int state) {
    if (attr == nullptr || !valid_detach_state(state)) return EINVAL;
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
    return create_thread(thread, attr, fn, arg, nullptr);
}

WEFT_API int weft_thread_join(weft_thread_t thread, void** retval) {
    runtime* rt = g_rt;
    if (rt == nullptr) return ESRCH;
    worker* w = current_worker();
    if (is_self(w, thread)) return EDEADLK;
    ult* t = nullptr;
    if (int rc = rt->handles.claim(thread, &t); rc != 0) return rc;
    join_claimed_inline(w, t, retval, nullptr, nullptr);
    return 0;
}

WEFT_API int weft_thread_create_inplace(weft_thread_t* thread, const weft_attr_t* attr, void* (*fn)(void*),
                                        size_t storage_size, void** storage, void (*release)(void*)) {
    if (thread == nullptr || fn == nullptr || storage == nullptr) return EINVAL;
    if (int rc = check_attr(attr); rc != 0) return rc;
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
    *thread = u->handle;
    return 0;
}

WEFT_API int weft_thread_start(weft_thread_t thread) {
    runtime* rt = g_rt;
    ult* u = rt != nullptr ? rt->handles.resolve(thread) : nullptr;
    if (u == nullptr) return ESRCH;
    if (u->started || u->kind != ult_kind::regular) return EINVAL;
    launch_ult(current_worker(), u);
    return 0;
}

WEFT_API int weft_thread_join_inplace(weft_thread_t thread, void (*collect)(void*, void*), void* ctx) {
    runtime* rt = g_rt;
    if (rt == nullptr) return ESRCH;
    worker* w = current_worker();
    if (is_self(w, thread)) return EDEADLK;
    ult* t = nullptr;
    if (int rc = rt->handles.claim(thread, &t); rc != 0) return rc;
    join_claimed_inline(w, t, nullptr, collect, ctx);
    return 0;
}

WEFT_API int weft_thread_detach(weft_thread_t thread) {
    runtime* rt = g_rt;
    if (rt == nullptr) return ESRCH;
    ult* t = nullptr;
    if (int rc = rt->handles.claim(thread, &t); rc != 0) return rc;
    detach_claimed(t);
    return 0;
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
    if (w == nullptr) return WEFT_THREAD_NULL;
    ult* u = w->current;
    // Main and the idle ults are not created by create_ult: their handle is
    // made here, on first use, by the ult itself (so without a race), claimed
    // from the start since neither may be joined or detached.
    if (u->handle == WEFT_THREAD_NULL) u->handle = g_rt->handles.acquire(&w->handles, u, /*claimed=*/true);
    return u->handle;
}

// Handles are compared by value: a stale handle equals its own copies, never
// the handle of the thread that reuses its slot (another generation).
WEFT_API int weft_thread_equal(weft_thread_t a, weft_thread_t b) { return a == b ? 1 : 0; }

WEFT_API uint64_t weft_thread_id(weft_thread_t thread) {
    runtime* rt = g_rt;
    ult* u = rt != nullptr ? rt->handles.resolve(thread) : nullptr;
    return u != nullptr ? u->id : 0;
}

WEFT_API int weft_thread_setname(weft_thread_t thread, const char* name) {
    runtime* rt = g_rt;
    ult* t = rt != nullptr ? rt->handles.resolve(thread) : nullptr;
    if (t == nullptr) return ESRCH;
    if (name == nullptr) return EINVAL;
    std::strncpy(t->name, name, sizeof t->name - 1);
    t->name[sizeof t->name - 1] = '\0';
    return 0;
}

WEFT_API int weft_thread_getname(weft_thread_t thread, char* buf, size_t len) {
    runtime* rt = g_rt;
    const ult* t = rt != nullptr ? rt->handles.resolve(thread) : nullptr;
    if (t == nullptr) return ESRCH;
    if (buf == nullptr || len == 0) return ERANGE;
    std::size_t n = std::strlen(t->name);
    if (n >= len) n = len - 1;
    std::memcpy(buf, t->name, n);
    buf[n] = '\0';
    return 0;
}

}  // extern "C"

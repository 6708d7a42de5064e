// weft::detail::fil — the servers: one short-lived weft thread per other
// worker, pinned to it, that runs that worker's participant (Lowenthal, Freeh &
// Andrews §2: "a server thread on each processor"). Steps 2, 3 and 5 of
// region.cpp's protocol, on the server's side.
#include "core/dispatch.hpp"
#include "core/runtime.hpp"
#include "core/thread.hpp"
#include "core/ult.hpp"
#include "fil/region.hpp"

namespace weft::detail::fil {

namespace {

void* server_main(void* arg) {
    auto* r = static_cast<region*>(arg);
    worker* w = current_worker();
    part* p = &r->parts[w->index];
    // A server whose worker ran it after the region ended only drops its reference.
    if (!r->finished.load(memory_order_acquire)) {
        p->owner = w->current;
        // Release: a participant that sees `joined` sees the fields above.
        p->joined.store(true, memory_order_release);
        weft_fil_self_ = &p->hot;
        r->ops->serve(p);
        weft_fil_self_ = &weft_fil_outside_;
        flush(p);
        p->settled.store(1, memory_order_release);
    }
    release_region(r);
    return nullptr;
}

}  // namespace

int launch_server(region* r, int i) {
    // Claimed first: the caller's launch_servers and a sweep's
    // launch_returning (another worker, as soon as a first sweep ends) may
    // both get to participant i; a second server would sleep on i's
    // semaphore for good.
    if (r->parts[i].launched.exchange(true, memory_order_acq_rel)) return 0;
    worker* w = current_worker();
    weft_attr_t attr;
    (void)weft_attr_init(&attr);
    attr.detach_state = WEFT_CREATE_DETACHED;
    attr.name = "weft-fil-server";
    ult* u = nullptr;
    if (int rc = create_ult(w, &attr, &server_main, r, 0, nullptr, &u); rc != 0) {
        r->parts[i].launched.store(false, memory_order_relaxed);
        return rc;
    }
    u->pinned_worker = i;
    r->refs.fetch_add(1, memory_order_relaxed);
    launch_ult(w, u);
    return 0;
}

// Step 2: one pinned, detached server per worker but `skip` and the
// unavailable ones (a server would wake a dropped worker only to sit the
// region out; an iterative region launches it when the worker is taken back,
// sweep.cpp: launch_returning).
int launch_servers(region* r, int skip, int* skipped) {
    *skipped = 0;
    for (int i = 0; i < r->nparts; ++i) {
        if (i == skip) continue;
        if (!available(i)) {
            ++*skipped;
            continue;
        }
        if (int rc = launch_server(r, i); rc != 0) return rc;
    }
    return 0;
}

}  // namespace weft::detail::fil

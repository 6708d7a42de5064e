#include "io/interrupt.hpp"

#include <cerrno>

#include "base/primitives.hpp"
#include "core/wait.hpp"

namespace weft::detail::io {

namespace {

atomic<const signal_hooks*> hooks{nullptr};

// Every registered wait, for interrupt_wait to find a thread's. A list under
// one lock: signals are rare, and with no hooks nothing is registered.
spinlock waits_lock;
interruptible_wait* waits = nullptr;

}  // namespace

void set_signal_hooks(const signal_hooks* h) { hooks.store(h, memory_order_release); }

interruptible_wait::interruptible_wait(wait_record* r, std::uint32_t* l) : rec(r), lock(l) {
    const signal_hooks* h = hooks.load(memory_order_acquire);
    if (h == nullptr) return;
    who = current_ult();
    {
        lock_guard<spinlock> g(waits_lock);
        next = waits;
        if (waits != nullptr) waits->prev = this;
        waits = this;
        registered = true;
    }
    // After registering: a router that marked the signal pending before this
    // point is seen here; one after it finds this wait.
    signal_first = h->pending();
}

interruptible_wait::~interruptible_wait() {
    if (!registered) return;
    lock_guard<spinlock> g(waits_lock);
    if (prev != nullptr)
        prev->next = next;
    else
        waits = next;
    if (next != nullptr) next->prev = prev;
}

bool interruptible_wait::interrupted() const { return signal_first || hit; }

namespace {

// Under waits_lock: marks w interrupted and, if it is parked, unlinks its
// record and returns it, for the caller to wake once waits_lock is released
// (the record stays valid until that wake: nothing else wakes it now).
wait_record* interrupt_locked(interruptible_wait* w) {
    wait_record* woken = nullptr;
    spinlock_ref lk(*w->lock);
    lk.lock();
    w->hit = true;  // a wait not parked yet sees it before it parks
    if (w->rec->linked) {
        w->rec->unlink(w->rec);
        w->rec->linked = false;
        w->rec->result = EINTR;
        woken = w->rec;
    }
    lk.unlock();
    return woken;
}

}  // namespace

bool interrupt_wait(ult* t) {
    wait_record* woken = nullptr;
    bool found = false;
    {
        lock_guard<spinlock> g(waits_lock);
        for (interruptible_wait* w = waits; w != nullptr; w = w->next) {
            if (w->who != t) continue;
            found = true;
            woken = interrupt_locked(w);
            break;
        }
    }
    if (woken != nullptr) wake(woken);
    return found;
}

bool interrupt_one(bool (*choose)(ult* t, void* arg), void* arg) {
    wait_record* woken = nullptr;
    bool found = false;
    {
        lock_guard<spinlock> g(waits_lock);
        for (interruptible_wait* w = waits; w != nullptr; w = w->next) {
            // hit is written under waits_lock only: a stable read here.
            if (w->hit || !choose(w->who, arg)) continue;
            found = true;
            woken = interrupt_locked(w);
            break;
        }
    }
    if (woken != nullptr) wake(woken);
    return found;
}

int take_signals(bool restartable) {
    const signal_hooks* h = hooks.load(memory_order_acquire);
    int rc = h == nullptr ? EINTR : h->take();
    if (rc < 0) return 0;  // nothing was delivered: the call goes on
    return rc == 0 && restartable ? 0 : EINTR;
}

int sleep_until(std::int64_t deadline_ns) {
    for (;;) {
        std::uint32_t lock = 0;
        wait_record rec;
        interruptible_wait intr(&rec, &lock);
        spinlock_ref lk(lock);
        lk.lock();
        int rc = EINTR;
        if (intr.interrupted()) {
            lk.unlock();
        } else {
            // Linked to no queue: only the timer, interrupt_wait or a
            // cancellation takes it out.
            rec.linked = true;
            rec.unlink = [](wait_record*) {};
            rc = wait(&rec, &lock, deadline_ns, "nanosleep", nullptr);
        }
        if (rc != EINTR) return 0;
        if (take_signals(false) == EINTR) return EINTR;
        // No handler ran: the sleep goes on to its deadline.
    }
}

}  // namespace weft::detail::io

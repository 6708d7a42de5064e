#include "core/interrupt.hpp"

#include <cerrno>

#include "core/wait.hpp"

namespace weft::detail {

atomic<const signal_hooks*> g_signal_hooks{nullptr};

namespace {

// Every registered wait, for interrupt_wait to find a thread's. A list under
// one lock: signals are rare, and with no hooks nothing is registered.
spinlock waits_lock;
interruptible_wait* waits = nullptr;

}  // namespace

void set_signal_hooks(const signal_hooks* h) { g_signal_hooks.store(h, memory_order_release); }

void interruptible_wait::enter_registered(wait_record* r, std::uint32_t* l, bool (*withdraw_rec)(wait_record*)) {
    const signal_hooks* h = g_signal_hooks.load(memory_order_acquire);
    rec = r;
    lock = l;
    withdraw = withdraw_rec;
    who = current_ult();
    if (h == nullptr || who == nullptr) {
        state = skipped;
        return;
    }
    hit = false;
    signal_first = false;
    {
        lock_guard<spinlock> g(waits_lock);
        next = waits;
        prev = nullptr;
        if (waits != nullptr) waits->prev = this;
        waits = this;
        state = registered;
    }
    // After registering: a router that marked the signal pending before this
    // point is seen here; one after it finds this wait.
    signal_first = h->pending();
}

bool interruptible_wait::register_unlocking(wait_record* r, std::uint32_t* l) {
    if (current_ult() == nullptr) {  // a kernel thread outside weft: the kernel delivers its signals
        state = skipped;
        return false;
    }
    spinlock_ref(*l).unlock();
    enter_registered(r, l, nullptr);
    return true;
}

void interruptible_wait::leave() {
    lock_guard<spinlock> g(waits_lock);
    if (prev != nullptr)
        prev->next = next;
    else
        waits = next;
    if (next != nullptr) next->prev = prev;
}

void interruptible_wait::reset() {
    if (state == registered) {
        leave();
        rec->result = 0;
    }
    state = idle;
}

namespace {

// Under waits_lock: marks w interrupted and, if it is parked, unlinks its
// record and returns it, for the caller to wake once waits_lock is released
// (the record stays valid until that wake: nothing else wakes it now).
wait_record* interrupt_locked(interruptible_wait* w) {
    if (w->lock == nullptr) {
        atomic_ref<bool>(w->hit).store(true, memory_order_seq_cst);
        if (!w->withdraw(w->rec)) return nullptr;  // the waker has it, or the waiter sees hit
        w->rec->result = EINTR;
        return w->rec;
    }
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
    const signal_hooks* h = g_signal_hooks.load(memory_order_acquire);
    int rc = h == nullptr ? EINTR : h->take();
    if (rc < 0) return 0;  // nothing was delivered: the call goes on
    return rc == 0 && restartable ? 0 : EINTR;
}

}  // namespace weft::detail

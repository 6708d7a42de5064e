// weft::detail — signals that interrupt a weft thread parked in a wait: a
// system call or a sleep (src/io), a semaphore, a mutex, a condition variable
// (src/sync) or a join (docs/design/syscalls.md, "Signals").
//
// The layer that delivers a signal to a weft thread (libweft-pthread's signal
// routing) installs its hooks; then a thread it chooses for a signal while
// that thread is in an interruptible wait is taken out of it
// (interrupt_wait), runs its signal actions on itself (take_signals, which
// calls hooks.take), and its call then does what the call of a glibc thread
// the kernel delivered the signal to does: a system call resumes (every
// action it ran had SA_RESTART, and the call is one Linux restarts) or fails
// with EINTR; a semaphore wait fails with EINTR; a mutex lock or a join waits
// again; a condition wait returns 0 (a spurious wake-up).
//
// With no hooks installed (a program not under the shim) nothing is
// registered: a wait pays one relaxed load of the hooks pointer
// (signal_hooks_installed, or interruptible_wait::register_first, which
// costs the store and test of a flag more).
#pragma once

#include <cstdint>

#include "base/primitives.hpp"

namespace weft::detail {

struct ult;
struct wait_record;

struct signal_hooks {
    // Whether the calling weft thread has a signal to take (checked before
    // it parks, so that a signal routed to it just before is not left
    // waiting behind the call).
    bool (*pending)();
    // Runs the calling weft thread's pending signal actions: 0 when each
    // handler it ran had SA_RESTART, EINTR when one did not, -1 when it ran
    // no handler (the signal went to another thread, or is ignored now:
    // nothing was delivered, so the call goes on as if never interrupted).
    int (*take)();
};

// The installed hooks, or null (read inline by every wait that could park).
extern atomic<const signal_hooks*> g_signal_hooks;

// Whether hooks are installed: a wait that could park and has a path of its
// own for interruptible waits tests this first.
inline bool signal_hooks_installed() { return g_signal_hooks.load(memory_order_relaxed) != nullptr; }

// Installs the hooks (null: none). Set before any thread waits, or while none
// does: a wait registers only if hooks were installed when it began.
void set_signal_hooks(const signal_hooks* hooks);

// Takes weft thread t out of the interruptible wait it is in (wake, EINTR),
// or stops that wait before it parks. False when t is in no such wait.
bool interrupt_wait(ult* t);

// Takes out of its wait, as interrupt_wait does, the first weft thread in an
// interruptible wait (not interrupted already) for which choose(t, arg) is
// true; choose runs under the lock of the list of waits and may claim a
// signal for t there. False when it chose none.
bool interrupt_one(bool (*choose)(ult* t, void* arg), void* arg);

// After a wait returned EINTR: runs the caller's signal actions (hooks.take)
// and returns 0 for a call that resumes (no handler ran, or `restartable` and
// every handler had SA_RESTART), else EINTR.
int take_signals(bool restartable);

// A wait that interrupt_wait can end, on the waiter's stack. `lock` is the
// spinlock word its record `rec` is queued under; interrupt_wait takes it, and if rec is
// still linked unlinks it (rec->unlink), sets rec->result to EINTR and wakes
// the waiter. A wait with no lock (a join: the waker finds rec by other
// means) gives a function `withdraw` instead, which takes rec back from where the waker
// would find it and says whether it did; the waiter reads `hit` after it
// published rec (both sequentially consistent), so that one of the two
// takes it out. The wait is registered in the list interrupt_wait searches by
// enter (no lock held: the list's lock comes before every primitive's), or by
// register_first (with `lock` held, on the way to parking), until reset or
// the destructor.
class interruptible_wait {
public:
    interruptible_wait() = default;
    ~interruptible_wait() {
        if (state == registered) [[unlikely]]
            leave();
    }
    interruptible_wait(const interruptible_wait&) = delete;
    interruptible_wait& operator=(const interruptible_wait&) = delete;

    // Registers the wait for r, queued under lock l, now, if hooks are
    // installed and the caller is a weft thread. No lock held.
    void enter(wait_record* r, std::uint32_t* l) {
        if (signal_hooks_installed()) [[unlikely]]
            enter_registered(r, l, nullptr);
    }
    // The same for a wait with no lock (withdraw: see above).
    void enter(wait_record* r, bool (*withdraw_rec)(wait_record*)) {
        if (signal_hooks_installed()) [[unlikely]]
            enter_registered(r, nullptr, withdraw_rec);
    }

    // With lock l held, before parking on r: true when the wait had to be
    // registered first, which released l (the caller takes it again and
    // decides afresh: the object may have changed); false when the caller may
    // go on (registered already, or no hooks, or not a weft thread).
    bool register_first(wait_record* r, std::uint32_t* l) {
        if (!signal_hooks_installed()) [[likely]]
            return false;
        return state == idle && register_unlocking(r, l);
    }

    // Before parking, with the lock held: whether a signal is already the
    // waiter's to take (then it must not park).
    bool interrupted() const { return state == registered && (signal_first || hit); }
    // The same for a wait with no lock, after it published its record.
    bool interrupted_unlocked() {
        return state == registered && (signal_first || atomic_ref<bool>(hit).load(memory_order_seq_cst));
    }

    // After the signals were taken, for a wait that goes on: unregisters it
    // (the next register_first registers it afresh, and a later signal
    // interrupts it again) and clears the record's result. No lock held.
    void reset();

    // Set when the wait registers (a wait with no hooks installed stores
    // nothing but `state`).
    wait_record* rec;
    std::uint32_t* lock;
    bool (*withdraw)(wait_record*);  // a wait with no lock only
    ult* who;
    bool hit;           // set by interrupt_wait under `lock` (or atomically)
    bool signal_first;  // hooks.pending() was true at registration
    interruptible_wait* next;
    interruptible_wait* prev;

private:
    enum : std::uint8_t {
        idle,
        registered,
        skipped
    } state = idle;  // skipped: not a weft thread
    void enter_registered(wait_record* r, std::uint32_t* l, bool (*withdraw_rec)(wait_record*));
    bool register_unlocking(wait_record* r, std::uint32_t* l);
    void leave();
};

}  // namespace weft::detail

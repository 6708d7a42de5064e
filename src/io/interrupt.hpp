// weft::detail::io — signals that interrupt a weft thread parked in a system
// call (docs/design/syscalls.md, "Signals").
//
// The layer that delivers a signal to a weft thread (libweft-pthread's signal
// routing) installs its hooks; then a thread it chooses for a signal while
// that thread waits for a descriptor is taken out of its wait
// (interrupt_wait), runs its signal actions on itself (hooks.take), and its
// call either resumes (every action it ran had SA_RESTART, and the call is
// one Linux restarts) or fails with EINTR, as the call of a glibc thread the
// kernel delivered the signal to. With no hooks installed nothing is
// registered and a wait costs nothing more.
#pragma once

#include <cstdint>

namespace weft::detail {
struct ult;
struct wait_record;
}  // namespace weft::detail

namespace weft::detail::io {

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

// A sleep that interrupt_wait can end: parks the calling weft thread until
// the absolute CLOCK_MONOTONIC deadline (ns), or until a signal interrupts it
// and a handler runs (take_signals: sleeps are never restarted). Returns 0,
// or EINTR. A cancellation that ends the sleep returns 0 (the caller's
// cancellation point acts on it).
int sleep_until(std::int64_t deadline_ns);

// A wait that interrupt_wait can end, registered for its lifetime (on the
// waiter's stack). `lock` is the spinlock word the record is queued under.
class interruptible_wait {
public:
    interruptible_wait(wait_record* rec, std::uint32_t* lock);
    ~interruptible_wait();
    interruptible_wait(const interruptible_wait&) = delete;
    interruptible_wait& operator=(const interruptible_wait&) = delete;

    // Before parking, with the record's lock held: whether a signal is
    // already the waiter's to take (then it must not park).
    bool interrupted() const;

    ult* who = nullptr;
    wait_record* rec;
    std::uint32_t* lock;
    bool hit = false;  // set by interrupt_wait under `lock`
    bool registered = false;
    bool signal_first = false;  // hooks.pending() was true at registration
    interruptible_wait* next = nullptr;
    interruptible_wait* prev = nullptr;
};

}  // namespace weft::detail::io

// Signals per weft thread: pthread_sigmask and sigprocmask, pthread_kill and
// raise, kill to the process itself, sigwait, sigwaitinfo, sigtimedwait,
// sigsuspend, pause and sigpending (docs/shim.md, "Signals"; the design and
// its reasons: docs/design/shim.md, "Signals").
//
// A kernel's signal mask belongs to a kernel thread, which under the shim is a
// worker that many weft threads share. So every signal a program can send
// itself (all but SIGKILL, SIGSTOP, glibc's two internal ones and the
// synchronous ones a fault or trap raises in the thread that caused it) stays
// blocked on every worker, and the kernel queues it for the process; one
// kernel thread of the shim's, the signal thread, takes each with
// sigwaitinfo and routes it. A weft thread's mask is a word in its ult
// (core/ult.hpp), and the signals sent to it are another: pthread_kill sets a
// bit there, or hands the signal straight to the thread if it waits for it in
// sigwait or sigsuspend. A handler runs on the weft thread it was delivered
// to, called by the shim at a delivery point of that thread: pthread_sigmask,
// sigsuspend, raise and pthread_kill to itself, kill to its own process, the
// entry and exit of every cancellation point (cancel.cpp) and sched_yield,
// the end of every blocking system call (io.cpp), and a wait the thread is
// parked in (a system call, a sleep, a semaphore, a mutex, a condition
// variable, a join), which the router takes it out of (the core's hooks,
// core/interrupt.hpp: the call then fails with EINTR, restarts or waits
// again). There
// the thread runs its own code, outside the runtime: no worker lock is held,
// no switch is half done, so a handler never interrupts weft's scheduler (the
// async-signal-safety the kernel's delivery could not give: a signal on a
// worker would land in whatever the worker was doing).
#include "shim/signals.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/interrupt.hpp"
#include "core/outside.hpp"
#include "core/runtime.hpp"
#include "core/ult.hpp"
#include "core/wait.hpp"
#include "io/kernel_thread.hpp"
#include "shim/shim.hpp"
#include "sync/wait_list.hpp"

namespace weft::shim {

// The routing lock (g_lock, below) guards it; see signals.hpp.
detail::atomic<std::uint64_t> g_process_pending{0};

namespace {

using detail::ult;
using detail::wait_record;

constexpr int max_signal = 64;  // signals 1..64: bit n-1 of a mask

constexpr std::uint64_t bit(int sig) { return std::uint64_t{1} << (sig - 1); }
int lowest(std::uint64_t bits) { return __builtin_ctzll(bits) + 1; }

// Signals no thread can block: SIGKILL, SIGSTOP, and glibc's internal
// cancellation and setxid signals (32, 33), which glibc's pthread_sigmask
// leaves alone.
constexpr std::uint64_t unblockable = bit(SIGKILL) | bit(SIGSTOP) | bit(32) | bit(33);
// Signals the kernel sends to the kernel thread whose instruction faulted or
// trapped: they stay unblocked on the workers and run there, in the weft
// thread that caused them, as glibc runs them.
constexpr std::uint64_t synchronous =
    bit(SIGSEGV) | bit(SIGBUS) | bit(SIGFPE) | bit(SIGILL) | bit(SIGTRAP) | bit(SIGSYS);
// Every other signal is blocked on the workers and routed by the signal thread.
constexpr std::uint64_t routed = ~(unblockable | synchronous);
// Signals whose default action is to do nothing, or to stop the process (the
// others' ends it).
constexpr std::uint64_t default_ignore = bit(SIGCHLD) | bit(SIGCONT) | bit(SIGURG) | bit(SIGWINCH);
constexpr std::uint64_t default_stop = bit(SIGTSTP) | bit(SIGTTIN) | bit(SIGTTOU);

std::uint64_t bits_of(const sigset_t* s) {
    std::uint64_t b = 0;
    for (int sig = 1; sig <= max_signal; ++sig)
        if (sigismember(s, sig) == 1) b |= bit(sig);
    return b;
}

void set_of(std::uint64_t b, sigset_t* s) {
    sigemptyset(s);
    for (int sig = 1; sig <= max_signal; ++sig)
        if ((b & bit(sig)) != 0) sigaddset(s, sig);
}

bool valid_signal(int sig) { return sig >= 1 && sig <= max_signal; }

// One waiter in sigwait (the signals it asked for) or sigsuspend (the ones
// its temporary mask lets through), on the waiter's stack.
struct sig_waiter {
    wait_record rec;
    std::uint64_t wanted = 0;
    int sig = 0;  // the signal it was given
    siginfo_t info{};
};

// g_lock guards the waiters, the pending words (ult::sig_pending and
// g_process_pending: atomics only so that a delivery point can look without
// it), g_process_info and g_process_for. Lock order: the core's list of
// interruptible waits (core/interrupt.hpp), then g_lock, then the runtime's
// locks (a wake under it would take a worker's); nothing blocks under it.
std::uint32_t g_lock = 0;
void* g_waiters_head = nullptr;
void* g_waiters_tail = nullptr;
siginfo_t g_process_info[max_signal + 1];
// The weft thread a pending process signal was given to (route took it out
// of a system call's wait for it: no other thread may take it), or null.
detail::atomic<ult*> g_process_for[max_signal + 1];
// Main's mask, for the signals sent to the process that no thread waits for
// (route); written by main only.
detail::atomic<std::uint64_t> g_main_mask{0};
sigset_t g_routed_set;

detail::wait_list waiters() { return detail::wait_list(g_waiters_head, g_waiters_tail); }

void unlink_waiter(wait_record* rec) { waiters().remove(rec); }

// Under g_lock: the first waiter (of thread `t`, or of any thread when t is
// null) that waits for `sig`, taken off the list; null if none.
sig_waiter* claim_waiter(const ult* t, int sig) {
    for (wait_record* r = waiters().front(); r != nullptr; r = r->next) {
        auto* w = static_cast<sig_waiter*>(r->queue);
        if ((t == nullptr || r->waiter == t) && (w->wanted & bit(sig)) != 0) {
            waiters().remove(r);
            return w;
        }
    }
    return nullptr;
}

// Under g_lock: gives `sig` to the waiter and releases the lock, then wakes it.
void hand_over(detail::spinlock_ref& lk, sig_waiter* w, int sig, const siginfo_t& info) {
    w->sig = sig;
    w->info = info;
    lk.unlock();
    detail::wake(&w->rec);  // w may be gone once this returns
}

siginfo_t sent_info(int sig, int code) {
    siginfo_t i;
    std::memset(&i, 0, sizeof i);
    i.si_signo = sig;
    i.si_code = code;
    i.si_pid = getpid();
    i.si_uid = getuid();
    return i;
}

enum class action {
    ignore,
    handler,
    terminate,
    stop
};

action action_of(int sig, struct sigaction* sa) {
    ::sigaction(sig, nullptr, sa);
    if (sa->sa_handler == SIG_IGN) return action::ignore;
    if (sa->sa_handler != SIG_DFL) return action::handler;
    if ((default_ignore & bit(sig)) != 0) return action::ignore;
    if ((default_stop & bit(sig)) != 0) return action::stop;
    return action::terminate;
}

// The default action of a signal that ends the process: taken by the calling
// kernel thread, which unblocks the signal and sends it to itself, so that the
// process ends as glibc's would (by that signal, with a core if its default
// makes one).
[[noreturn]] void end_process_by(int sig) {
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    ::sigaction(sig, &dfl, nullptr);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    real::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
    real::_exit(128 + sig);  // not reached: the signal ended the process
    __builtin_unreachable();
}

void stop_process() { real::kill(getpid(), SIGSTOP); }

// What taking signals did to a system call the thread was blocked in
// (signal_hooks::take): no handler ran, or every one had SA_RESTART
// (restart), or one did not (EINTR).
constexpr int no_handler = -1;
constexpr int restart = 0;

// Runs the action of `sig` on weft thread u (the caller): its handler, with
// the handler's mask added to the thread's while it runs. Returns no_handler,
// restart or EINTR.
int take(ult* u, int sig, const siginfo_t& info) {
    struct sigaction sa;
    switch (action_of(sig, &sa)) {
    case action::ignore: return no_handler;
    case action::terminate: end_process_by(sig);
    case action::stop: stop_process(); return no_handler;
    case action::handler: break;
    }
    std::uint64_t saved = u->sig_mask.load(detail::memory_order_relaxed);
    std::uint64_t during = bits_of(&sa.sa_mask) | ((sa.sa_flags & SA_NODEFER) != 0 ? 0 : bit(sig));
    u->sig_mask.store(saved | (during & ~unblockable), detail::memory_order_relaxed);
    if ((sa.sa_flags & SA_RESETHAND) != 0) {
        struct sigaction dfl;
        std::memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        ::sigaction(sig, &dfl, nullptr);
    }
    int saved_errno = errno;
    siginfo_t copy = info;
    if ((sa.sa_flags & SA_SIGINFO) != 0)
        sa.sa_sigaction(sig, &copy, nullptr);
    else
        sa.sa_handler(sig);
    errno = saved_errno;
    u->sig_mask.store(saved, detail::memory_order_relaxed);
    return (sa.sa_flags & SA_RESTART) != 0 ? restart : EINTR;
}

// The process's pending signals that u may take: all but those given to
// another thread (g_process_for).
std::uint64_t process_pending_for(const ult* u) {
    std::uint64_t bits = g_process_pending.load(detail::memory_order_relaxed);
    for (std::uint64_t b = bits; b != 0; b &= b - 1) {
        int sig = lowest(b);
        ult* given = g_process_for[sig].load(detail::memory_order_relaxed);
        if (given != nullptr && given != u) bits &= ~bit(sig);
    }
    return bits;
}

// Under g_lock: takes the lowest of `wanted` pending for u (first) or for the
// process; 0 if none.
int take_pending_locked(ult* u, std::uint64_t wanted, siginfo_t* info, bool* own) {
    std::uint64_t mine = u->sig_pending.load(detail::memory_order_relaxed) & wanted;
    if (mine != 0) {
        int sig = lowest(mine);
        u->sig_pending.fetch_and(~bit(sig), detail::memory_order_relaxed);
        *own = true;
        return sig;
    }
    std::uint64_t process = process_pending_for(u) & wanted;
    if (process == 0) return 0;
    int sig = lowest(process);
    g_process_pending.fetch_and(~bit(sig), detail::memory_order_relaxed);
    g_process_for[sig].store(nullptr, detail::memory_order_relaxed);
    *info = g_process_info[sig];
    *own = false;
    return sig;
}

// Waits on weft thread u for one of `wanted`: a pending one at once, else
// until one is sent (deadline_ns: absolute CLOCK_MONOTONIC, 0 for none; poll:
// do not wait). Returns the signal, or -EAGAIN (poll, deadline) or -EINTR (a
// cancellation took the thread out of its wait).
int wait_signal(ult* u, std::uint64_t wanted, std::int64_t deadline_ns, bool poll, siginfo_t* info) {
    detail::spinlock_ref lk(g_lock);
    lk.lock();
    bool own = false;
    if (int sig = take_pending_locked(u, wanted, info, &own); sig != 0) {
        lk.unlock();
        if (own) *info = sent_info(sig, SI_TKILL);
        return sig;
    }
    if (poll) {
        lk.unlock();
        return -EAGAIN;
    }
    sig_waiter w;
    w.wanted = wanted;
    waiters().push_back(&w.rec, &w, &unlink_waiter);
    // A signal may come from outside the process: no deadlock while one waits.
    detail::kernel_wait_begin();
    int rc = detail::wait(&w.rec, &g_lock, deadline_ns, "sigwait", nullptr);
    detail::kernel_wait_end();
    if (rc == ETIMEDOUT) return -EAGAIN;
    if (rc != 0) return -EINTR;
    *info = w.info;
    return w.sig;
}

// pthread_kill(t, sig) for a weft thread t (sig 1..64).
void send_to_thread(ult* t, int sig) {
    struct sigaction sa;
    action a = action_of(sig, &sa);
    siginfo_t info = sent_info(sig, SI_TKILL);
    detail::spinlock_ref lk(g_lock);
    lk.lock();
    if (sig_waiter* w = claim_waiter(t, sig); w != nullptr) return hand_over(lk, w, sig, info);
    bool blocked = (t->sig_mask.load(detail::memory_order_relaxed) & bit(sig)) != 0;
    if (!blocked && a != action::handler) {
        // Its action does not need the thread: ignored, or the whole process's.
        lk.unlock();
        if (a == action::terminate) end_process_by(sig);
        if (a == action::stop) stop_process();
        return;
    }
    t->sig_pending.fetch_or(bit(sig), detail::memory_order_relaxed);
    lk.unlock();
    // Marked pending first: a wait t enters from here on sees it
    // (core/interrupt.hpp), one it is in now is ended here.
    if (!blocked) detail::interrupt_wait(t);
}

// interrupt_one's choice for route: a weft thread that does not block
// `sig`, given the signal (under g_lock) if it is still the process's and no
// other thread's.
struct routed_signal {
    int sig;
};

bool give_to(ult* t, void* arg) {
    int sig = static_cast<routed_signal*>(arg)->sig;
    if ((t->sig_mask.load(detail::memory_order_relaxed) & bit(sig)) != 0) return false;
    detail::spinlock_ref lk(g_lock);
    lk.lock();
    bool free = (g_process_pending.load(detail::memory_order_relaxed) & bit(sig)) != 0 &&
                g_process_for[sig].load(detail::memory_order_relaxed) == nullptr;
    if (free) g_process_for[sig].store(t, detail::memory_order_relaxed);
    lk.unlock();
    return free;
}

// A signal sent to the process (by kill from a weft thread, with `caller` the
// sender; or by anyone else, taken by the signal thread, with caller null):
// given to a weft thread waiting for it in sigwait or sigsuspend if there is
// one, else acted on at once when its action needs no thread (a blocked
// signal stays pending: blocked means blocked by main, whose mask the other
// threads usually inherit, and by the caller), else pending for the process,
// run by the first weft thread to reach a delivery point with it unblocked
// (the caller, before kill returns, if it does not block it).
void route(int sig, const siginfo_t& info, ult* caller) {
    struct sigaction sa;
    action a = action_of(sig, &sa);
    detail::spinlock_ref lk(g_lock);
    lk.lock();
    if (sig_waiter* w = claim_waiter(nullptr, sig); w != nullptr) return hand_over(lk, w, sig, info);
    bool caller_blocks = caller == nullptr || (caller->sig_mask.load(detail::memory_order_relaxed) & bit(sig)) != 0;
    bool blocked = caller_blocks && (g_main_mask.load(detail::memory_order_relaxed) & bit(sig)) != 0;
    if (!blocked && a != action::handler) {
        lk.unlock();
        if (a == action::terminate) end_process_by(sig);
        if (a == action::stop) stop_process();
        return;
    }
    g_process_info[sig] = info;
    g_process_pending.fetch_or(bit(sig), detail::memory_order_relaxed);
    lk.unlock();
    if (!caller_blocks) return deliver_pending_signals(caller);
    // As the kernel picks a thread blocked in a system call for a signal it
    // lets through: a weft thread in an interruptible wait (a read, a poll,
    // a sleep, a semaphore, a mutex, a condition, a join) that does not block
    // sig takes it now, and its call returns EINTR, restarts or waits again.
    // Marked pending first, so that a thread entering such
    // a wait from here on sees it there.
    if (a == action::handler) {
        routed_signal r{sig};
        detail::interrupt_one(&give_to, &r);
    }
}

void* signal_thread_main(void*) {
    detail::note_service_thread(false);  // never waits in weft: not a thread that could wake one
    for (;;) {
        siginfo_t info;
        int sig = real::sigwaitinfo(&g_routed_set, &info);
        if (sig > 0) route(sig, info, nullptr);
    }
}

void start_signal_thread() {
    detail::io::start_kernel_thread(&signal_thread_main, nullptr, "the signal thread of libweft-pthread");
}

// The calling weft thread's new mask.
void set_mask(ult* u, std::uint64_t mask) {
    u->sig_mask.store(mask & ~unblockable, detail::memory_order_relaxed);
    if (u == detail::g_rt->main) g_main_mask.store(mask & ~unblockable, detail::memory_order_relaxed);
}

int change_mask(ult* u, int how, const sigset_t* set, sigset_t* old) {
    std::uint64_t cur = u->sig_mask.load(detail::memory_order_relaxed);
    if (set != nullptr) {
        std::uint64_t b = bits_of(set);
        switch (how) {
        case SIG_BLOCK: cur |= b; break;
        case SIG_UNBLOCK: cur &= ~b; break;
        case SIG_SETMASK: cur = b; break;
        default: return EINVAL;
        }
    }
    if (old != nullptr) set_of(u->sig_mask.load(detail::memory_order_relaxed), old);
    if (set == nullptr) return 0;
    set_mask(u, cur);
    deliver_pending_signals(u);
    return 0;
}

// sigwait, sigwaitinfo, sigtimedwait on weft thread u: the signal, or -errno.
int wait_in(ult* u, const sigset_t* set, siginfo_t* info, const struct timespec* timeout) {
    cancel_point cp;
    if (set == nullptr) return -EINVAL;
    std::int64_t deadline = 0;
    bool poll = false;
    if (timeout != nullptr) {
        if (timeout->tv_sec < 0 || timeout->tv_nsec < 0 || timeout->tv_nsec >= 1000000000L) return -EINVAL;
        std::int64_t ns = static_cast<std::int64_t>(timeout->tv_sec) * 1000000000LL + timeout->tv_nsec;
        poll = ns == 0;
        deadline = detail::monotonic_ns() + ns;
    }
    siginfo_t got;
    int sig;
    {
        errno_keeper keep;
        sig = wait_signal(u, bits_of(set) & ~unblockable, poll ? 0 : deadline, poll, &got);
    }
    if (sig > 0 && info != nullptr) *info = got;
    return sig;
}

[[noreturn]] void exit_with_reports(int status) {
    if (ready() && getpid() == g_runtime_pid) detail::write_exit_reports();
    real::_exit(status);
    __builtin_unreachable();
}

int errno_of(int rc) {
    if (rc >= 0) return rc;
    errno = -rc;
    return -1;
}

// Runs the action of each signal pending for weft thread u (the caller), or
// for the process, that it does not block; what that did to a system call u
// was blocked in: no_handler, restart or EINTR (one handler without
// SA_RESTART is enough).
int deliver(ult* u) {
    int result = no_handler;
    for (;;) {
        std::uint64_t open = ~u->sig_mask.load(detail::memory_order_relaxed);
        if (((u->sig_pending.load(detail::memory_order_relaxed) |
              g_process_pending.load(detail::memory_order_relaxed)) &
             open) == 0)
            return result;
        detail::spinlock_ref lk(g_lock);
        lk.lock();
        siginfo_t info;
        bool own = false;
        int sig = take_pending_locked(u, open, &info, &own);
        lk.unlock();
        if (sig == 0) return result;
        if (own) info = sent_info(sig, SI_TKILL);
        int r = take(u, sig, info);
        if (r == EINTR || (r == restart && result == no_handler)) result = r;
    }
}

// The core's hooks (core/interrupt.hpp): a weft thread blocked in a read, a
// poll, a sleep or a synchronisation object takes the signals routed to it
// there.
bool signal_waits(ult* u) {
    return ((u->sig_pending.load(detail::memory_order_relaxed) | process_pending_for(u)) &
            ~u->sig_mask.load(detail::memory_order_relaxed)) != 0;
}

const detail::signal_hooks wait_hooks{[] { return signal_waits(detail::current_ult()); },
                                      [] { return deliver(detail::current_ult()); }};

}  // namespace

std::uint64_t block_routed_signals() {
    set_of(routed, &g_routed_set);
    sigset_t old;
    real::pthread_sigmask(SIG_BLOCK, &g_routed_set, &old);
    return bits_of(&old) & ~unblockable;
}

void start_signal_routing(std::uint64_t main_mask) {
    set_mask(detail::g_rt->main, main_mask);
    detail::set_signal_hooks(&wait_hooks);  // main is the only weft thread yet: none waits
    start_signal_thread();
}

void deliver_pending_signals_now(ult* u) { (void)deliver(u); }

program_mask::program_mask() {
    ult* u = self_ult();
    if (u == nullptr) return;
    sigset_t own;
    set_of(u->sig_mask.load(detail::memory_order_relaxed), &own);
    set_ = real::pthread_sigmask(SIG_SETMASK, &own, &saved_) == 0;
}

program_mask::~program_mask() {
    if (set_) real::pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
}

call_mask::call_mask(const sigset_t* mask) {
    if (mask == nullptr) return;
    u_ = self_ult();
    if (u_ == nullptr) return;
    saved_ = u_->sig_mask.load(detail::memory_order_relaxed);
    u_->sig_mask.store(bits_of(mask) & ~unblockable, detail::memory_order_relaxed);
}

call_mask::~call_mask() {
    if (u_ == nullptr) return;
    deliver_pending_signals(u_);
    u_->sig_mask.store(saved_, detail::memory_order_relaxed);
    deliver_pending_signals(u_);
}

void signals_fork_prepare() { detail::spinlock_ref(g_lock).lock(); }

void signals_fork_parent() { detail::spinlock_ref(g_lock).unlock(); }

void signals_fork_child() {
    // The other threads' waits, and every pending signal, stay in the parent
    // (POSIX: the child starts with none pending).
    g_waiters_head = g_waiters_tail = nullptr;
    g_process_pending.store(0, detail::memory_order_relaxed);
    for (auto& given : g_process_for) given.store(nullptr, detail::memory_order_relaxed);
    if (ult* self = self_ult(); self != nullptr) {
        self->sig_pending.store(0, detail::memory_order_relaxed);
        g_main_mask.store(self->sig_mask.load(detail::memory_order_relaxed), detail::memory_order_relaxed);
    }
    detail::spinlock_ref(g_lock).unlock();
    start_signal_thread();
}

}  // namespace weft::shim

using namespace weft::shim;

extern "C" {

int pthread_sigmask(int how, const sigset_t* set, sigset_t* old) {
    weft::detail::ult* u = self_ult();
    if (u == nullptr) return real::pthread_sigmask(how, set, old);
    return change_mask(u, how, set, old);
}

int sigprocmask(int how, const sigset_t* set, sigset_t* old) {
    weft::detail::ult* u = self_ult();
    if (u == nullptr) return real::sigprocmask(how, set, old);
    return errno_of(-change_mask(u, how, set, old));
}

int sigpending(sigset_t* set) {
    weft::detail::ult* u = self_ult();
    if (u == nullptr) return real::sigpending(set);
    std::uint64_t pending = u->sig_pending.load(weft::detail::memory_order_relaxed) |
                            g_process_pending.load(weft::detail::memory_order_relaxed);
    set_of(pending & u->sig_mask.load(weft::detail::memory_order_relaxed), set);
    return 0;
}

int pthread_kill(pthread_t thread, int sig) {
    if (!ready()) return real::pthread_kill(thread, sig);
    if (sig != 0 && !valid_signal(sig)) return EINVAL;
    weft::detail::ult* t = weft::detail::g_rt->handles.resolve(reinterpret_cast<weft_thread_t>(thread));
    if (t == nullptr) return ESRCH;
    if (sig == 0) return 0;
    send_to_thread(t, sig);
    if (weft::detail::ult* self = self_ult(); self == t) deliver_pending_signals(self);
    return 0;
}

int raise(int sig) {
    weft::detail::ult* u = self_ult();
    if (u == nullptr) return real::raise(sig);
    if (!valid_signal(sig)) return errno_of(-EINVAL);
    send_to_thread(u, sig);
    deliver_pending_signals(u);
    return 0;
}

int kill(pid_t pid, int sig) {
    if (!ready() || !valid_signal(sig) || (routed & bit(sig)) == 0 || pid != getpid()) return real::kill(pid, sig);
    route(sig, sent_info(sig, SI_USER), self_ult());
    return 0;
}

int sigwait(const sigset_t* set, int* sig) {
    weft::detail::ult* u = self_ult();
    if (u == nullptr) return real::sigwait(set, sig);
    int rc = wait_in(u, set, nullptr, nullptr);
    if (rc < 0) return -rc;
    *sig = rc;
    return 0;
}

int sigwaitinfo(const sigset_t* set, siginfo_t* info) {
    weft::detail::ult* u = self_ult();
    if (u == nullptr) return real::sigwaitinfo(set, info);
    return errno_of(wait_in(u, set, info, nullptr));
}

int sigtimedwait(const sigset_t* set, siginfo_t* info, const struct timespec* timeout) {
    weft::detail::ult* u = self_ult();
    if (u == nullptr) return real::sigtimedwait(set, info, timeout);
    return errno_of(wait_in(u, set, info, timeout));
}

// Waits, with `mask` as the thread's mask, until a signal it lets through has
// run its handler (or ended the process); -1 and EINTR, as POSIX has it.
int sigsuspend(const sigset_t* mask) {
    cancel_point cp;
    weft::detail::ult* u = self_ult();
    if (u == nullptr) return real::sigsuspend(mask);
    std::uint64_t saved = u->sig_mask.load(weft::detail::memory_order_relaxed);
    std::uint64_t during = bits_of(mask) & ~unblockable;
    u->sig_mask.store(during, weft::detail::memory_order_relaxed);
    for (;;) {
        siginfo_t info;
        int sig;
        {
            errno_keeper keep;
            sig = wait_signal(u, ~during, 0, false, &info);
        }
        if (sig < 0) break;
        struct sigaction sa;
        if (action_of(sig, &sa) == action::ignore) continue;  // sigsuspend returns after a handler only
        take(u, sig, info);
        break;
    }
    u->sig_mask.store(saved, weft::detail::memory_order_relaxed);
    errno = EINTR;
    return -1;
}

int pause(void) {
    weft::detail::ult* u = self_ult();
    if (u == nullptr) return real::pause();
    sigset_t mask;
    set_of(u->sig_mask.load(weft::detail::memory_order_relaxed), &mask);
    return sigsuspend(&mask);
}

// The process ends as with glibc's _exit, from any thread; weft's reports
// (WEFT_STATS, WEFT_TRACE) are written first, as exit() writes them, in the
// process that started weft (a child of fork() that ends with _exit, as after
// a failed exec, leaves its parent's trace file alone).
void _exit(int status) { exit_with_reports(status); }

void _Exit(int status) { exit_with_reports(status); }

}  // extern "C"

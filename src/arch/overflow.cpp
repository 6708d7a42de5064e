// weft::arch — stack overflow reporting: the SIGSEGV/SIGBUS handler and the
// alternate signal stacks it runs on.
//
// A weft thread that overflows its stack touches the guard region below it and
// the kernel raises SIGSEGV (SIGBUS on some ISAs/kernels for some accesses).
// The handler cannot run on the overflowed stack, so every worker kernel thread
// has an alternate signal stack (SA_ONSTACK). The handler asks the runtime
// (lookup) which weft thread runs here and on which stack, and
// stack_fault_is_overflow whether the faulting address and the interrupted
// stack pointer make the fault an overflow of that stack (the address is in its
// guard, or the stack pointer is below the stack and the access at it); if so
// it prints one line naming the thread and its stack size and aborts -- a clear
// death instead of silent corruption. Otherwise the fault is not ours: the
// handler puts the previous disposition back and returns, the instruction
// faults again, and the previous handler or the default action (core dump with
// the right signal and address) deals with it as if weft had never been there.
// Consequence, accepted: after one foreign fault that some other handler
// recovers from, overflow reports fall back to that handler's behaviour.
//
// Everything the handler does is async-signal-safe: an atomic load, the
// runtime's lookup (required to be safe), hand-formatted numbers, write(2),
// sigaction(2), raise(3), abort(3).
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include "arch/stack.hpp"
#include "base/primitives.hpp"

namespace weft::arch {

namespace {

using detail::atomic;
using detail::memory_order_acquire;
using detail::memory_order_relaxed;
using detail::memory_order_release;

atomic<overflow_lookup_fn> g_lookup{nullptr};
// 0 = not installed, 1 = being installed, 2 = installed. Not std::call_once:
// that is pthread_once, which libweft-pthread interposes.
atomic<int> g_install_state{0};
struct sigaction g_prev_segv;
struct sigaction g_prev_bus;

// --- Async-signal-safe output ---------------------------------------------------
class line {
public:
    void put(const char* s) {
        while (*s != '\0' && n_ < sizeof buf_) buf_[n_++] = *s++;
    }
    void put(const char* s, std::size_t max) {
        for (std::size_t i = 0; i < max && s[i] != '\0' && n_ < sizeof buf_; ++i) buf_[n_++] = s[i];
    }
    void put(std::uint64_t v) {
        char d[20];
        int k = 0;
        do {
            d[k++] = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v != 0);
        while (k > 0 && n_ < sizeof buf_) buf_[n_++] = d[--k];
    }
    void write_to(int fd) const {
        std::size_t off = 0;
        while (off < n_) {
            ssize_t w = ::write(fd, buf_ + off, n_ - off);
            if (w > 0) off += static_cast<std::size_t>(w);
            else if (w < 0 && errno == EINTR) continue;
            else return;
        }
    }

private:
    char buf_[512];
    std::size_t n_ = 0;
};

// The stack pointer of the interrupted flow.
const void* interrupted_sp(void* ucontext) {
    const auto* uc = static_cast<const ucontext_t*>(ucontext);
#if defined(__x86_64__)
    return reinterpret_cast<const void*>(uc->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
    return reinterpret_cast<const void*>(uc->uc_mcontext.sp);
#else
    (void)uc;
    return nullptr;  // only the faulting address decides
#endif
}

void on_fault(int sig, siginfo_t* si, void* ucontext) {
    int saved_errno = errno;
    overflow_lookup_fn lookup = g_lookup.load(memory_order_acquire);
    overflow_info info{};
    if (lookup != nullptr && lookup(&info) &&
        stack_fault_is_overflow(info.stack_lo, si->si_addr, interrupted_sp(ucontext))) {
        report_stack_overflow(info, guard_kind::madvise_guard);
    }
    // Not a guard hit: hand the signal back to whoever had it before.
    ::sigaction(sig, sig == SIGSEGV ? &g_prev_segv : &g_prev_bus, nullptr);
    // A fault re-executes and faults again; a signal someone *sent* (kill,
    // tgkill, sigqueue: si_code <= 0) would not, so send it again. It stays
    // pending until this handler returns and then meets the old disposition.
    if (si->si_code <= 0) ::raise(sig);
    errno = saved_errno;
}

// The alternate stack of the calling kernel thread, if we made it.
struct alt_stack {
    void* map = nullptr;  // mapping base (guard page included)
    std::size_t len = 0;
    void* sp = nullptr;   // what we gave sigaltstack
};
thread_local alt_stack t_alt;

}  // namespace

void report_stack_overflow(const overflow_info& info, guard_kind how) {
    line l;
    l.put("weft: stack overflow in thread ");
    l.put(info.thread_id);
    l.put(" (");
    if (info.thread_name != nullptr && info.thread_name[0] != '\0') l.put(info.thread_name, 64);
    else l.put("unnamed");
    l.put("): its stack is ");
    l.put(static_cast<std::uint64_t>(info.stack_size));
    l.put(" bytes");
    if (how == guard_kind::canary) l.put(" (canary overwritten)");
    l.put("; raise WEFT_STACK_SIZE or use weft_attr_setstacksize\n");
    l.write_to(STDERR_FILENO);
    std::abort();
}

void install_overflow_handler(overflow_lookup_fn lookup) {
    (void)stack_guard_size();  // publish the page and guard sizes before any fault can need them
    g_lookup.store(lookup, memory_order_release);
    int expected = 0;
    if (g_install_state.compare_exchange_strong(expected, 1, memory_order_acquire)) {
        struct sigaction sa {};
        sa.sa_sigaction = &on_fault;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGSEGV, &sa, &g_prev_segv);
        ::sigaction(SIGBUS, &sa, &g_prev_bus);
        g_install_state.store(2, memory_order_release);
        return;
    }
    // Someone else is installing: wait until the previous dispositions are
    // saved, so that no caller returns before the handler is in place.
    while (g_install_state.load(memory_order_acquire) != 2) detail::cpu_relax();
}

int enable_alt_signal_stack() {
    if (t_alt.map != nullptr) return 0;
    stack_t cur{};
    if (::sigaltstack(nullptr, &cur) == 0 && (cur.ss_flags & SS_DISABLE) == 0) return 0;  // keep theirs

    // Room for the kernel's signal frame (xsave area: up to ~11 KiB with AMX,
    // which sysconf(_SC_SIGSTKSZ) accounts for) and the handler, plus a margin
    // for a previous handler that gets the re-executed fault on this stack
    // (ASan's, for one, symbolises on it).
    long page_v = ::sysconf(_SC_PAGESIZE);
    const std::size_t page = page_v > 0 ? static_cast<std::size_t>(page_v) : 4096;
    long sig_min = ::sysconf(_SC_SIGSTKSZ);
    std::size_t size = std::max<std::size_t>(64 * 1024, sig_min > 0 ? 4 * static_cast<std::size_t>(sig_min) : 0);
    size = (size + page - 1) / page * page;
    std::size_t len = size + page;
    void* map = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                       -1, 0);
    if (map == MAP_FAILED) return errno == EAGAIN ? EAGAIN : ENOMEM;
    // A guard below, so a runaway handler dies instead of scribbling. One per
    // worker: the two VMAs it may cost are negligible.
    ::mprotect(map, page, PROT_NONE);
    stack_t ss{};
    ss.ss_sp = static_cast<char*>(map) + page;
    ss.ss_size = size;
    ss.ss_flags = 0;
    if (::sigaltstack(&ss, nullptr) != 0) {
        int e = errno;
        ::munmap(map, len);
        return e;
    }
    t_alt = alt_stack{map, len, ss.ss_sp};
    return 0;
}

void disable_alt_signal_stack() {
    if (t_alt.map == nullptr) return;
    stack_t cur{};
    if (::sigaltstack(nullptr, &cur) == 0 && (cur.ss_flags & SS_DISABLE) == 0 && cur.ss_sp == t_alt.sp) {
        stack_t off{};
        off.ss_flags = SS_DISABLE;
        // EPERM: we are running on it (called from a signal handler); then the
        // mapping must stay.
        if (::sigaltstack(&off, nullptr) != 0) return;
    }
    ::munmap(t_alt.map, t_alt.len);
    t_alt = alt_stack{};
}

}  // namespace weft::arch

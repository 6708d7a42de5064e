#!/usr/bin/env bash
# Checks the AArch64 context switch for real: cross-compiles a self-contained
# checker against src/arch (switch_aarch64_aapcs_elf_gas.S, context_asm.cpp,
# stack.cpp, overflow.cpp, and the spinlock's census in src/base) and runs it under qemu-user (-cpu max), at -O0 and
# -O2, and once more with branch protection (-mbranch-protection=standard).
#
# Needs: g++-aarch64-linux-gnu and qemu-user (Debian/Ubuntu:
#   apt-get install -y g++-aarch64-linux-gnu qemu-user).
# Without them it prints "skipped: no cross toolchain" and exits 77 (ctest: skipped).
#
# Environment (all optional):
#   WEFT_SOURCE_DIR        the source tree (default: two levels above this script)
#   WEFT_AARCH64_CXX       cross compiler (default aarch64-linux-gnu-g++)
#   WEFT_QEMU_AARCH64      emulator (default qemu-aarch64)
#   WEFT_AARCH64_SYSROOT   target root for qemu -L (default /usr/aarch64-linux-gnu)
set -euo pipefail

src="${WEFT_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
cxx="${WEFT_AARCH64_CXX:-aarch64-linux-gnu-g++}"
qemu="${WEFT_QEMU_AARCH64:-qemu-aarch64}"
sysroot="${WEFT_AARCH64_SYSROOT:-/usr/aarch64-linux-gnu}"

if ! command -v "$cxx" >/dev/null 2>&1 || ! command -v "$qemu" >/dev/null 2>&1 || [[ ! -d "$sysroot" ]]; then
    echo "skipped: no cross toolchain ($cxx, $qemu or $sysroot missing)"
    exit 77
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cat >"$work/check.cpp" <<'EOF'
// Self-contained checker for weft::arch on AArch64 (no GoogleTest for the target).
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <unwind.h>

#include <cerrno>
#include <cfenv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "arch/context.hpp"
#include "arch/stack.hpp"

using namespace weft::arch;

static int failures = 0;
#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            std::fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);      \
            ++failures;                                                               \
        }                                                                             \
    } while (0)

static void* new_stack(std::size_t size) {
    void* p = mmap(nullptr, size + 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) std::abort();
    mprotect(p, 65536, PROT_NONE);
    return static_cast<char*>(p) + 65536;
}

static context main_ctx, fib_ctx;

// --- ping-pong with arg transfer -------------------------------------------------
static void pp_entry(void* a) {
    for (;;) a = switch_context(&fib_ctx, &main_ctx, reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(a) * 3 + 1));
}
static void check_ping_pong() {
    make_context(&fib_ctx, new_stack(65536), 65536, pp_entry);
    // Called through a pointer the compiler cannot see through, so that under
    // BTI the call is an indirect branch and needs switch_context's `bti c`.
    void* (*volatile sw)(context*, context*, void*) = &switch_context;
    for (std::uintptr_t i = 0; i < 100000; ++i) {
        auto r = reinterpret_cast<std::uintptr_t>(sw(&main_ctx, &fib_ctx, reinterpret_cast<void*>(i)));
        if (r != i * 3 + 1) { CHECK(r == i * 3 + 1); return; }
    }
    std::puts("ok: ping-pong, 200000 switches, arg transferred");
}

// --- ring of contexts ----------------------------------------------------------
static constexpr int ring_n = 16;
static context ring[ring_n];
static int visits[ring_n];
static void ring_entry(void* a) {
    auto i = reinterpret_cast<std::uintptr_t>(a);
    for (;;) {
        ++visits[i];
        context* to = i + 1 < ring_n ? &ring[i + 1] : &main_ctx;
        i = reinterpret_cast<std::uintptr_t>(switch_context(&ring[i], to, reinterpret_cast<void*>(i + 1)));
    }
}
static void check_ring() {
    for (int i = 0; i < ring_n; ++i) make_context(&ring[i], new_stack(16384), 16384, ring_entry);
    for (int lap = 0; lap < 50; ++lap)
        CHECK(reinterpret_cast<std::uintptr_t>(switch_context(&main_ctx, &ring[0], nullptr)) == ring_n);
    for (int i = 0; i < ring_n; ++i) CHECK(visits[i] == 50);
    std::puts("ok: ring of 16 contexts");
}

// --- callee-saved registers: x19-x28, d8-d15 ---------------------------------------
static void clobber_entry(void*) {
    for (;;) {
        asm volatile(
            "mov x19, #0xdead\n\tmov x20, #0xdead\n\tmov x21, #0xdead\n\tmov x22, #0xdead\n\t"
            "mov x23, #0xdead\n\tmov x24, #0xdead\n\tmov x25, #0xdead\n\tmov x26, #0xdead\n\t"
            "mov x27, #0xdead\n\tmov x28, #0xdead\n\t"
            "fmov d8, #-1.0\n\tfmov d9, #-1.0\n\tfmov d10, #-1.0\n\tfmov d11, #-1.0\n\t"
            "fmov d12, #-1.0\n\tfmov d13, #-1.0\n\tfmov d14, #-1.0\n\tfmov d15, #-1.0\n\t" ::
                : "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "d8", "d9", "d10",
                  "d11", "d12", "d13", "d14", "d15");
        switch_context(&fib_ctx, &main_ctx, nullptr);
    }
}
static void check_callee_saved() {
    make_context(&fib_ctx, new_stack(65536), 65536, clobber_entry);
    std::uint64_t x19, x28, got19, got28;
    double d8, d15, gotd8, gotd15;
    // Load known values straight into the registers, switch, read them back:
    // the asm statement itself spans the call, so nothing but switch_context
    // can preserve them.
    asm volatile(
        "mov x19, #0x1919\n\tmov x28, #0x2828\n\t"
        "fmov d8, #2.5\n\tfmov d15, #-3.5\n\t"
        "mov x0, %[m]\n\tmov x1, %[f]\n\tmov x2, #0\n\t"
        "bl _ZN4weft4arch14switch_contextEPNS0_7contextES2_Pv\n\t"
        "mov %[g19], x19\n\tmov %[g28], x28\n\tfmov %d[gd8], d8\n\tfmov %d[gd15], d15\n\t"
        : [g19] "=r"(got19), [g28] "=r"(got28), [gd8] "=w"(gotd8), [gd15] "=w"(gotd15)
        : [m] "r"(&main_ctx), [f] "r"(&fib_ctx)
        : "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15",
          "x16", "x17", "x19", "x28", "x30", "d8", "d15", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16",
          "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31",
          "memory", "cc");
    x19 = 0x1919; x28 = 0x2828; d8 = 2.5; d15 = -3.5;
    CHECK(got19 == x19);
    CHECK(got28 == x28);
    CHECK(gotd8 == d8);
    CHECK(gotd15 == d15);
    std::puts("ok: callee-saved x19/x28/d8/d15 preserved across a switch");
}

// --- FPCR per context -----------------------------------------------------------
static int seen_first = -1, seen_again = -1;
static void fp_entry(void*) {
    seen_first = fegetround();
    fesetround(FE_UPWARD);
    switch_context(&fib_ctx, &main_ctx, nullptr);
    seen_again = fegetround();
    switch_context(&fib_ctx, &main_ctx, nullptr);
    std::abort();
}
static void check_fpcr() {
    fesetround(FE_TOWARDZERO);
    make_context(&fib_ctx, new_stack(65536), 65536, fp_entry);
    switch_context(&main_ctx, &fib_ctx, nullptr);
    CHECK(seen_first == FE_TOWARDZERO);
    CHECK(fegetround() == FE_TOWARDZERO);
    fesetround(FE_DOWNWARD);
    switch_context(&main_ctx, &fib_ctx, nullptr);
    CHECK(seen_again == FE_UPWARD);
    CHECK(fegetround() == FE_DOWNWARD);
    fesetround(FE_TONEAREST);
    std::puts("ok: FPCR rounding mode per context, inherited at creation");
}

// --- alignment, unwinding, exceptions, recursion -------------------------------------
static std::uintptr_t entry_sp = 1, entry_fp = 1;
static int unwind_rc = -1, unwind_frames = 0;
static bool caught = false;
static std::uint64_t rec_sum = 0;
static _Unwind_Reason_Code count(struct _Unwind_Context*, void* p) {
    return ++*static_cast<int*>(p) > 64 ? _URC_NORMAL_STOP : _URC_NO_REASON;
}
[[gnu::noinline]] static void thrower(int n) {
    if (n == 0) throw std::runtime_error("aarch64");
    thrower(n - 1);
    asm volatile("" ::: "memory");
}
[[gnu::noinline]] static std::uint64_t rec(int d) {
    volatile std::uint64_t pad[16];
    for (int i = 0; i < 16; ++i) pad[i] = static_cast<std::uint64_t>(d + i);
    std::uint64_t below = d == 0 ? 0 : rec(d - 1);
    std::uint64_t s = 0;
    for (int i = 0; i < 16; ++i) s += pad[i];
    return below + s;
}
static void misc_entry(void*) {
    std::uintptr_t sp;
    asm volatile("mov %0, sp" : "=r"(sp));
    entry_sp = sp;
    entry_fp = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
    unwind_rc = _Unwind_Backtrace(&count, &unwind_frames);
    try { thrower(10); } catch (const std::runtime_error& e) { caught = std::strcmp(e.what(), "aarch64") == 0; }
    rec_sum = rec(3000);
    switch_context(&fib_ctx, &main_ctx, nullptr);
    std::abort();
}
static void check_misc() {
    make_context(&fib_ctx, new_stack(1 << 20), (1 << 20) - 48, misc_entry);  // odd size: top must be realigned
    switch_context(&main_ctx, &fib_ctx, nullptr);
    CHECK(entry_sp % 16 == 0);
    CHECK(entry_fp % 16 == 0);
    CHECK(unwind_rc == _URC_END_OF_STACK);
    CHECK(unwind_frames >= 1 && unwind_frames <= 8);
    CHECK(caught);
    std::uint64_t want = 0;
    for (std::uint64_t d = 0; d <= 3000; ++d) want += 16 * d + 120;
    CHECK(rec_sum == want);
    std::puts("ok: aligned entry, unwinder stops at the trampoline, exceptions, deep recursion");
}

// --- stack pool and overflow report ---------------------------------------------
static stack g_st;
static bool lookup(overflow_info* out) {
    out->thread_id = 9;
    out->thread_name = "qemu";
    out->stack_size = g_st.size;
    out->stack_lo = g_st.lo;
    return true;
}
static volatile bool keep_going = true;
[[gnu::noinline]] static int runaway(int d) {
    volatile char f[256];
    f[0] = static_cast<char>(d);
    return (keep_going ? runaway(d + 1) : 0) + f[0];
}
static void overflow_entry(void*) { runaway(0); }
// One frame of 256 KiB on the 64 KiB stack, written from its lowest byte up:
// without probes (this file has none) it lands below the guard region, and the
// handler must recognise it by the interrupted sp (uc_mcontext.sp).
[[gnu::noinline]] static void fill_up(volatile char* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<char>(i);
}
static void big_frame_entry(void*) {
    volatile char big[256 * 1024];
    fill_up(big, sizeof big);
    std::printf("%d\n", big[9]);
}
// Runs entry on a fresh 64 KiB pool stack in a child; returns its stderr and status.
static std::string overflow_child(void (*entry)(void*), int* status) {
    int err[2];
    if (pipe(err) != 0) std::abort();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(err[1], 2);
        stack_pool pool(64 * 1024);
        if (pool.acquire(0, nullptr, &g_st) != 0) _exit(3);
        if (enable_alt_signal_stack() != 0) _exit(4);
        install_overflow_handler(&lookup);
        make_context(&fib_ctx, g_st.lo, g_st.size, entry);
        switch_context(&main_ctx, &fib_ctx, nullptr);
        _exit(5);
    }
    close(err[1]);
    std::string out;
    char buf[512];
    for (ssize_t n; (n = read(err[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    close(err[0]);
    waitpid(pid, status, 0);
    return out;
}
static void check_pool_and_overflow() {
    {
        stack_pool pool(64 * 1024);
        stack_cache cache;
        stack a, b;
        CHECK(pool.acquire(0, &cache, &a) == 0);
        CHECK(reinterpret_cast<std::uintptr_t>(a.hi()) % 16 == 0);
        CHECK(a.guard != guard_kind::canary);
        int fds[2];
        CHECK(pipe(fds) == 0);
        CHECK(write(fds[1], static_cast<char*>(a.lo) - 1, 1) < 0 && errno == EFAULT);
        close(fds[0]);
        close(fds[1]);
        pool.release(a, &cache);
        CHECK(pool.acquire(0, &cache, &b) == 0);
        CHECK(a.lo == b.lo);
        pool.release(b, &cache);
        pool.drain(&cache);
    }
    const char* report = "weft: stack overflow in thread 9 (qemu): its stack is 65536 bytes; raise WEFT_STACK_SIZE";
    int status = 0;
    std::string out = overflow_child(&overflow_entry, &status);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    CHECK(out.find(report) != std::string::npos);
    out = overflow_child(&big_frame_entry, &status);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    CHECK(out.find(report) != std::string::npos);
    std::puts("ok: stack pool guard, overflow reported and aborted (recursion, and a 256 KiB frame)");
}

int main() {
    check_ping_pong();
    check_ring();
    check_callee_saved();
    check_fpcr();
    check_misc();
    check_pool_and_overflow();
    if (failures != 0) {
        std::fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    return 0;
}
EOF

sources=(
    "$work/check.cpp"
    "$src/src/arch/context_asm.cpp"
    "$src/src/arch/stack.cpp"
    "$src/src/arch/overflow.cpp"
    "$src/src/base/fork_gate.cpp"
    "$src/src/base/asymmetric_fence.cpp"
    "$src/src/arch/aarch64/switch_aarch64_aapcs_elf_gas.S"
)

run() {
    local name="$1"
    shift
    echo "== aarch64 $name"
    "$cxx" -std=c++20 -g -Wall -Wextra -I"$src/src" -I"$src/include" "$@" "${sources[@]}" -o "$work/check" -pthread
    "$qemu" -cpu max -L "$sysroot" "$work/check"
}

run "-O0" -O0
run "-O2" -O2
# Branch protection. PAC: qemu's "max" CPU authenticates return addresses, so a
# switch that mixed up the signed link registers of two flows would fault here.
# BTI: the note must be on our object; the run cannot enforce landing pads,
# because Debian's crt*.o and libgcc lack the BTI note, which turns BTI off for
# the whole executable (forcing it with -z force-bti traps in the C runtime).
run "-O2 -mbranch-protection=standard" -O2 -mbranch-protection=standard
if command -v readelf >/dev/null 2>&1; then
    "$cxx" -O2 -mbranch-protection=standard -c "$src/src/arch/aarch64/switch_aarch64_aapcs_elf_gas.S" -o "$work/sw.o"
    if ! readelf -n "$work/sw.o" | grep -q "BTI, PAC"; then
        echo "FAIL: switch_aarch64_aapcs_elf_gas.S lacks the BTI/PAC property note" >&2
        exit 1
    fi
fi
echo "arch_aarch64_qemu: all checks passed"

// weft::arch context switch: requirement tests for make_context/switch_context.
// One behaviour per test. Every switch goes through the sanitizer hooks, as the
// core's does, so the file also runs under ASan and TSan.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unwind.h>

#include <cfenv>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "arch/context.hpp"
#include "arch/fiber_sanitizer.hpp"

namespace {

using weft::arch::context;
using weft::arch::make_context;
using weft::arch::san_fiber;
using weft::arch::switch_context;

// A flow of control: a context plus its sanitizer state.
struct flow {
    context ctx{};
    san_fiber san{};
};

// A stack of its own mapping with a PROT_NONE page below, so a test that
// overruns dies at once instead of corrupting its neighbours.
class test_stack {
public:
    explicit test_stack(std::size_t size) : size_(size) {
        map_ = ::mmap(nullptr, size_ + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (map_ == MAP_FAILED) throw std::runtime_error("mmap");
        ::mprotect(map_, 4096, PROT_NONE);
    }
    ~test_stack() { ::munmap(map_, size_ + 4096); }
    test_stack(const test_stack&) = delete;
    test_stack& operator=(const test_stack&) = delete;
    void* lo() const { return static_cast<char*>(map_) + 4096; }
    std::size_t size() const { return size_; }

private:
    void* map_;
    std::size_t size_;
};

// The core's switch sequence.
void* sw(flow* from, flow* to, void* arg, bool from_finishing = false) {
    weft::arch::san_before_switch(&from->san, &to->san, from_finishing);
    void* r = switch_context(&from->ctx, &to->ctx, arg);
    weft::arch::san_after_switch(&from->san);
    return r;
}

// A fiber on its own stack, with the calling flow as "main".
struct fiber {
    flow main;
    flow self;
    test_stack stack;
    fiber(std::size_t size, weft::arch::entry_fn entry) : stack(size) {
        weft::arch::san_fiber_init_current(&main.san);
        make_context(&self.ctx, stack.lo(), stack.size(), entry);
        weft::arch::san_fiber_create(&self.san, stack.lo(), stack.size());
    }
    ~fiber() { weft::arch::san_fiber_destroy(&self.san); }
};

fiber* g_fiber = nullptr;  // the fiber a test's entry function runs in

// --- ping_pong ---------------------------------------------------------------
void ping_pong_entry(void* arg) {
    weft::arch::san_after_switch(&g_fiber->self.san);
    for (;;) {
        auto v = reinterpret_cast<std::uintptr_t>(arg);
        arg = sw(&g_fiber->self, &g_fiber->main, reinterpret_cast<void*>(v * 2 + 1));
    }
}

TEST(arch_context, ping_pong) {
    fiber f(64 * 1024, &ping_pong_entry);
    g_fiber = &f;
    constexpr std::uintptr_t rounds = 200'000;
    for (std::uintptr_t i = 0; i < rounds; ++i) {
        void* r = sw(&f.main, &f.self, reinterpret_cast<void*>(i));
        ASSERT_EQ(reinterpret_cast<std::uintptr_t>(r), i * 2 + 1);
    }
}

// --- first switch: entry receives the arg -----------------------------------
void* g_entry_arg = nullptr;
void first_arg_entry(void* arg) {
    weft::arch::san_after_switch(&g_fiber->self.san);
    g_entry_arg = arg;
    sw(&g_fiber->self, &g_fiber->main, nullptr, true);
    __builtin_trap();
}

TEST(arch_context, entry_receives_first_arg) {
    fiber f(64 * 1024, &first_arg_entry);
    g_fiber = &f;
    int token = 0;
    sw(&f.main, &f.self, &token);
    EXPECT_EQ(g_entry_arg, &token);
}

// --- a ring of contexts switching among themselves ----------------------------
struct ring {
    flow main;
    std::vector<flow> flows;
    std::vector<std::unique_ptr<test_stack>> stacks;
    std::vector<int> visits;
};
ring* g_ring = nullptr;

void ring_entry(void* arg) {
    auto idx = reinterpret_cast<std::uintptr_t>(arg);
    weft::arch::san_after_switch(&g_ring->flows[idx].san);
    for (;;) {
        ++g_ring->visits[idx];
        std::size_t next = idx + 1;
        flow* to = next < g_ring->flows.size() ? &g_ring->flows[next] : &g_ring->main;
        // Each flow learns its own index back when it is resumed.
        void* r = sw(&g_ring->flows[idx], to, reinterpret_cast<void*>(next));
        idx = reinterpret_cast<std::uintptr_t>(r);
    }
}

TEST(arch_context, ring_of_contexts) {
    constexpr std::size_t n = 64;
    constexpr int laps = 100;
    ring r;
    r.flows.resize(n);
    r.visits.assign(n, 0);
    weft::arch::san_fiber_init_current(&r.main.san);
    for (std::size_t i = 0; i < n; ++i) {
        r.stacks.push_back(std::make_unique<test_stack>(32 * 1024));
        make_context(&r.flows[i].ctx, r.stacks[i]->lo(), r.stacks[i]->size(), &ring_entry);
        weft::arch::san_fiber_create(&r.flows[i].san, r.stacks[i]->lo(), r.stacks[i]->size());
    }
    g_ring = &r;
    for (int lap = 0; lap < laps; ++lap) {
        void* back = sw(&r.main, &r.flows[0], reinterpret_cast<void*>(std::uintptr_t{0}));
        ASSERT_EQ(reinterpret_cast<std::uintptr_t>(back), n);
    }
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(r.visits[i], laps) << "flow " << i;
    for (auto& f : r.flows) weft::arch::san_fiber_destroy(&f.san);
}

// --- callee-saved registers survive a switch ------------------------------------
// The fiber overwrites every callee-saved register with garbage before it
// switches back; values the main flow keeps live across the switch (which the
// compiler places in callee-saved registers) must come back intact.
void clobber_entry(void*) {
    weft::arch::san_after_switch(&g_fiber->self.san);
    for (;;) {
#if defined(__x86_64__)
        asm volatile(
            "mov $0xdead0001, %%rbx\n\t"
            "mov $0xdead0012, %%r12\n\t"
            "mov $0xdead0013, %%r13\n\t"
            "mov $0xdead0014, %%r14\n\t"
            "mov $0xdead0015, %%r15\n\t" ::
                : "rbx", "r12", "r13", "r14", "r15");
#elif defined(__aarch64__)
        asm volatile(
            "mov x19, #0xdead\n\tmov x20, #0xdead\n\tmov x21, #0xdead\n\tmov x22, #0xdead\n\t"
            "mov x23, #0xdead\n\tmov x24, #0xdead\n\tmov x25, #0xdead\n\tmov x26, #0xdead\n\t"
            "mov x27, #0xdead\n\tmov x28, #0xdead\n\t"
            "fmov d8, #-1.0\n\tfmov d9, #-1.0\n\tfmov d10, #-1.0\n\tfmov d11, #-1.0\n\t"
            "fmov d12, #-1.0\n\tfmov d13, #-1.0\n\tfmov d14, #-1.0\n\tfmov d15, #-1.0\n\t" ::
                : "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "d8", "d9", "d10",
                  "d11", "d12", "d13", "d14", "d15");
#endif
        sw(&g_fiber->self, &g_fiber->main, nullptr);
    }
}

volatile std::uint64_t g_seed_int[10] = {11, 22, 33, 44, 55, 66, 77, 88, 99, 111};
volatile double g_seed_dbl[8] = {1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5};

TEST(arch_context, callee_saved_registers_preserved) {
    fiber f(64 * 1024, &clobber_entry);
    g_fiber = &f;
    for (int round = 0; round < 100; ++round) {
        std::uint64_t a0 = g_seed_int[0], a1 = g_seed_int[1], a2 = g_seed_int[2], a3 = g_seed_int[3],
                      a4 = g_seed_int[4], a5 = g_seed_int[5], a6 = g_seed_int[6], a7 = g_seed_int[7],
                      a8 = g_seed_int[8], a9 = g_seed_int[9];
        double d0 = g_seed_dbl[0], d1 = g_seed_dbl[1], d2 = g_seed_dbl[2], d3 = g_seed_dbl[3], d4 = g_seed_dbl[4],
               d5 = g_seed_dbl[5], d6 = g_seed_dbl[6], d7 = g_seed_dbl[7];
        sw(&f.main, &f.self, nullptr);
        ASSERT_EQ(a0 + a1 * 3 + a2 * 5 + a3 * 7 + a4 * 11 + a5 * 13 + a6 * 17 + a7 * 19 + a8 * 23 + a9 * 29,
                  11u + 66u + 165u + 308u + 605u + 858u + 1309u + 1672u + 2277u + 3219u);
        ASSERT_EQ(d0 + d1 * 2 + d2 * 3 + d3 * 4 + d4 * 5 + d5 * 6 + d6 * 7 + d7 * 8,
                  1.5 + 5.0 + 10.5 + 18.0 + 27.5 + 39.0 + 52.5 + 68.0);
    }
}

// --- FP control state is per context ------------------------------------------
int g_fiber_round_seen = -1;
int g_fiber_round_seen_again = -1;
#if defined(__x86_64__)
unsigned g_fiber_mxcsr_rc = 0;
#endif

void fp_entry(void*) {
    weft::arch::san_after_switch(&g_fiber->self.san);
    g_fiber_round_seen = std::fegetround();  // inherited from the creator
    std::fesetround(FE_UPWARD);
    sw(&g_fiber->self, &g_fiber->main, nullptr);
    g_fiber_round_seen_again = std::fegetround();
#if defined(__x86_64__)
    g_fiber_mxcsr_rc = (_mm_getcsr() >> 13) & 3;
#endif
    sw(&g_fiber->self, &g_fiber->main, nullptr, true);
    __builtin_trap();
}

TEST(arch_context, fp_rounding_mode_is_per_context) {
    const int saved = std::fegetround();
    std::fesetround(FE_TOWARDZERO);
    {
        fiber f(64 * 1024, &fp_entry);  // created under FE_TOWARDZERO
        g_fiber = &f;
        sw(&f.main, &f.self, nullptr);
        EXPECT_EQ(g_fiber_round_seen, FE_TOWARDZERO);  // inherited, like pthread_create
        EXPECT_EQ(std::fegetround(), FE_TOWARDZERO);   // the fiber's FE_UPWARD stayed there
#if defined(__x86_64__)
        EXPECT_EQ((_mm_getcsr() >> 13) & 3, 3u);  // MXCSR RC = toward zero
#endif
        std::fesetround(FE_DOWNWARD);
        sw(&f.main, &f.self, nullptr);
        EXPECT_EQ(g_fiber_round_seen_again, FE_UPWARD);
#if defined(__x86_64__)
        EXPECT_EQ(g_fiber_mxcsr_rc, 2u);  // MXCSR RC = up
#endif
        EXPECT_EQ(std::fegetround(), FE_DOWNWARD);
    }
    std::fesetround(saved);
}

// --- deep recursion on a fresh stack ------------------------------------------
[[gnu::noinline]] std::uint64_t recurse_sum(int depth) {
    volatile std::uint64_t pad[32];  // 256 bytes per frame that must survive the descent
    for (int i = 0; i < 32; ++i) pad[i] = static_cast<std::uint64_t>(depth) * 32 + static_cast<std::uint64_t>(i);
    std::uint64_t below = depth == 0 ? 0 : recurse_sum(depth - 1);
    std::uint64_t mine = 0;
    for (int i = 0; i < 32; ++i) mine += pad[i];
    return below + mine;
}

std::uint64_t g_recursion_result = 0;
constexpr int recursion_depth = 4000;  // ~1.2 MiB of frames (more under ASan)

void recursion_entry(void*) {
    weft::arch::san_after_switch(&g_fiber->self.san);
    g_recursion_result = recurse_sum(recursion_depth);
    sw(&g_fiber->self, &g_fiber->main, nullptr, true);
    __builtin_trap();
}

TEST(arch_context, deep_recursion_on_fresh_stack) {
    fiber f(8 * 1024 * 1024, &recursion_entry);
    g_fiber = &f;
    sw(&f.main, &f.self, nullptr);
    // Sum over all frames d = 0..D of sum_i (32 d + i) = 32*32*D(D+1)/2 + (D+1)*496.
    const std::uint64_t d = recursion_depth;
    EXPECT_EQ(g_recursion_result, 32 * 32 * d * (d + 1) / 2 + (d + 1) * 496);
}

// --- stack alignment inside entry -----------------------------------------------
std::uintptr_t g_entry_frame = 1;
std::uintptr_t g_nested_frame = 1;

[[gnu::noinline]] void nested_frame_probe() {
    g_nested_frame = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
    asm volatile("" ::: "memory");
}

void alignment_entry(void*) {
    // With a correctly aligned call into entry, the frame pointer (rbp after
    // `push rbp` on x86-64; x29 after the frame record on AArch64) is 16-aligned.
    g_entry_frame = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
    weft::arch::san_after_switch(&g_fiber->self.san);
    nested_frame_probe();
    sw(&g_fiber->self, &g_fiber->main, nullptr, true);
    __builtin_trap();
}

TEST(arch_context, stack_aligned_in_entry) {
    for (std::size_t size : {std::size_t{16 * 1024}, std::size_t{16 * 1024 + 16}, std::size_t{16 * 1024 + 48}}) {
        fiber f(20 * 1024, &alignment_entry);
        g_fiber = &f;
        // Size not a multiple of the page: make_context must still align the top.
        make_context(&f.self.ctx, f.stack.lo(), size, &alignment_entry);
        sw(&f.main, &f.self, nullptr);
        EXPECT_EQ(g_entry_frame % 16, 0u) << "size " << size;
        EXPECT_EQ(g_nested_frame % 16, 0u) << "size " << size;
        auto lo = reinterpret_cast<std::uintptr_t>(f.stack.lo());
        EXPECT_GT(g_entry_frame, lo);
        EXPECT_LT(g_entry_frame, lo + size);
    }
}

// --- unwinders stop at the trampoline -------------------------------------------
struct unwind_state {
    int frames = 0;
};
_Unwind_Reason_Code count_frame(struct _Unwind_Context*, void* p) {
    auto* s = static_cast<unwind_state*>(p);
    if (++s->frames > 64) return _URC_NORMAL_STOP;  // a runaway walk: fail below
    return _URC_NO_REASON;
}
_Unwind_Reason_Code g_unwind_rc = _URC_NO_REASON;
int g_unwind_frames = 0;

[[gnu::noinline]] void unwind_probe() {
    unwind_state s;
    g_unwind_rc = _Unwind_Backtrace(&count_frame, &s);
    g_unwind_frames = s.frames;
    asm volatile("" ::: "memory");
}

void unwind_entry(void*) {
    weft::arch::san_after_switch(&g_fiber->self.san);
    unwind_probe();
    sw(&g_fiber->self, &g_fiber->main, nullptr, true);
    __builtin_trap();
}

TEST(arch_context, unwinder_stops_at_trampoline) {
    fiber f(64 * 1024, &unwind_entry);
    g_fiber = &f;
    sw(&f.main, &f.self, nullptr);
    EXPECT_EQ(g_unwind_rc, _URC_END_OF_STACK);
    // unwind_probe, unwind_entry, the trampoline (plus _Unwind_Backtrace itself).
    EXPECT_GE(g_unwind_frames, 2);
    EXPECT_LE(g_unwind_frames, 8);
}

// --- C++ exceptions inside a context ------------------------------------------
[[gnu::noinline]] void throw_deep(int n) {
    if (n == 0) throw std::runtime_error("from a fiber");
    throw_deep(n - 1);
    asm volatile("" ::: "memory");
}
bool g_caught = false;

void exception_entry(void*) {
    weft::arch::san_after_switch(&g_fiber->self.san);
    try {
        throw_deep(20);
    } catch (const std::runtime_error& e) {
        g_caught = std::strcmp(e.what(), "from a fiber") == 0;
    }
    sw(&g_fiber->self, &g_fiber->main, nullptr, true);
    __builtin_trap();
}

TEST(arch_context, exception_caught_inside_context) {
    fiber f(64 * 1024, &exception_entry);
    g_fiber = &f;
    sw(&f.main, &f.self, nullptr);
    EXPECT_TRUE(g_caught);
}

// --- an entry that returns traps ----------------------------------------------
void returning_entry(void*) { weft::arch::san_after_switch(&g_fiber->self.san); }

TEST(arch_context, returning_entry_traps) {
    // Re-exec the binary for the child: the test process may have other
    // threads (sanitizer or runtime workers) that a plain fork would not copy.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
#if defined(WEFT_CONTEXT_UCONTEXT)
    const int expected = SIGABRT;  // the ucontext trampoline aborts
#elif defined(__x86_64__)
    const int expected = SIGILL;  // ud2
#else
    const int expected = SIGTRAP;  // brk
#endif
    EXPECT_EXIT(
        {
            fiber f(64 * 1024, &returning_entry);
            g_fiber = &f;
            sw(&f.main, &f.self, nullptr);
        },
        ::testing::KilledBySignal(expected), "");
}

}  // namespace

// weft::detail — the ult: a weft thread's control block.
//
// Glossary (used across src/core, src/sched, src/sync):
//   ult      a user-level thread: a stack, a saved context, this control block.
//   worker   a kernel thread that runs ults, one at a time (src/core/worker.hpp).
//   idle ult a worker's own flow that looks for work and parks; never queued.
//   main     the ult made from the flow that called weft_init.
//   policy   the pluggable part that orders ready ults (src/sched/policy.hpp).
//
// A ult created with the default stack size lives at the top of its own stack
// (one allocation for both, recycled together); main and the idle ults have their
// control block on the heap. Programs never see a ult's address: a
// weft_thread_t is an (index, generation) handle into the runtime's handle
// table (core/handle.hpp), so a handle kept after its thread was joined or
// detached is caught there instead of reaching whatever reuses the storage.
#pragma once

#include <cstddef>
#include <cstdint>

#include "arch/context.hpp"
#include "arch/fiber_sanitizer.hpp"
#include "arch/stack.hpp"
#include "base/primitives.hpp"
#include "weft/weft.h"

namespace weft::detail {

struct wait_record;

enum class ult_kind : std::uint8_t {
    regular,
    main,
    idle
};

// join_word states (anything else is the wait_record* of a blocked joiner).
// Who may join or detach is settled before join_word is touched: the one
// caller that claimed the thread's handle (core/handle.hpp). join_word is
// between that caller and the thread's own end.
inline constexpr std::uintptr_t join_running = 0;   // not finished, nobody joins
inline constexpr std::uintptr_t join_exiting = 1;   // switching away for the last time
inline constexpr std::uintptr_t join_finished = 2;  // ended; its stack may be reclaimed
inline constexpr std::uintptr_t join_detached = 3;  // detached: recycled when it ends

// `magic` marks a control block in use: the deadlock report walks every stack
// the pool ever carved and reads the control block at its top.
inline constexpr std::uint32_t ult_magic_live = 0x77656674;  // "weft"
// A thread of a runtime the child of fork() abandoned (runtime.hpp,
// fork_child): it does not exist there, and a wake-up for it is dropped.
inline constexpr std::uint32_t ult_magic_abandoned = 0x676f6e65;  // "gone"

struct ult {
    // --- Touched on every switch ------------------------------------------
    arch::context ctx;
    // 1 while the ult is suspended with its context saved in ctx. A ult may be
    // made ready (even picked by another worker) while its old worker is still
    // switching away from it; whoever switches to it waits for this flag,
    // which the old worker sets right after the switch (dispatch.cpp).
    atomic<std::uint32_t> suspended{1};
    int pinned_worker = -1;  // >= 0: may only run on that worker
    // Policy-owned: intrusive links (only between ready() and pick_next(): the
    // core links blocked ults through q_next) and scratch words (for the ult's
    // whole life; dfs keeps its place in the global order there: two links and
    // an order label). See src/sched/policy.hpp.
    ult* q_next = nullptr;
    ult* q_prev = nullptr;
    std::uintptr_t sched_word[3] = {0, 0, 0};
    // Saved C++ exception-handling globals (__cxa_eh_globals: caught-exception
    // stack, uncaught count): they are per kernel thread, so a ult that blocks
    // inside a catch block must take its own with it.
    void* eh_state[2] = {nullptr, nullptr};
    // The thread pointer of the ult's own thread-local storage block
    // (arch/thread_pointer.hpp), or null: it runs with its worker's. Given by
    // libweft-pthread (src/shim/tls_block.cpp) to the threads it creates; the
    // switch writes the thread pointer only when this differs between the two
    // ults (core/dispatch.hpp).
    void* tp = nullptr;
    ult_kind kind = ult_kind::regular;
    bool own_stack = false;  // the control block is heap-allocated (main, idle)
    bool started = false;    // handed to the scheduler (create_inplace threads start later)
    std::uint32_t magic = ult_magic_live;

    // Work/span measurement (profile.hpp): longest path of running time, in
    // ticks, ending at this ult's last switch-in or fork/join point.
    std::uint64_t path = 0;

    // --- Join protocol ---------------------------------------------------------
    atomic<std::uintptr_t> join_word{join_running};
    std::uintptr_t exit_state = 0;  // join_word as the ult left it (for finish)

    // --- Identity and entry --------------------------------------------------
    std::uint64_t id = 0;
    // The message-passing node (src/net) the thread belongs to: its creator's
    // (create_ult), or the one weft_net_spawn names; 0 outside a job.
    std::uint32_t node = 0;
    // Its handle (core/handle.hpp); main's and the idle ults' are made by the
    // first weft_thread_self() on them.
    weft_thread_t handle = WEFT_THREAD_NULL;
    void* (*fn)(void*) = nullptr;
    void* arg = nullptr;
    void* retval = nullptr;
    void* storage = nullptr;  // weft_thread_create_inplace storage
    void (*storage_release)(void*) = nullptr;
    arch::stack stack;
    arch::san_fiber san;

    // --- Blocking (for the deadlock report) -----------------------------------
    // What the ult waits on while blocked; written by the ult itself before it
    // blocks, read by the detector only when no worker runs anything.
    const char* wait_kind = nullptr;
    const void* wait_object = nullptr;

    // --- Thread-specific data (lazily allocated) -------------------------------
    void** key_values = nullptr;

    // Deferred cancellation (libweft-pthread's pthread_cancel, wait.hpp
    // cancel_wait). While `cancel_point` is set (the thread is inside a
    // cancellation point) and `cancel_disabled` is not, wait() publishes the
    // record and lock it waits on, under the spinlock word `cancel_guard`, so
    // that a canceller can take the record out of its queue as a timer does;
    // that first wait clears `cancel_point` (a condition wait's relock of its
    // mutex, which follows, is not cancellable).
    atomic<std::uint32_t> cancel_requested{0};
    bool cancel_point = false;
    bool cancel_disabled = false;
    std::uint32_t cancel_guard = 0;
    wait_record* cancel_rec = nullptr;
    std::uint32_t* cancel_lock = nullptr;

    // Signals under libweft-pthread (src/shim/signals.cpp): the thread's own
    // signal mask (bit n-1 for signal n), inherited from its creator as a
    // Pthreads thread inherits its creator's, and the signals sent to this
    // thread (pthread_kill) that it has not taken yet.
    atomic<std::uint64_t> sig_mask{0};
    atomic<std::uint64_t> sig_pending{0};

    char name[WEFT_THREAD_NAME_MAX];  // not zeroed by the constructor: set at create
};

#if !defined(WEFT_CONTEXT_UCONTEXT)
// The control block shares the top page of its thread's stack with the
// thread's first frames: a thread blocked on a semaphore from its start
// routine reaches about 800 bytes below the top at the switch, this block
// included, and keeps that one page resident (what a live thread costs in
// docs/design/stacks-and-context.md; tests/whitebox/thread_footprint_test.cpp).
// A block grown past this bound eats the room that keeps such a thread, and a
// somewhat deeper one, within that page. (The ucontext build's context is a
// ucontext_t, about 1 KiB by itself.)
static_assert(sizeof(ult) <= 512, "a ult must leave most of its stack's top page to the thread's frames");
#endif

}  // namespace weft::detail

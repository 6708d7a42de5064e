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
// control block on the heap.
#pragma once

#include <cstddef>
#include <cstdint>

#include "arch/context.hpp"
#include "arch/fiber_sanitizer.hpp"
#include "arch/stack.hpp"
#include "sync/primitives.hpp"
#include "weft/weft.h"

namespace weft::detail {

struct wait_record;

enum class ult_kind : std::uint8_t { regular, main, idle };

struct ult {
    // --- Touched on every switch ------------------------------------------
    arch::context ctx;
    // Policy-owned: intrusive links and scratch words. Only the policy that
    // holds the ult (between ready() and pick_next()) touches these.
    ult* q_next = nullptr;
    ult* q_prev = nullptr;
    std::uintptr_t sched_word[2] = {0, 0};
    // Saved C++ exception-handling globals (__cxa_eh_globals: caught-exception
    // stack, uncaught count): they are per kernel thread, so a ult that blocks
    // inside a catch block must take its own with it.
    void* eh_state[2] = {nullptr, nullptr};
    int pinned_worker = -1;  // >= 0: may only run on that worker
    ult_kind kind = ult_kind::regular;
    bool detached = false;
    bool own_stack = false;  // stack came from its own mapping / the tcb is heap-allocated
    bool started = false;    // handed to the scheduler (create_inplace threads start later)

    // --- Identity and entry --------------------------------------------------
    std::uint64_t id = 0;
    void* (*fn)(void*) = nullptr;
    void* arg = nullptr;
    void* retval = nullptr;
    void* storage = nullptr;                 // weft_thread_create_inplace storage
    void (*storage_release)(void*) = nullptr;
    arch::stack stack;
    arch::san_fiber san;

    // --- Join protocol (guarded by join_lock) ------------------------------
    std::uint32_t join_lock = 0;
    bool finished = false;
    bool join_claimed = false;     // a joiner is waiting or has joined
    wait_record* joiner = nullptr;

    // --- Blocking (for the deadlock report) -----------------------------------
    // What the ult waits on while blocked; written by the ult itself before it
    // blocks, read by the detector only when no worker runs anything.
    const char* wait_kind = nullptr;
    const void* wait_object = nullptr;

    // --- Thread registry (guarded by the list's lock) -------------------------
    ult* reg_next = nullptr;
    ult* reg_prev = nullptr;
    int reg_list = -1;

    // --- Thread-specific data (lazily allocated, WEFT_KEYS_MAX slots) ---------
    void** key_values = nullptr;

    char name[WEFT_THREAD_NAME_MAX] = {0};
};

inline ult* from_handle(weft_thread_t t) { return reinterpret_cast<ult*>(t); }
inline weft_thread_t to_handle(ult* u) { return reinterpret_cast<weft_thread_t>(u); }

}  // namespace weft::detail

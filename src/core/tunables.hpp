// weft::detail::tun — every tunable of the runtime in one place, with its unit
// and invariant. "Guess" marks values picked by reasoning, not measurement; a
// measured value gives the command that reproduces its figure.
//
// Constants compiled into programs (the inline filament templates) cannot live
// here, as programs see only include/: they are in include/weft/detail/
// (hunger_word's biases in fil_hunger.hpp, the parallel_for pieces in
// filament_abi.hpp), and this header checks its own constants against them.
// The waits' constants reach their waiters through core/sleep/stages.hpp, the
// coarse-grain baselines' sweep barrier of apps/ included (apps/coarse.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "weft/detail/fil_hunger.hpp"
#include "weft/detail/filament_abi.hpp"
#include "weft/weft.h"

namespace weft::detail::tun {

// --- Workers and threads ----------------------------------------------------------

// --- Stacks (src/arch/stack.cpp) ---
// The guard region below every stack (at least a page). 64 KiB: the probe
// interval GCC assumes on AArch64 with -fstack-clash-protection (its
// stack-clash-protection-guard-size default, 2^16), so a probed frame cannot
// skip it on any ISA weft supports; and, in code built without probes, it
// catches a frame that ends up to 64 KiB below its stack. Larger costs more
// than it catches: see "Guards" in docs/design/stacks-and-context.md for the
// figures (creation of a fresh stack and page tables, 64 KiB to 1 MiB).
inline constexpr std::size_t stack_guard_bytes = 64 * 1024;
static_assert(stack_guard_bytes >= 4096 && stack_guard_bytes % 4096 == 0, "the guard is whole pages");

// --- The ws policy (src/sched/ws.cpp) ---
// Initial work deque: 2^8 slots = 2 KiB per worker. A fork tree keeps about
// one continuation per level of the tree on a worker's deque; 256 levels is
// more than any real recursion, so the deque practically never grows.
inline constexpr unsigned ws_work_log2_capacity = 8;
// Initial yielded deque: 2^4 slots (grows if a worker has more yielders).
inline constexpr unsigned ws_yielded_log2_capacity = 4;
// Every ws_fair_interval-th pick on a worker takes the oldest yielder first.
// Prime so that it does not beat with periodic program behaviour; Go's value.
inline constexpr unsigned ws_fair_interval = 61;
// Failed looks, each followed by a sched_yield(), before an idle worker parks.
// A look plus a yield costs about 0.2-0.3 us here when nothing else wants the
// CPU (sched_yield alone: 170 ns), so 256 of them take about 60 us, the same
// budget as the core's pause-spins (tun::idle_spins): above the ~20 us a
// futex wake-up costs, below anything a user notices as idle CPU burn.
// Measured on the 2-core development machine; a guess elsewhere.
inline constexpr int ws_idle_yield_rounds = 256;
static_assert(ws_idle_yield_rounds > 0, "0 would mean the core's default idle loop (policy.hpp)");

// A futile steal (ws.cpp, "Futile steals"): the stolen thread stopped again
// within this time without queueing any thread (typically a continuation
// that blocks at its join at once). A steal, a switch and a block take
// 1-3 us here; a stolen piece of real work runs longer or spawns. Guess,
// bounded by that figure.
inline constexpr std::int64_t ws_futile_steal_ns = 10'000;
// Futile steals in a row before a thief naps instead of stealing again. One
// happens in parallel programs too (a continuation whose last child is still
// running); a run of them is a serial chain being stolen from. Guess.
inline constexpr int ws_futile_streak = 4;
// The nap that follows: the first, doubled after each further futile steal
// up to the last. The kernel adds its timer slack (50 us by default) to each.
// The longest bounds how late a napping thief finds a parallel phase that
// follows a serial chain; with a steal, a switch and a block per nap the
// napping thief uses about 1% of a CPU. Guess.
inline constexpr std::int64_t ws_nap_first_ns = 32'000;
inline constexpr std::int64_t ws_nap_max_ns = 512'000;

// The keep watcher's period (core/sleep/README.md, "The spinning worker"):
// while the spinner keeps the role for a thread it runs, one parked worker
// wakes this often to see whether the keep has run out with work queued
// (work its victim pushed within the keep, which woke nobody). It bounds that
// work's wait by the keep plus this period when both threads busy-wait. Each
// period costs the watcher a futex time-out and a park (a membarrier):
// 200 a second while roles are kept, nothing otherwise. Guess: ten of the
// longest naps, which already delay a victim's work as long.
inline constexpr std::int64_t ws_keep_watch_ns = 5'000'000;

// --- Mutex (src/sync/mutex.cpp) ---
// Looks at a contended mutex (each followed by a pause, ~30 ns here) before a
// locker queues, on more than one worker: a critical section of a few hundred
// ns ends sooner than a block and wake-up. Guess.
inline constexpr int mutex_spins = 64;
// A waiter queued this long (since its first block) is handed the mutex
// directly by the next unlock. Go's sync.Mutex uses the same 1 ms; guess: long
// enough that hand-offs (and their wait for the receiver to run) stay rare,
// short against any wait a user would notice.
inline constexpr std::int64_t mutex_handoff_after_ns = 1'000'000;

// Highest worker count accepted from WEFT_WORKERS / weft_config_t (workers;
// per-worker tables such as the filament statistics are sized by it). Guess:
// far above the machines weft targets, small enough for static tables.
inline constexpr int max_workers = 1024;
// Every worker may be hungry at once: the count of the filaments' hunger word
// must stay below its lowest bias.
static_assert(max_workers <= hunger_word::count_mask, "max_workers must fit the count of the hunger word");

// Default usable stack bytes of a weft thread (small by default, as Narlikar &
// Blelloch ask). Mapped lazily: a thread that uses 2 KiB costs one or two
// touched pages, not 64 KiB. See docs/design/stacks-and-context.md.
inline constexpr std::size_t default_stack_size = 64 * 1024;
// Free default-size stacks that keep their top page resident when they go
// back to the shared pool (arch::stack_pool_options::keep_top_max): a thread
// whose stack use fits in one page (its control block and first frames) then
// reuses a stack without a page fault, so creating a million threads with a
// hundred thousand live does not fault a page in again for every thread of
// every batch. The cost is at most this many pages kept after the threads
// end (512 MiB with 4 KiB pages, and only after so many were live at once);
// the pages below the top are returned, so a spike of deep stacks keeps one
// page per stack, not its depth. Sized for a program with 100,000 threads
// live at once (weft-bench micro's million_threads) with room to spare.
inline constexpr std::size_t stack_keep_top_max = std::size_t(1) << 17;
// Upper bound accepted for a stack size, bytes (WEFT_STACK_SIZE, attributes).
// Guess: a larger request is almost certainly a unit mistake.
inline constexpr std::size_t max_stack_size = std::size_t(1) << 30;
static_assert(WEFT_STACK_MIN <= default_stack_size && default_stack_size <= max_stack_size,
              "the default stack size must be an accepted one");

// Stack bytes of a worker's idle flow (the scheduling loop) when it cannot use
// the kernel thread's own stack (worker 0, whose native stack belongs to main).
// Guess: the same as a thread's default stack.
inline constexpr std::size_t idle_stack_size = 64 * 1024;

// Free thread-handle slots a worker keeps (core/handle.hpp), and how many move
// between its cache and the shared list at a time: the shared lock is taken at
// most once per handle_cache_batch creations or joins. The same values as the
// stack caches (arch::stack_pool_options), which see the same traffic. Guess.
inline constexpr std::uint32_t handle_cache_max = 64;
inline constexpr std::uint32_t handle_cache_batch = 16;
static_assert(1 <= handle_cache_batch && handle_cache_batch <= handle_cache_max,
              "a spill moves at most what the cache holds");

// --- Idle workers -----------------------------------------------------------------

// Spin iterations an idle worker makes (each a pause plus a look for work)
// before it parks. ~100 ns each here, so ~50 us: above the ~20 us it costs to
// wake a parked worker on this machine, so a worker that would be woken within
// that time never pays for the futex round trip. Guess, bounded by that figure.
inline constexpr int idle_spins = 512;
// sched_yield calls after the spins, before parking (lets a co-scheduled runnable
// kernel thread, e.g. another program, have the CPU before we sleep). Guess.
inline constexpr int idle_yields = 4;
// A worker parked until a timer's deadline (a timed wait, a sleep, a message
// with injected latency) leaves its futex sleep this long before the deadline
// and spins the rest, so that it is awake when the timer fires rather than a
// wake-up later (~20 us on this machine, the cost idle_spins is set against).
// Bounded by that cost: an idle worker burns at most this much per timed park.
// Measured: docs/design/net.md, "A timer's waiter wakes on time".
inline constexpr std::int64_t timer_wake_early_ns = 25'000;

// Pauses a worker spends waiting for a ult that another worker is still
// suspending, before it saves its own ult by switching to its idle ult instead
// (src/core/dispatch.hpp, switch_inline). The other worker needs a few dozen
// instructions in the benign case. Guess.
inline constexpr int handoff_spins = 64;

// Grace period before the deadlock detector looks (src/core/deadlock.cpp): every
// weft thread must have been blocked, with no timer pending and no worker running
// anything, for this long. The verdict does not rest on it (kernel threads outside
// weft are counted, not waited for); it only keeps the check off short idle spells
// and fails a hung test quickly. Guess.
inline constexpr std::int64_t deadlock_grace_ns = 500'000'000;
// While kernel threads outside weft could still wake a blocked weft thread, the
// detector looks again after each period, doubling it from the grace period up
// to this (an outside thread that exits may leave a real deadlock behind).
inline constexpr std::int64_t deadlock_recheck_max_ns = 8'000'000'000;
// ... and after this long of quiet warns once per process that every weft thread
// is blocked (never aborting): far above any wait for an outside thread that a
// test or a batch program makes, short enough that a hung program says so while
// someone is still looking. Guess.
inline constexpr std::int64_t deadlock_warn_ns = 10'000'000'000;

// --- Memory quota (dfs) -----------------------------------------------------------

// Memory quota K of the dfs scheduler (WEFT_QUOTA): bytes a thread may allocate
// through weft's allocator, net of frees, between two scheduling points before
// it is preempted; a single allocation above K first forks about size/K dummy
// threads and then waits for its turn. 256 KiB: a quarter of this machine's
// per-core L2 (1 MiB), so what a thread allocates in one quantum stays cached;
// the additive term of dfs's bound, c*K*p*D, stays at tens of MiB for p = 2 and
// D ~ 20. At 64 KiB, Narlikar & Blelloch's matrix multiply's 128 x 128 temporaries wait
// for their turn too, which runs their siblings one after the other: 0.18 s
// against 0.152 s on 2 workers (medians of six processes each), for a peak heap
// of 1.01x serial instead of 1.01-1.06x (`WEFT_QUOTA=64k weft-bench matmul
// --sched dfs --workers 2 --rounds 6` against the default; docs/design/dfs.md,
// "Default quota").
inline constexpr std::size_t default_quota = 256 * 1024;
// Accepted range of WEFT_QUOTA. Below a page the dummy-thread count of an
// ordinary allocation explodes; above 1 TiB the quota never triggers.
inline constexpr std::size_t min_quota = 1024;
inline constexpr std::size_t max_quota = std::size_t(1) << 40;
static_assert(min_quota <= default_quota && default_quota <= max_quota, "the default quota must be an accepted one");
// Most dummy threads forked before one allocation (size/K is capped here): a
// 1 GiB allocation with K = 1 KiB would otherwise fork a million threads. Guess.
inline constexpr std::uint32_t max_dummies_per_alloc = 1u << 16;
// A large allocation waits for its turn (dfs, src/core/preempt.cpp, await_turn)
// for at most this many pieces of higher-priority work run first, per dummy
// thread it forked, and waits at most this long per dummy thread at a time
// (at most alloc_turn_max_wait_ns) while such work runs on another worker.
// The end of one of Narlikar & Blelloch's sub-multiplies (a 64 x 64 leaf, ~50 us here,
// then its add) takes a few hundred microseconds; 1 ms per dummy (8 ms for a
// 2 MiB temporary at K = 256 KiB) leaves room for a worker descheduled by a
// busy host in the middle of it: at 200 us, one process in six let a
// temporary through early (1.25x the serial heap in one of its rounds).
inline constexpr std::uint64_t alloc_turn_runs_per_dummy = 64;
inline constexpr std::int64_t alloc_turn_wait_ns_per_dummy = 1'000'000;
inline constexpr std::int64_t alloc_turn_max_wait_ns = 50'000'000;
static_assert(alloc_turn_wait_ns_per_dummy <= alloc_turn_max_wait_ns, "one dummy's wait is within the cap");
// ... spinning for the first 50 us of each wait, then yielding the CPU
// between looks (sched_yield), as an idle worker does.
inline constexpr std::int64_t alloc_turn_spin_ns = 50'000;
static_assert(alloc_turn_spin_ns <= alloc_turn_wait_ns_per_dummy, "the spin is part of the wait");
// Weft's allocator re-sums the per-worker heap counters (to sample the peak)
// on every allocation with one worker, and with several once its own counter
// has grown by this many bytes since its last sample (or for an allocation at
// least this big): reading the other workers' counters costs a cache miss
// each. The sampled peak may miss up to about workers * this. Guess.
inline constexpr std::size_t heap_sample_step = 16 * 1024;

// --- Filaments: fork/join ---------------------------------------------------------

// Slots of a participant's fork list (a ring). Must be a power of 2. With
// pruning a list holds at most fil_hungry_list_limit jobs plus the tree sends;
// with pruning off, at most the forks outstanding along one recursion path
// (fib(40): 40). A fork that finds the list full is pruned, so this bounds
// memory, never correctness. Guess.
inline constexpr unsigned fil_list_capacity = 256;
static_assert((fil_list_capacity & (fil_list_capacity - 1)) == 0, "fil_list_capacity must be a power of 2");

// A fork made because some worker is hungry goes to the list only while the
// list is shorter than this; beyond it the fork is pruned (the hungry worker
// has enough to take already). Guess: 2 covers one thief per list on the
// machines we target without flooding the list with small jobs.
inline constexpr int fil_hungry_list_limit = 2;
static_assert(fil_hungry_list_limit >= 1 && unsigned(fil_hungry_list_limit) < fil_list_capacity,
              "a hungry worker's forks must fit the list");

// While someone is hungry, a join forks only if its frame is no deeper than
// the participant's fork_limit (a stack address). A fork sets the limit to its
// own frame; a job taken back or started sets it fil_refill_margin bytes below
// the current frame (a few frames deeper may fork). Every fil_deepen_every
// spins, a hungry participant lowers the others' limits by fil_deepen_step
// bytes, so that a worker deep in pruned code eventually gives work away.
// Guesses: ~64 bytes is one small recursive frame; one level per ~2 us of hunger.
inline constexpr unsigned fil_refill_margin = 256;
inline constexpr int fil_deepen_every = 32;
inline constexpr unsigned fil_deepen_step = 64;

// Bytes of each chunk of a participant's arena (C weft_fil_fork descriptors,
// 96 bytes each). Chunks are kept until the region ends. Guess.
inline constexpr std::size_t fil_arena_chunk = 64 * 1024;

// --- Filaments: iterative ---------------------------------------------------------

// Highest number of pool sets in one sequence (the phase word packs the set
// index in 16 bits).
inline constexpr int fil_max_sets = 65535;
static_assert(fil_max_sets < (1 << 16), "the set index fits the phase word's 16 bits");

// --- Filaments: waiting (participants, and the coarse-grain sweep barrier) --------

// A participant with nothing to do scans for work fil_wait_spins times (a
// pause between scans, ~30 ns each here), then scans and yields the CPU (to
// other weft threads, then to other kernel threads) for fil_wait_yield_ns, then
// sleeps on its semaphore. A sleep costs more than the ~20 us futex wake-up: at
// a sweep barrier the sleeper wakes late and the others then wait for it at
// the next one. Jacobi (n = 420, 10,000 sweeps of ~90 us, 2 workers) ran
// 0.87-0.90 s with 200 us of yielding and 0.98-1.17 s with ~35 us (16 yields),
// sleeping at 12-26 of its barriers instead of 5,000-7,000
// (`weft-bench filaments --app jacobi --size 420 --workers 2` with each value;
// docs/design/filaments.md, "Waiting"). Yielding, not spinning, fills the time,
// so a worker on an oversubscribed CPU lets the others run. apps/coarse.hpp's
// sweep_barrier waits with the same two (core/sleep/stages.hpp,
// filament_stages), so that the coarse-grain baselines wait as the filaments do.
inline constexpr int fil_wait_spins = 256;
inline constexpr std::int64_t fil_wait_yield_ns = 200'000;
static_assert(fil_deepen_every <= fil_wait_spins, "hungry participants deepen the others' limits while they spin");

// --- Adaptive worker count (src/adapt; docs/design/adapt.md) -------------------------

// Time between two readings of the load (WEFT_ADAPT_INTERVAL overrides both).
// ASAT: Severance & Enbody's default, one timed-barrier test per second. The
// schedstat probe costs a few file reads (tens of microseconds) per reading, so
// it reads ten times as often and follows a competitor within a few tenths of
// a second.
inline constexpr int adapt_asat_interval_ms = 1000;
inline constexpr int adapt_schedstat_interval_ms = 100;
inline constexpr int adapt_min_interval_ms = 10;
inline constexpr int adapt_max_interval_ms = 60'000;
// ASAT's "bad" barrier transit: the paper finds three orders of magnitude
// between a balanced transit (all spinning workers on CPUs: microseconds) and
// one where a worker has lost its CPU (a time slice: milliseconds). 1 ms sits
// between the two on this machine (core/sleep/README.md: a wake-up across the
// CPUs is ~20 us; a thread that loses its CPU waits at least the kernel's
// minimum slice, milliseconds). A guess between the two, not measured here.
inline constexpr std::int64_t adapt_bad_transit_ns = 1'000'000;
// A barrier test that has not completed after this long is bad (a worker busy
// in a thread with no scheduling point, or off its CPU for longer).
inline constexpr std::int64_t adapt_test_timeout_ns = 50'000'000;
// Measured passes of the barrier (after one that gathers the workers), and
// the work each thread does before each of them, as in the paper's program
// (a parallel loop, then the barrier). Passes right after the gathering alone
// would find every thread on a CPU: it has just waited for the last one. The
// work leaves the kernel time to take a CPU from one of them, as it does from
// a parallel loop. 4 x 250 us: 1 ms of each active worker per test.
inline constexpr int adapt_barrier_rounds = 4;
inline constexpr std::int64_t adapt_pass_work_ns = 250'000;
// Bad readings in a row before a worker is dropped, and good ones before one
// more is tried ("dipping a toe in the water"). Guesses that make a single
// unlucky reading harmless.
inline constexpr int adapt_bad_readings = 2;
inline constexpr int adapt_good_readings = 3;
// schedstat: a reading is bad when the active workers together waited for a
// CPU (runnable, not running) for at least this share of the interval, in
// CPUs: two busy workers and one CPU-bound competitor sharing two CPUs fairly
// would wait 2 x 1/3 = 0.67 (arithmetic, not a measurement).
// There is room for one more worker when the CPUs this process may use were
// idle at least this much (in CPUs) and the active workers did not wait.
inline constexpr double adapt_wait_bad_cpus = 0.5;
inline constexpr double adapt_idle_room_cpus = 0.6;
inline constexpr double adapt_wait_calm_cpus = 0.1;

// --- The cross-process core budget (src/adapt/budget.cpp; docs/design/budget.md) ---
// Members whose /proc/<pid>/stat one share() reads (round robin over the
// other members), to catch a pid that now names another process, or a zombie.
// Every other member costs only a kill(pid, 0) per call. 2 is a guess: with
// the controller calling every 100 ms, 8 members are all checked within 0.4 s,
// and a stat read costs a few microseconds (docs/design/budget.md, "Costs").
inline constexpr int budget_stat_checks = 2;
static_assert(budget_stat_checks >= 1, "every member must be checked within a bounded number of calls");
// How long a joiner waits for the creator of the segment to size it and
// publish its magic, and the pause between two looks. The creator needs
// microseconds; a second means it died or was stopped (a guess, generous for a
// loaded machine).
inline constexpr std::int64_t budget_init_wait_ns = 1'000'000'000;
inline constexpr std::int64_t budget_init_poll_ns = 1'000'000;
static_assert(0 < budget_init_poll_ns && budget_init_poll_ns < 1'000'000'000 &&
                  budget_init_poll_ns <= budget_init_wait_ns,
              "a look every poll (a timespec's tv_nsec) within the wait");

// --- Messaging: weft's protocol (src/net/protocol*.cpp; docs/design/mpi.md) --------
// Frames and payload bytes one rank may have in flight to one peer
// ("Credits"). Guesses: 64 frames keep a stream of small messages from waiting
// for credit (credit comes back every half window, 32); 4 MiB holds four 1 MiB
// messages. A message longer than the window goes alone, when the whole window
// is free.
inline constexpr std::uint64_t net_window_msgs = 64;
inline constexpr std::uint64_t net_window_bytes = std::uint64_t(4) << 20;
// Up to this many payload bytes a message is a copy and the send returns at
// once; above, the caller's buffer is sent from and the caller waits for the
// send. Guess: where a copy starts to cost more than the wait (a 64 KiB memcpy
// ~5 us).
inline constexpr std::size_t net_copy_max_bytes = 64 * 1024;
// Frames taken per progress step at most (the worker has its own threads).
inline constexpr int net_recv_batch = 16;
// A polling ult's steps complete sends and post control frames every this
// many (step()). Guess: a few hundred ns apart, against credit that a peer
// waits for for a round trip anyway.
inline constexpr unsigned net_waiting_side_every = 8;
// How long a receiver claimed for a long message's payload waits for the link
// to hold that payload (its sender posts it right after the header) before the
// payload goes through a staging buffer instead; the claimed receiver's
// deadline does not end its wait meanwhile. Guess: well above the
// microseconds between a sender's two posts, well below a timeout anyone sets.
inline constexpr std::int64_t net_claim_wait_ns = 50'000;
// How long a long message's header, taken while no receiver waits on its
// port, is held for one before its payload is staged (protocol_receive.cpp,
// receive_direct): a thread whose own send to that peer has just completed
// and that receives next (a ping-pong, an exchange) gets the payload straight
// into its buffer instead of through two more copies. Guess: the same bound
// as net_claim_wait_ns, far above the microseconds from a send's completion to
// the receive that follows it, and below what a staged 1 MiB payload costs.
inline constexpr std::int64_t net_receiver_wait_ns = 50'000;
// The delivery thread's retry of a full port: first and longest sleep.
inline constexpr std::int64_t net_retry_first_ns = 20'000;
inline constexpr std::int64_t net_retry_max_ns = 1'000'000;
// Liveness ("A rank that dies"): a waiter looks at its peer's liveness this
// many times per timeout; from the first look that finds the peer silent it
// pings it (a probe frame of id 0, which any live peer's progress answers), at
// most once per look interval.
inline constexpr std::int64_t net_liveness_looks = 4;
// Progress steps a waiter runs, at most, to receive a ping's answer before it
// declares the peer dead (net_recv_batch frames each).
inline constexpr int net_drain_steps = 64;
static_assert(net_window_msgs >= 2 && net_window_bytes >= 2, "credit comes back every half window");
static_assert(net_recv_batch >= 1 && net_waiting_side_every >= 1 && net_drain_steps >= 1,
              "every progress step takes a frame, and a waiter runs one");
static_assert(0 < net_retry_first_ns && net_retry_first_ns <= net_retry_max_ns,
              "the retry sleep doubles up to its cap");
static_assert(net_liveness_looks >= 1, "a waiter on a peer looks at its liveness at least once per timeout");

// --- Messaging: the transports (src/net/mpi.cpp, faulty.cpp) ---
// The longest frame, header included, and so the most payload a message
// carries in its frame; a longer one's payload goes as a bulk message. Open
// MPI's shared-memory eager limit (btl_vader_eager_limit, 4 KiB) counts its
// own headers: measured between two ranks, a 4,032-byte message goes eagerly
// in about 1 us, one of 4,048 bytes by rendezvous in 6-7 us. The faulty
// transport uses the same, so that the same messages take the inline and the
// bulk paths over both.
inline constexpr std::size_t net_frame_max_bytes = 4032;
static_assert(net_frame_max_bytes <= net_window_bytes, "a whole frame fits the credit window");
// Receives of a frame the mpi transport posts in advance. A frame that comes
// while all are full waits in MPI's unexpected queue until one is posted
// again. Guess: several steps' worth of frames.
inline constexpr int net_mpi_ring_slots = 32;
static_assert(net_mpi_ring_slots >= net_recv_batch, "a progress step's frames can all be posted for");

// --- Messaging: RPC and the naming service (src/net/rpc_*.cpp, services.cpp) ---
// A reply port takes any reply a call may carry, and a few stale ones.
inline constexpr std::size_t rpc_reply_port_msgs = 16;
// Most threads one RPC server runs (weft_rpc_server_start). Guess: far above
// the workers of any node, small enough to refuse a unit mistake.
inline constexpr std::size_t rpc_max_server_threads = 1024;
// Requests a server's port buffers before senders wait. Guess: enough for a
// burst from every thread of a few nodes.
inline constexpr std::size_t rpc_server_port_msgs = 256;
// Naming requests the naming service's port buffers before senders wait, and
// their bytes. Guess.
inline constexpr std::size_t net_names_port_msgs = 1024;
inline constexpr std::size_t net_names_port_bytes = std::size_t(1) << 20;
static_assert(rpc_reply_port_msgs >= 1 && rpc_server_port_msgs >= 1 && net_names_port_msgs >= 1,
              "every port buffers at least one message");

// --- Filaments: constants compiled into programs (include/weft/detail/) -----------

static_assert(for_chunks_per_worker >= 1, "weft_fil_run_range_ needs at least one piece per worker");
static_assert(for_nested_pieces_per_worker >= 1, "a nested loop splits into at least one piece per worker");

// --- The progress hook (src/core/progress.hpp) ---
// A busy worker runs the hook from pick at most this often, ns: the bound on
// how long a message from another node waits for a node whose workers are
// all busy. Guess: small against a remote message's cost over a network
// (a few us), large against one poll's cost (~0.1-0.3 us for an empty MPI
// poll, docs/design/mpi.md).
inline constexpr std::int64_t progress_busy_ns = 20'000;
// ... and reads the clock for that only every this many picks. Must be >= 1.
// Guess: a clock read costs ~20 ns, a pick ~10 ns.
inline constexpr std::uint32_t progress_pick_period = 16;
// While a hook is set, a parked worker sleeps at most this long, ns, then
// polls again: what an idle node adds to a message's latency at worst, and
// what it costs in wake-ups per second (measured in docs/design/mpi.md,
// "Progress").
inline constexpr std::int64_t progress_park_ns = 1'000'000;
// An idle worker keeps polling the hook (yielding the CPU between looks)
// instead of parking while the hook did something within this long, ns: a
// conversation in progress keeps its latency (a park adds a futex wake-up or
// up to progress_park_ns), an idle node parks 1 ms after its last message.
// Guess, on the pattern of two-phase waiting (core/sleep/README.md): longer
// than a remote round trip (a few us), short against a human-visible idle.
inline constexpr std::int64_t progress_active_ns = 10'000'000;
// While polling a recently active hook, an idle worker yields the CPU
// (sched_yield) once every this many looks and pauses (cpu_relax) between the
// others. Must be >= 1. Guess: a look is ~0.3-1 us, so ~50-100 us of polling
// between yields, the scale of the idle spin stage.
inline constexpr std::uint32_t progress_yield_every = 128;
// A ult about to wait for what the hook brings polls it itself for at most
// about this long, ns, while its worker has nothing else to run
// (progress.hpp, poll_before_wait). Guess: a few remote round trips over a
// network (a few us each); beyond, the wait and the idle loop's polling cost
// two switches and a wake-up, small against it.
inline constexpr std::int64_t progress_wait_spin_ns = 20'000;
// Helper kernel threads that make the calls with no readiness (src/io,
// offload.hpp) at most; more calls at once queue for a free helper. Guess: a
// program rarely has more than a few hundred such calls outstanding, and a
// helper costs its stack (64 KiB) and a kernel task.
inline constexpr int io_helpers_max = 1024;
static_assert(progress_yield_every >= 1, "yield at least every look");
static_assert(progress_pick_period >= 1 && progress_busy_ns > 0 && progress_park_ns > 0,
              "the progress hook's rate limits are positive");

}  // namespace weft::detail::tun

// weft::detail — the deadlock detector: its verdict and its report.
//
// The last worker to park, with no timer armed, sleeps for a check period
// (tunables.hpp) instead of forever. If on waking no worker has switched in
// the meantime, every worker is still parked and no timer is armed, then no
// ult is running and none is ready: every live ult is blocked in a weft
// primitive. That alone is no deadlock: a kernel thread outside weft (the
// README promises they work) may still unlock a mutex it holds, post a
// semaphore or signal a condition. So the detector reports only what no
// thread can end any more:
//   1. every weft thread is blocked and every other kernel thread of the
//      process is blocked in a weft primitive too, with no deadline (there is
//      none, or each is in the registry of outside waits, core/outside.hpp):
//      nothing is left to run;
//   2. or threads wait on each other in a cycle, each for the one thread that
//      can end its wait (the holder of a mutex, the writer inside a rwlock,
//      the thread it joins), weft's or outside ones blocked in weft: no
//      thread outside the cycle can end any of these waits.
// Then it prints who waits on what and aborts rather than hang. Otherwise a
// kernel thread outside weft is alive and could still wake someone: the
// detector never aborts, keeps checking (a thread may exit, leaving case 1),
// and after tun::deadlock_warn_ns of quiet prints one warning per process
// naming what is blocked, so that a program that does hang is not silent.
//
// Finding the ults costs nothing while the program runs: there is no registry
// to update on create and exit. Like Go's allgs, we rely on control blocks
// being recycled with their stacks: the report walks every stack the pool has
// carved and reads the control block at its top, which carries a magic word
// and a pointer to its own stack while the ult is alive.
#include "core/deadlock.hpp"

#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "core/outside.hpp"
#include "core/runtime.hpp"
#include "core/tunables.hpp"

namespace weft::detail {

namespace {

atomic<wait_object_namer> g_namer{nullptr};

// A thread blocked in a weft primitive: a ult, or a kernel thread outside weft.
struct blocked {
    const void* self;  // its lock-owner identity: the ult, or outside_owner_id(tid)
    const ult* u;      // null for an outside thread
    int tid;           // an outside thread's
    const char* what;
    const void* object;
};

struct snapshot {
    std::vector<blocked> threads;  // ults first, then outside threads
    std::vector<int> alive;        // kernel threads outside weft that are alive
    std::vector<int> free;         // ... and not blocked in weft without a deadline
    bool census = false;           // /proc/self/task could be read
    std::size_t ults = 0;
};

void add_ult(std::vector<blocked>* out, const ult* u) { out->push_back({u, u, 0, u->wait_kind, u->wait_object}); }

void collect_ults(runtime* rt, std::vector<blocked>* out) {
    if (rt->main->magic == ult_magic_live && rt->main->wait_kind != nullptr) add_ult(out, rt->main);
    rt->stacks->for_each_stack(
        [](const arch::stack& s, void* out) {
            auto top = reinterpret_cast<std::uintptr_t>(s.hi());
            const auto* u = reinterpret_cast<const ult*>((top - sizeof(ult)) & ~std::uintptr_t(63));
            // A thread that has ended but was never joined keeps its control
            // block (for its joiner) but waits on nothing: not part of the report.
            if (u->magic == ult_magic_live && u->stack.lo == s.lo && u->kind == ult_kind::regular && u->started &&
                u->join_word.load(memory_order_acquire) != join_finished && u->wait_kind != nullptr)
                add_ult(static_cast<std::vector<blocked>*>(out), u);
        },
        out);
}

bool starts_with(const char* s, const char* prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

// The one thread whose action can end a wait in `what` on `object`, if there
// is one: a mutex's holder, the writer inside a rwlock, the thread joined.
const void* awaited(const char* what, const void* object) {
    if (what == nullptr || object == nullptr) return nullptr;
    if (starts_with(what, "weft_mutex")) {
        auto* m = const_cast<weft_mutex_t*>(static_cast<const weft_mutex_t*>(object));
        return atomic_ref<void*>(m->owner_).load(memory_order_relaxed);
    }
    if (starts_with(what, "weft_rwlock")) {
        auto* rw = const_cast<weft_rwlock_t*>(static_cast<const weft_rwlock_t*>(object));
        return atomic_ref<std::int32_t>(rw->readers_).load(memory_order_relaxed) == -1
                   ? atomic_ref<void*>(rw->writer_).load(memory_order_relaxed)
                   : nullptr;
    }
    if (std::strcmp(what, "weft_thread_join") == 0) return object;
    return nullptr;
}

snapshot take_snapshot(runtime* rt, std::uint64_t* generation) {
    snapshot s;
    collect_ults(rt, &s.threads);
    s.ults = s.threads.size();
    // The registry first, then the census: a thread that blocked after
    // creating another one is listed blocked only if the new one is counted.
    std::vector<outside_wait_view> waits;
    *generation = outside_waits(&waits);
    s.census = outside_threads(rt->nworkers, &s.alive);
    for (int tid : s.alive) {
        auto w = std::find_if(waits.begin(), waits.end(), [tid](const auto& v) { return v.tid == tid; });
        if (w != waits.end() && w->blocked && !w->timed)
            s.threads.push_back({outside_owner_id(tid), nullptr, tid, w->what, w->object});
        else
            s.free.push_back(tid);
    }
    return s;
}

// A cycle of waits among s.threads, as indices, or empty.
std::vector<std::size_t> find_cycle(const snapshot& s) {
    std::unordered_map<const void*, std::size_t> index;
    for (std::size_t i = 0; i < s.threads.size(); ++i) index.emplace(s.threads[i].self, i);
    std::vector<std::size_t> next(s.threads.size(), SIZE_MAX);
    for (std::size_t i = 0; i < s.threads.size(); ++i) {
        auto it = index.find(awaited(s.threads[i].what, s.threads[i].object));
        if (it != index.end()) next[i] = it->second;
    }
    // Each thread waits for at most one other: follow the chain from each
    // unvisited thread; meeting the current chain again closes a cycle.
    std::vector<int> color(s.threads.size(), 0);  // 0 unvisited, 1 on the current chain, 2 done
    for (std::size_t start = 0; start < s.threads.size(); ++start) {
        std::size_t i = start;
        while (i != SIZE_MAX && color[i] == 0) {
            color[i] = 1;
            i = next[i];
        }
        if (i != SIZE_MAX && color[i] == 1) {
            std::vector<std::size_t> cycle{i};
            for (std::size_t j = next[i]; j != i; j = next[j]) cycle.push_back(j);
            return cycle;
        }
        for (i = start; i != SIZE_MAX && color[i] == 1; i = next[i]) color[i] = 2;
    }
    return {};
}

bool alive(const snapshot& s, int tid) { return std::find(s.alive.begin(), s.alive.end(), tid) != s.alive.end(); }

void print_who(const snapshot& s, const void* id) {
    if (is_outside_owner(id)) {
        int tid = outside_owner_tid(id);
        std::fprintf(stderr, "a kernel thread outside weft (tid %d%s)", tid, alive(s, tid) ? "" : ", which has exited");
    } else {
        std::fprintf(stderr, "thread %" PRIu64, static_cast<const ult*>(id)->id);
    }
}

void describe(const snapshot& s, const blocked& b) {
    if (b.u != nullptr)
        std::fprintf(stderr, "  thread %" PRIu64 " (%s)", b.u->id, b.u->name[0] ? b.u->name : "unnamed");
    else
        std::fprintf(stderr, "  kernel thread outside weft (tid %d)", b.tid);
    std::fprintf(stderr, " waits in %s", b.what);
    char name[96];
    wait_object_namer namer = g_namer.load(memory_order_acquire);
    if (b.object != nullptr && namer != nullptr && namer(b.what, b.object, name, sizeof name))
        std::fprintf(stderr, " on %s", name);
    else if (b.object != nullptr)
        std::fprintf(stderr, " on %p", b.object);
    const void* holder = awaited(b.what, b.object);
    if (std::strcmp(b.what, "weft_thread_join") == 0) {
        std::fprintf(stderr, " (thread %" PRIu64 ")", static_cast<const ult*>(b.object)->id);
    } else if (holder != nullptr) {
        std::fputs(starts_with(b.what, "weft_rwlock") ? ", held for writing by " : ", held by ", stderr);
        print_who(s, holder);
    }
    std::fputc('\n', stderr);
}

void print_tids(const std::vector<int>& tids) {
    for (std::size_t i = 0; i < tids.size() && i < 8; ++i) std::fprintf(stderr, "%s%d", i ? ", " : "", tids[i]);
    if (tids.size() > 8) std::fprintf(stderr, " and %zu more", tids.size() - 8);
}

[[noreturn]] void report(const snapshot& s, const std::vector<std::size_t>& cycle) {
    // Several workers may reach the verdict at once (each parked last, as far
    // as it could tell): one reports, the others wait for the abort.
    static atomic<bool> reporting{false};
    if (reporting.exchange(true, memory_order_acq_rel)) {
        for (;;) pause();
    }
    std::size_t outside = s.threads.size() - s.ults;
    if (!cycle.empty()) {
        std::fputs("weft: deadlock: threads wait on each other in a cycle (", stderr);
        for (std::size_t k = 0; k <= cycle.size(); ++k) {
            if (k != 0) std::fputs(" -> ", stderr);
            print_who(s, s.threads[cycle[k % cycle.size()]].self);
        }
        std::fputs(") that no other thread can break; every weft thread is blocked", stderr);
    } else if (outside == 0) {
        std::fputs("weft: deadlock: every weft thread is blocked and no timer is pending", stderr);
    } else {
        std::fputs("weft: deadlock: every weft thread is blocked, no timer is pending, and every kernel thread "
                   "outside weft is blocked in weft too",
                   stderr);
    }
    std::fprintf(stderr, "; %zu thread(s) wait:\n", s.threads.size());
    for (const blocked& b : s.threads) describe(s, b);
    std::fprintf(stderr, "weft: aborting (set WEFT_DEADLOCK=off to wait forever instead)\n");
    std::fflush(stderr);
    std::abort();
}

void warn(const snapshot& s, std::int64_t quiet_ns) {
    std::fprintf(stderr,
                 "weft: warning: every weft thread has been blocked for %" PRId64
                 " s with no timer pending; %zu thread(s) wait:\n",
                 quiet_ns / 1'000'000'000, s.threads.size());
    for (const blocked& b : s.threads) describe(s, b);
    if (s.census) {
        std::fputs("weft: not a deadlock as far as weft can tell: kernel threads outside weft (tid ", stderr);
        print_tids(s.free);
        std::fputs(") are alive and could still wake them", stderr);
    } else {
        std::fputs("weft: not reported as a deadlock: /proc/self/task could not be read, so kernel threads outside "
                   "weft may be alive and could still wake them",
                   stderr);
    }
    std::fputs("; waiting on (WEFT_DEADLOCK=off silences this warning)\n", stderr);
    std::fflush(stderr);
}

}  // namespace

void set_wait_object_namer(wait_object_namer f) { g_namer.store(f, memory_order_release); }

void check_deadlock(runtime* rt, std::int64_t quiet_ns, std::uint64_t outside_gen) {
    std::uint64_t generation = 0;
    snapshot s = take_snapshot(rt, &generation);
    // An outside thread began or ended a wait during the period: it was running.
    if (generation != outside_gen) return;
    if (s.census && s.free.empty()) report(s, {});
    if (std::vector<std::size_t> cycle = find_cycle(s); !cycle.empty()) report(s, cycle);
    static atomic<bool> warned{false};
    if (quiet_ns >= tun::deadlock_warn_ns && !warned.exchange(true, memory_order_relaxed)) warn(s, quiet_ns);
}

}  // namespace weft::detail

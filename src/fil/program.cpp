// weft::detail::fil — the paper's C shape (Lowenthal, Freeh & Andrews §2): fInit, fCreatePoolSet,
// fjFork outside any filament, and fStart, which runs "everything created".
//
// What weft_fil_start runs belongs to the calling weft thread (two threads
// setting up filaments do not see each other's), in
// creation order: first the roots forked outside any region (fStart is "also
// an implicit join to the initial fjFork call"), then the pool sets as one
// sequence.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <vector>

#include "base/primitives.hpp"
#include "fil/pool.hpp"
#include "fil/program.hpp"
#include "fil/region.hpp"
#include "fil/stats.hpp"
#include "fil/sweep.hpp"

namespace weft::detail::fil {

int fj_region(void (*root)(void*), void* ctx, const weft_fil_fj_options_t* opts);

namespace {

struct root_rec {
    weft_fil_fork_fn fn;
    void* result;
    std::size_t size;
    alignas(16) unsigned char args[WEFT_FIL_ARGS_MAX];
};

struct program {
    std::vector<root_rec> roots;
    std::vector<weft_fil_poolset_t> sets;
};

// Programs by weft thread id (unique for the life of the runtime; 0 for an
// external kernel thread). A map rather than a thread-specific value: an entry
// is erased as soon as its program is empty, and what is left at exit (sets
// never destroyed) is freed with the map, not leaked with main's key table.
spinlock programs_lock;
std::map<std::uint64_t, program>* programs = nullptr;

std::uint64_t me() { return weft_thread_id(weft_thread_self()); }

// Calls f(program&) under the lock, creating the entry if `create`; erases an
// empty entry afterwards. Returns false if there is no entry (or no memory).
template <class F> bool with_program(bool create, F f) {
    lock_guard<spinlock> g(programs_lock);
    try {
        if (programs == nullptr) {
            if (!create) return false;
            static std::map<std::uint64_t, program> all;  // destroyed at exit
            programs = &all;
        }
        auto it = programs->find(me());
        if (it == programs->end()) {
            if (!create) return false;
            it = programs->emplace(me(), program{}).first;
        }
        f(it->second);
        if (it->second.roots.empty() && it->second.sets.empty()) programs->erase(it);
    } catch (const std::bad_alloc&) {
        return false;
    }
    return true;
}

// The root of the region weft_fil_start runs for the forked roots: forks each
// one (so they spread over the workers) and joins them.
void roots_body(const void* args, void*) {
    auto* roots = *static_cast<std::vector<root_rec>* const*>(args);
    for (root_rec& rr : *roots) (void)weft_fil_fork(rr.fn, rr.args, rr.size, rr.result);
    (void)weft_fil_join();
}

}  // namespace

int program_add_root(weft_fil_fork_fn fn, const void* args, std::size_t size, void* result) {
    if (int rc = weft_fil_init(); rc != 0) return rc;
    root_rec rr{};
    rr.fn = fn;
    rr.result = result;
    rr.size = size;
    if (size != 0) std::memcpy(rr.args, args, size);
    if (!with_program(true, [&](program& p) { p.roots.push_back(rr); })) return ENOMEM;
    stats_add_created(1);
    return 0;
}

int program_add_set(weft_fil_poolset_t ps) {
    return with_program(true, [&](program& p) { p.sets.push_back(ps); }) ? 0 : ENOMEM;
}

void program_remove_set(weft_fil_poolset_t ps) {
    (void)with_program(false, [&](program& p) {
        for (auto it = p.sets.begin(); it != p.sets.end(); ++it) {
            if (*it == ps) {
                p.sets.erase(it);
                return;
            }
        }
    });
}

}  // namespace weft::detail::fil

using namespace weft::detail::fil;

extern "C" {

WEFT_API int weft_fil_init(void) {
    if (weft_is_initialized()) return 0;
    int rc = weft_init(nullptr);
    return rc == EBUSY ? 0 : rc;  // another thread was quicker
}

WEFT_API int weft_fil_start(void) {
    if (int rc = weft_fil_init(); rc != 0) return rc;
    // Taken out first: the roots may fork roots of a later start, and the after
    // functions may create sets.
    std::vector<root_rec> roots;
    std::vector<weft_fil_poolset_t> sets;
    if (!with_program(false, [&](program& p) {
            roots.swap(p.roots);
            sets = p.sets;
        }))
        return 0;
    int rc = 0;
    if (!roots.empty()) {
        std::vector<root_rec>* rp = &roots;
        rc = weft_fil_fj_run(&roots_body, &rp, sizeof rp, nullptr, nullptr);
        if (rc != 0) return rc;
    }
    if (!sets.empty()) rc = run_sets(sets.data(), static_cast<int>(sets.size()), nullptr);
    return rc;
}

}  // extern "C"

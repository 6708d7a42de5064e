#include "core/profile.hpp"

#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>

#include "core/active.hpp"
#include "core/clock.hpp"
#include "core/dispatch.hpp"
#include "core/runtime.hpp"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace weft::detail {

bool g_measure = false;
bool g_tracing = false;

namespace {

// Calibration: ticks and ns at start; the ratio is refined at each conversion
// from the time elapsed since (the counters are invariant: constant_tsc on
// x86-64, the architected timer on AArch64).
std::uint64_t base_ticks = 0;
std::int64_t base_ns = 0;
atomic<double> ns_per_tick{1.0};

std::FILE* trace_file = nullptr;

// The logical clock (profile.hpp): installed or not, and each kernel thread's
// count. A strand opens and closes on one kernel thread (its worker's), so a
// per-thread counter measures it without any sharing.
bool logical_clock = false;
thread_local std::uint64_t logical_now = 0;

// Up to this many slices per worker; later ones are dropped (and counted).
constexpr std::size_t trace_capacity = std::size_t(1) << 20;

}  // namespace

std::uint64_t ticks() {
#if defined(__x86_64__)
    return __rdtsc();
#elif defined(__aarch64__)
    std::uint64_t v;
    asm volatile("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    return static_cast<std::uint64_t>(monotonic_ns());
#endif
}

void calibrate_ticks() {
    base_ns = monotonic_ns();
    base_ticks = ticks();
#if defined(__aarch64__)
    std::uint64_t freq;
    asm volatile("mrs %0, cntfrq_el0" : "=r"(freq));
    ns_per_tick.store(1e9 / static_cast<double>(freq), memory_order_relaxed);
#elif !defined(__x86_64__)
    ns_per_tick.store(1.0, memory_order_relaxed);
#endif
}

std::uint64_t ticks_to_ns(std::uint64_t t) {
#if defined(__x86_64__)
    std::int64_t dn = monotonic_ns() - base_ns;
    std::uint64_t dt = ticks() - base_ticks;
    if (dn > 1'000'000 && dt > 0) ns_per_tick.store(static_cast<double>(dn) / static_cast<double>(dt), memory_order_relaxed);
#endif
    return static_cast<std::uint64_t>(static_cast<double>(t) * ns_per_tick.load(memory_order_relaxed));
}

void profile_use_logical_clock(bool on) { logical_clock = on; }

void profile_logical_advance(std::uint64_t units) { logical_now += units; }

std::uint64_t profile_now() { return logical_clock ? logical_now : ticks(); }

namespace {

// Work and span in ns, or in the logical clock's own units.
std::uint64_t clock_to_ns(std::uint64_t t) { return logical_clock ? t : ticks_to_ns(t); }

// Owner-only counter update (no locked instruction).
void add(atomic<std::uint64_t>& c, std::uint64_t d) { c.store(c.load(memory_order_relaxed) + d, memory_order_relaxed); }

void record_slice(worker* w, const ult* u, std::uint64_t start, std::uint64_t end) {
    trace_buffer* b = w->trace;
    if (b == nullptr) return;
    std::size_t n = b->count.load(memory_order_relaxed);
    if (n == trace_capacity) {
        add(b->dropped, 1);
        return;
    }
    trace_event& e = b->events[n];
    e.start = start;
    e.end = end;
    e.id = u->id;
    std::memcpy(e.name, u->name, sizeof e.name - 1);
    e.name[sizeof e.name - 1] = '\0';
    b->count.store(n + 1, memory_order_release);  // publishes e to trace_write_and_close
}

void close_strand(worker* w, ult* u, std::uint64_t now) {
    std::uint64_t d = now - w->strand_start;
    if (u->kind != ult_kind::idle) {
        u->path += d;
        add(w->work_ticks, d);
        if (g_tracing && d > 0) record_slice(w, u, w->strand_start, now);
    }
    w->strand_start = now;
}

}  // namespace

void profile_switch(worker* w, ult* from, ult*) { close_strand(w, from, profile_now()); }

void profile_checkpoint(worker* w) { close_strand(w, w->current, profile_now()); }

void profile_fork(worker* w, ult* child) {
    if (w == nullptr) {
        child->path = 0;
        return;
    }
    profile_checkpoint(w);
    child->path = w->current->path;
}

void profile_join(worker* w, ult* self, const ult* child) {
    if (w == nullptr) return;
    profile_checkpoint(w);
    self->path = std::max(self->path, child->path);
}

void profile_exit(worker* w, const ult* u) {
    if (u->path > w->max_exit_path.load(memory_order_relaxed)) w->max_exit_path.store(u->path, memory_order_relaxed);
}

std::uint64_t profile_work_ns(runtime* rt) {
    std::uint64_t t = 0;
    for (auto& w : rt->workers) t += w->work_ticks.load(memory_order_relaxed);
    return clock_to_ns(t);
}

std::uint64_t profile_span_ns(runtime* rt) {
    std::uint64_t p = rt->main->path;
    for (auto& w : rt->workers) p = std::max(p, w->max_exit_path.load(memory_order_relaxed));
    return clock_to_ns(p);
}

void profile_reset(runtime* rt) {
    worker* me = current_worker();
    if (me != nullptr) profile_checkpoint(me);
    for (auto& w : rt->workers) {
        w->work_ticks.store(0, memory_order_relaxed);
        w->max_exit_path.store(0, memory_order_relaxed);
    }
    rt->main->path = 0;
    if (me != nullptr) me->current->path = 0;
}

int trace_open(const char* path) {
    trace_file = std::fopen(path, "w");
    return trace_file != nullptr ? 0 : errno;
}

trace_buffer* trace_buffer_create() {
    void* mem = mmap(nullptr, trace_capacity * sizeof(trace_event), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) return nullptr;
    auto* b = new trace_buffer;
    b->events = static_cast<trace_event*>(mem);
    return b;
}

void trace_buffer_destroy(trace_buffer* b) {
    if (b == nullptr) return;
    munmap(b->events, trace_capacity * sizeof(trace_event));
    delete b;
}

void trace_write_and_close(runtime* rt) {
    std::FILE* f = trace_file;
    if (f == nullptr) return;
    trace_file = nullptr;
    errno = 0;  // so that the errno seen after a failed write is that write's
    // Chrome trace-event format: timestamps in microseconds.
    double us_per_tick = static_cast<double>(ticks_to_ns(1'000'000)) / 1e9;
    std::fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    std::fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"weft (%s, %d workers)\"}}",
                 rt->policy->name, rt->nworkers);
    std::uint64_t dropped = 0;
    for (auto& w : rt->workers) {
        std::fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":\"worker %d\"}}",
                     w->index, w->index);
        trace_buffer* b = w->trace;
        if (b == nullptr) continue;
        std::size_t n = b->count.load(memory_order_acquire);
        dropped += b->dropped.load(memory_order_relaxed);
        for (std::size_t i = 0; i < n; ++i) {
            const trace_event& e = b->events[i];
            char name[64];
            if (e.name[0] != '\0') std::snprintf(name, sizeof name, "%s #%" PRIu64, e.name, e.id);
            else std::snprintf(name, sizeof name, "thread %" PRIu64, e.id);
            // Names are thread names: escape what JSON needs.
            std::fprintf(f, ",\n{\"name\":\"");
            for (const char* c = name; *c != '\0'; ++c) {
                if (*c == '"' || *c == '\\') std::fputc('\\', f);
                if (static_cast<unsigned char>(*c) < 0x20) std::fputc('?', f);
                else std::fputc(*c, f);
            }
            std::fprintf(f, "\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"id\":%" PRIu64 "}}",
                         w->index, static_cast<double>(e.start - base_ticks) * us_per_tick,
                         static_cast<double>(e.end - e.start) * us_per_tick, e.id);
        }
    }
    // The active worker count (core/active.hpp) as a counter track: its value
    // at the start, then each change.
    std::fprintf(f, ",\n{\"name\":\"active workers\",\"ph\":\"C\",\"pid\":1,\"ts\":0,\"args\":{\"active\":%d}}",
                 rt->nworkers);
    for (const active_change& c : active_history(rt))
        std::fprintf(f, ",\n{\"name\":\"active workers\",\"ph\":\"C\",\"pid\":1,\"ts\":%.3f,\"args\":{\"active\":%d}}",
                     c.at_ticks > base_ticks ? static_cast<double>(c.at_ticks - base_ticks) * us_per_tick : 0.0,
                     c.active);
    std::fprintf(f, "\n],\"otherData\":{\"dropped_slices\":%" PRIu64 "}}\n", dropped);
    // A trace that could not be written (a full disk, an I/O error) is not lost
    // silently: the stream's error flag is sticky, so one check covers every write.
    bool failed = std::fflush(f) != 0 || std::ferror(f) != 0;
    int err = errno;
    if (std::fclose(f) != 0 && !failed) {
        failed = true;
        err = errno;
    }
    if (failed)
        std::fprintf(stderr, "weft: could not write the trace to WEFT_TRACE='%s': %s (the file is incomplete)\n",
                     rt->cfg.trace_path.c_str(), std::strerror(err != 0 ? err : EIO));
}

}  // namespace weft::detail

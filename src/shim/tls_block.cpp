// A TLS block per weft thread, from glibc's dynamic loader (tls_block.hpp).
//
// glibc lays a thread's block out as its TLS data below the thread control
// block (the TCB, glibc's struct pthread) at the thread pointer (x86-64, TLS
// variant II). _dl_allocate_tls(NULL) allocates one with every loaded
// module's static TLS initialised from its template, a zeroed TCB and a DTV
// (so modules loaded later with dlopen are reached through __tls_get_addr);
// _dl_allocate_tls_init copies the static TLS images into an existing one.
// Both are GLIBC_PRIVATE, found with dlvsym.
// The TCB fields glibc's code reads through the thread pointer are filled here
// as glibc's pthread_create fills them (allocate_stack, TLS_INIT_TP): see
// fill_tcb. The offsets are the x86-64 tcbhead_t's; struct pthread's size and
// tid offset are the ones glibc publishes for libthread_db
// (_thread_db_sizeof_pthread, _thread_db_pthread_tid); all are checked against
// the running thread's own TCB at start (layout_matches).
//
// A block is kept for the next thread when its thread ends, and reused as
// glibc reuses a thread descriptor from its stack cache (get_cached_stack):
// the dynamic TLS of modules loaded with dlopen is freed, the DTV kept, and at
// reuse the static TLS images are copied in again (copy_static_tls); the TCB
// is not zeroed but its header filled again (fill_tcb). One word of libc's
// TLS survives: malloc's per-thread cache (tcache). glibc frees a thread's tcache at its
// exit from __libc_thread_freeres, which it does not export; a weft thread
// that ended would leak its tcache and the chunks cached in it (measured:
// 566 MB for the 392,835 threads of tests/shim/stress.c). So the next thread
// of the block inherits it, as its first malloc would have made one. Where
// malloc keeps that pointer in libc's TLS is found once at start
// (find_tcache_slot).
#include "shim/tls_block.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "arch/thread_pointer.hpp"
#include "base/primitives.hpp"
#include "core/dispatch.hpp"
#include "core/env.hpp"
#include "core/own_allocation.hpp"
#include "core/runtime.hpp"
#include "core/thread_pointer.hpp"
#include "core/ult.hpp"
#include "core/worker.hpp"
#include "shim/shim.hpp"

// glibc: points the calling thread's ctype TLS (__ctype_b_loc and the
// others) at the current locale's tables; each new thread calls it first.
extern "C" void __ctype_init();

namespace weft::shim {
namespace {

// x86-64 glibc's tcbhead_t (sysdeps/x86_64/nptl/tls.h).
constexpr std::size_t off_tcb = 0x00;               // the TCB's own address (%fs:0)
constexpr std::size_t off_dtv = 0x08;               // header.dtv: the dynamic thread vector
constexpr std::size_t off_self = 0x10;              // header.self: THREAD_SELF
constexpr std::size_t off_multiple_threads = 0x18;  // header.multiple_threads
constexpr std::size_t off_stack_guard = 0x28;       // -fstack-protector's canary
constexpr std::size_t off_pointer_guard = 0x30;     // PTR_MANGLE (setjmp, atexit)
constexpr std::size_t off_feature_1 = 0x48;         // CET state
constexpr std::size_t off_padding = 0x280;          // header.__padding[8]: unused by glibc
constexpr std::size_t header_size = 0x2c0;
// From glibc's libthread_db descriptors (start_tls_blocks).
std::size_t g_off_tid = 0;             // struct pthread's tid
std::size_t g_off_list = 0;            // struct pthread's list (glibc's list of threads)
std::size_t g_off_cancelhandling = 0;  // struct pthread's cancelhandling
std::ptrdiff_t g_tcache_slot = 0;      // malloc's tcache pointer, from the thread pointer; 0: not found

// The tid a block's TCB carries: glibc's internal recursive locks (the
// dynamic loader's, stdio's owner is THREAD_SELF) tell threads apart by it, so
// each weft thread has its own, above any kernel tid (PID_MAX_LIMIT is 2^22)
// so that it names no real thread. Worker 0's flows get tid_base itself.
constexpr std::int32_t tid_base = 0x40000000;

using allocate_fn = void* (*)(void*);
using allocate_init_fn = void* (*)(void*, bool);
using call_dtors_fn = void (*)();

allocate_fn g_allocate = nullptr;
allocate_init_fn g_allocate_init = nullptr;
call_dtors_fn g_call_tls_dtors = nullptr;
const std::ptrdiff_t* g_rseq_offset = nullptr;  // glibc >= 2.35: where its rseq area is
const unsigned* g_rseq_size = nullptr;
const char* g_unavailable = "the shim has not started";

template <class T>
T& field(void* tp, std::size_t off) {
    return *reinterpret_cast<T*>(static_cast<char*>(tp) + off);
}

// The running thread's own TCB is laid out as the offsets above say.
bool layout_matches() {
    // libthread_db's descriptors: a field is {bits, count, offset}, a size one word.
    auto tid_desc = static_cast<const std::uint32_t*>(dlsym(RTLD_DEFAULT, "_thread_db_pthread_tid"));
    auto list_desc = static_cast<const std::uint32_t*>(dlsym(RTLD_DEFAULT, "_thread_db_pthread_list"));
    auto cancel_desc = static_cast<const std::uint32_t*>(dlsym(RTLD_DEFAULT, "_thread_db_pthread_cancelhandling"));
    auto size = static_cast<const std::uint32_t*>(dlsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread"));
    if (tid_desc == nullptr || list_desc == nullptr || cancel_desc == nullptr || size == nullptr || tid_desc[0] != 32 ||
        tid_desc[2] < header_size || *size < tid_desc[2] + 4 || list_desc[0] != 2 * 64 || list_desc[2] < header_size ||
        *size < list_desc[2] + 2 * sizeof(void*) || cancel_desc[0] != 32 || cancel_desc[2] < header_size ||
        *size < cancel_desc[2] + 4)
        return false;
    g_off_tid = tid_desc[2];
    g_off_list = list_desc[2];
    g_off_cancelhandling = cancel_desc[2];
    void* tp = arch::thread_pointer();
    return field<void*>(tp, off_tcb) == tp && field<void*>(tp, off_self) == tp &&
           field<std::int32_t>(tp, g_off_tid) == static_cast<std::int32_t>(syscall(SYS_gettid));
}

// The header fields glibc's pthread_create sets (the rest of the TCB is
// zeroed by _dl_allocate_tls for a new block, and left as the last thread
// left it for a reused one: see reuse_block): the self pointers, "there are threads" (it
// enables the C library's locking), the canary and pointer guard (the same
// for every thread of a process: code compiled with -fstack-protector and
// longjmp's pointer demangling read them through the thread pointer), the
// CET state, and a tid of its own.
// The fields a thread may leave changed behind it, set again for each thread
// of a block: "there are threads", the cancellation state and the list entry.
void refill_tcb(void* tp) {
    field<std::int32_t>(tp, off_multiple_threads) = 1;
    field<std::int32_t>(tp, g_off_cancelhandling) = 0;  // as glibc's get_cached_stack
    // An empty list entry (pointing to itself): a fork() in this thread makes
    // glibc's child take THREAD_SELF off its list of threads and put it back.
    void** list = &field<void*>(tp, g_off_list);
    list[0] = list;
    list[1] = list;
}

// A new block's whole header. Its other fields keep their values for the
// life of the block, so a reused block takes refill_tcb only: glibc writes
// the self pointers, canary, pointer guard and CET state of a TCB only when it
// makes a thread (which the shim does), the kernel writes rseq areas it was
// given only, and the tid is set as the thread starts (start_in_block).
void fill_tcb(void* tp, std::int32_t tid) {
    void* cur = arch::thread_pointer();
    field<void*>(tp, off_tcb) = tp;
    field<void*>(tp, off_self) = tp;
    field<std::uintptr_t>(tp, off_stack_guard) = field<std::uintptr_t>(cur, off_stack_guard);
    field<std::uintptr_t>(tp, off_pointer_guard) = field<std::uintptr_t>(cur, off_pointer_guard);
    field<std::uint32_t>(tp, off_feature_1) = field<std::uint32_t>(cur, off_feature_1);
    field<std::int32_t>(tp, g_off_tid) = tid;
    // The kernel fills the rseq area of each kernel thread's own TCB only:
    // "registration failed" (-2) in cpu_id makes sched_getcpu ask the kernel
    // instead of reading a CPU number nobody updates.
    if (g_rseq_size != nullptr && *g_rseq_size != 0)
        field<std::int32_t>(tp, static_cast<std::size_t>(*g_rseq_offset) + 4) = -2;
    refill_tcb(tp);
}

// Blocks of ended threads, linked through their first padding word.
detail::spinlock g_pool_lock;
void* g_pool = nullptr;

// Per worker (by index), the block of the last thread that ended there. It
// stays the thread pointer until that thread's last switch, so it is not in
// the pool, where another worker could take it sooner; the next thread
// created on the worker takes it without the pool's lock (new_block), or the
// next thread to end there moves it to the pool (end_block).
void** g_recent = nullptr;

// glibc's dtv_t: dtv[-1].counter is the number of slots, dtv[0].counter the
// generation, dtv[1..] one per module with TLS.
union dtv_entry {
    std::size_t counter;
    struct {
        void* val;
        void* to_free;
    } pointer;
};

// The DTV generation of the first block, made at start, and whether every
// module with TLS then had it in static TLS (none loaded with dlopen before the
// shim started). A module whose TLS is dynamic is one loaded since, with a
// later generation, and __tls_get_addr brings a DTV up to the current
// generation before it allocates anything in it: a block whose DTV is still
// at the start's generation has no dynamic TLS to free.
std::size_t g_start_generation = 0;
bool g_all_tls_static_at_start = false;

// The static TLS images, found at start (note_static_tls): a reused block gets
// them copied in by the shim (as the spans below) while no module can have been
// loaded since (weft_shim_module_loaded, set by the shim's dlopen and dlmopen,
// dlopen.S), and from _dl_allocate_tls_init after.
struct tls_image {
    std::ptrdiff_t offset;  // from the thread pointer
    const void* init;       // the initialisation image (.tdata)
    std::size_t init_size;
    std::size_t size;  // the rest (.tbss) is zeroed
};
constexpr int max_tls_images = 16;
tls_image g_images[max_tls_images];
int g_image_count = -1;  // -1: a module outside static TLS, or more than max_tls_images

// What copy_static_tls writes: each run of images that lie back to back in
// static TLS is one span, whose bytes (each image's .tdata, then its .tbss as
// zeros) are prepared once at start (prepare_tls_spans). A reused block then
// takes one memcpy per span: one for the usual three modules (the shim's,
// libc's, libstdc++'s: 260 bytes). Bytes between two spans (alignment padding)
// are not written, as _dl_allocate_tls_init does not write them.
struct tls_span {
    std::ptrdiff_t offset;  // from the thread pointer
    std::size_t size;
    const unsigned char* bytes;
};
tls_span g_spans[max_tls_images];
int g_span_count = -1;  // -1: copy through _dl_allocate_tls_init always

// glibc's TLS_DTV_UNALLOCATED: __tls_get_addr allocates the module's TLS on
// first use.
void* const dtv_unallocated = reinterpret_cast<void*>(-1L);

// Frees what the block's last thread allocated for modules loaded with
// dlopen (their TLS, made by __tls_get_addr at first use), keeping the DTV
// itself, as glibc's get_cached_stack does; _dl_allocate_tls_init sets every
// loaded module's entry again at reuse.
void clear_dynamic_tls(void* tp) {
    auto* dtv = field<dtv_entry*>(tp, off_dtv);
    if (g_all_tls_static_at_start && dtv[0].counter == g_start_generation) return;
    std::size_t slots = dtv[-1].counter;
    for (std::size_t i = 1; i <= slots; ++i)
        if (dtv[i].pointer.to_free != nullptr) {
            std::free(dtv[i].pointer.to_free);
            dtv[i].pointer.val = dtv_unallocated;
            dtv[i].pointer.to_free = nullptr;
        }
}

void keep_block(void* tp) {
    detail::lock_guard<detail::spinlock> g(g_pool_lock);
    field<void*>(tp, off_padding) = g_pool;
    g_pool = tp;
}

extern "C" {
// Set by the shim's dlopen and dlmopen (dlopen.S) before they load anything.
[[gnu::visibility("hidden")]] unsigned char weft_shim_module_loaded = 0;
}

// The static TLS images into a reused block. The DTV's entries for modules in
// static TLS still point into the block, and those of modules loaded with
// dlopen were reset by clear_dynamic_tls. _dl_allocate_tls_init does the same
// for every module the dynamic loader knows, under its lock, after a walk of
// its module list (410 instructions against 60): after a dlopen it is the one
// that knows a module with static TLS was added.
void copy_static_tls(void* tp) {
    if (g_span_count < 0 || __atomic_load_n(&weft_shim_module_loaded, __ATOMIC_ACQUIRE) != 0) {
        g_allocate_init(tp, true);
        return;
    }
    for (int i = 0; i < g_span_count; ++i)
        std::memcpy(static_cast<char*>(tp) + g_spans[i].offset, g_spans[i].bytes, g_spans[i].size);
}

void* take_recent_block() {
    detail::worker* w = detail::current_worker();
    if (w == nullptr || g_recent == nullptr) return nullptr;
    void* tp = g_recent[w->index];
    g_recent[w->index] = nullptr;
    return tp;
}

void* new_block(std::int32_t tid) {
    void* tp = take_recent_block();
    if (tp == nullptr) {
        detail::lock_guard<detail::spinlock> g(g_pool_lock);
        if (g_pool != nullptr) {
            tp = g_pool;
            g_pool = field<void*>(tp, off_padding);
        }
    }
    if (tp == nullptr) {
        {
            // The runtime's, as glibc's descriptor in a thread's stack mapping
            // is: not the program's heap (core/own_allocation.hpp). Blocks are
            // never freed, only reused.
            detail::own_allocation own;
            tp = g_allocate(nullptr);
        }
        if (tp == nullptr) return nullptr;
        fill_tcb(tp, tid);
    } else {
        // The TCB is not zeroed (2,304 bytes here): the fields glibc's code
        // writes while a thread runs glibc's functions (the dynamic loader's
        // scope flag, the cancellation type around a system call, the cleanup
        // list of its internal regions) are restored by that code before it
        // returns, and the rest are written only by glibc's own thread
        // functions, which the shim replaces; refill_tcb sets the fields a
        // thread can change again.
        void* tcache = g_tcache_slot != 0 ? field<void*>(tp, g_tcache_slot) : nullptr;
        copy_static_tls(tp);
        if (g_tcache_slot != 0) field<void*>(tp, g_tcache_slot) = tcache;
        refill_tcb(tp);
    }
    return tp;
}

// libc's static TLS: where it starts from the thread pointer and its size.
struct module_tls {
    std::ptrdiff_t offset = 0;
    std::size_t size = 0;
};

int find_libc_tls(struct dl_phdr_info* info, size_t, void* out) {
    const char* name = info->dlpi_name;
    const char* base = name != nullptr ? std::strrchr(name, '/') : nullptr;
    base = base != nullptr ? base + 1 : name;
    if (base == nullptr || std::strncmp(base, "libc.so", 7) != 0 || info->dlpi_tls_data == nullptr) return 0;
    for (int i = 0; i < info->dlpi_phnum; ++i)
        if (info->dlpi_phdr[i].p_type == PT_TLS) {
            auto* m = static_cast<module_tls*>(out);
            m->offset = static_cast<char*>(info->dlpi_tls_data) - static_cast<char*>(arch::thread_pointer());
            m->size = info->dlpi_phdr[i].p_memsz;
            return 1;
        }
    return 0;
}

// dl_iterate_phdr: records each module's TLS image if it is in the calling
// thread's static TLS (the `static_size` bytes below its thread pointer), and
// notes any that is not (dynamic: a module loaded with dlopen before the shim
// started) or any image beyond g_images.
struct static_tls_scan {
    std::size_t static_size = 0;
    int count = 0;
    bool dynamic_seen = false;
    bool too_many = false;
};

int note_static_tls_module(struct dl_phdr_info* info, size_t, void* out) {
    auto* c = static_cast<static_tls_scan*>(out);
    if (info->dlpi_tls_modid == 0) return 0;
    auto data = reinterpret_cast<std::uintptr_t>(info->dlpi_tls_data);
    auto tp = reinterpret_cast<std::uintptr_t>(arch::thread_pointer());
    if (data == 0 || data >= tp || tp - data > c->static_size) {
        c->dynamic_seen = true;
        return 1;
    }
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_TLS) continue;
        if (c->count == max_tls_images) {
            c->too_many = true;
            return 1;
        }
        g_images[c->count++] =
            tls_image{-static_cast<std::ptrdiff_t>(tp - data),
                      reinterpret_cast<const void*>(info->dlpi_addr + ph.p_vaddr), ph.p_filesz, ph.p_memsz};
    }
    return 0;
}

// g_spans from g_images: the images in address order, neighbours merged, and
// each span's bytes built. Without memory for them, g_span_count stays -1 and
// reuse goes through _dl_allocate_tls_init.
void prepare_tls_spans() {
    g_span_count = -1;
    if (g_image_count < 0) return;
    tls_image sorted[max_tls_images];
    std::size_t total = 0;
    int n = 0;
    for (int i = 0; i < g_image_count; ++i) {
        if (g_images[i].size == 0) continue;
        int j = n++;
        for (; j > 0 && sorted[j - 1].offset > g_images[i].offset; --j) sorted[j] = sorted[j - 1];
        sorted[j] = g_images[i];
        total += g_images[i].size;
    }
    auto* bytes = static_cast<unsigned char*>(std::malloc(total != 0 ? total : 1));
    if (bytes == nullptr) return;
    int spans = 0;
    std::size_t at = 0;
    for (int i = 0; i < n; ++i) {
        const tls_image& m = sorted[i];
        std::memcpy(bytes + at, m.init, m.init_size);
        std::memset(bytes + at + m.init_size, 0, m.size - m.init_size);
        tls_span* last = spans > 0 ? &g_spans[spans - 1] : nullptr;
        if (last != nullptr && last->offset + static_cast<std::ptrdiff_t>(last->size) == m.offset)
            last->size += m.size;
        else
            g_spans[spans++] = tls_span{m.offset, m.size, bytes + at};
        at += m.size;
    }
    g_span_count = spans;
}

// At start, with `tp` the first block made: its DTV generation, whether every
// module's TLS is static, and the images copy_static_tls copies.
void note_static_tls(void* tp) {
    using static_info_fn = void (*)(std::size_t*, std::size_t*);
    auto info = reinterpret_cast<static_info_fn>(dlvsym(RTLD_DEFAULT, "_dl_get_tls_static_info", "GLIBC_PRIVATE"));
    if (info == nullptr) return;
    static_tls_scan c;
    std::size_t align = 0;
    info(&c.static_size, &align);
    dl_iterate_phdr(&note_static_tls_module, &c);
    g_start_generation = field<dtv_entry*>(tp, off_dtv)[0].counter;
    g_all_tls_static_at_start = !c.dynamic_seen;
    g_image_count = c.dynamic_seen || c.too_many ? -1 : c.count;
    prepare_tls_spans();
}

// Finds which word of libc's TLS is malloc's tcache pointer: in the fresh
// block `tp` (not yet any thread's), a malloc and free of a small chunk make
// two words of libc's TLS non-null, the tcache and the arena; the tcache is
// the one whose first bin now holds that chunk (glibc's
// tcache_perthread_struct: 64 uint16_t counts, then 64 entries).
void find_tcache_slot(void* tp) {
    module_tls libc;
    dl_iterate_phdr(&find_libc_tls, &libc);
    constexpr std::size_t most = 4096;
    if (libc.size == 0 || libc.size > most) return;
    alignas(8) unsigned char before[most];
    char* data = static_cast<char*>(tp) + libc.offset;
    std::memcpy(before, data, libc.size);
    void* own = arch::thread_pointer();
    arch::set_thread_pointer(tp);
    void* chunk = std::malloc(24);
    std::free(chunk);
    arch::set_thread_pointer(own);
    for (std::size_t i = 0; i + sizeof(void*) <= libc.size; i += sizeof(void*)) {
        void* was;
        void* now;
        std::memcpy(&was, before + i, sizeof was);
        std::memcpy(&now, data + i, sizeof now);
        if (was != nullptr || now == nullptr) continue;
        auto* counts = static_cast<const std::uint16_t*>(now);
        auto* entries = reinterpret_cast<void* const*>(static_cast<const char*>(now) + 64 * sizeof(std::uint16_t));
        if (counts[0] == 1 && entries[0] == chunk) {
            g_tcache_slot = libc.offset + static_cast<std::ptrdiff_t>(i);
            return;
        }
    }
}

// A thread's start routine and argument wait in the unused header words of
// its block until it runs.
void* start_in_block(void* tp) {
    auto fn = field<void* (*)(void*)>(tp, off_padding);
    void* arg = field<void*>(tp, off_padding + sizeof(void*));
    std::uint64_t id = detail::current_worker()->current->id;
    field<std::int32_t>(tp, g_off_tid) = tid_base + static_cast<std::int32_t>(id % tid_base);
    __ctype_init();  // as glibc's start_thread: isalpha() and the others read these pointers
    void* result = fn(arg);
    g_call_tls_dtors();  // first, as glibc's start_thread does, then key destructors (core)
    return result;
}

// The core's exit hook (core/thread_pointer.hpp): thread_local objects made
// by key destructors are destroyed too, then the block is kept for the next
// thread. It stays the thread pointer until the thread's last switch, which
// installs the next thread's: no write of the worker's own in between.
void end_block(detail::ult* u) {
    if (u->key_values != nullptr) g_call_tls_dtors();  // only key destructors can have made more
    clear_dynamic_tls(u->tp);
    void*& recent = g_recent[detail::current_worker()->index];
    if (recent != nullptr) keep_block(recent);  // its thread's last switch is done
    recent = u->tp;
}

// WEFT_SHIM_TLS, read as the runtime reads its on/off variables (docs/env.md).
bool tls_wanted() {
    const char* v = detail::env_value("WEFT_SHIM_TLS");
    if (v == nullptr) return true;
    for (const char* on : {"1", "on", "true"})
        if (detail::iequals(v, on)) return true;
    for (const char* off : {"0", "off", "false"})
        if (detail::iequals(v, off)) return false;
    detail::complain("WEFT_SHIM_TLS", v, "one of 1, on, true, 0, off, false");
    std::exit(2);
}

}  // namespace

void start_tls_blocks() {
#if !defined(__x86_64__)
    g_unavailable = "TLS blocks per weft thread are built for x86-64 only";
    return;
#else
    if (!tls_wanted()) {
        g_unavailable = "WEFT_SHIM_TLS=off";
        return;
    }
    g_allocate = reinterpret_cast<allocate_fn>(dlvsym(RTLD_DEFAULT, "_dl_allocate_tls", "GLIBC_PRIVATE"));
    g_allocate_init =
        reinterpret_cast<allocate_init_fn>(dlvsym(RTLD_DEFAULT, "_dl_allocate_tls_init", "GLIBC_PRIVATE"));
    g_call_tls_dtors = reinterpret_cast<call_dtors_fn>(dlvsym(RTLD_DEFAULT, "__call_tls_dtors", "GLIBC_PRIVATE"));
    g_rseq_offset = static_cast<const std::ptrdiff_t*>(dlsym(RTLD_DEFAULT, "__rseq_offset"));
    g_rseq_size = static_cast<const unsigned*>(dlsym(RTLD_DEFAULT, "__rseq_size"));
    if (g_rseq_offset == nullptr) g_rseq_size = nullptr;
    if (g_allocate == nullptr || g_allocate_init == nullptr || g_call_tls_dtors == nullptr) {
        g_unavailable = "the C library has no _dl_allocate_tls, _dl_allocate_tls_init or __call_tls_dtors (not glibc?)";
        return;
    }
    if (!layout_matches()) {
        g_unavailable =
            "the C library's thread control block is not laid out as the shim expects (x86-64 glibc >= 2.34)";
        return;
    }
    detail::worker* w0 = detail::current_worker();
    void* k0 = new_block(tid_base);
    g_recent = static_cast<void**>(std::calloc(static_cast<std::size_t>(detail::g_rt->nworkers), sizeof(void*)));
    if (w0 == nullptr || k0 == nullptr || g_recent == nullptr) {
        g_unavailable = "no memory for worker 0's block";
        return;
    }
    find_tcache_slot(k0);
    note_static_tls(k0);
    // main keeps the block the process started with (what constructors and
    // the C library set up before main stays main's, on any worker); worker
    // 0's idle flow must not share it, so it gets k0.
    detail::g_own_tp_exit = &end_block;
    detail::set_own_thread_pointer(arch::thread_pointer());
    detail::set_worker_thread_pointer(w0, k0);
    g_unavailable = nullptr;
#endif
}

const char* tls_blocks_unavailable() { return g_unavailable; }

int give_tls_block(void* (**fn)(void*), void** arg, void** tp_out) {
    *tp_out = nullptr;
    if (g_unavailable != nullptr) return 0;
    void* tp = new_block(0);
    if (tp == nullptr) return EAGAIN;
    field<void* (*)(void*)>(tp, off_padding) = *fn;
    field<void*>(tp, off_padding + sizeof(void*)) = *arg;
    *fn = &start_in_block;
    *arg = tp;
    *tp_out = tp;
    return 0;
}

bool is_block_start(const void* fn) { return fn == reinterpret_cast<const void*>(&start_in_block); }

void drop_tls_block(void* (*fn)(void*), void* arg) {
    if (fn == &start_in_block) keep_block(arg);
}

void run_thread_local_destructors() {
    detail::worker* w = detail::current_worker();
    if (g_unavailable == nullptr && w != nullptr && w->current->tp != nullptr &&
        w->current->kind != detail::ult_kind::main)
        g_call_tls_dtors();
}

}  // namespace weft::shim

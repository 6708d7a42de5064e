// Thread-specific data. A key is a slot index plus a generation: deleting a key
// bumps its slot's generation, so a value stored under an old key is never
// returned for a new key that reuses the slot (Pthreads leaves this undefined;
// we make it safe). Values live in a per-ult table of WEFT_KEYS_MAX/32 lazily
// allocated blocks, so a thread that uses one key pays for one block (512 B).
#include <cerrno>
#include <cstdlib>
#include <mutex>

#include "core/dispatch.hpp"
#include "core/keys.hpp"
#include "core/runtime.hpp"

namespace weft::detail {

namespace {

constexpr unsigned block_keys = 32;
constexpr unsigned nblocks = WEFT_KEYS_MAX / block_keys;

struct key_slot {
    atomic<std::uint64_t> gen{0};  // odd: in use
    atomic<void (*)(void*)> dtor{nullptr};
};
key_slot slots[WEFT_KEYS_MAX];
std::mutex create_mutex;

struct value_cell {
    void* value;
    std::uint64_t gen;
};
struct value_block {
    value_cell cells[block_keys];
};

// External kernel threads get a table of their own, freed when the kernel
// thread exits (no weft destructors run for them: they are not weft threads).
struct external_values {
    value_block** table = nullptr;
    ~external_values() {
        if (table == nullptr) return;
        for (unsigned b = 0; b < nblocks; ++b) std::free(table[b]);
        std::free(table);
    }
};
thread_local external_values external;

value_block**& table_of(worker* w) {
    return w != nullptr ? reinterpret_cast<value_block**&>(w->current->key_values) : external.table;
}

}  // namespace

void run_key_destructors(ult* t) {
    auto** table = reinterpret_cast<value_block**>(t->key_values);
    if (table == nullptr) return;
    for (int round = 0; round < WEFT_DESTRUCTOR_ITERATIONS; ++round) {
        bool any = false;
        for (unsigned b = 0; b < nblocks; ++b) {
            if (table[b] == nullptr) continue;
            for (unsigned i = 0; i < block_keys; ++i) {
                value_cell& c = table[b]->cells[i];
                if (c.value == nullptr) continue;
                key_slot& s = slots[b * block_keys + i];
                void (*d)(void*) = s.dtor.load(memory_order_acquire);
                void* v = c.value;
                c.value = nullptr;
                if (d != nullptr && s.gen.load(memory_order_acquire) == c.gen) {
                    d(v);
                    any = true;
                }
            }
        }
        if (!any) break;
    }
}

void free_key_values(ult* t) {
    auto** table = reinterpret_cast<value_block**>(t->key_values);
    if (table == nullptr) return;
    for (unsigned b = 0; b < nblocks; ++b) std::free(table[b]);
    std::free(table);
    t->key_values = nullptr;
}

void keys_hold_for_fork(bool take) {
    if (take) create_mutex.lock();
    else create_mutex.unlock();
}

}  // namespace weft::detail

using namespace weft::detail;

extern "C" {

WEFT_API int weft_key_create(weft_key_t* key, void (*destructor)(void*)) {
    if (key == nullptr) return EINVAL;
    std::lock_guard<std::mutex> g(create_mutex);
    for (unsigned i = 0; i < WEFT_KEYS_MAX; ++i) {
        std::uint64_t gen = slots[i].gen.load(memory_order_relaxed);
        if ((gen & 1) == 0) {
            slots[i].dtor.store(destructor, memory_order_relaxed);
            slots[i].gen.store(gen + 1, memory_order_release);
            *key = i;
            return 0;
        }
    }
    return EAGAIN;
}

WEFT_API int weft_key_delete(weft_key_t key) {
    if (key >= WEFT_KEYS_MAX) return EINVAL;
    std::lock_guard<std::mutex> g(create_mutex);
    std::uint64_t gen = slots[key].gen.load(memory_order_relaxed);
    if ((gen & 1) == 0) return EINVAL;
    slots[key].gen.store(gen + 1, memory_order_release);
    return 0;
}

WEFT_API int weft_setspecific(weft_key_t key, const void* value) {
    if (key >= WEFT_KEYS_MAX) return EINVAL;
    std::uint64_t gen = slots[key].gen.load(memory_order_acquire);
    if ((gen & 1) == 0) return EINVAL;
    value_block**& table = table_of(ensure_runtime());
    if (table == nullptr) {
        table = static_cast<value_block**>(std::calloc(nblocks, sizeof(value_block*)));
        if (table == nullptr) return ENOMEM;
    }
    value_block*& blk = table[key / block_keys];
    if (blk == nullptr) {
        blk = static_cast<value_block*>(std::calloc(1, sizeof(value_block)));
        if (blk == nullptr) return ENOMEM;
    }
    blk->cells[key % block_keys] = value_cell{const_cast<void*>(value), gen};
    return 0;
}

WEFT_API void* weft_getspecific(weft_key_t key) {
    if (key >= WEFT_KEYS_MAX) return nullptr;
    worker* w = current_worker();
    value_block** table = (w != nullptr) ? reinterpret_cast<value_block**>(w->current->key_values) : external.table;
    if (table == nullptr) return nullptr;
    value_block* blk = table[key / block_keys];
    if (blk == nullptr) return nullptr;
    const value_cell& c = blk->cells[key % block_keys];
    return c.gen == slots[key].gen.load(memory_order_acquire) ? c.value : nullptr;
}

}  // extern "C"

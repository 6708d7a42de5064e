// weft_once: weft_once_t is a bare int (it must fit pthread_once_t), so its
// waiters cannot live in it. They queue in a small global table of buckets
// hashed by the once's address (a "parking lot", as in WebKit and Rust's
// parking_lot); the runner wakes the waiters of its address when init returns.
//
// state: 0 not run, 1 running, 2 done. Memory ordering: the runner's release
// store of 2 pairs with the acquire load in every caller, so init's effects are
// visible to everyone who sees "done".
#include <cerrno>
#include <cstdint>

#include "core/runtime.hpp"
#include "sync/wait_list.hpp"

namespace weft::detail {
namespace {

struct bucket {
    std::uint32_t lock = 0;
    void* head = nullptr;
    void* tail = nullptr;
};
constexpr std::size_t nbuckets = 64;
bucket buckets[nbuckets];

bucket& bucket_of(const void* addr) {
    auto a = reinterpret_cast<std::uintptr_t>(addr);
    return buckets[(a >> 4) % nbuckets];
}

}  // namespace
}  // namespace weft::detail

using namespace weft::detail;

extern "C" WEFT_API int weft_once(weft_once_t* once, void (*init)(void)) {
    if (once == nullptr || init == nullptr) return EINVAL;
    atomic_ref<int> state(*once);
    if (state.load(memory_order_acquire) == 2) return 0;
    ensure_runtime();
    int expected = 0;
    if (state.compare_exchange_strong(expected, 1, memory_order_acquire, memory_order_acquire)) {
        init();
        bucket& b = bucket_of(once);
        spinlock_ref lk(b.lock);
        lk.lock();
        state.store(2, memory_order_release);
        // Detach this once's waiters; others hashed to the bucket stay.
        wait_record* mine = nullptr;
        wait_list q(b.head, b.tail);
        for (auto* r = static_cast<wait_record*>(b.head); r != nullptr;) {
            wait_record* next = r->next;
            if (r->queue == once) {
                q.remove(r);
                r->next = mine;
                mine = r;
            }
            r = next;
        }
        lk.unlock();
        while (mine != nullptr) {
            wait_record* next = mine->next;
            wake(mine);
            mine = next;
        }
        return 0;
    }
    if (expected == 2) return 0;
    bucket& b = bucket_of(once);
    spinlock_ref lk(b.lock);
    lk.lock();
    if (state.load(memory_order_acquire) == 2) {
        lk.unlock();
        return 0;
    }
    wait_record rec;
    wait_list(b.head, b.tail).push_back(&rec, once, nullptr);
    wait(&rec, &b.lock, 0, "weft_once", once);
    return 0;
}

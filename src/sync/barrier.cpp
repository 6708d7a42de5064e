// weft_barrier_t: the count-th arrival releases the other count-1 and starts a
// new generation at once, so the barrier is reusable immediately.
#include <cerrno>

#include "core/runtime.hpp"
#include "sync/wait_list.hpp"

using namespace weft::detail;

extern "C" {

WEFT_API int weft_barrier_init(weft_barrier_t* b, unsigned int count) {
    if (b == nullptr || count == 0) return EINVAL;
    *b = weft_barrier_t{0, count, 0, 0, nullptr, nullptr};
    return 0;
}

WEFT_API int weft_barrier_destroy(weft_barrier_t* b) {
    if (b == nullptr) return EINVAL;
    spinlock_ref lk(b->lock_);
    lk.lock();
    bool busy = b->arrived_ != 0;
    lk.unlock();
    return busy ? EBUSY : 0;
}

WEFT_API int weft_barrier_wait(weft_barrier_t* b) {
    if (b == nullptr) return EINVAL;
    ensure_runtime();
    spinlock_ref lk(b->lock_);
    lk.lock();
    if (++b->arrived_ == b->count_) {
        auto* all = static_cast<wait_record*>(b->head_);
        for (wait_record* r = all; r != nullptr; r = r->next) r->linked = false;
        b->head_ = b->tail_ = nullptr;
        b->arrived_ = 0;
        ++b->generation_;
        lk.unlock();
        while (all != nullptr) {
            wait_record* next = all->next;
            wake(all);
            all = next;
        }
        return WEFT_BARRIER_SERIAL_THREAD;
    }
    wait_record rec;
    wait_list(b->head_, b->tail_).push_back(&rec, b, nullptr);  // no timed wait: never unlinked by a timer
    wait(&rec, &b->lock_, 0, "weft_barrier_wait", b);
    return 0;
}

}  // extern "C"

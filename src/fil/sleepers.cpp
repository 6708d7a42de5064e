// weft::detail::fil — the sleeper's steps and the wakers of the participants'
// sleep protocol (sleepers.hpp; core/sleep/README.md). A post whose sleeper
// retracted without blocking (its last look found something) stays in the
// semaphore and ends a later sleep early, which only costs one more look.
#include "fil/sleepers.hpp"

#include "core/wait.hpp"

namespace weft::detail::fil {

void sleep_announce(part* p) {
    p->sleeping.store(1, memory_order_relaxed);
    p->r->sleepers.fetch_add(1, memory_order_seq_cst);
}

void sleep_block(part* p) {
    ++p->st.sleeps;
    flush(p);
    p->settled.store(1, memory_order_release);
    weft_fil_self_ = &weft_fil_outside_;  // other weft threads run on this worker meanwhile
    (void)weft_sem_wait(&p->sem);
    weft_fil_self_ = &p->hot;
    p->settled.store(0, memory_order_relaxed);
}

void sleep_retract(part* p) {
    // If a waker already claimed us, its post is (or will be) in the semaphore.
    (void)p->sleeping.exchange(0, memory_order_acq_rel);
    p->r->sleepers.fetch_sub(1, memory_order_relaxed);
}

void wake(part* q) {
    light_fence();
    if (q->sleeping.load(memory_order_relaxed) == 1 && q->sleeping.exchange(0, memory_order_acq_rel) == 1)
        (void)weft_sem_post(&q->sem);
}

void wake_all(region* r) {
    light_fence();
    if (r->sleepers.load(memory_order_relaxed) != 0) {
        for (int i = 0; i < r->nparts; ++i) wake(&r->parts[i]);
    }
    // An external caller of an iterative region waits on external_done.
    (void)weft_sem_post(&r->external_done);
}

void wake_one(region* r, part* from) {
    light_fence();
    if (r->sleepers.load(memory_order_relaxed) == 0) return;
    for (int i = 0; i < r->nparts; ++i) {
        part* q = &r->parts[i];
        if (q == from || !available(i)) continue;
        if (q->sleeping.load(memory_order_relaxed) == 1 && q->sleeping.exchange(0, memory_order_acq_rel) == 1) {
            (void)weft_sem_post(&q->sem);
            return;
        }
    }
}

}  // namespace weft::detail::fil

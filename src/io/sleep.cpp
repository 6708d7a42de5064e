#include "io/sleep.hpp"

#include <cerrno>

#include "core/interrupt.hpp"
#include "core/wait.hpp"

namespace weft::detail::io {

int sleep_until(std::int64_t deadline_ns) {
    for (;;) {
        std::uint32_t lock = 0;
        wait_record rec;
        interruptible_wait intr;
        intr.enter(&rec, &lock);
        spinlock_ref lk(lock);
        lk.lock();
        int rc = EINTR;
        if (intr.interrupted()) {
            lk.unlock();
        } else {
            // Linked to no queue: only the timer, interrupt_wait or a
            // cancellation takes it out.
            rec.linked = true;
            rec.unlink = [](wait_record*) {};
            rc = wait(&rec, &lock, deadline_ns, "nanosleep", nullptr);
        }
        if (rc != EINTR) return 0;
        if (take_signals(false) == EINTR) return EINTR;
        // No handler ran: the sleep goes on to its deadline.
    }
}

}  // namespace weft::detail::io

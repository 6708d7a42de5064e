// pthread_exit from a nested call and a cancellation acted on at a blocking
// point unwind the thread's stack as on glibc's threads: the destructors of
// every C++ frame in between run, innermost first, interleaved with the
// pthread_cleanup_push handlers of C++ frames (destructors) and of a C frame
// (lib/unwind_c_frame.c: glibc's jump-buffer handlers); a catch (...) that
// rethrows sees the unwinding; then the key destructors run and the join
// returns the exit value (PTHREAD_CANCELED for the cancellation).
#include <pthread.h>

#include <cstdint>
#include <string>

#include "check.h"

extern "C" void unwind_c_frame(void (*inner)(void*), void* inner_arg, void (*handler)(void*), void* handler_arg);

namespace {

// What ran, in order. Only one thread appends at a time: main joins each
// before it starts the next.
std::string events;

void note(const char* what) {
    if (!events.empty()) events += ' ';
    events += what;
}

void note_handler(void* what) { note(static_cast<const char*>(what)); }

struct frame {
    const char* name;
    ~frame() { note(name); }
};

pthread_key_t key;
void key_destructor(void* what) { note(static_cast<const char*>(what)); }

// pthread_exit three calls down from the start routine, with a C frame in between.
[[noreturn]] void exit_deep() {
    frame f{"~deep"};
    pthread_exit(reinterpret_cast<void*>(std::intptr_t{42}));
}

void above_c_for_exit(void*) {
    frame f{"~above_c"};
    exit_deep();
}

// The frames both threads leave, outermost first: the start routine's, with
// a C++ handler, one more C++ frame, the C frame with its handler, and then
// `above_c` (which exits or blocks until cancelled).
void* start_frames(void (*above_c)(void*)) {
    pthread_setspecific(key, const_cast<char*>("key"));
    frame f{"~start"};
    pthread_cleanup_push(note_handler, const_cast<char*>("handler_start"));
    {
        frame g{"~middle"};
        unwind_c_frame(above_c, nullptr, note_handler, const_cast<char*>("handler_c"));
    }
    pthread_cleanup_pop(0);
    note("not_reached");
    return nullptr;
}

void* exiting(void*) { return start_frames(above_c_for_exit); }

// The cancellation: the thread blocks in a condition wait main never signals.
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
bool waiting = false;

void unlock_handler(void*) {
    note("handler_unlock");
    pthread_mutex_unlock(&m);  // the wait has relocked it, as POSIX wants before the handlers
}

void block_until_cancelled(void*) {
    frame f{"~above_c"};
    try {
        frame g{"~in_try"};
        pthread_mutex_lock(&m);
        pthread_cleanup_push(unlock_handler, nullptr);
        waiting = true;
        for (;;) pthread_cond_wait(&cv, &m);
        pthread_cleanup_pop(1);
    } catch (...) {
        note("catch_rethrow");
        throw;  // the unwinding must go on (abi::__forced_unwind)
    }
}

void* cancelled(void*) { return start_frames(block_until_cancelled); }

}  // namespace

int main() {
    CHECK_EQ(pthread_key_create(&key, key_destructor), 0);

    pthread_t t;
    void* result = nullptr;
    CHECK_EQ(pthread_create(&t, nullptr, exiting, nullptr), 0);
    CHECK_EQ(pthread_join(t, &result), 0);
    CHECK(result == reinterpret_cast<void*>(std::intptr_t{42}));
    printf("exit: %s\n", events.c_str());
    CHECK(events == "~deep ~above_c handler_c ~middle handler_start ~start key");

    events.clear();
    CHECK_EQ(pthread_create(&t, nullptr, cancelled, nullptr), 0);
    for (;;) {  // the thread has released the mutex only inside its wait
        pthread_mutex_lock(&m);
        bool in_wait = waiting;
        pthread_mutex_unlock(&m);
        if (in_wait) break;
        sched_yield();
    }
    CHECK_EQ(pthread_cancel(t), 0);
    CHECK_EQ(pthread_join(t, &result), 0);
    CHECK(result == PTHREAD_CANCELED);
    printf("cancel: %s\n", events.c_str());
    CHECK(events == "handler_unlock ~in_try catch_rethrow ~above_c handler_c ~middle handler_start ~start key");
    CHECK_EQ(pthread_mutex_trylock(&m), 0);  // the handler unlocked it
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    CHECKS_DONE("unwind");
}

// pthread_once and thread-specific data: weft_once and weft's keys, whose
// values (PTHREAD_ONCE_INIT = WEFT_ONCE_INIT = 0; PTHREAD_KEYS_MAX and
// PTHREAD_DESTRUCTOR_ITERATIONS) are glibc's.
#include <climits>
#include <cerrno>

#include "shim/shim.hpp"

using namespace weft::shim;

static_assert(sizeof(weft_once_t) == sizeof(pthread_once_t));
static_assert(WEFT_ONCE_INIT == 0, "PTHREAD_ONCE_INIT is 0");
static_assert(sizeof(weft_key_t) == sizeof(pthread_key_t));
static_assert(WEFT_KEYS_MAX == PTHREAD_KEYS_MAX);
static_assert(WEFT_DESTRUCTOR_ITERATIONS == PTHREAD_DESTRUCTOR_ITERATIONS);

extern "C" {

// Before the runtime is up (the C++ library's start-up), glibc's: its "done"
// state is 2, weft_once's too, so a once run then stays run.
int pthread_once(pthread_once_t* once, void (*init)(void)) {
    if (!ready()) return real::pthread_once(once, init);
    errno_keeper keep;
    return weft_once(reinterpret_cast<weft_once_t*>(once), init);
}

int pthread_key_create(pthread_key_t* key, void (*destructor)(void*)) {
    if (key == nullptr) return EINVAL;
    return weft_key_create(key, destructor);
}

int pthread_key_delete(pthread_key_t key) { return weft_key_delete(key); }

void* pthread_getspecific(pthread_key_t key) { return weft_getspecific(key); }

// glibc declares the value access(none): a pointer kept, never read, which
// GCC then takes for uninitialised memory passed on.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
int pthread_setspecific(pthread_key_t key, const void* value) { return weft_setspecific(key, value); }
#pragma GCC diagnostic pop

}  // extern "C"

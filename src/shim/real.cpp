// The table behind passthrough.S, and the few libstdc++ functions weft's
// runtime uses that would otherwise reach the shim from inside libstdc++.
//
// weft's runtime is linked into the shim with --wrap for every function of
// interposed.def, so its own calls (worker threads, std::mutex, the adaptive
// controller's waits) go to the C library. That covers calls the runtime's
// object files make. A few calls are made from inside libstdc++.so on the
// runtime's behalf: std::thread's start and join, std::condition_variable's
// destructor and notify. From there they would reach the shim (a glibc
// condition variable signalled as a weft one, a worker thread created as a weft
// thread), so the shim's link also wraps those members (CMakeLists.txt) and
// defines them here over the C library's functions. `nm -u` of the shim is
// checked at build time for any that are left (check_no_stdthread.cmake).
#include <dlfcn.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <system_error>
#include <thread>

#include "shim/real.hpp"

namespace weft::shim {
namespace {

const char* const real_names[real_count] = {
#define SHIM_FN(name) #name,
#include "shim/interposed.def"
#undef SHIM_FN
};

// Functions a C library may lack (older glibc: the *clock* calls): calling one
// then is reported, never a jump to address 0.
[[noreturn]] void missing_real() {
    static const char msg[] = "weft-pthread: a C library function the program called does not exist in this C library\n";
    (void)!write(2, msg, sizeof msg - 1);
    abort();
}

}  // namespace
}  // namespace weft::shim

extern "C" {
__attribute__((visibility("hidden"))) void* weft_shim_real[weft::shim::real_count];

// Fills the table; idempotent (two threads that race here store the same
// values). dlsym does not call back into the functions the shim replaces.
__attribute__((visibility("hidden"))) void weft_shim_fill_real() {
    using namespace weft::shim;
    for (int i = 0; i < real_count; ++i) {
        void* f = dlsym(RTLD_NEXT, real_names[i]);
        __atomic_store_n(&weft_shim_real[i], f != nullptr ? f : reinterpret_cast<void*>(&missing_real),
                         __ATOMIC_RELAXED);
    }
}
}

namespace weft::shim {
namespace {

// Before anything else in the shim (weft's static initializers included):
// every later call may need the table. (An earlier call fills it itself:
// passthrough.S.)
__attribute__((constructor(101))) void fill_real_table() { weft_shim_fill_real(); }

void* run_std_thread(void* p) {
    std::unique_ptr<std::thread::_State> state(static_cast<std::thread::_State*>(p));
    state->_M_run();
    return nullptr;
}

}  // namespace
}  // namespace weft::shim

using namespace weft::shim;

// libstdc++'s members, as weft's runtime objects reference them (the Itanium
// C++ ABI: `this` first; a unique_ptr argument is passed by address).
extern "C" {

__attribute__((visibility("hidden"))) void _ZNSt18condition_variableC1Ev_impl(pthread_cond_t* self);

__attribute__((visibility("hidden"))) void __wrap__ZNSt18condition_variableC1Ev(pthread_cond_t* self) {
    (void)real::pthread_cond_init(self, nullptr);
}
__attribute__((visibility("hidden"))) void __wrap__ZNSt18condition_variableD1Ev(pthread_cond_t* self) {
    (void)real::pthread_cond_destroy(self);
}
__attribute__((visibility("hidden"))) void __wrap__ZNSt18condition_variable10notify_oneEv(pthread_cond_t* self) {
    (void)real::pthread_cond_signal(self);
}
__attribute__((visibility("hidden"))) void __wrap__ZNSt18condition_variable10notify_allEv(pthread_cond_t* self) {
    (void)real::pthread_cond_broadcast(self);
}

__attribute__((visibility("hidden"))) void
__wrap__ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE(
    pthread_t* self, std::unique_ptr<std::thread::_State>* state, void (*)()) {
    std::thread::_State* s = state->release();
    int rc = real::pthread_create(self, nullptr, &run_std_thread, s);
    if (rc != 0) {
        delete s;
        throw std::system_error(rc, std::generic_category(), "thread::_M_start_thread");
    }
}

__attribute__((visibility("hidden"))) void __wrap__ZNSt6thread4joinEv(pthread_t* self) {
    int rc = *self == 0 ? EINVAL : real::pthread_join(*self, nullptr);
    if (rc != 0) throw std::system_error(rc, std::generic_category(), "thread::join");
    *self = 0;
}

}  // extern "C"

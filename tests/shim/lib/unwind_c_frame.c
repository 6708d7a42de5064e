/* A C frame between C++ frames, for unwind.cpp: compiled as C without
 * -fexceptions, so pthread_cleanup_push is glibc's C macro (a jump buffer
 * registered with __pthread_register_cancel), not a destructor. The unwinding
 * of pthread_exit or a cancellation that passes this frame must run its
 * handler between the destructors of the C++ frames below and above it. */
#include <pthread.h>

void unwind_c_frame(void (*inner)(void*), void* inner_arg, void (*handler)(void*), void* handler_arg) {
    pthread_cleanup_push(handler, handler_arg);
    inner(inner_arg);
    pthread_cleanup_pop(0);
}

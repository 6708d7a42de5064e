/* A module with thread-local storage of its own, loaded with dlopen by
 * tls_dlopen.c after the threads that use it exist: its __thread data is
 * reached through each thread's dynamic thread vector (global-dynamic
 * model), which must give each thread its own copy. */
__thread long module_counter = 1000;

long module_bump(void) { return ++module_counter; }
long* module_counter_address(void) { return &module_counter; }

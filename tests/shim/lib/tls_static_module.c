/* A module with initial-exec thread-local storage (static TLS: the dynamic
 * loader places it in the surplus of every thread's static TLS block when it
 * is loaded with dlopen), loaded by tls_dlopen_static.c. */
__attribute__((tls_model("initial-exec"))) __thread long static_counter = 2000;

long static_bump(void) { return ++static_counter; }

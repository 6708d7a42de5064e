/* fork() from a threaded program: the pthread_atfork handlers run in glibc's
 * order (prepare in reverse order of registration, parent and child in
 * order), and the child, which has only the forking thread, can create and
 * join threads, lock a mutex the handlers kept consistent, malloc and printf,
 * and exits 0. Forked once from a thread that is not main while four threads
 * contend for the mutex, and once from main. */
#define _GNU_SOURCE /* pthread_getattr_np */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

enum { nworkers = 4, nchildren = 8 };

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static atomic_int stop;
static char order[16]; /* the handlers' letters, in the order they ran */
static int norder;

static void note(char c) {
    if (norder < (int)sizeof order - 1) order[norder++] = c;
}
static void prepare_a(void) {
    note('1');
    pthread_mutex_lock(&m); /* the usual use: the child gets m unlocked, its data whole */
}
static void parent_a(void) {
    note('A');
    pthread_mutex_unlock(&m);
}
static void child_a(void) {
    note('x');
    pthread_mutex_unlock(&m);
}
static void prepare_b(void) { note('2'); }
static void parent_b(void) { note('B'); }
static void child_b(void) { note('y'); }
static void prepare_c(void) { note('3'); }
static void parent_c(void) { note('C'); }
static void child_c(void) { note('z'); }

static void* contend(void* arg) {
    (void)arg;
    for (int i = 0; !atomic_load(&stop); ++i) {
        pthread_mutex_lock(&m);
        ++counter;
        pthread_mutex_unlock(&m);
        free(malloc(64 + (size_t)(i % 100)));
        sched_yield();
    }
    return NULL;
}

static void* square(void* arg) {
    long v = (long)arg;
    return (void*)(v * v);
}

/* The child's life: threads, a mutex, malloc, printf; exit status 0 if all
 * went as on glibc's threads (a failed CHECK exits 1). */
static void in_child(const char* from, int out) {
    CHECK(strcmp(order, "321xyz") == 0);
    /* The thread's own stack, the one it runs on. */
    pthread_attr_t a;
    void* lo;
    size_t size;
    CHECK_EQ(pthread_getattr_np(pthread_self(), &a), 0);
    CHECK_EQ(pthread_attr_getstack(&a, &lo, &size), 0);
    CHECK((char*)&a >= (char*)lo && (char*)&a < (char*)lo + size);
    CHECK_EQ(pthread_attr_destroy(&a), 0);
    pthread_t t[nchildren];
    for (long i = 0; i < nchildren; ++i) CHECK_EQ(pthread_create(&t[i], NULL, square, (void*)i), 0);
    long sum = 0;
    for (int i = 0; i < nchildren; ++i) {
        void* r;
        CHECK_EQ(pthread_join(t[i], &r), 0);
        sum += (long)r;
    }
    CHECK_EQ(sum, 140);
    /* Only the forking thread was copied: the contending threads, waiting for
     * m in the parent when it forked, never run here. */
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    long before = counter;
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    usleep(20000);
    sched_yield();
    char* text = malloc(64);
    CHECK(text != NULL);
    snprintf(text, 64, "fork child (from %s): %d threads joined", from, nchildren);
    CHECK(dup2(out, STDOUT_FILENO) == STDOUT_FILENO); /* the parent reads what printf wrote */
    printf("%s\n", text);
    free(text);
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    CHECK_EQ(counter, before);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    exit(0);
}

static void fork_and_wait(const char* from) {
    norder = 0;
    memset(order, 0, sizeof order);
    int out[2];
    CHECK_EQ(pipe(out), 0);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) in_child(from, out[1]);
    CHECK(strcmp(order, "321ABC") == 0);
    close(out[1]);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
    char got[128] = {0}, want[128];
    CHECK(read(out[0], got, sizeof got - 1) > 0);
    close(out[0]);
    snprintf(want, sizeof want, "fork child (from %s): %d threads joined\n", from, nchildren);
    CHECK(strcmp(got, want) == 0);
}

static void* forker(void* arg) {
    (void)arg;
    usleep(10000); /* the others contend meanwhile */
    fork_and_wait("a thread");
    return NULL;
}

int main(void) {
    CHECK_EQ(pthread_atfork(prepare_a, parent_a, child_a), 0);
    CHECK_EQ(pthread_atfork(prepare_b, parent_b, child_b), 0);
    CHECK_EQ(pthread_atfork(prepare_c, parent_c, child_c), 0);
    pthread_t w[nworkers], f;
    for (int i = 0; i < nworkers; ++i) CHECK_EQ(pthread_create(&w[i], NULL, contend, NULL), 0);
    CHECK_EQ(pthread_create(&f, NULL, forker, NULL), 0);
    CHECK_EQ(pthread_join(f, NULL), 0);
    fork_and_wait("main");
    atomic_store(&stop, 1);
    for (int i = 0; i < nworkers; ++i) CHECK_EQ(pthread_join(w[i], NULL), 0);
    CHECK(counter > 0);
    CHECKS_DONE("fork");
}

/* The C library's own per-thread state is each thread's: the ctype tables
 * (isalpha, toupper read them through pointers in thread-local storage, set
 * when a thread starts) and the thread's locale (uselocale): a thread that
 * installs a locale of its own and yields leaves the others on the global
 * one. */
#define _GNU_SOURCE
#include <ctype.h>
#include <locale.h>
#include <pthread.h>
#include <sched.h>

#include "check.h"

enum { threads = 16, rounds = 50 };

static void* use_libc_state(void* a) {
    long id = (long)a;
    if (!isalpha('a') || isdigit('a') || toupper('b') != 'B' || tolower('C') != 'c') return (void*)1;
    locale_t own = (locale_t)0;
    if (id % 2 == 0) {
        own = newlocale(LC_ALL_MASK, "C", (locale_t)0);
        if (own == (locale_t)0 || uselocale(own) == (locale_t)0) return (void*)2;
    }
    for (int i = 0; i < rounds; ++i) {
        switch_away(i);
        locale_t now = uselocale((locale_t)0);
        if (id % 2 == 0 ? now != own : now != LC_GLOBAL_LOCALE) return (void*)3;
    }
    if (own != (locale_t)0) {
        uselocale(LC_GLOBAL_LOCALE);
        freelocale(own);
    }
    return NULL;
}

int main(void) {
    pthread_t ts[threads];
    void* r;
    for (long i = 0; i < threads; ++i) CHECK_EQ(pthread_create(&ts[i], NULL, use_libc_state, (void*)i), 0);
    for (int i = 0; i < threads; ++i) {
        CHECK_EQ(pthread_join(ts[i], &r), 0);
        CHECK_EQ((long)r, 0);
    }
    CHECK(uselocale((locale_t)0) == LC_GLOBAL_LOCALE);
    CHECKS_DONE("tls_libc_state");
}

/* Many threads write to one stdio stream at once, with printf-family calls
 * and fputs, yielding between lines: each line comes out whole and every
 * line is there. glibc's stream lock is recursive and knows its owner by the
 * thread control block (THREAD_SELF); under the shim every weft thread has its
 * own, so threads taking turns on one worker, or running on two, neither
 * enter each other's locked section nor wait for each other for ever. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#include "check.h"

enum { threads = 40, lines = 150 };

static FILE* out;

static void* write_lines(void* a) {
    long id = (long)a;
    char buf[160];
    for (int i = 0; i < lines; ++i) {
        if (i % 2 == 0) {
            fprintf(out, "thread %ld line %d %s\n", id, i, "0123456789abcdefghijklmnopqrstuvwxyz");
        } else {
            snprintf(buf, sizeof buf, "thread %ld line %d %s\n", id, i, "0123456789abcdefghijklmnopqrstuvwxyz");
            fputs(buf, out);
        }
        if (i % 5 == 0) fflush(out);
        sched_yield();
    }
    return NULL;
}

int main(void) {
    pthread_t ts[threads];
    static int count[threads];
    char line[256];
    out = tmpfile();
    CHECK(out != NULL);
    setvbuf(out, NULL, _IOFBF, 512); /* small: lines often straddle a flush */
    for (long i = 0; i < threads; ++i) CHECK_EQ(pthread_create(&ts[i], NULL, write_lines, (void*)i), 0);
    for (int i = 0; i < threads; ++i) CHECK_EQ(pthread_join(ts[i], NULL), 0);
    rewind(out);
    int total = 0, bad = 0;
    while (fgets(line, sizeof line, out) != NULL) {
        long id;
        int n, end = 0;
        if (sscanf(line, "thread %ld line %d 0123456789abcdefghijklmnopqrstuvwxyz\n%n", &id, &n, &end) != 2 ||
            end != (int)strlen(line) || id < 0 || id >= threads || n != count[id]) {
            if (bad++ < 3) fprintf(stderr, "garbled or out-of-order line: %s", line);
            continue;
        }
        ++count[id];
        ++total;
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(total, threads * lines);
    fclose(out);
    CHECKS_DONE("tls_stdio");
}

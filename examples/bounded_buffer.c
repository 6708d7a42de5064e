#define _POSIX_C_SOURCE 200809L /* clock_gettime */
/* bounded_buffer.c: producers and consumers on a mutex and two condition
 * variables; consumers use a timed wait to notice that production ended.
 * Every blocking call blocks only its weft thread, never a worker. */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <weft/weft.h>

#define CAPACITY 8
#define PRODUCERS 4
#define CONSUMERS 3
#define ITEMS_EACH 10000

static struct {
    weft_mutex_t lock;
    weft_cond_t not_full, not_empty;
    long items[CAPACITY];
    int head, count, producers_left;
} buf = {WEFT_MUTEX_INITIALIZER, WEFT_COND_INITIALIZER, WEFT_COND_INITIALIZER, {0}, 0, 0, PRODUCERS};

static void *produce(void *arg) {
    long base = (long)arg * ITEMS_EACH;
    for (long i = 1; i <= ITEMS_EACH; i++) {
        weft_mutex_lock(&buf.lock);
        while (buf.count == CAPACITY) weft_cond_wait(&buf.not_full, &buf.lock);
        buf.items[(buf.head + buf.count++) % CAPACITY] = base + i;
        weft_cond_signal(&buf.not_empty);
        weft_mutex_unlock(&buf.lock);
    }
    weft_mutex_lock(&buf.lock);
    buf.producers_left--;
    weft_mutex_unlock(&buf.lock);
    return NULL;
}

static void *consume(void *arg) {
    (void)arg;
    long sum = 0;
    weft_mutex_lock(&buf.lock);
    for (;;) {
        while (buf.count == 0 && buf.producers_left > 0) {
            struct timespec deadline;
            clock_gettime(CLOCK_REALTIME, &deadline);
            deadline.tv_nsec += 1000000; /* re-check every millisecond */
            if (deadline.tv_nsec >= 1000000000) { deadline.tv_sec++; deadline.tv_nsec -= 1000000000; }
            if (weft_cond_timedwait(&buf.not_empty, &buf.lock, &deadline) == ETIMEDOUT) continue;
        }
        if (buf.count == 0) break; /* empty and nobody left to produce */
        sum += buf.items[buf.head];
        buf.head = (buf.head + 1) % CAPACITY;
        buf.count--;
        weft_cond_signal(&buf.not_full);
    }
    weft_mutex_unlock(&buf.lock);
    return (void *)sum;
}

int main(void) {
    weft_thread_t p[PRODUCERS], c[CONSUMERS];
    for (long i = 0; i < PRODUCERS; i++) weft_thread_create(&p[i], NULL, produce, (void *)i);
    for (long i = 0; i < CONSUMERS; i++) weft_thread_create(&c[i], NULL, consume, NULL);
    for (int i = 0; i < PRODUCERS; i++) weft_thread_join(p[i], NULL);
    long total = 0;
    for (int i = 0; i < CONSUMERS; i++) {
        void *part;
        weft_thread_join(c[i], &part);
        total += (long)part;
    }
    long n = (long)PRODUCERS * ITEMS_EACH;
    long expected = n * (n + 1) / 2;
    printf("consumed sum %ld, expected %ld: %s\n", total, expected, total == expected ? "ok" : "WRONG");
    return total == expected ? 0 : 1;
}

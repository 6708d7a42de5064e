/* fork_tree.c: a binary tree of threads, each leaf holding a little memory.
 * Compare the schedulers' footprint, the point of Narlikar & Blelloch:
 *     WEFT_WORKERS=1 WEFT_SCHED=fifo ./fork_tree   # breadth-first: thousands live
 *     WEFT_WORKERS=1 WEFT_SCHED=lifo ./fork_tree   # depth-first-like: a few dozen */
#include <stdint.h>
#include <stdio.h>
#include <weft/weft.h>

static void *node(void *arg) {
    intptr_t depth = (intptr_t)arg;
    if (depth == 0) return (void *)1;
    weft_thread_t left, right;
    weft_thread_create(&left, NULL, node, (void *)(depth - 1));
    weft_thread_create(&right, NULL, node, (void *)(depth - 1));
    void *a, *b;
    weft_thread_join(left, &a);
    weft_thread_join(right, &b);
    return (void *)((intptr_t)a + (intptr_t)b);
}

int main(void) {
    void *leaves;
    weft_thread_t root;
    weft_thread_create(&root, NULL, node, (void *)(intptr_t)14);
    weft_thread_join(root, &leaves);
    weft_stats_t s;
    weft_stats_get(&s);
    printf("%s scheduler, %d worker(s): %ld leaves, %llu threads created, at most %llu live at once, "
           "%llu KiB of stack mapped at the peak\n",
           weft_sched_name(), s.workers, (long)(intptr_t)leaves, (unsigned long long)s.threads_created,
           (unsigned long long)s.max_live_threads, (unsigned long long)(s.stack_bytes_peak / 1024));
    return (intptr_t)leaves == (1 << 14) ? 0 : 1;
}

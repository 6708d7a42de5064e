/* hello.c: one weft thread per task, Pthreads-style. cc hello.c $(pkg-config --cflags --libs weft) */
#include <stdio.h>
#include <weft/weft.h>

static long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static void *task(void *arg) { return (void *)fib((long)arg); }

int main(void) {
    weft_thread_t threads[30];
    for (long i = 0; i < 30; i++)
        if (weft_thread_create(&threads[i], NULL, task, (void *)i) != 0) return 1;
    long sum = 0;
    for (int i = 0; i < 30; i++) {
        void *result;
        weft_thread_join(threads[i], &result);
        sum += (long)result;
    }
    printf("sum of fib(0..29) = %ld on %d workers\n", sum, weft_num_workers());
    return sum == 1346268 ? 0 : 1;
}

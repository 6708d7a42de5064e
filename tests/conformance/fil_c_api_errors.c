/* The error paths of the filament C API (weft.h, "Errors" of each call), driven
 * from strict C11. Each function returns 0, or the line of the first check that
 * failed (fil_c_api_test.cpp reports it). */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "weft/weft.h"

#define CHECK(cond)                  \
    do {                             \
        if (!(cond)) return __LINE__; \
    } while (0)

static void body_nothing(int i, int j, void *arg) {
    (void)i;
    (void)j;
    (void)arg;
}

/* Null handles, bad values and out-of-range workers, outside any region. */
int fil_c_error_arguments(void) {
    weft_fil_poolset_t ps, none = NULL, sets[2];
    weft_fil_pool_t pools[64], pool;
    weft_fil_stats_t st;
    int w = weft_num_workers();
    CHECK(w > 0 && w <= 64);
    CHECK(weft_fil_poolset_destroy(NULL) == EINVAL);
    CHECK(weft_fil_poolset_set_order(NULL, WEFT_FIL_FORWARD) == EINVAL);
    CHECK(weft_fil_pools_create(NULL, 4, pools) == EINVAL);
    CHECK(weft_fil_pool_create(NULL, 0, 4, &pool) == EINVAL);
    CHECK(weft_fil_create(NULL, 0, 0) == EINVAL);
    CHECK(weft_fil_run_sets(&none, 1) == EINVAL);

    CHECK(weft_fil_poolset_create(&ps, body_nothing, NULL, NULL) == 0);
    CHECK(weft_fil_poolset_set_order(ps, 2) == EINVAL);
    CHECK(weft_fil_poolset_set_order(ps, -1) == EINVAL);
    CHECK(weft_fil_poolset_set_order(ps, WEFT_FIL_FORWARD) == 0);
    CHECK(weft_fil_poolset_set_order(ps, WEFT_FIL_BACK_AND_FORTH) == 0);
    CHECK(weft_fil_pools_create(ps, 4, NULL) == EINVAL);
    CHECK(weft_fil_pool_create(ps, 0, 4, NULL) == EINVAL);
    CHECK(weft_fil_pools_create(ps, 4, pools) == 0);
    CHECK(weft_fil_create(pools[0], 1, 2) == 0);
    CHECK(weft_fil_pool_size(pools[0]) == 1);
    sets[0] = ps;
    sets[1] = NULL;
    CHECK(weft_fil_run_sets(sets, 0) == EINVAL);
    CHECK(weft_fil_run_sets(sets, -1) == EINVAL);
    CHECK(weft_fil_run_sets(sets, 2) == EINVAL); /* a null set in the sequence */
    CHECK(weft_fil_run_sets(sets, 1) == 0);
    CHECK(weft_fil_poolset_destroy(ps) == 0);

    CHECK(weft_fil_stats_get(NULL) == EINVAL);
    CHECK(weft_fil_stats_get(&st) == 0);
    CHECK(weft_fil_worker_stats_get(-1, &st) == EINVAL);
    CHECK(weft_fil_worker_stats_get(w, &st) == EINVAL);
    CHECK(weft_fil_worker_stats_get(0, NULL) == EINVAL);
    CHECK(weft_fil_worker_stats_get(w - 1, &st) == 0);
    return 0;
}

/* A set running in a region cannot be destroyed, reordered or given pools:
 * its after function, which runs inside the region, tries each. */
static weft_fil_poolset_t busy_set;
static int busy_checks;

static int try_while_running(void *arg) {
    weft_fil_pool_t pool;
    (void)arg;
    busy_checks = 0;
    if (weft_fil_poolset_destroy(busy_set) == EBUSY) busy_checks |= 1;
    if (weft_fil_poolset_set_order(busy_set, WEFT_FIL_FORWARD) == EBUSY) busy_checks |= 2;
    if (weft_fil_pool_create(busy_set, 0, 4, &pool) == EBUSY) busy_checks |= 4;
    return WEFT_FIL_DONE;
}

int fil_c_error_busy(void) {
    weft_fil_pool_t pool;
    CHECK(weft_fil_poolset_create(&busy_set, body_nothing, try_while_running, NULL) == 0);
    CHECK(weft_fil_pool_create(busy_set, 0, 4, &pool) == 0);
    CHECK(weft_fil_create(pool, 0, 0) == 0);
    CHECK(weft_fil_run_sets(&busy_set, 1) == 0);
    CHECK(busy_checks == 7);
    /* Once the region is over, the same calls succeed. */
    CHECK(weft_fil_poolset_set_order(busy_set, WEFT_FIL_FORWARD) == 0);
    CHECK(weft_fil_pool_create(busy_set, 0, 4, &pool) == 0);
    CHECK(weft_fil_poolset_destroy(busy_set) == 0);
    return 0;
}

/* Reduction variables: every call's error, and weft_fil_reduce_user. */
struct pair {
    int64_t sum;
    int64_t copies;
};

static void add_pair(void *acc, const void *x, void *ctx) {
    struct pair *a = (struct pair *)acc;
    const struct pair *b = (const struct pair *)x;
    a->sum += b->sum;
    a->copies += b->copies;
    ++*(int *)ctx;
}

int fil_c_error_reductions(void) {
    weft_fil_red_t r, ri;
    struct pair init = {3, 1}, out = {0, 0};
    int64_t v = 0;
    int calls = 0, w = weft_num_workers();
    CHECK(weft_fil_red_create(NULL, WEFT_FIL_INT64, 0, NULL) == EINVAL);
    CHECK(weft_fil_red_create(&r, -1, 0, NULL) == EINVAL);
    CHECK(weft_fil_red_create(&r, WEFT_FIL_BYTES, 0, NULL) == EINVAL);
    CHECK(weft_fil_red_create(&r, WEFT_FIL_BYTES, WEFT_FIL_RED_SIZE_MAX + 1, NULL) == EINVAL);
    CHECK(weft_fil_red_destroy(NULL) == EINVAL);
    CHECK(weft_fil_red_set(NULL, &v) == EINVAL);
    CHECK(weft_fil_reduce(NULL, WEFT_FIL_SUM, &v) == EINVAL);
    CHECK(weft_fil_reduce_user(NULL, add_pair, &calls, &out) == EINVAL);

    CHECK(weft_fil_red_create(&r, WEFT_FIL_BYTES, sizeof init, &init) == 0);
    CHECK(weft_fil_reduce(r, WEFT_FIL_SUM, &out) == EINVAL); /* built-in operators need a number type */
    CHECK(weft_fil_reduce_user(r, NULL, &calls, &out) == EINVAL);
    CHECK(weft_fil_reduce_user(r, add_pair, &calls, NULL) == EINVAL);
    /* Every copy is {3, 1}: the fold starts from copy 0 and adds the others. */
    CHECK(weft_fil_reduce_user(r, add_pair, &calls, &out) == 0);
    CHECK(out.sum == 3 * (int64_t)w && out.copies == w);
    CHECK(calls == w - 1);
    /* The copies are left as they were. */
    CHECK(memcmp(weft_fil_local(r), &init, sizeof init) == 0);
    CHECK(weft_fil_red_set(r, NULL) == 0);
    CHECK(weft_fil_reduce_user(r, add_pair, &calls, &out) == 0);
    CHECK(out.sum == 0 && out.copies == 0);
    CHECK(weft_fil_red_destroy(r) == 0);

    CHECK(weft_fil_red_create(&ri, WEFT_FIL_INT64, 0, NULL) == 0);
    CHECK(weft_fil_reduce(ri, WEFT_FIL_SUM, NULL) == EINVAL);
    CHECK(weft_fil_reduce(ri, WEFT_FIL_SUM - 1, &v) == EINVAL);
    CHECK(weft_fil_reduce(ri, WEFT_FIL_LOR + 1, &v) == EINVAL);
    CHECK(weft_fil_red_destroy(ri) == 0);
    return 0;
}

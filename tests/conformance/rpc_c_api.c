/*
 * Class: requirement (conformance). weft/rpc.h from strict ISO C11: a C
 * server registered by function ID, calls from a thread of another node, the
 * naming service and the job-wide barrier, through libweft.so's exported ABI.
 * Returns 0 or the line of the first failed check (rpc_c_api_test.cpp).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "weft/rpc.h"

#define CHECK(cond)                   \
    do {                              \
        if (!(cond)) return __LINE__; \
    } while (0)

static int add(void *arg, const void *in, size_t in_len, void *out, size_t out_cap, size_t *out_len) {
    int32_t v[2];
    int32_t r;
    (void)arg;
    if (in_len != sizeof v || out_cap < sizeof r) return EINVAL;
    memcpy(v, in, sizeof v);
    r = v[0] + v[1];
    memcpy(out, &r, sizeof r);
    *out_len = sizeof r;
    return 0;
}

static int refuse(void *arg, const void *in, size_t in_len, void *out, size_t out_cap, size_t *out_len) {
    (void)arg, (void)in, (void)in_len, (void)out_cap;
    memcpy(out, "no", 2);
    *out_len = 2;
    return EPERM;
}

static int s_result;

/* On node 1: find the server by name, call it, meet node 0 at the barrier. */
static void *client(void *arg) {
    weft_port_id_t port;
    int32_t in[2] = {40, 2};
    int32_t r = 0;
    char text[16];
    size_t len = 0;
    (void)arg;
    s_result = __LINE__;
    if (weft_net_name_lookup("adder", &port, WEFT_NET_FOREVER) != 0) return NULL;
    if (weft_rpc_call(port, 1, in, sizeof in, &r, sizeof r, &len, WEFT_NET_FOREVER) != 0 || r != 42) return NULL;
    s_result = __LINE__;
    if (weft_rpc_call(port, 2, NULL, 0, text, sizeof text, &len, WEFT_NET_FOREVER) != EREMOTEIO || len != 2) return NULL;
    s_result = __LINE__;
    if (weft_rpc_call(port, 3, NULL, 0, text, sizeof text, &len, WEFT_NET_FOREVER) != ENOSYS) return NULL;
    s_result = __LINE__;
    if (weft_net_barrier() != 0) return NULL;
    s_result = 0;
    return NULL;
}

int weft_c_rpc(void) {
    weft_config_t cfg;
    weft_net_config_t ncfg;
    weft_rpc_server_t srv;
    weft_port_id_t port;
    weft_thread_t t;
    memset(&cfg, 0, sizeof cfg);
    cfg.workers = 2;
    CHECK(weft_init(&cfg) == 0);
    memset(&ncfg, 0, sizeof ncfg);
    ncfg.nodes = 2;
    CHECK(weft_net_init(&ncfg) == 0);
    CHECK(weft_rpc_server_create(&srv) == 0);
    CHECK(weft_rpc_server_register(srv, 1, add, NULL) == 0);
    CHECK(weft_rpc_server_register(srv, 2, refuse, NULL) == 0);
    CHECK(weft_rpc_server_start(srv, 2, &port) == 0);
    CHECK(weft_net_name_register("adder", port) == 0);
    CHECK(weft_net_name_register("adder", port) == EEXIST);
    CHECK(weft_net_spawn(&t, 1, NULL, client, NULL) == 0);
    CHECK(weft_net_barrier() == 0);
    CHECK(weft_thread_join(t, NULL) == 0);
    if (s_result != 0) return s_result; /* the client's failed check */
    CHECK(weft_net_name_unregister("adder") == 0);
    CHECK(weft_rpc_server_destroy(srv) == 0);
    CHECK(weft_net_finalize() == 0);
    CHECK(weft_finalize() == 0);
    return 0;
}

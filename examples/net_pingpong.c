/* net_pingpong.c — message passing between nodes: a thread on node 1 sends a
 * counter to a port on node 0, which sends it back incremented, through
 * ports whose receives block only the receiving weft thread. Two in-process
 * nodes; try WEFT_NET_LATENCY=20000,1 to play a slower network. */
#include <stdio.h>

#include "weft/weft.h"

enum { ROUNDS = 1000 };

static weft_port_id_t ping_port, pong_port;

static void *pinger(void *arg) {
    (void)arg;
    /* Node 1's own port, made before the first send: node 0 uses its ID only
     * after that message has arrived. */
    if (weft_net_port_create(&pong_port, 4, 64) != 0) return (void *)1;
    int v = 0;
    for (int i = 0; i < ROUNDS; ++i) {
        if (weft_net_send(ping_port, 1, &v, sizeof v) != 0) return (void *)1;
        if (weft_net_recv(pong_port, &v, sizeof v, NULL, WEFT_NET_FOREVER) != 0) return (void *)1;
    }
    weft_net_port_destroy(pong_port);
    return v == ROUNDS ? NULL : (void *)1;
}

int main(void) {
    weft_net_config_t cfg = {0};
    cfg.nodes = 2;
    if (weft_net_init(&cfg) != 0) return 1;
    if (weft_net_port_create(&ping_port, 4, 64) != 0) return 1;
    weft_thread_t t;
    if (weft_net_spawn(&t, 1, NULL, pinger, NULL) != 0) return 1;
    weft_net_status_t st;
    for (int i = 0; i < ROUNDS; ++i) {
        int v;
        if (weft_net_recv(ping_port, &v, sizeof v, &st, WEFT_NET_FOREVER) != 0) return 1;
        ++v;
        if (weft_net_send(pong_port, 2, &v, sizeof v) != 0) return 1;
    }
    void *failed = NULL;
    weft_thread_join(t, &failed);
    printf("%d round trips between node 0 and node %u: %s\n", ROUNDS, st.source, failed ? "FAILED" : "ok");
    weft_net_port_destroy(ping_port);
    weft_net_finalize();
    weft_finalize();
    return failed ? 1 : 0;
}

/* net_mpi_ring.c — a token ring over every node of a job, and several threads
 * per node streaming messages to the next node meanwhile: each node's
 * threads block only themselves in weft_net_recv / weft_net_send.
 *
 * In one process (4 in-process nodes):      ./net_mpi_ring
 * One node per MPI rank:                    WEFT_NET=mpi mpiexec -n 4 ./net_mpi_ring
 *   (Open MPI as root and on fewer cores than ranks: mpiexec --allow-run-as-root
 *    --oversubscribe -n 4 ...; docs/design/mpi.md, "Launching ranks".)
 *
 * Each node registers its port with the naming service as "ring/<node>" and
 * looks up the next node's (weft/rpc.h): the lookup blocks until that name
 * is registered, so no node sends to a port that does not exist yet. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "weft/rpc.h"
#include "weft/weft.h"

enum { LAPS = 100, STREAMERS = 4, PER_STREAMER = 250, TAG_TOKEN = 1, TAG_STREAM = 2 };

static int nodes;

static void *streamer(void *arg) {
    weft_port_id_t to = *(weft_port_id_t *)arg;
    for (int i = 0; i < PER_STREAMER; ++i)
        if (weft_net_send(to, TAG_STREAM, &i, sizeof i) != 0) return (void *)1;
    return NULL;
}

/* The node's main thread: its port, its streamers, its share of the ring. */
static void *node_main(void *arg) {
    (void)arg;
    int self = weft_net_self_node();
    weft_port_id_t mine, next;
    char name[32];
    if (weft_net_port_create(&mine, 16, 1024) != 0) return (void *)1;
    snprintf(name, sizeof name, "ring/%d", self);
    int rc = weft_net_name_register(name, mine);
    if (rc != 0) {
        fprintf(stderr, "node %d: registering %s failed: %s\n", self, name, strerror(rc));
        return (void *)1;
    }
    snprintf(name, sizeof name, "ring/%d", (self + 1) % nodes);
    if ((rc = weft_net_name_lookup(name, &next, 10 * 1000000000LL)) != 0) {
        fprintf(stderr, "node %d: looking up %s failed: %s\n", self, name, strerror(rc));
        return (void *)1;
    }
    weft_thread_t s[STREAMERS];
    for (int i = 0; i < STREAMERS; ++i)
        if (weft_thread_create(&s[i], NULL, streamer, &next) != 0) return (void *)1;
    long token = 0, streamed = 0;
    int laps = 0;
    if (self == 0 && weft_net_send(next, TAG_TOKEN, &token, sizeof token) != 0) return (void *)1;
    /* Until the token has passed LAPS times and every streamed message is in. */
    while (laps < LAPS || streamed < STREAMERS * PER_STREAMER) {
        char buf[16];
        weft_net_status_t st;
        if (weft_net_recv(mine, buf, sizeof buf, &st, WEFT_NET_FOREVER) != 0) return (void *)1;
        if (st.tag == TAG_STREAM) {
            ++streamed;
            continue;
        }
        memcpy(&token, buf, sizeof token);
        ++laps;
        ++token;
        if (self == 0 && laps == LAPS) continue;  /* node 0 ends the ring */
        if (weft_net_send(next, TAG_TOKEN, &token, sizeof token) != 0) return (void *)1;
    }
    for (int i = 0; i < STREAMERS; ++i) weft_thread_join(s[i], NULL);
    if (self == 0) printf("token went round %d nodes %d times: %ld hops\n", nodes, LAPS, token);
    weft_net_port_destroy(mine);
    return self != 0 || token == (long)LAPS * nodes ? NULL : (void *)1;
}

int main(void) {
    const char *net = getenv("WEFT_NET");
    int mpi = net != NULL && strcasecmp(net, "mpi") == 0;
    weft_net_config_t cfg = {0};
    cfg.nodes = mpi ? 0 : 4; /* under MPI the ranks are the nodes */
    if (weft_net_init(&cfg) != 0) return 1;
    nodes = weft_net_num_nodes();
    int failed = 0;
    if (mpi) {
        failed = node_main(NULL) != NULL;
    } else {
        weft_thread_t t[4];
        for (int n = 0; n < nodes; ++n)
            if (weft_net_spawn(&t[n], n, NULL, node_main, NULL) != 0) return 1;
        for (int n = 0; n < nodes; ++n) {
            void *r;
            weft_thread_join(t[n], &r);
            failed |= r != NULL;
        }
    }
    if (weft_net_finalize() != 0) return 1;
    return failed;
}

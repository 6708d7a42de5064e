/* weft/net.h — message passing between nodes: ports, the naming service and
 * the job-wide barrier.
 *
 * Part of the C API of weft.h, which includes it: the Contexts/Errors/
 * Undefined conventions of weft.h hold here too. */
#ifndef WEFT_NET_H
#define WEFT_NET_H

#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Message passing: nodes and ports (docs/design/net.md)                     */
/* ------------------------------------------------------------------------ */

/* A job is N nodes; a node is one address space's share of the job: its own
 * port table and the weft threads spawned on it. With the in-process
 * transport ("inproc", the default) all N nodes live in this process and
 * share the one weft runtime's workers. With "mpi" (builds with MPI) each
 * MPI rank is one node, N is the number of ranks, and every thread of a
 * process is on its rank's node (docs/design/mpi.md).
 *
 * Message-passing calls take a relative timeout in nanoseconds (a receive
 * with a timeout is written that way far more often than with a deadline):
 * WEFT_NET_FOREVER waits without limit, 0 only looks, and any other negative
 * value is refused (EINVAL). */
#define WEFT_NET_FOREVER (-1)

/* The most bytes a port may buffer (max_bytes of weft_net_port_create), and
 * so the longest message any port takes: 2^40 (1 TiB). A bound that keeps a
 * port's byte count and a message's allocation from overflowing. */
#define WEFT_NET_PORT_MAX_BYTES ((size_t)1 << 40)

/* The most ports one weft_net_recv_any may wait on. */
#define WEFT_NET_RECV_ANY_MAX 64

/* A port's global ID: the node it lives on, its slot in that node's port
 * table, and the slot's generation. A destroyed port's ID stays invalid when
 * its slot is reused (the generation differs) until the generation wraps
 * after 2^32 reuses of that one slot. Copy and compare it as a value. */
typedef struct weft_port_id {
    uint32_t node;
    uint32_t index;
    uint32_t gen;
    uint32_t reserved_; /* 0 */
} weft_port_id_t;

/* Configuration for weft_net_init. A field that is set (non-zero, non-NULL)
 * wins over its WEFT_* variable, as for weft_config_t (docs/env.md). */
typedef struct weft_net_config {
    int nodes;                 /* nodes in the job, 1..1024; 0 = 1 */
    const char *transport;     /* "inproc", "faulty" or "mpi" (any case; docs/env.md);
                                  NULL = WEFT_NET or "inproc" */
    int64_t latency_alpha_ns;  /* inproc: injected delay of a message to another node,  */
    int64_t latency_beta_ns;   /* alpha + beta * bytes ns; both 0 = WEFT_NET_LATENCY or none */
} weft_net_config_t;

/* What a receive returns beside the bytes. */
typedef struct weft_net_status {
    weft_port_id_t port; /* the port it came from (weft_net_recv_any: which one) */
    int32_t tag;         /* the sender's tag */
    uint32_t source;     /* the sender's node */
    size_t len;          /* the message's length in bytes (also on EMSGSIZE) */
    int64_t sent_ns;     /* a message from another node: CLOCK_MONOTONIC time of its send, */
    int64_t ready_ns;    /* and when it became receivable (sent_ns + the injected delay); */
                         /* 0 for a message from the same node (it is receivable at once) */
} weft_net_status_t;

/* Starts a job of cfg->nodes nodes (NULL: every field unset) on the weft
 * runtime (started from the environment if it is not running). The caller
 * is on node 0 (mpi: on its rank's node; MPI is initialised here unless the
 * program did it, and then it needs MPI_THREAD_SERIALIZED or above).
 * It also starts the job's services (the naming service and the job-wide
 * barrier, below, built on weft/rpc.h): each node's barrier port,
 * and the naming service's port and server thread on node 0. That thread
 * ends with weft_net_finalize; weft_finalize refuses (EBUSY) while a job is
 * running.
 * Contexts: weft thread or external, the job not started.
 * Errors: EBUSY a job is running; EINVAL a bad field or WEFT_NET /
 *         WEFT_NET_LATENCY / WEFT_MPI_THREAD / WEFT_NET_PEER_TIMEOUT value,
 *         nodes other than the ranks under mpi, or
 *         MPI could not start (a message naming it and the valid values is
 *         printed to stderr); ENOMEM. */
WEFT_API int weft_net_init(const weft_net_config_t *cfg);
/* Ends the job: drops the messages still buffered and frees every port.
 * Under mpi every rank calls it (it waits for the others, except a rank
 * declared dead: one that answers nothing for WEFT_NET_PEER_TIMEOUT while it
 * waits is declared so then), and it calls MPI_Finalize if weft_net_init
 * initialised MPI, unless a rank was declared dead (Open MPI's MPI_Finalize
 * can wait for a dead rank for ever; a line on stderr says it was skipped).
 * Returns 0 also when a rank was declared dead, during the job or while this
 * call waited for it (its messages are dropped; stderr names it). With
 * WEFT_NET_PEER_TIMEOUT=off a dead rank is never declared, and this call
 * waits for its bye for ever.
 * Errors: ENOTCONN no job is running; EBUSY a thread is blocked sending to or
 *         receiving from a port (nothing is changed).
 * Undefined: a thread entering a weft_net_* call on a port of this job while
 * it ends, or after. */
WEFT_API int weft_net_finalize(void);
/* The number of nodes of the running job, 0 if none. Contexts: any. */
WEFT_API int weft_net_num_nodes(void);
/* The transport the running job runs on, as WEFT_NET spells it ("inproc",
 * "faulty" or "mpi"), or NULL if no job is running. The string is static.
 * Contexts: any. */
WEFT_API const char *weft_net_transport(void);
/* The caller's node: the node it was spawned on (weft_net_spawn), inherited
 * by the threads it creates; 0 for other threads and for external kernel
 * threads; -1 if no job is running. Contexts: any. */
WEFT_API int weft_net_self_node(void);
/* weft_thread_create for a thread on `node` (attr may be NULL).
 * Errors: ENOTCONN no job; EINVAL node out of range, null t or fn; as
 *         weft_thread_create. */
WEFT_API int weft_net_spawn(weft_thread_t *t, int node, const weft_attr_t *attr, void *(*fn)(void *), void *arg);

/* Creates a port on the caller's node that buffers at most max_msgs
 * messages and at most max_bytes bytes of them (a send blocks while the
 * next message would pass either bound). max_msgs may be anything from 1 to
 * SIZE_MAX (SIZE_MAX: bounded by bytes alone); max_bytes from 1 to
 * WEFT_NET_PORT_MAX_BYTES. Nothing is allocated for either bound: a port's
 * memory is what it buffers.
 * Errors: ENOTCONN no job; EINVAL null id, max_msgs 0, max_bytes 0 or
 *         above WEFT_NET_PORT_MAX_BYTES; ENOSPC the node has 2^20 ports;
 *         ENOMEM. */
WEFT_API int weft_net_port_create(weft_port_id_t *id, size_t max_msgs, size_t max_bytes);
/* Destroys a port of the caller's node: its buffered messages are dropped,
 * the threads blocked sending to it or receiving from it return EPIPE, and
 * its ID is invalid from now on (ENOENT). The sender of a dropped message
 * (its send returned 0 when the message was buffered) is told: its receive
 * that waits now (weft_net_recv, weft_net_recv_any, weft_rpc_call's wait
 * for the reply), or its next receive that finds nothing at once, returns
 * ECONNABORTED with st->port the destroyed port, so that a thread that sent a
 * request and waits for the answer does not wait for ever. Told once per
 * thread however many of its messages were dropped before it looked (a
 * thread of another rank: once per port, as the refusals come back over the
 * wire; its later sends to the port fail with ENOENT); not told: an
 * external thread. A message that reaches the port after the destroy (it was
 * on the wire) is dropped and told the same way.
 * To stop without dropping: weft_net_port_close, drain, then destroy.
 * Errors: ENOTCONN no job; ENOENT no such port (also when its node is not
 *         one of the job's); EPERM the port is on another node. */
WEFT_API int weft_net_port_destroy(weft_port_id_t id);
/* Closes a port of the caller's node for new messages, keeping it: later
 * sends, and the threads blocked sending to it, return EPIPE; receivers take
 * the messages already buffered, then get EPIPE instead of waiting. How a
 * server stops without losing a request silently (docs/design/rpc.md): close,
 * drain, destroy. Closing a closed port does nothing.
 * Errors: ENOTCONN no job; ENOENT no such port; EPERM the port is on
 *         another node. */
WEFT_API int weft_net_port_close(weft_port_id_t id);

/* Sends len bytes (buf may be NULL when len is 0) with `tag` to port `to`,
 * on any node. Returns once the message is copied into the destination
 * port's buffer (or straight into the buffer of a receiver that waits for
 * it); blocks the calling thread while that buffer is full. Messages from
 * one thread to one port are received in the order they were sent; a port
 * delivers in the order messages entered its buffer.
 * Contexts: weft thread (blocks only the thread) or external.
 * Errors: ENOTCONN no job; ENOENT no such port (node, index or generation;
 *         destroyed); EMSGSIZE len is above the port's max_bytes (it could
 *         never be buffered; decided before anything is allocated for the
 *         message, whatever len is, up to SIZE_MAX; mpi: also len above
 *         2^30, the longest message a frame announces); EPIPE the port is
 *         closed, or the port was destroyed while the sender
 *         waited for room (the message is not delivered); EHOSTDOWN (mpi)
 *         the port's node is declared dead: it answered nothing for
 *         WEFT_NET_PEER_TIMEOUT (default 30 s) while this or another thread
 *         waited for its answer (a port probe, credit, a large message's
 *         transfer), and every send to it returns this from then on (not
 *         ETIMEDOUT, which says a caller's own timeout passed; a message a
 *         send returned 0 for before may be lost with the node);
 *         EINVAL null buf with len > 0; ENOMEM. */
WEFT_API int weft_net_send(weft_port_id_t to, int32_t tag, const void *buf, size_t len);
/* Receives the oldest message of `port` (a port of the caller's node) into
 * buf (cap bytes), waiting at most timeout_ns (WEFT_NET_FOREVER: no limit;
 * 0: looks once, as weft_net_try_recv but with ETIMEDOUT).
 * st (may be NULL) gets its tag, source, length and times.
 * Errors: ENOTCONN no job; ENOENT no such port (also when its node is not
 *         one of the job's); EPERM the port is on another node; ETIMEDOUT
 *         nothing arrived in time; EMSGSIZE the oldest message is longer than
 *         cap: it stays queued, st->len says its length; EPIPE the port was
 *         destroyed while the caller waited, or it is closed and holds no
 *         message (at once, without waiting); ECONNABORTED a message this
 *         thread sent was dropped by weft_net_port_destroy (st->port names
 *         that port; reported instead of waiting or of ETIMEDOUT, once; a
 *         message already receivable here is received first); EINVAL null
 *         buf with cap > 0, timeout_ns negative other than WEFT_NET_FOREVER. */
WEFT_API int weft_net_recv(weft_port_id_t port, void *buf, size_t cap, weft_net_status_t *st, int64_t timeout_ns);
/* weft_net_recv that never blocks. Errors: EAGAIN no message is receivable
 * now (the port is open); ECONNABORTED instead of EAGAIN when a message this
 * thread sent was dropped (as weft_net_recv); EPIPE the port is closed and holds no message (a
 * closed port's buffered messages are received first); as weft_net_recv. */
WEFT_API int weft_net_try_recv(weft_port_id_t port, void *buf, size_t cap, weft_net_status_t *st);
/* Receives from whichever of ports[0..n-1] (ports of the caller's node) has a
 * receivable message first; ports earlier in the array are looked at first.
 * st->port says which port it came from, as it does on an error that names
 * one port (ENOENT, EPIPE, EMSGSIZE).
 * Errors: EINVAL n is 0 or above WEFT_NET_RECV_ANY_MAX, null ports or st;
 *         as weft_net_recv. */
WEFT_API int weft_net_recv_any(const weft_port_id_t *ports, size_t n, void *buf, size_t cap, weft_net_status_t *st,
                               int64_t timeout_ns);

/* ------------------------------------------------------------------------ */
/* Naming service                                                           */
/* ------------------------------------------------------------------------ */
/* Names map to port IDs for the whole job. The service is an RPC server
 * (weft/rpc.h) of one thread on node 0, started by weft_net_init, at the port
 * weft_net_names_port returns (node 0, index 1: the second port the job
 * creates, after node 0's barrier port). Names are 1..WEFT_NET_NAME_MAX
 * bytes, NUL-terminated. Contexts: weft thread or external.
 * Each call below also returns EHOSTDOWN when node 0 is declared dead (mpi),
 * as weft_rpc_call does. (Felten & McNamee, "Improving the performance of
 * message-passing applications by multithreading", §6.3.) */
#define WEFT_NET_NAME_MAX 255

/* Errors: ENOTCONN no job; EINVAL null name or empty; ENAMETOOLONG longer
 * than WEFT_NET_NAME_MAX; EEXIST the name is registered (to any port). */
WEFT_API int weft_net_name_register(const char *name, weft_port_id_t port);
/* Waits until `name` is registered, at most timeout_ns (0: look once;
 * WEFT_NET_FOREVER: no limit), and stores its port in *port.
 * Errors: ENOTCONN; EINVAL null name, empty, null port, or timeout_ns
 *         negative other than WEFT_NET_FOREVER; ENAMETOOLONG;
 *         ETIMEDOUT not registered in time. */
WEFT_API int weft_net_name_lookup(const char *name, weft_port_id_t *port, int64_t timeout_ns);
/* Errors: ENOTCONN; EINVAL; ENAMETOOLONG; ENOENT the name is not registered. */
WEFT_API int weft_net_name_unregister(const char *name);
/* The naming service's port. Errors: ENOTCONN no job; EINVAL null id. */
WEFT_API int weft_net_names_port(weft_port_id_t *id);

/* ------------------------------------------------------------------------ */
/* Job-wide barrier                                                         */
/* ------------------------------------------------------------------------ */
/* Returns once one thread of every node of the job has called it (the
 * "participant" of its node: any one thread, a different one from round to
 * round if the program likes), blocking only the calling thread. Built on
 * one port per node, created by weft_net_init (index 0 of each node); node 0
 * gathers the arrivals and sends the releases. Node-local synchronization is
 * weft_barrier_*.
 * Errors: ENOTCONN no job; EBUSY another thread of this node is in the
 *         barrier now; EPIPE or ENOENT a barrier port was closed or destroyed;
 *         EHOSTDOWN a node it waits for is declared dead (mpi: node 0, or on
 *         node 0 one that has not arrived; WEFT_NET_PEER_TIMEOUT). */
WEFT_API int weft_net_barrier(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WEFT_NET_H */

// The job: its nodes' port tables and its transport, started by weft_net_init
// and ended by weft_net_finalize; and the reading of WEFT_NET and
// WEFT_NET_LATENCY by the rules of core/env.hpp.
#include "net/job.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>

#include "core/deadlock.hpp"
#include "core/env.hpp"
#include "core/runtime.hpp"
#include "net/port.hpp"
#include "net/rpc.hpp"

namespace weft::detail::net {
namespace {

atomic<job*> g_job{nullptr};
spinlock g_job_lock;  // init and finalize
bool g_starting = false;  // under g_job_lock: an init or finalize is in its transport's start or stop

std::string latency_valid() {
    return "ALPHA_NS,BETA_NS_PER_BYTE: two integers, alpha at most " + std::to_string(kMaxAlphaNs) +
           " and beta at most " + std::to_string(kMaxBetaNs) + " (e.g. 2000,1)";
}

// weft_finalize's refusal while a job runs (core/runtime.hpp).
int refuse_finalize() {
    std::fprintf(stderr, "weft: weft_finalize: a message-passing job is running (weft_net_init); its naming server "
                         "is a weft thread that only weft_net_finalize ends: call weft_net_finalize first\n");
    return EBUSY;
}

}  // namespace

job* current_job() { return g_job.load(memory_order_acquire); }

int read_net_settings(const weft_net_config_t* cfg, std::uint32_t* nodes, transport_config* out) {
    int n = cfg != nullptr ? cfg->nodes : 0;
    if (n < 0 || n > int(kMaxNodes)) {
        std::fprintf(stderr, "weft: weft_net_config_t.nodes=%d is invalid: expected 1 to %u (0 = 1)\n", n, kMaxNodes);
        return EINVAL;
    }
    *nodes = n == 0 ? 1 : std::uint32_t(n);
    out->nodes = std::uint32_t(n);

    const char* name = cfg != nullptr ? cfg->transport : nullptr;
    const char* what = "weft_net_config_t.transport";
    if (name == nullptr) {
        name = env_value("WEFT_NET");
        what = "WEFT_NET";
    }
    out->def = registry<transport_def>::find(name != nullptr ? name : "inproc");
    if (out->def == nullptr) {
        complain(what, name, "one of " + registry<transport_def>::names());
        return EINVAL;
    }

    std::int64_t alpha = cfg != nullptr ? cfg->latency_alpha_ns : 0;
    std::int64_t beta = cfg != nullptr ? cfg->latency_beta_ns : 0;
    if (alpha != 0 || beta != 0) {
        if (alpha < 0 || alpha > kMaxAlphaNs || beta < 0 || beta > kMaxBetaNs) {
            std::string v = std::to_string(alpha) + "," + std::to_string(beta);
            complain("weft_net_config_t.latency_alpha_ns,latency_beta_ns", v, latency_valid());
            return EINVAL;
        }
    } else if (const char* env = env_value("WEFT_NET_LATENCY"); env != nullptr) {
        std::string_view v(env);
        std::size_t comma = v.find(',');
        unsigned long long a = 0, b = 0;
        if (comma == std::string_view::npos || !parse_count(v.substr(0, comma), kMaxAlphaNs, &a) ||
            !parse_count(v.substr(comma + 1), kMaxBetaNs, &b)) {
            complain("WEFT_NET_LATENCY", v, latency_valid());
            return EINVAL;
        }
        alpha = std::int64_t(a);
        beta = std::int64_t(b);
    }
    out->alpha_ns = alpha;
    out->beta_ns_per_byte = beta;
    return 0;
}

}  // namespace weft::detail::net

using namespace weft::detail;
using namespace weft::detail::net;

extern "C" {

WEFT_API int weft_net_init(const weft_net_config_t* cfg) {
    ensure_runtime();
    std::uint32_t nodes = 0;
    transport_config tc;
    if (int rc = read_net_settings(cfg, &nodes, &tc); rc != 0) return rc;
    job* j = nullptr;
    {
        lock_guard<spinlock> g(g_job_lock);
        if (g_job.load(memory_order_relaxed) != nullptr || g_starting) return EBUSY;
        g_starting = true;  // the transport starts outside the lock (mpi: MPI_Init, spawning)
    }
    int rc = 0;
    std::unique_ptr<transport> tp;
    if (!take_link_once(&tp, &rc)) rc = tc.def->make(tc, &tp);
    if (rc == 0 && tp->nodes() != 0) {
        if (tc.nodes != 0 && tc.nodes != tp->nodes()) {
            std::fprintf(stderr,
                         "weft: weft_net_config_t.nodes=%u disagrees with the %s transport's %u nodes (the job's "
                         "ranks): set it to 0 or %u\n",
                         tc.nodes, tp->name(), tp->nodes(), tp->nodes());
            rc = EINVAL;
        } else if (tp->nodes() > kMaxNodes) {
            std::fprintf(stderr, "weft: the %s transport has %u nodes, weft supports at most %u\n", tp->name(),
                         tp->nodes(), kMaxNodes);
            rc = EINVAL;
        }
        nodes = tp->nodes();
    }
    if (rc == 0 && (j = new (std::nothrow) job) == nullptr) rc = ENOMEM;
    if (rc == 0) {
        j->nodes = nodes;
        j->home = tp->home();
        j->tables.reset(new (std::nothrow) node_table[nodes]);
        j->tp = std::move(tp);
        if (!j->tables) rc = ENOMEM;
    }
    if (rc == 0) {
        g_job.store(j, memory_order_release);
        if ((rc = j->tp->start(*j)) != 0) {
            g_job.store(nullptr, memory_order_release);
        } else if ((rc = start_services(*j)) != 0 || (rc = j->tp->all_started(*j)) != 0) {
            // The barrier ports and the naming service (docs/design/rpc.md):
            // the naming server is a thread of node 0, so the job is published
            // first. all_started: no node sends to another's services before
            // they exist.
            stop_services(*j);
            j->tp->stop(*j);
            (void)close_all(*j);
            g_job.store(nullptr, memory_order_release);
        }
    }
    if (rc != 0) {
        delete j;
    } else {
        g_finalize_refusal.store(&refuse_finalize, memory_order_release);
        set_wait_object_namer(&name_port_wait);
    }
    lock_guard<spinlock> g(g_job_lock);
    g_starting = false;
    return rc;
}

WEFT_API int weft_net_finalize(void) {
    job* j = nullptr;
    {
        lock_guard<spinlock> g(g_job_lock);
        j = g_job.load(memory_order_relaxed);
        if (j == nullptr || g_starting) return j == nullptr ? ENOTCONN : EBUSY;
        // The naming server waits on its port for good: it is the services'
        // to stop, once no other thread waits.
        weft_port_id_t names = names_port();
        if (any_waiter(*j, &names, 1)) return EBUSY;
        g_starting = true;  // nobody starts or ends a job while the transport stops
    }
    stop_services(*j);  // joins the naming server: not under the spinlock
    j->tp->stop(*j);    // outside the lock: mpi waits for the other ranks here
    lock_guard<spinlock> g(g_job_lock);
    g_starting = false;
    (void)close_all(*j);  // nobody waits (checked above; the API leaves a call during finalize undefined)
    g_job.store(nullptr, memory_order_release);
    g_finalize_refusal.store(nullptr, memory_order_release);
    delete j;
    return 0;
}

}  // extern "C"

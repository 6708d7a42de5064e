// RPC, the naming service and the job-wide barrier across MPI ranks
// (WEFT_NET=mpi): run under `mpiexec -n N` (N >= 2); tests/CMakeLists.txt
// registers it for 2 and 4 ranks. Each rank is one node; port IDs travel only
// through the naming service.
//
// Every rank runs the same cases in the same order, separated by an
// MPI_Ibarrier of the program's own MPI (waited for with weft_thread_yield,
// so that this rank's worker keeps making progress for the others). A failed
// check ends the whole job at once (MPI_Abort): the other ranks would
// otherwise wait for calls or messages the failing rank never makes.
//
// Nothing here depends on timing: every wait is for a reply, a message or an
// error; the one timeout checked (a lookup of a name nobody registers) only
// has to end.
#include <mpi.h>

#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "mpi_check.hpp"
#include "weft/rpc.h"
#include "weft/rpc.hpp"
#include "weft/weft.h"

namespace {



std::string name_of(const char* what, int rank) { return std::string(what) + "/" + std::to_string(rank); }

int next_rank() { return (g_rank + 1) % g_size; }

// --- C++ stubs ---------------------------------------------------------------------------
struct calc {
    int sum(int a, int b) { return a + b; }
    std::string greet(const std::string& who) { return "hello, " + who + " from " + std::to_string(g_rank); }
    double total(std::span<const double> xs) { return std::accumulate(xs.begin(), xs.end(), 0.0); }
    std::vector<int> iota(int n) {
        std::vector<int> v(static_cast<std::size_t>(n));
        std::iota(v.begin(), v.end(), 0);
        return v;
    }
    void fail_with(int code) { throw std::runtime_error("fail " + std::to_string(code)); }
    int where() { return weft_net_self_node(); }
};

// The same service seen by a caller of another build, where sum takes longs.
struct calc_v2 {
    long sum(long a, long b) { return a + b; }
};

}  // namespace

template <>
struct weft::rpc::interface<calc>
    : weft::rpc::functions<&calc::sum, &calc::greet, &calc::total, &calc::iota, &calc::fail_with, &calc::where> {};
template <>
struct weft::rpc::interface<calc_v2> : weft::rpc::functions<&calc_v2::sum> {};

namespace {

// Each rank serves calc (two server threads) and calls the next rank's, from
// several threads at once.
constexpr int kCallers = 4;
constexpr int kCallsEach = 50;

struct caller_arg {
    weft_port_id_t port;
    int thread;
};

void* cxx_caller(void* a) {
    auto* c = static_cast<caller_arg*>(a);
    for (int i = 0; i < kCallsEach; ++i) {
        int r = weft::rpc::call(c->port, &calc::sum, c->thread * 1000, i);
        CHECK(r == c->thread * 1000 + i, "sum(%d, %d) = %d", c->thread * 1000, i, r);
    }
    return nullptr;
}

void case_rpc_cxx() {
    calc service;
    weft::rpc::server<calc> srv(service, 2);
    weft::net::names::register_port(name_of("calc", g_rank), srv.port());
    weft_port_id_t peer = weft::net::names::lookup(name_of("calc", next_rank()));
    CHECK(peer.node == std::uint32_t(next_rank()), "calc/%d is a port of node %u", next_rank(), peer.node);

    CHECK(weft::rpc::call(peer, &calc::where) == next_rank(), "the call ran on another node");
    std::string hello = weft::rpc::call(peer, &calc::greet, std::string("rank ") + std::to_string(g_rank));
    std::string want = "hello, rank " + std::to_string(g_rank) + " from " + std::to_string(next_rank());
    CHECK(hello == want, "greet: '%s', expected '%s'", hello.c_str(), want.c_str());
    std::vector<double> xs(1000);
    std::iota(xs.begin(), xs.end(), 1.0);
    double t = weft::rpc::call(peer, &calc::total, std::span<const double>(xs));
    CHECK(t == 500500.0, "total %g", t);
    std::vector<int> v = weft::rpc::call(peer, &calc::iota, 5000);
    CHECK(v.size() == 5000 && v[4999] == 4999, "iota: %zu elements", v.size());

    // Several callers at once: each reply reaches its own caller.
    std::vector<caller_arg> args(kCallers);
    std::vector<weft_thread_t> ts(kCallers);
    for (int i = 0; i < kCallers; ++i) {
        args[std::size_t(i)] = caller_arg{peer, i};
        CHECK_RC(weft_thread_create(&ts[std::size_t(i)], nullptr, &cxx_caller, &args[std::size_t(i)]), 0);
    }
    for (weft_thread_t th : ts) CHECK_RC(weft_thread_join(th, nullptr), 0);

    // A remote exception comes back as remote_error with its text.
    bool thrown = false;
    try {
        weft::rpc::call(peer, &calc::fail_with, 7);
    } catch (const weft::rpc::remote_error& e) {
        thrown = true;
        CHECK(e.code().value() == EREMOTEIO && e.remote_what() == "fail 7", "code %d, remote what '%s'",
              e.code().value(), e.remote_what().c_str());
    }
    CHECK(thrown, "fail_with did not throw at the caller");
    // Another build's signature for sum: EPROTO, and the server keeps serving.
    int code = 0;
    try {
        weft::rpc::call(peer, &calc_v2::sum, 1L, 2L);
    } catch (const weft::rpc::error& e) {
        code = e.code().value();
    }
    CHECK(code == EPROTO, "a type mismatch gave %d, expected EPROTO", code);
    // An unknown function id (the C form on the C++ server): ENOSYS with the server's text.
    char text[256] = {};
    std::size_t n = 0;
    CHECK_RC(weft_rpc_call(peer, 99, nullptr, 0, text, sizeof text - 1, &n, WEFT_NET_FOREVER), ENOSYS);
    CHECK(n != 0, "ENOSYS without the server's description");
    CHECK(weft::rpc::call(peer, &calc::sum, 2, 3) == 5, "the server stopped serving after the errors");

    sync_ranks();  // every caller is done before any server goes
    weft::net::names::unregister(name_of("calc", g_rank));
}

// --- the C form ----------------------------------------------------------------------------
enum { kFnReverse = 3, kFnFail = 4 };

int reverse_handler(void*, const void* in, size_t in_len, void* out, size_t out_cap, size_t* out_len) {
    if (in_len > out_cap) return EMSGSIZE;
    const auto* b = static_cast<const unsigned char*>(in);
    auto* o = static_cast<unsigned char*>(out);
    for (std::size_t i = 0; i < in_len; ++i) o[i] = b[in_len - 1 - i];
    *out_len = in_len;
    return 0;
}

int fail_handler(void*, const void*, size_t, void* out, size_t out_cap, size_t* out_len) {
    int n = std::snprintf(static_cast<char*>(out), out_cap, "rank %d refuses", g_rank);
    *out_len = std::size_t(n);
    return EDOM;
}

void case_rpc_c() {
    weft_rpc_server_t srv = nullptr;
    CHECK_RC(weft_rpc_server_create(&srv), 0);
    CHECK_RC(weft_rpc_server_register(srv, kFnReverse, &reverse_handler, nullptr), 0);
    CHECK_RC(weft_rpc_server_register(srv, kFnFail, &fail_handler, nullptr), 0);
    weft_port_id_t mine{};
    CHECK_RC(weft_rpc_server_start(srv, 1, &mine), 0);
    CHECK_RC(weft_net_name_register(name_of("c", g_rank).c_str(), mine), 0);
    weft_port_id_t peer{};
    CHECK_RC(weft_net_name_lookup(name_of("c", next_rank()).c_str(), &peer, WEFT_NET_FOREVER), 0);

    char out[64] = {};
    std::size_t n = 0;
    CHECK_RC(weft_rpc_call(peer, kFnReverse, "abcdef", 6, out, sizeof out, &n, WEFT_NET_FOREVER), 0);
    CHECK(n == 6 && std::memcmp(out, "fedcba", 6) == 0, "reverse: %zu bytes '%.*s'", n, int(n), out);
    // A handler's error: EREMOTEIO and its text.
    std::memset(out, 0, sizeof out);
    CHECK_RC(weft_rpc_call(peer, kFnFail, nullptr, 0, out, sizeof out - 1, &n, WEFT_NET_FOREVER), EREMOTEIO);
    std::string want = "rank " + std::to_string(next_rank()) + " refuses";
    CHECK(want == out, "handler error text '%s', expected '%s'", out, want.c_str());
    // An unknown function id.
    CHECK_RC(weft_rpc_call(peer, 12345, nullptr, 0, out, sizeof out, &n, WEFT_NET_FOREVER), ENOSYS);
    // A reply longer than the caller's buffer.
    CHECK_RC(weft_rpc_call(peer, kFnReverse, "abcdef", 6, out, 3, &n, WEFT_NET_FOREVER), EMSGSIZE);
    CHECK(n == 6, "EMSGSIZE with out_len %zu, expected the reply's 6", n);

    sync_ranks();
    CHECK_RC(weft_net_name_unregister(name_of("c", g_rank).c_str()), 0);
    CHECK_RC(weft_rpc_server_destroy(srv), 0);
}

// --- naming across ranks ----------------------------------------------------------------------
// Rank 0 looks up a name that the last rank registers only when rank 0 tells
// it to, after rank 0's look-once lookup found it missing and after its
// waiting lookup has started (on another thread): the waiting lookup returns
// the port registered on the other rank.
struct lookup_arg {
    weft_port_id_t found{};
    int rc = -1;
};

void* waiting_lookup(void* a) {
    auto* l = static_cast<lookup_arg*>(a);
    l->rc = weft_net_name_lookup("late", &l->found, WEFT_NET_FOREVER);
    return nullptr;
}

void case_naming() {
    weft_port_id_t mine{};
    CHECK_RC(weft_net_port_create(&mine, 4, 64), 0);
    int last = g_size - 1;
    // Duplicates and errors, from every rank at once: exactly one EEXIST-free register.
    int rc = weft_net_name_register("shared", mine);
    CHECK(rc == 0 || rc == EEXIST, "register of a shared name: %d", rc);
    int mine_won = rc == 0 ? 1 : 0, winners = 0;
    MPI_Request req;
    MPI_Iallreduce(&mine_won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    for (int done = 0; MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done;) weft_thread_yield();
    CHECK(winners == 1, "%d ranks registered the same name", winners);
    weft_port_id_t p{};
    CHECK_RC(weft_net_name_lookup("shared", &p, 0), 0);
    CHECK_RC(weft_net_name_lookup("", &p, 0), EINVAL);
    CHECK_RC(weft_net_name_lookup(std::string(WEFT_NET_NAME_MAX + 1, 'x').c_str(), &p, 0), ENAMETOOLONG);
    // A name nobody registers: the lookup ends with ETIMEDOUT.
    CHECK_RC(weft_net_name_lookup(name_of("never", g_rank).c_str(), &p, 20'000'000), ETIMEDOUT);
    sync_ranks();
    if (mine_won) CHECK_RC(weft_net_name_unregister("shared"), 0);
    sync_ranks();
    CHECK_RC(weft_net_name_unregister("shared"), ENOENT);

    if (g_rank == 0) {
        CHECK_RC(weft_net_name_lookup("late", &p, 0), ETIMEDOUT);
        lookup_arg la;
        weft_thread_t t;
        CHECK_RC(weft_thread_create(&t, nullptr, &waiting_lookup, &la), 0);
        for (int i = 0; i < 100; ++i) weft_thread_yield();  // let the lookup start (correct either way)
        weft_port_id_t go = weft::net::names::lookup(name_of("go", last));
        CHECK_RC(weft_net_send(go, 1, nullptr, 0), 0);
        CHECK_RC(weft_thread_join(t, nullptr), 0);
        CHECK_RC(la.rc, 0);
        CHECK(la.found.node == std::uint32_t(last), "late is a port of node %u, expected %d", la.found.node, last);
    } else if (g_rank == last) {
        CHECK_RC(weft_net_name_register(name_of("go", last).c_str(), mine), 0);
        weft_net_status_t st;
        CHECK_RC(weft_net_recv(mine, nullptr, 0, &st, WEFT_NET_FOREVER), 0);
        CHECK(st.source == 0 && st.tag == 1, "go from %u tag %d", st.source, st.tag);
        CHECK_RC(weft_net_name_register("late", mine), 0);
    }
    // Every rank finds it now, and the lookup of node 0's names port agrees.
    sync_ranks();
    CHECK_RC(weft_net_name_lookup("late", &p, 0), 0);
    CHECK(p.node == std::uint32_t(last), "late is on node %u", p.node);
    weft_port_id_t names{};
    CHECK_RC(weft_net_names_port(&names), 0);
    CHECK(names.node == 0, "the names port is on node %u", names.node);
    sync_ranks();
    if (g_rank == last) {
        CHECK_RC(weft_net_name_unregister("late"), 0);
        CHECK_RC(weft_net_name_unregister(name_of("go", last).c_str()), 0);
    }
    sync_ranks();
    CHECK_RC(weft_net_port_destroy(mine), 0);
}

// --- the job-wide barrier ----------------------------------------------------------------------
// Before round k every rank sends "k" to rank 0's port, then enters the
// barrier. A rank's message and its arrival at the barrier travel in order to
// node 0, so when rank 0 leaves round k, every rank's "k" is in its port:
// rank 0 finds them with try_recv alone. No rank may be a round ahead by more
// than one (it cannot pass round k+1 before rank 0 enters it).
constexpr int kRounds = 20;

void case_barrier() {
    weft_port_id_t mine{};
    CHECK_RC(weft_net_port_create(&mine, std::size_t(4 * g_size), std::size_t(4 * g_size) * sizeof(int)), 0);
    if (g_rank == 0) CHECK_RC(weft_net_name_register("barrier-check", mine), 0);
    weft_port_id_t zero = weft::net::names::lookup("barrier-check");
    std::vector<int> seen(kRounds + 1, 0);
    for (int k = 0; k < kRounds; ++k) {
        if (g_rank != 0) CHECK_RC(weft_net_send(zero, 0, &k, sizeof k), 0);
        CHECK_RC(weft_net_barrier(), 0);
        if (g_rank != 0) continue;
        int v;
        weft_net_status_t st;
        while (weft_net_try_recv(mine, &v, sizeof v, &st) == 0) {
            CHECK(v == k || v == k + 1, "round %d: rank %u sent round %d", k, st.source, v);
            ++seen[std::size_t(v)];
        }
        CHECK(seen[std::size_t(k)] == g_size - 1, "round %d: %d of %d ranks' messages in before the barrier ended", k,
              seen[std::size_t(k)], g_size - 1);
    }
    sync_ranks();
    if (g_rank == 0) CHECK_RC(weft_net_name_unregister("barrier-check"), 0);
    CHECK_RC(weft_net_port_destroy(mine), 0);
}

}  // namespace

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (g_size < 2) {
        std::fprintf(stderr, "net_mpi_services_test: run it under mpiexec with at least 2 ranks (this job has %d)\n",
                     g_size);
        MPI_Finalize();
        return 2;
    }
    start_weft_mpi();  // NET_MPI_TEST_WORKERS=N: N workers per rank (default 1)
    struct {
        const char* name;
        void (*run)();
    } cases[] = {{"rpc_cxx", case_rpc_cxx}, {"rpc_c", case_rpc_c}, {"naming", case_naming}, {"barrier", case_barrier}};
    const char* only = std::getenv("NET_MPI_TEST_CASE");  // one case by name, when debugging
    for (auto& c : cases) {
        if (only != nullptr && std::strcmp(only, c.name) != 0) continue;
        try {
            c.run();
        } catch (const std::exception& e) {
            fail(__LINE__, "case %s threw: %s", c.name, e.what());
        }
        sync_ranks();
        if (g_rank == 0) std::printf("%-12s ok\n", c.name);
        std::fflush(stdout);
    }
    CHECK_RC(weft_net_finalize(), 0);
    CHECK_RC(weft_finalize(), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0) std::printf("net_mpi_services_test: %d ranks: ok\n", g_size);
    MPI_Finalize();
    return 0;
}

// The mpi transport's peer timeout (docs/design/mpi.md, "A rank that dies"):
// two ranks, WEFT_NET_PEER_TIMEOUT short (tests/CMakeLists.txt sets 1000 ms).
// One mode per run, the first argument. In the dead-* modes one rank dies
// (_exit) at a point the other knows, the survivor waits until that rank's
// process has ended (both run on this machine), and checks that its wait
// on the dead rank fails with EHOSTDOWN instead of hanging, and that the
// error is sticky:
//
//   dead-credit  rank 1 dies once rank 0 has sent to its port A; rank 0 sends
//                to A until its credit is gone: the send that waits for credit
//                fails, and so does the next send, to a port B it never probed;
//   dead-probe   the same, but rank 0's first send after the death goes to B,
//                whose probe is never answered; then to A;
//   dead-large   the same, but rank 0 sends A a message above the copy limit,
//                whose MPI send never completes; then to B;
//   dead-weft-inits-mpi  dead-probe in a program that leaves MPI_Init to
//                weft_net_init: weft_net_finalize then does not call
//                MPI_Finalize (which could wait for the dead rank for ever),
//                and says so on stderr;
//   dead-rpc     rank 1 serves RPC and dies after one call; rank 0's next call,
//                without a timeout, waits for a reply that never comes; then
//                weft_net_barrier, which waits for rank 1's arrival;
//   dead-names   rank 0, the naming service's node, dies after rank 1 has
//                registered a name; rank 1 registers another (no timeout),
//                looks one up, and enters the barrier;
//   silent-peer  nobody dies: rank 1 sends nothing for twice the peer timeout
//                (it sleeps) while rank 0 sends it more than its port holds:
//                every send succeeds, and rank 1 then receives them all, in
//                order, and nobody is declared dead;
//   bad-timeout  WEFT_NET_PEER_TIMEOUT is 99 (below the least valid, 100):
//                the runtime refuses to start (weft_init fails with EINVAL
//                and one line naming it), before any job.
//
// In the dead modes the survivor then checks that its own ports still work,
// that weft_net_finalize returns (it does not wait for a dead rank's bye, nor
// for its sends to it), and that its stderr got the one line naming the dead
// rank; it prints "<mode>: ok" last, which is what ctest
// looks for (after a rank died, mpiexec's exit status is no verdict on the
// survivor's checks). The dead modes need Open MPI's `mpiexec --enable-recovery
// --mca orte_abort_on_non_zero_status 0` (without it mpiexec ends the whole
// job when a rank dies); tests/CMakeLists.txt adds them.
//
// Nothing here waits for time except rank 1's sleep in silent-peer: every
// other wait is for a message, an error, the job's barrier, or (polled) the
// dying rank's process to end, so that the survivor never races with its last
// moments; a hang is caught by the test's ctest timeout.
#include <mpi.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mpi_check.hpp"
#include "weft/rpc.h"
#include "weft/weft.h"

namespace {

constexpr std::size_t kLarge = 1 << 20;  // above the transport's copy limit (64 KiB)
constexpr int kSilentMsgs = 200;         // far more than port A holds (2)

struct rank1_ports {
    weft_port_id_t a;
    weft_port_id_t b;
};

// Rank 1's ports, known on both ranks (rank 0 contributes nothing).
rank1_ports share_ports(std::size_t a_msgs) {
    rank1_ports mine{};
    if (g_rank == 1) {
        CHECK_RC(weft_net_port_create(&mine.a, a_msgs, 2 * kLarge), 0);
        CHECK_RC(weft_net_port_create(&mine.b, 4, 4096), 0);
    }
    MPI_Request req;
    MPI_Ibcast(&mine, sizeof mine, MPI_BYTE, 1, MPI_COMM_WORLD, &req);
    int done = 0;
    while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) weft_thread_yield();
    return mine;
}

// The survivor's own ports after its peer died: a message to a new port of its
// own goes and comes back.
void check_local_ports() {
    weft_port_id_t p;
    CHECK_RC(weft_net_port_create(&p, 4, 64), 0);
    int v = 42, got = 0;
    CHECK_RC(weft_net_send(p, 7, &v, sizeof v), 0);
    weft_net_status_t st{};
    CHECK_RC(weft_net_recv(p, &got, sizeof got, &st, WEFT_NET_FOREVER), 0);
    CHECK(got == 42 && st.tag == 7 && st.source == std::uint32_t(g_rank), "got %d, tag %d, from %u", got, st.tag,
          st.source);
    CHECK_RC(weft_net_port_destroy(p), 0);
}

// The other rank's process ID (the ranks of a test share one machine).
pid_t g_other_pid = 0;

void exchange_pids() {
    pid_t pids[2] = {0, 0};
    pid_t mine = getpid();
    MPI_Request req;
    MPI_Iallgather(&mine, sizeof mine, MPI_BYTE, pids, sizeof mine, MPI_BYTE, MPI_COMM_WORLD, &req);
    int done = 0;
    while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) weft_thread_yield();
    g_other_pid = pids[1 - g_rank];
}

// The dying rank, once the survivor knows what it needs: gone, with no
// weft_net_finalize, no MPI_Finalize, no bye.
[[noreturn]] void die() {
    sync_ranks();
    std::fflush(stdout);
    _exit(3);
}

// The survivor's side of die(): returns once the other rank's process has
// exited (it answers nothing from then on), looking every millisecond.
void other_died() {
    sync_ranks();
    for (;;) {
        char path[64], state = 'R';
        std::snprintf(path, sizeof path, "/proc/%d/stat", int(g_other_pid));
        FILE* f = std::fopen(path, "r");
        if (f == nullptr) return;                                       // reaped
        bool ended = std::fscanf(f, "%*d (%*[^)]) %c", &state) == 1 && (state == 'Z' || state == 'X');
        std::fclose(f);
        if (ended) return;                                              // exited, not yet reaped
        CHECK_RC(weft_sleep_ns(1'000'000), 0);
    }
}

// dead-credit, dead-probe, dead-large: rank 1 dies.
void dead_ports(const std::string& mode) {
    rank1_ports ports = share_ports(4);
    if (g_rank == 1) {
        int v = 0;
        CHECK_RC(weft_net_recv(ports.a, &v, sizeof v, nullptr, WEFT_NET_FOREVER), 0);
        die();
    }
    // A is probed and cached, and rank 1 alive, before it dies.
    int one = 1;
    CHECK_RC(weft_net_send(ports.a, 0, &one, sizeof one), 0);
    other_died();
    if (mode == "dead-credit") {
        // Port A holds 4 and nobody receives any more: the sends go until the
        // window's credit is gone (the peer returns none), then one waits.
        int rc = 0, sent = 0;
        for (; sent < 1000 && rc == 0; ++sent) rc = weft_net_send(ports.a, 0, &sent, sizeof sent);
        CHECK(rc == EHOSTDOWN, "send %d to dead rank 1's port A returned %d (%s), expected EHOSTDOWN", sent, rc,
              std::strerror(rc));
        CHECK_RC(weft_net_send(ports.b, 0, &one, sizeof one), EHOSTDOWN);
    } else if (mode == "dead-probe") {
        CHECK_RC(weft_net_send(ports.b, 0, &one, sizeof one), EHOSTDOWN);
        CHECK_RC(weft_net_send(ports.a, 0, &one, sizeof one), EHOSTDOWN);
    } else {
        std::vector<unsigned char> big(kLarge, 0x5a);
        CHECK_RC(weft_net_send(ports.a, 0, big.data(), big.size()), EHOSTDOWN);
        CHECK_RC(weft_net_send(ports.b, 0, &one, sizeof one), EHOSTDOWN);
    }
    // Sticky: the later sends to rank 1, to any port, fail the same way.
    CHECK_RC(weft_net_send(ports.a, 0, &one, sizeof one), EHOSTDOWN);
}

int echo_handler(void*, const void* in, std::size_t in_len, void* out, std::size_t out_cap, std::size_t* out_len) {
    if (in_len > out_cap) return EMSGSIZE;
    std::memcpy(out, in, in_len);
    *out_len = in_len;
    return 0;
}

// dead-rpc: rank 1 serves, and dies after one call.
void dead_rpc() {
    weft_port_id_t srv_port{};
    weft_rpc_server_t srv = nullptr;
    if (g_rank == 1) {
        CHECK_RC(weft_rpc_server_create(&srv), 0);
        CHECK_RC(weft_rpc_server_register(srv, 1, &echo_handler, nullptr), 0);
        CHECK_RC(weft_rpc_server_start(srv, 1, &srv_port), 0);
    }
    MPI_Request req;
    MPI_Ibcast(&srv_port, sizeof srv_port, MPI_BYTE, 1, MPI_COMM_WORLD, &req);
    int done = 0;
    while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) weft_thread_yield();
    if (g_rank == 1) {
        sync_ranks();  // rank 0's first call is answered
        die();
    }
    int v = 5, got = 0;
    std::size_t n = 0;
    CHECK_RC(weft_rpc_call(srv_port, 1, &v, sizeof v, &got, sizeof got, &n, WEFT_NET_FOREVER), 0);
    CHECK(got == 5 && n == sizeof got, "echo of 5: %d (%zu bytes)", got, n);
    sync_ranks();
    other_died();
    // The request goes (the port is known, credit is there); its reply never comes.
    CHECK_RC(weft_rpc_call(srv_port, 1, &v, sizeof v, &got, sizeof got, &n, WEFT_NET_FOREVER), EHOSTDOWN);
    CHECK_RC(weft_net_barrier(), EHOSTDOWN);
}

// dead-names: rank 0, where the naming service runs, dies.
void dead_names() {
    if (g_rank == 0) die();
    weft_port_id_t p;
    CHECK_RC(weft_net_port_create(&p, 4, 64), 0);
    CHECK_RC(weft_net_name_register("before", p), 0);
    other_died();
    CHECK_RC(weft_net_name_register("after", p), EHOSTDOWN);
    weft_port_id_t found{};
    CHECK_RC(weft_net_name_lookup("before", &found, WEFT_NET_FOREVER), EHOSTDOWN);
    CHECK_RC(weft_net_barrier(), EHOSTDOWN);
    CHECK_RC(weft_net_port_destroy(p), 0);
}

// silent-peer: rank 1 sleeps twice the peer timeout with its port full.
void silent_peer() {
    rank1_ports ports = share_ports(2);
    sync_ranks();
    if (g_rank == 1) {
        const char* t = std::getenv("WEFT_NET_PEER_TIMEOUT");
        CHECK(t != nullptr, "WEFT_NET_PEER_TIMEOUT must be set for silent-peer");
        CHECK_RC(weft_sleep_ns(2ull * std::strtoull(t, nullptr, 10) * 1'000'000), 0);
        for (int i = 0; i < kSilentMsgs; ++i) {
            int v = -1;
            weft_net_status_t st{};
            CHECK_RC(weft_net_recv(ports.a, &v, sizeof v, &st, WEFT_NET_FOREVER), 0);
            CHECK(v == i && st.source == 0, "message %d: got %d from node %u", i, v, st.source);
        }
    } else {
        for (int i = 0; i < kSilentMsgs; ++i) CHECK_RC(weft_net_send(ports.a, 0, &i, sizeof i), 0);
    }
    sync_ranks();
}

// Rank 0's stderr goes to a file while the job runs, to check the lines the
// transport prints; stop() (or a failed check) copies it to the real stderr.
struct stderr_capture {
    int saved = -1;
    char path[64] = "/tmp/weft-dead-peer-XXXXXX";

    void start() {
        int fd = mkstemp(path);
        CHECK(fd >= 0, "mkstemp: %s", std::strerror(errno));
        std::fflush(stderr);
        saved = dup(2);
        dup2(fd, 2);
        close(fd);
        g_before_fail = [] { (void)g_capture->stop(); };
    }
    std::string stop() {
        if (saved < 0) return {};
        g_before_fail = nullptr;
        std::fflush(stderr);
        dup2(saved, 2);
        close(saved);
        saved = -1;
        std::string text;
        if (FILE* f = std::fopen(path, "r")) {
            char buf[4096];
            std::size_t n;
            while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
            std::fclose(f);
        }
        unlink(path);
        std::fputs(text.c_str(), stderr);
        return text;
    }

    static inline stderr_capture* g_capture = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    const bool weft_inits = mode == "dead-weft-inits-mpi";  // dead-probe, with MPI initialised by weft
    const bool port_mode = mode == "dead-credit" || mode == "dead-probe" || mode == "dead-large" || weft_inits;
    if (!port_mode && mode != "dead-rpc" && mode != "dead-names" && mode != "silent-peer" && mode != "bad-timeout") {
        std::fprintf(stderr,
                     "usage: %s dead-credit|dead-probe|dead-large|dead-weft-inits-mpi|dead-rpc|dead-names|"
                     "silent-peer|bad-timeout (got '%s')\n",
                     argv[0], mode.c_str());
        return 2;
    }
    const bool dead = mode != "silent-peer";
    const int survivor = mode == "dead-names" ? 1 : 0;  // silent-peer: the sender
    stderr_capture cap;
    stderr_capture::g_capture = &cap;
    if (weft_inits) {
        // No MPI before weft_net_init: every rank captures (rank 1 dies anyway).
        cap.start();
        start_weft_mpi();
        g_rank = weft_net_self_node();
        g_size = weft_net_num_nodes();
        CHECK(g_size == 2, "run it under mpiexec with 2 ranks (this job has %d)", g_size);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        exchange_pids();
        dead_ports("dead-probe");
        check_local_ports();
        CHECK_RC(weft_net_finalize(), 0);
        CHECK_RC(weft_finalize(), 0);
        int finalized = 1;
        MPI_Finalized(&finalized);
        const std::string err = cap.stop();
        CHECK(!finalized, "weft initialised MPI but must not finalize it after a rank died");
        CHECK(err.find("weft: mpi transport: node 1 answered nothing for ") != std::string::npos &&
                  err.find("weft: mpi transport: node 1 was declared dead: MPI_Finalize is not called") !=
                      std::string::npos,
              "stderr was:\n%s", err.c_str());
        std::printf("%s: ok\n", mode.c_str());
        std::fflush(stdout);
        _exit(0);
    }
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (g_size != 2) {
        std::fprintf(stderr, "net_mpi_dead_peer_test: run it under mpiexec with 2 ranks (this job has %d)\n",
                     g_size);
        MPI_Finalize();
        return 2;
    }
    if (dead) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);  // the survivor outlives the other
    if (g_rank == survivor) cap.start();
    // One worker per rank, as tests/mpi/net_mpi_test.cpp (start_weft_mpi).
    if (mode == "bad-timeout") {
        weft_config_t wc{};
        wc.workers = 1;
        CHECK_RC(weft_init(&wc), EINVAL);
        const std::string err = g_rank == survivor ? cap.stop() : std::string();
        CHECK(g_rank != survivor || err == "weft: WEFT_NET_PEER_TIMEOUT='99' is invalid: expected a number of "
                                           "milliseconds from 100 to 86400000, or off\n",
              "stderr was:\n%s", err.c_str());
        CHECK(weft_is_initialized() == 0, "the runtime must not start with a bad WEFT_NET_PEER_TIMEOUT");
        MPI_Finalize();
        if (g_rank == survivor) std::printf("%s: ok\n", mode.c_str());
        return 0;
    }
    start_weft_mpi();
    exchange_pids();
    if (port_mode) dead_ports(mode);
    else if (mode == "dead-rpc") dead_rpc();
    else if (mode == "dead-names") dead_names();
    else silent_peer();
    if (dead) check_local_ports();
    CHECK_RC(weft_net_finalize(), 0);
    CHECK_RC(weft_finalize(), 0);
    if (g_rank == survivor) {
        const std::string err = cap.stop();
        const std::string line = "weft: mpi transport: node " + std::to_string(1 - survivor) + " answered nothing for ";
        bool declared = err.find(line) != std::string::npos && err.find(" s; declared dead\n") != std::string::npos;
        CHECK(declared == dead, "rank %d was %sdeclared dead: stderr was:\n%s", 1 - survivor, declared ? "" : "not ",
              err.c_str());
    }
    if (dead) {
        // Open MPI 4.1's MPI_Finalize can wait for the dead rank for ever (its
        // closing fence; seen once in 36 runs): end without it.
        std::printf("%s: ok\n", mode.c_str());
        std::fflush(stdout);
        _exit(0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (g_rank == survivor) std::printf("%s: ok\n", mode.c_str());
    return 0;
}

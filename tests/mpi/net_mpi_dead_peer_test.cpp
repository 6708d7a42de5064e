// The mpi transport's peer timeout (docs/design/mpi.md, "A rank that dies"):
// two ranks, WEFT_NET_PEER_TIMEOUT short (tests/CMakeLists.txt sets 1000 ms).
// One mode per run, the first argument:
//
//   dead-credit  rank 1 dies (_exit) once rank 0 has sent to its port A; rank 0
//                sends to A until its credit is gone: the send that waits for
//                credit fails with EHOSTDOWN, and so does the next send, to a
//                port B it never probed;
//   dead-probe   the same, but rank 0's first send after the death goes to B,
//                whose probe is never answered: EHOSTDOWN, then to A: EHOSTDOWN;
//   dead-large   the same, but rank 0 sends A a message above the copy limit,
//                whose MPI send never completes: EHOSTDOWN, then to B: EHOSTDOWN;
//   silent-peer  rank 1 lives but sends nothing for twice the peer timeout (it
//                sleeps), while rank 0 sends it more than its port holds: every
//                send succeeds, and rank 1 then receives them all, in order.
//
// In the dead modes rank 0 then checks that its own ports still work, that
// weft_net_finalize returns (it does not wait for a dead rank's bye, nor for its
// sends to it), that stderr got the one line naming rank 1, and that MPI
// finalizes; it prints "<mode>: ok" last, which is
// what ctest looks for (after a rank died, mpiexec's exit status is no verdict
// on the survivor's checks). The
// dead modes need Open MPI's `mpiexec --enable-recovery --mca
// orte_abort_on_non_zero_status 0` (without it mpiexec ends the whole job when
// a rank dies); tests/CMakeLists.txt adds them.
//
// Nothing here waits for time except rank 1's sleep in silent-peer: every
// other wait is for a message, an error, or the job's barrier; a hang is
// caught by the test's ctest timeout.
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

// Rank 0's own ports after its peer died: a message to a new port of its own
// goes and comes back.
void check_local_ports() {
    weft_port_id_t p;
    CHECK_RC(weft_net_port_create(&p, 4, 64), 0);
    int v = 42, got = 0;
    CHECK_RC(weft_net_send(p, 7, &v, sizeof v), 0);
    weft_net_status_t st{};
    CHECK_RC(weft_net_recv(p, &got, sizeof got, &st, WEFT_NET_FOREVER), 0);
    CHECK(got == 42 && st.tag == 7 && st.source == 0, "got %d, tag %d, from %u", got, st.tag, st.source);
    CHECK_RC(weft_net_port_destroy(p), 0);
}

// Rank 0 in a dead mode, rank 1 dead after the barrier.
void dead_peer(const std::string& mode) {
    rank1_ports ports = share_ports(4);
    if (g_rank == 1) {
        int v = 0;
        CHECK_RC(weft_net_recv(ports.a, &v, sizeof v, nullptr, WEFT_NET_FOREVER), 0);
        sync_ranks();
        std::fflush(stdout);
        _exit(3);  // dies: no weft_net_finalize, no MPI_Finalize, no bye
    }
    // A is probed and cached, and rank 1 alive, before it dies.
    int one = 1;
    CHECK_RC(weft_net_send(ports.a, 0, &one, sizeof one), 0);
    sync_ranks();
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
    check_local_ports();
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
    std::string mode = argc > 1 ? argv[1] : "";
    if (mode != "dead-credit" && mode != "dead-probe" && mode != "dead-large" && mode != "silent-peer") {
        std::fprintf(stderr, "usage: %s dead-credit|dead-probe|dead-large|silent-peer (got '%s')\n", argv[0],
                     mode.c_str());
        return 2;
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
    const bool dead = mode != "silent-peer";
    if (dead) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);  // rank 0 outlives rank 1
    stderr_capture cap;
    stderr_capture::g_capture = &cap;
    if (g_rank == 0) cap.start();
    weft_config_t wc{};
    wc.workers = 1;
    CHECK_RC(weft_init(&wc), 0);
    weft_net_config_t cfg{};
    cfg.transport = "mpi";
    CHECK_RC(weft_net_init(&cfg), 0);
    if (dead) dead_peer(mode);
    else silent_peer();
    CHECK_RC(weft_net_finalize(), 0);
    CHECK_RC(weft_finalize(), 0);
    if (g_rank == 0) {
        std::string err = cap.stop();
        bool declared = err.find("weft: mpi transport: node 1 answered nothing for ") != std::string::npos &&
                        err.find(" s; declared dead\n") != std::string::npos;
        CHECK(declared == dead, "rank 1 was %s declared dead: stderr was:\n%s", declared ? "" : "not",
              err.c_str());
    }
    if (!dead) MPI_Barrier(MPI_COMM_WORLD);  // the dead modes' rank 1 is gone
    MPI_Finalize();
    if (g_rank == 0) std::printf("%s: ok\n", mode.c_str());
    return 0;
}

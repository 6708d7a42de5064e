// weft-bench pde --mpi-child: one rank of the PDE solver's job (pde_experiment.hpp).
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>

#include "apps/pde/pde_mpi.hpp"
#include "harness.hpp"
#include "mpi_launch.hpp"
#include "pde_experiment.hpp"
#include "pingpong.hpp"

namespace weft::bench::pde {

namespace {

// Nanoseconds per step of an exchange between ranks 0 and 1 (both post an
// MPI_Isend of `bytes` to the other, compute `compute_ns`, receive the
// other's, wait for their send): the pattern of weft's exchange in
// pde_weft_versions.cpp, in plain MPI, as measure_remote wants it. Ranks 0 and 1 only.
double raw_exchange_ns(int rank, std::size_t bytes, long iters, std::uint64_t compute_ns) {
    std::vector<unsigned char> out(bytes, 1), in(bytes);
    int const peer = 1 - rank, count = static_cast<int>(bytes);
    long const warmup = std::max(1L, iters / 10);
    std::uint64_t t0 = 0;
    for (long i = 0; i < warmup + iters; ++i) {
        if (i == warmup) t0 = now_ns();
        MPI_Request req;
        MPI_Isend(out.data(), count, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req);
        if (compute_ns > 0) busy_for_ns(compute_ns);
        MPI_Recv(in.data(), count, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    return static_cast<double>(now_ns() - t0) / static_cast<double>(iters);
}

// A barrier of every rank that does not poll: MPI_Barrier polls, and a rank
// that polls while two others measure takes a CPU from them when ranks
// outnumber CPUs.
void barrier_sleeping() {
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    for (int done = 0;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done) return;
        timespec const nap{0, 100'000};
        nanosleep(&nap, nullptr);
    }
}

}  // namespace

int child(int ranks, std::vector<long> const& sides, std::vector<std::string> const& versions, int rounds,
          double work, int max_sweeps) {
    namespace app = weft::apps::pde;
    int const rank = mpi::child_begin(ranks, "weft-bench pde --mpi-child");
    if (ranks >= 2) {
        // The model's alpha, beta and overhead (measure_remote), between
        // ranks 0 and 1 while the others wait without polling.
        MPI_Comm pair;
        MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
        if (rank < 2) {
            remote_points const pts = measure_remote(rounds, [&](std::size_t bytes, std::uint64_t compute_ns) {
                MPI_Barrier(pair);
                return raw_exchange_ns(rank, bytes, 2000, compute_ns);
            });
            MPI_Comm_free(&pair);
            if (rank == 0) {
                print_points("remote", pts.latency);
                print_points("overhead", pts.overhead);
            }
        }
        barrier_sleeping();
    }
    app::layout const l = app::block_layout(ranks);
    for (long side : sides) {
        std::size_t const gnx = static_cast<std::size_t>(side * l.px), gny = static_cast<std::size_t>(side * l.py);
        int const sweeps = sweeps_for(side, work, max_sweeps);
        app::solver s(MPI_COMM_WORLD, gnx, gny);
        std::vector<double> const ref = rank == 0 ? app::serial(gnx, gny, sweeps) : std::vector<double>{};
        std::vector<app::version> vs;
        for (std::string const& name : versions) {
            app::version v{};
            if (!app::parse_version(name, v)) die("pde child: unknown version '%s'", name.c_str());
            (void)s.run(v, sweeps);
            std::vector<double> const got = s.gather();
            if (rank == 0) std::printf("check %s %ld %d %.17g\n", name.c_str(), side, sweeps, app::max_abs_diff(got, ref));
            vs.push_back(v);
        }
        // Rounds: calc(n) and then every version, as the weft child's.
        for (int round = 0; round < rounds; ++round) {
            MPI_Barrier(MPI_COMM_WORLD);
            std::printf("calc %ld %d %d %.9g\n", side, rank, round, calc_on_job(ranks, rank, side, sweeps));
            for (app::version v : vs) {
                double const t = s.run(v, sweeps);
                if (rank == 0) std::printf("pde %s %ld %d %.9g\n", app::version_name(v), side, round, t);
            }
            std::fflush(stdout);
        }
    }
    return mpi::child_end();
}

}  // namespace weft::bench::pde

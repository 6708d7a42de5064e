// Raw MPI ping-pong: the child's side, rank 0 and rank 1 (pingpong.hpp).
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "mpi_launch.hpp"
#include "pingpong.hpp"

namespace weft::bench::pingpong {

namespace {

void round_trips(int rank, std::vector<char>& buf, int bytes, long n) {
    for (long i = 0; i < n; ++i) {
        if (rank == 0) {
            MPI_Send(buf.data(), bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf.data(), bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf.data(), bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf.data(), bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
}

}  // namespace

int child(std::vector<std::size_t> const& sizes, int rounds, long iters) {
    int const rank = mpi::child_begin(2, "weft-bench msg --mpi-child (ping-pong)");
    std::size_t largest = 1;
    for (std::size_t b : sizes) largest = b > largest ? b : largest;
    std::vector<char> buf(largest, static_cast<char>(rank + 1));
    for (int round = 0; round < rounds; ++round)
        for (std::size_t bytes : sizes) {
            long const n = iters_for(bytes, iters);
            int const len = static_cast<int>(bytes);
            round_trips(rank, buf, len, n / 10 + 1);  // warm-up: buffers, connections, caches
            MPI_Barrier(MPI_COMM_WORLD);
            double const t0 = MPI_Wtime();
            round_trips(rank, buf, len, n);
            double const half_ns = (MPI_Wtime() - t0) * 1e9 / (2.0 * static_cast<double>(n));
            if (rank == 0) std::printf("pingpong %zu %d %.6g\n", bytes, round, half_ns);
        }
    std::fflush(stdout);
    return mpi::child_end();
}

}  // namespace weft::bench::pingpong

// The PDE solver's MPI versions: mpi_plain (blocking halo exchange, then the
// sweep), blocking1 (weft's blocking1 in MPI: nonblocking sends, blocking
// receives, then the sweep) and handcoded (nonblocking exchange overlapped with the points that
// need no halo). pde_mpi.hpp and docs/design/mpi.md describe them.
#include "apps/pde/pde_mpi.hpp"

#include <cstdio>
#include <utility>

namespace weft::apps::pde {

namespace {

// One tag per direction of travel, so that a rank with the same neighbour on
// two sides (it cannot happen with blocks of >= 2 ranks per row, but costs
// nothing) never mixes edges.
enum tag : int { to_east = 1, to_west = 2, to_north = 3, to_south = 4 };

int peer(int r) noexcept { return r == no_rank ? MPI_PROC_NULL : r; }

void check(int rc, char const* what) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    std::fprintf(stderr, "weft pde: %s failed: %.*s\n", what, len, text);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

}  // namespace

solver::solver(MPI_Comm comm, std::size_t gnx, std::size_t gny)
    : comm_(comm), gnx_(gnx), gny_(gny), old_(0, 0), new_(0, 0) {
    int size = 0;
    check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_, &size), "MPI_Comm_size");
    layout_ = block_layout(size);
    block_ = block_of(layout_, rank_, gnx, gny);
    old_ = grid(block_.nx, block_.ny);
    new_ = grid(block_.nx, block_.ny);
    send_w_.resize(block_.ny);
    send_e_.resize(block_.ny);
    recv_w_.resize(block_.ny);
    recv_e_.resize(block_.ny);
}

void solver::pack_columns() {
    long const last = static_cast<long>(block_.nx) - 1;
    for (long y = 0; y < static_cast<long>(block_.ny); ++y) {
        send_w_[static_cast<std::size_t>(y)] = old_.at(0, y);
        send_e_[static_cast<std::size_t>(y)] = old_.at(last, y);
    }
}

void solver::unpack_columns() {
    long const nx = static_cast<long>(block_.nx);
    // A side without a neighbour keeps its boundary values.
    for (long y = 0; y < static_cast<long>(block_.ny); ++y) {
        if (block_.west != no_rank) old_.at(-1, y) = recv_w_[static_cast<std::size_t>(y)];
        if (block_.east != no_rank) old_.at(nx, y) = recv_e_[static_cast<std::size_t>(y)];
    }
}

void solver::sweep_plain() {
    int const nx = static_cast<int>(block_.nx), ny = static_cast<int>(block_.ny);
    pack_columns();
    // Four shifts, each a blocking send to one side and receive from the other.
    check(MPI_Sendrecv(send_e_.data(), ny, MPI_DOUBLE, peer(block_.east), to_east, recv_w_.data(), ny, MPI_DOUBLE,
                       peer(block_.west), to_east, comm_, MPI_STATUS_IGNORE),
          "MPI_Sendrecv (east)");
    check(MPI_Sendrecv(send_w_.data(), ny, MPI_DOUBLE, peer(block_.west), to_west, recv_e_.data(), ny, MPI_DOUBLE,
                       peer(block_.east), to_west, comm_, MPI_STATUS_IGNORE),
          "MPI_Sendrecv (west)");
    check(MPI_Sendrecv(old_.row(ny - 1), nx, MPI_DOUBLE, peer(block_.north), to_north, old_.row(-1), nx, MPI_DOUBLE,
                       peer(block_.south), to_north, comm_, MPI_STATUS_IGNORE),
          "MPI_Sendrecv (north)");
    check(MPI_Sendrecv(old_.row(0), nx, MPI_DOUBLE, peer(block_.south), to_south, old_.row(ny), nx, MPI_DOUBLE,
                       peer(block_.north), to_south, comm_, MPI_STATUS_IGNORE),
          "MPI_Sendrecv (south)");
    unpack_columns();
    relax_rect(old_, new_, 0, nx, 0, ny);
}

int solver::isend_edges(MPI_Request* req) {
    int const nx = static_cast<int>(block_.nx), ny = static_cast<int>(block_.ny);
    int n = 0;
    pack_columns();
    if (block_.east != no_rank)
        check(MPI_Isend(send_e_.data(), ny, MPI_DOUBLE, block_.east, to_east, comm_, &req[n++]), "MPI_Isend (east)");
    if (block_.west != no_rank)
        check(MPI_Isend(send_w_.data(), ny, MPI_DOUBLE, block_.west, to_west, comm_, &req[n++]), "MPI_Isend (west)");
    if (block_.north != no_rank)
        check(MPI_Isend(old_.row(ny - 1), nx, MPI_DOUBLE, block_.north, to_north, comm_, &req[n++]),
              "MPI_Isend (north)");
    if (block_.south != no_rank)
        check(MPI_Isend(old_.row(0), nx, MPI_DOUBLE, block_.south, to_south, comm_, &req[n++]), "MPI_Isend (south)");
    return n;
}

void solver::sweep_blocking1() {
    int const nx = static_cast<int>(block_.nx), ny = static_cast<int>(block_.ny);
    MPI_Request req[4];
    // The four edges sent (isend_edges), then the halos received one after
    // the other (west, east, south, north), each a blocking receive, as a
    // weft thread that blocks in weft_net_recv.
    int const n = isend_edges(req);
    if (block_.west != no_rank)
        check(MPI_Recv(recv_w_.data(), ny, MPI_DOUBLE, block_.west, to_east, comm_, MPI_STATUS_IGNORE),
              "MPI_Recv (west)");
    if (block_.east != no_rank)
        check(MPI_Recv(recv_e_.data(), ny, MPI_DOUBLE, block_.east, to_west, comm_, MPI_STATUS_IGNORE),
              "MPI_Recv (east)");
    if (block_.south != no_rank)
        check(MPI_Recv(old_.row(-1), nx, MPI_DOUBLE, block_.south, to_north, comm_, MPI_STATUS_IGNORE),
              "MPI_Recv (south)");
    if (block_.north != no_rank)
        check(MPI_Recv(old_.row(ny), nx, MPI_DOUBLE, block_.north, to_south, comm_, MPI_STATUS_IGNORE),
              "MPI_Recv (north)");
    check(MPI_Waitall(n, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
    unpack_columns();
    relax_rect(old_, new_, 0, nx, 0, ny);
}

void solver::sweep_handcoded() {
    int const nx = static_cast<int>(block_.nx), ny = static_cast<int>(block_.ny);
    MPI_Request req[8];
    int n = 0;
    // Receives first, so that an edge that arrives early lands in place.
    if (block_.west != no_rank)
        check(MPI_Irecv(recv_w_.data(), ny, MPI_DOUBLE, block_.west, to_east, comm_, &req[n++]), "MPI_Irecv (west)");
    if (block_.east != no_rank)
        check(MPI_Irecv(recv_e_.data(), ny, MPI_DOUBLE, block_.east, to_west, comm_, &req[n++]), "MPI_Irecv (east)");
    if (block_.south != no_rank)
        check(MPI_Irecv(old_.row(-1), nx, MPI_DOUBLE, block_.south, to_north, comm_, &req[n++]), "MPI_Irecv (south)");
    if (block_.north != no_rank)
        check(MPI_Irecv(old_.row(ny), nx, MPI_DOUBLE, block_.north, to_south, comm_, &req[n++]), "MPI_Irecv (north)");
    n += isend_edges(&req[n]);
    // The points whose stencil reads no halo that a neighbour fills, while the
    // edges travel.
    long const x_lo = block_.west != no_rank ? 1 : 0, x_hi = nx - (block_.east != no_rank ? 1 : 0);
    long const y_lo = block_.south != no_rank ? 1 : 0, y_hi = ny - (block_.north != no_rank ? 1 : 0);
    relax_rect(old_, new_, x_lo, x_hi, y_lo, y_hi);
    check(MPI_Waitall(n, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
    unpack_columns();
    // Then the edge points: full rows below and above, the columns between them.
    if (y_lo == 1) relax_rect(old_, new_, 0, nx, 0, 1);
    if (y_hi == ny - 1) relax_rect(old_, new_, 0, nx, ny - 1, ny);
    if (x_lo == 1) relax_rect(old_, new_, 0, 1, y_lo, y_hi);
    if (x_hi == nx - 1) relax_rect(old_, new_, nx - 1, nx, y_lo, y_hi);
}

double solver::run(version v, int sweeps) {
    init_block(old_, block_, gny_);
    init_block(new_, block_, gny_);
    check(MPI_Barrier(comm_), "MPI_Barrier");
    double const t0 = MPI_Wtime();
    for (int s = 0; s < sweeps; ++s) {
        switch (v) {
            case version::mpi_plain: sweep_plain(); break;
            case version::blocking1: sweep_blocking1(); break;
            case version::handcoded: sweep_handcoded(); break;
        }
        std::swap(old_, new_);
    }
    double const mine = (MPI_Wtime() - t0) / sweeps;
    double slowest = 0;
    check(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm_), "MPI_Allreduce");
    return slowest;
}

std::vector<double> solver::gather() const {
    int size = 0;
    check(MPI_Comm_size(comm_, &size), "MPI_Comm_size");
    std::vector<double> mine = interior(old_);  // the last sweep's result (swapped in)
    if (rank_ != 0) {
        check(MPI_Send(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, 0, 0, comm_), "MPI_Send (gather)");
        return {};
    }
    std::vector<double> all(gnx_ * gny_);
    for (int r = 0; r < size; ++r) {
        block const b = block_of(layout_, r, gnx_, gny_);
        std::vector<double> part(b.nx * b.ny);
        if (r == 0) part = mine;
        else
            check(MPI_Recv(part.data(), static_cast<int>(part.size()), MPI_DOUBLE, r, 0, comm_, MPI_STATUS_IGNORE),
                  "MPI_Recv (gather)");
        for (std::size_t y = 0; y < b.ny; ++y)
            for (std::size_t x = 0; x < b.nx; ++x) all[(b.y0 + y) * gnx_ + b.x0 + x] = part[y * b.nx + x];
    }
    return all;
}

}  // namespace weft::apps::pde

// The PDE solver's message-passing versions over MPI (pde.hpp has the problem,
// the decomposition and the serial reference). Compiled only when weft is
// built with MPI (WEFT_WITH_MPI; apps/CMakeLists.txt).
//
// A `solver` is one rank's part of one problem: its block, two grids (old and
// new) and the edge buffers. Every rank of the communicator makes one with the
// same sizes and calls the same functions in the same order (they are
// collective).
#pragma once

#include <cstddef>
#include <vector>

#include <mpi.h>

#include "apps/pde/pde.hpp"

namespace weft::apps::pde {

class solver {
public:
    // This rank's block of a gnx x gny grid split over the communicator's
    // ranks (block_layout). Throws std::invalid_argument as block_of does.
    solver(MPI_Comm comm, std::size_t gnx, std::size_t gny);

    block const& my_block() const noexcept { return block_; }
    layout const& my_layout() const noexcept { return layout_; }

    // Collective: resets the grids and runs `sweeps` sweeps of version v.
    // Returns the slowest rank's seconds per sweep (the same value on every
    // rank), timed from a barrier before the first sweep to the end of the last.
    double run(version v, int sweeps);

    // Collective: the global interior (gnx * gny values, row-major) of the
    // last run, on rank 0; an empty vector on the other ranks.
    std::vector<double> gather() const;

private:
    void sweep_plain();
    void sweep_blocking1();
    void sweep_handcoded();
    void pack_columns();
    // Packs the columns and posts an MPI_Isend of each edge that has a
    // neighbour, in weft's order (east, west, north, south), into req;
    // returns how many.
    int isend_edges(MPI_Request* req);
    void unpack_columns();

    MPI_Comm comm_;
    int rank_ = 0;
    std::size_t gnx_, gny_;
    layout layout_;
    block block_;
    grid old_, new_;
    // Edge columns (not contiguous in the grid): what goes west and east, what
    // came from there. Rows go straight from and into the grid.
    std::vector<double> send_w_, send_e_, recv_w_, recv_e_;
};

}  // namespace weft::apps::pde

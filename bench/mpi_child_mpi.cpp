// The start and end of an MPI child of weft-bench (mpi_launch.hpp).
#include <mpi.h>

#include "harness.hpp"
#include "mpi_launch.hpp"

namespace weft::bench::mpi {

int child_begin(int ranks, char const* what) {
    int provided = 0;
    // FUNNELED: only the main thread of a child calls MPI.
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        die("%s: MPI_Init_thread failed", what);
    int size = 0, rank = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (size != ranks) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(version, &len);
        die("%s: this MPI job has %d rank%s, not the %d asked for: started without mpiexec, or by the mpiexec of "
            "another MPI than this program's (%.60s)",
            what, size, size == 1 ? "" : "s", ranks, version);
    }
    return rank;
}

int child_end() {
    MPI_Finalize();
    return 0;
}

}  // namespace weft::bench::mpi

// Running this executable as an MPI job: `mpiexec -n P weft-bench EXPERIMENT
// --mpi-child ...`, and reading what its rank 0 prints.
//
// The experiments that measure MPI (msg, pde) are parents that stay outside
// MPI; each measurement runs in a job of this executable started with the
// launcher that matches the MPI library it was built against (FindMPI's
// MPIEXEC_EXECUTABLE, compiled in as WEFT_MPIEXEC). The launcher's options
// depend on which MPI it is (docs/design/mpi.md, "Launching ranks"):
//   Open MPI: --allow-run-as-root when run as root (it refuses otherwise);
//             --oversubscribe, so that more ranks than cores start (and then
//             wait by yielding the CPU, not spinning); --mca pml ob1 --mca btl
//             self,vader,tcp unless OMPI_MCA_pml / OMPI_MCA_btl choose
//             otherwise (the default selection probes UCX first: 0.32 s to
//             start two ranks instead of 0.10 s, and 2-3x the latency);
//   MPICH and others: -n P only.
// Nothing here includes <mpi.h>: the parent does not link against MPI's
// runtime behaviour, only the children (the *_mpi.cpp files) call MPI.
#pragma once

#include <string>
#include <vector>

namespace weft::bench::mpi {

// True when this weft-bench was built with MPI (WEFT_WITH_MPI).
bool built() noexcept;
// Why not, for the reader: names the option and how to get MPI ("" when built).
std::string not_built_reason();
// The launcher's path and which MPI it belongs to ("openmpi", "mpich", "other").
std::string launcher();
std::string flavor();

// The command line that starts `ranks` copies of this executable with `args`
// (args[0] is the experiment's name).
std::vector<std::string> command(int ranks, std::vector<std::string> const& args);

// Runs the job and returns what it printed on stdout. Dies, naming `what`, the
// command and the exit status, when it fails.
std::string run(int ranks, std::vector<std::string> const& args, char const* what);

// The lines of `text` that start with `tag` followed by a space, without it.
std::vector<std::string> lines_tagged(std::string const& text, std::string const& tag);

// In a child (built with MPI only; mpi_child_mpi.cpp): initialises MPI, checks
// that the job has `ranks` ranks (a launcher of another MPI than the library's
// starts singletons, each of size 1) and returns this process's rank. Dies
// with a clear message otherwise.
int child_begin(int ranks, char const* what);
// Finalizes MPI; returns the exit status for the child's run function.
int child_end();

}  // namespace weft::bench::mpi

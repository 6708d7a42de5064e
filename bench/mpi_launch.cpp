// Launching this executable as an MPI job (mpi_launch.hpp).
#include "mpi_launch.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "harness.hpp"

#ifndef WEFT_HAVE_MPI
#define WEFT_HAVE_MPI 0
#endif
#ifndef WEFT_MPIEXEC
#define WEFT_MPIEXEC ""
#endif
#ifndef WEFT_MPI_FLAVOR
#define WEFT_MPI_FLAVOR ""
#endif

namespace weft::bench::mpi {

bool built() noexcept { return WEFT_HAVE_MPI != 0; }

std::string not_built_reason() {
    if (built()) return {};
    return "this weft-bench was built without MPI (WEFT_WITH_MPI: MPI was not found when it was configured, or the "
           "option was OFF); install Open MPI (scripts/deps.sh build, or apt-get install libopenmpi-dev openmpi-bin) "
           "and configure again";
}

std::string launcher() { return WEFT_MPIEXEC; }
std::string flavor() { return WEFT_MPI_FLAVOR; }

std::vector<std::string> command(int ranks, std::vector<std::string> const& args) {
    std::vector<std::string> cmd = {launcher()};
    if (flavor() == "openmpi") {
        if (geteuid() == 0) cmd.emplace_back("--allow-run-as-root");
        cmd.emplace_back("--oversubscribe");
        if (std::getenv("OMPI_MCA_pml") == nullptr) cmd.insert(cmd.end(), {"--mca", "pml", "ob1"});
        if (std::getenv("OMPI_MCA_btl") == nullptr) cmd.insert(cmd.end(), {"--mca", "btl", "self,vader,tcp"});
    }
    cmd.insert(cmd.end(), {"-n", std::to_string(ranks), self_exe()});
    cmd.insert(cmd.end(), args.begin(), args.end());
    return cmd;
}

std::string run(int ranks, std::vector<std::string> const& args, char const* what) {
    if (!built()) die("%s: %s", what, not_built_reason().c_str());
    if (self_exe().empty()) die("%s: cannot find this executable through /proc/self/exe", what);
    std::vector<std::string> const cmd = command(ranks, args);
    int status = 0;
    std::string out = run_piped(cmd.front(), cmd, {}, &status);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::string line;
        for (auto const& a : cmd) line += (line.empty() ? "" : " ") + a;
        die("%s: '%s' failed (%s %d); its output: %s", what, line.c_str(),
            WIFEXITED(status) ? "exit status" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
            out.c_str());
    }
    return out;
}

std::vector<std::string> lines_tagged(std::string const& text, std::string const& tag) {
    std::vector<std::string> found;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line))
        if (line.size() > tag.size() && line.compare(0, tag.size(), tag) == 0 && line[tag.size()] == ' ')
            found.push_back(line.substr(tag.size() + 1));
    return found;
}

}  // namespace weft::bench::mpi

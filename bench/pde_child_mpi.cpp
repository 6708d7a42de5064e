// weft-bench pde --mpi-child: one rank of the PDE solver's job (pde.hpp).
#include <mpi.h>

#include <cstdio>

#include "apps/pde/pde_mpi.hpp"
#include "harness.hpp"
#include "mpi_launch.hpp"
#include "pde.hpp"

namespace weft::bench::pde {

int child(int ranks, std::vector<long> const& sides, std::vector<std::string> const& versions, int rounds,
          double work, int max_sweeps) {
    namespace app = weft::apps::pde;
    int const rank = mpi::child_begin(ranks, "weft-bench pde --mpi-child");
    app::layout const l = app::block_layout(ranks);
    for (long side : sides) {
        std::size_t const gnx = static_cast<std::size_t>(side * l.px), gny = static_cast<std::size_t>(side * l.py);
        int const sweeps = sweeps_for(side, work, max_sweeps);
        MPI_Barrier(MPI_COMM_WORLD);
        std::printf("calc %ld %d %.9g\n", side, rank, calc_on_job(ranks, rank, side, sweeps, rounds));
        app::solver s(MPI_COMM_WORLD, gnx, gny);
        std::vector<double> const ref = rank == 0 ? app::serial(gnx, gny, sweeps) : std::vector<double>{};
        for (std::string const& name : versions) {
            app::version v{};
            if (!app::parse_version(name, v)) die("pde child: unknown version '%s'", name.c_str());
            (void)s.run(v, sweeps);
            std::vector<double> const got = s.gather();
            if (rank == 0) std::printf("check %s %ld %d %.17g\n", name.c_str(), side, sweeps, app::max_abs_diff(got, ref));
            for (int round = 0; round < rounds; ++round) {
                double const t = s.run(v, sweeps);
                if (rank == 0) std::printf("pde %s %ld %d %.9g\n", name.c_str(), side, round, t);
            }
            std::fflush(stdout);
        }
    }
    return mpi::child_end();
}

}  // namespace weft::bench::pde

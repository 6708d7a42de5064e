// weft-bench pde: Felten & McNamee's PDE solver ("Improving the performance of
// message-passing applications by multithreading", §4) over MPI, against their
// performance model (§5, equations (1) and (3)).
//
// For every rank count P of --ranks, one MPI job of this executable
// (mpiexec -n P weft-bench pde --mpi-child; mpi_launch.hpp) runs apps/pde's
// versions on a grid split into P blocks of side x side points, for every
// side of --sides (n = side^2 points per rank): first a run checked against
// the serial program (a result that differs stops the experiment), then
// --rounds timed runs. time_s is the median over rounds of the slowest rank's
// seconds per sweep.
//
// The model's inputs are measured in the same invocation: alpha and beta from
// a raw MPI ping-pong between two ranks (weft-bench msg's, sizes 8 B to 64 KiB,
// least squares), and t_point, the serial program's seconds per point per
// sweep on one side x side block (in this process, median over rounds; it
// carries the cache effects of each size). With k the neighbours of the
// busiest rank, lambda = 8 * side bytes per edge, e its points next to a
// neighbour's edge, and f = max(1, P / CPUs) the time-slicing of an
// oversubscribed run:
//   mpi_plain (T_b, eq. 1):   f*t_point*n + k*(alpha + beta*lambda)
//   handcoded (T_opt, eq. 3): max(f*t_point*(n - e), k*(alpha + beta*lambda)) + f*t_point*e
// docs/design/mpi.md maps every symbol of the paper to these.
#include "pde.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "apps/pde/pde.hpp"
#include "harness.hpp"
#include "mpi_launch.hpp"
#include "pingpong.hpp"

namespace weft::bench::pde {

int sweeps_for(long side, double work, int max_sweeps) {
    double const s = work / (static_cast<double>(side) * static_cast<double>(side));
    return static_cast<int>(std::clamp(s, 2.0, static_cast<double>(max_sweeps)));
}

namespace {

namespace app = weft::apps::pde;

// Serial seconds per point per sweep on a side x side block.
double serial_point_time(long side, double work, int max_sweeps, int rounds) {
    int const sweeps = sweeps_for(side, work, max_sweeps);
    app::block const b = app::block_of(app::layout{}, 0, static_cast<std::size_t>(side),
                                       static_cast<std::size_t>(side));
    std::vector<double> t;
    for (int r = 0; r < rounds; ++r) {
        app::grid a(b.nx, b.ny), c(b.nx, b.ny);
        app::init_block(a, b, b.ny);
        app::init_block(c, b, b.ny);
        std::uint64_t const t0 = now_ns();
        for (int s = 0; s < sweeps; ++s) {
            app::relax_rect(a, c, 0, side, 0, side);
            std::swap(a, c);
        }
        std::uint64_t const t1 = now_ns();
        keep(a.at(0, 0));
        t.push_back(static_cast<double>(t1 - t0) * 1e-9 / (static_cast<double>(sweeps) * side * side));
    }
    return summarize(t).median;
}

struct model_inputs {
    double alpha_s, beta_s_per_byte;
    int cpus;
};

struct model_terms {
    int neighbours;
    double t_b, t_opt;
};

model_terms model(model_inputs const& in, int ranks, long side, double t_point) {
    app::layout const l = app::block_layout(ranks);
    auto const g = static_cast<std::size_t>(side);
    app::block busiest = app::block_of(l, 0, g * static_cast<std::size_t>(l.px), g * static_cast<std::size_t>(l.py));
    for (int r = 1; r < ranks; ++r) {
        app::block const b = app::block_of(l, r, g * static_cast<std::size_t>(l.px), g * static_cast<std::size_t>(l.py));
        if (b.neighbours() > busiest.neighbours()) busiest = b;
    }
    int const k = busiest.neighbours();
    int const kx = (busiest.west != app::no_rank) + (busiest.east != app::no_rank);
    int const ky = (busiest.south != app::no_rank) + (busiest.north != app::no_rank);
    double const n = static_cast<double>(side) * static_cast<double>(side);
    double const e = n - static_cast<double>(side - kx) * static_cast<double>(side - ky);
    double const f = std::max(1.0, static_cast<double>(ranks) / in.cpus);
    double const comm = k * (in.alpha_s + in.beta_s_per_byte * 8.0 * static_cast<double>(side));
    return {k, f * t_point * n + comm, std::max(f * t_point * (n - e), comm) + f * t_point * e};
}

std::vector<long> parse_longs(std::string const& option, std::vector<std::string> const& items, long lo, long hi) {
    std::vector<long> v;
    for (auto const& s : items) {
        char* end = nullptr;
        long const x = std::strtol(s.c_str(), &end, 10);
        if (s.empty() || *end != '\0' || x < lo || x > hi)
            throw usage_error("--" + option + ": '" + s + "' is not an integer in [" + std::to_string(lo) + ", " +
                              std::to_string(hi) + "]");
        v.push_back(x);
    }
    return v;
}

std::string join(std::vector<std::string> const& v) {
    std::string s;
    for (auto const& x : v) s += (s.empty() ? "" : ",") + x;
    return s;
}

int run(context& ctx) {
    auto const& o = ctx.opts();
    std::vector<long> const ranks = parse_longs("ranks", o.list("ranks"), 1, 64);
    std::vector<long> const sides = parse_longs("sides", o.list("sides"), 2, 8192);
    std::vector<std::string> const versions = o.list("versions");
    int const rounds = static_cast<int>(o.integer("rounds"));
    double const work = o.number("work");
    int const max_sweeps = static_cast<int>(o.integer("max-sweeps"));
    if (o.flag("mpi-child")) {
#if WEFT_HAVE_MPI
        return child(static_cast<int>(ranks.front()), sides, versions, rounds, work, max_sweeps);
#else
        die("--mpi-child: %s", mpi::not_built_reason().c_str());
#endif
    }
    if (!mpi::built()) {
        std::fprintf(stderr, "weft-bench pde: not run: %s\n", mpi::not_built_reason().c_str());
        return 0;
    }
    std::vector<std::string> side_text;
    for (long s : sides) side_text.push_back(std::to_string(s));

    ctx.progress("alpha and beta: raw MPI ping-pong, 2 ranks");
    std::vector<std::size_t> const sizes = {8, 64, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536};
    pingpong::fit const f = pingpong::fit_alpha_beta(pingpong::measure("msg", sizes, rounds, 5000), 65536);
    model_inputs const in{f.alpha_ns * 1e-9, f.beta_ns_per_byte * 1e-9, static_cast<int>(allowed_cpus().size())};
    std::map<long, double> t_point;
    for (long s : sides) t_point[s] = serial_point_time(s, work, max_sweeps, rounds);

    table t({"ranks", "n", "version", "neighbours", "sweep us", "model us", "time/model"});
    for (long p : ranks) {
        ctx.progress("mpiexec -n %ld: sides %s, versions %s, %d rounds%s", p, join(side_text).c_str(),
                     join(versions).c_str(), rounds, p > in.cpus ? " (oversubscribed)" : "");
        std::string const out = mpi::run(static_cast<int>(p),
                                         {"pde", "--mpi-child", "--ranks", std::to_string(p), "--sides",
                                          join(side_text), "--versions", join(versions), "--rounds",
                                          std::to_string(rounds), "--work", json_number(work), "--max-sweeps",
                                          std::to_string(max_sweeps)},
                                         "the PDE solver's MPI job");
        std::map<std::pair<std::string, long>, int> sweeps;
        for (auto const& line : mpi::lines_tagged(out, "check")) {
            char name[32];
            long side = 0;
            int sw = 0;
            double diff = -1;
            if (std::sscanf(line.c_str(), "%31s %ld %d %lf", name, &side, &sw, &diff) != 4)
                die("pde child: bad line 'check %s'", line.c_str());
            if (diff != 0)
                die("pde: version %s on %ld ranks, side %ld: the result differs from the serial program's by up to "
                    "%g (it must equal it)",
                    name, p, side, diff);
            sweeps[{name, side}] = sw;
        }
        std::map<std::pair<std::string, long>, std::vector<double>> times;
        for (auto const& line : mpi::lines_tagged(out, "pde")) {
            char name[32];
            long side = 0;
            int round = 0;
            double secs = 0;
            if (std::sscanf(line.c_str(), "%31s %ld %d %lf", name, &side, &round, &secs) != 4)
                die("pde child: bad line 'pde %s'", line.c_str());
            times[{name, side}].push_back(secs);
        }
        for (long s : sides)
            for (auto const& v : versions) {
                auto const& ts = times[{v, s}];
                if (static_cast<int>(ts.size()) != rounds || !sweeps.count({v, s}))
                    die("pde child (%ld ranks): version %s side %ld reported %zu of %d rounds; its output: %s", p,
                        v.c_str(), s, ts.size(), rounds, out.c_str());
                summary const sum = summarize(ts);
                model_terms const m = model(in, static_cast<int>(p), s, t_point[s]);
                double const model_s = v == "mpi_plain" ? m.t_b : m.t_opt;
                json_object rec = ctx.record();
                rec.add("transport", "mpi").add("ranks", p).add("n", s * s).add("side", s).add("version", v);
                rec.add("time_s", sum.median).add("time_s_spread", sum.spread).add("model_s", model_s);
                rec.add("time_over_model", model_s > 0 ? sum.median / model_s : 0.0);
                rec.add("sweeps", sweeps[{v, s}]).add("rounds", rounds).add("neighbours", m.neighbours);
                rec.add("oversubscribed", p > in.cpus).add("t_point_ns", t_point[s] * 1e9);
                rec.add("alpha_ns", f.alpha_ns).add("beta_ns_per_byte", f.beta_ns_per_byte).add("checked", true);
                add_provenance(rec);
                ctx.emit(rec);
                t.add_row({std::to_string(p), fmt_sig(static_cast<double>(s * s)), v, std::to_string(m.neighbours),
                           fmt(sum.median * 1e6, 2), fmt(model_s * 1e6, 2), fmt(model_s > 0 ? sum.median / model_s : 0, 2)});
            }
        t.add_separator();
    }
    ctx.print(t, "pde: seconds per sweep (slowest rank, median) against the model");
    ctx.say("alpha %.1f ns, beta %.4f ns/B (ping-pong fit, 8 B..64 KiB); %d CPUs; every result equals the serial one\n",
            f.alpha_ns, f.beta_ns_per_byte, in.cpus);
    return 0;
}

registrar const reg{experiment{
    .name = "pde",
    .description = "Felten & McNamee's PDE solver over MPI (blocking and hand-coded nonblocking) against their model",
    .details = "Jacobi relaxation of Laplace's equation (five-point stencil) on P 2-D blocks of side x side points\n"
               "(apps/pde), for every P of --ranks (each an MPI job of this executable; P above the CPU count is\n"
               "oversubscribed) and side of --sides. Versions: mpi_plain (blocking MPI_Sendrecv halo exchange,\n"
               "then the sweep) and handcoded (MPI_Isend/Irecv, the inner points while the edges travel, then\n"
               "the edge points). Each (P, side, version) is first checked against the serial program, then\n"
               "timed over --rounds runs of work/side^2 sweeps (2..--max-sweeps). time_s: median of the slowest\n"
               "rank's seconds per sweep; model_s: the paper's T_b (eq. 1) or T_opt (eq. 3) from alpha and beta\n"
               "(raw MPI ping-pong) and the serial seconds per point, measured in the same invocation.\n"
               "See docs/bench.md and docs/design/mpi.md.",
    .options = {{.name = "ranks", .kind = opt_kind::list, .metavar = "LIST", .default_value = "2,4",
                 .help = "MPI rank counts (blocks: px x py as square as P allows)"},
                {.name = "sides", .kind = opt_kind::list, .metavar = "LIST",
                 .default_value = "8,16,32,64,128,256,512,1024", .help = "block sides: n = side^2 points per rank"},
                {.name = "versions", .kind = opt_kind::list, .metavar = "LIST", .default_value = "mpi_plain,handcoded",
                 .help = "versions to run", .choices = {"mpi_plain", "handcoded"}},
                {.name = "work", .kind = opt_kind::number, .metavar = "W", .default_value = "3e7",
                 .help = "points x sweeps per rank per run", .min = 1, .max = 1e12},
                {.name = "max-sweeps", .kind = opt_kind::integer, .metavar = "N", .default_value = "20000",
                 .help = "at most this many sweeps per run", .min = 2, .max = 100000000},
                {.name = "mpi-child", .kind = opt_kind::flag,
                 .help = "internal: a rank of the solver's job on the first --ranks count (pde starts itself so)"},
                opt_rounds(5)},
    .run = run,
    .in_demo = true,
    .demo_args = {"--sides", "16,64,256", "--work", "5e6", "--rounds", "3"},
    .demo_order = 61,
}};

}  // namespace
}  // namespace weft::bench::pde

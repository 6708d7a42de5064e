// lu and heat as knary's companion workloads (knary_apps.hpp).
#include "knary_apps.hpp"

#include <memory>
#include <string>

#include "apps/heat/heat.hpp"
#include "apps/lu/lu.hpp"

namespace weft::bench::knary {

workload lu_workload(int n) {
    struct state {
        explicit state(int n_) : m(n_), reference(n_), input(apps::lu::input_values(n_)) {
            reference.a = input;
            apps::lu::serial(reference);
        }
        apps::lu::matrix m, reference;
        std::vector<double> input;
    };
    auto st = std::make_shared<state>(n);
    std::string const name = "lu n=" + std::to_string(n);
    return {name,
            [st] {
                st->m.a = st->input;
                std::fill(st->m.perm.begin(), st->m.perm.end(), -1);
            },
            [st] { apps::lu::fork_join(st->m); },
            [st, name] {
                if (st->m.perm != st->reference.perm || st->m.a != st->reference.a)
                    die("%s: the fork/join factors differ from the serial version's", name.c_str());
            }};
}

workload heat_workload(int n, int steps) {
    struct state {
        state(int n_, int steps_) : g(n_, n_, steps_), reference(n_, n_, steps_) { apps::heat::serial(reference); }
        apps::heat::grid g, reference;
    };
    auto st = std::make_shared<state>(n, steps);
    std::string const name = "heat n=" + std::to_string(n) + " steps=" + std::to_string(steps);
    return {name, [st] { st->g.reset(); }, [st] { apps::heat::fork_join(st->g); },
            [st, name] {
                if (std::string const d = apps::heat::compare(st->g, st->reference); !d.empty())
                    die("%s: the fork/join grid differs from the serial version's: %s", name.c_str(), d.c_str());
            }};
}

std::vector<option_spec> opt_apps(long lu_n, long heat_n, long heat_steps) {
    return {{.name = "lu",
             .kind = opt_kind::integer,
             .metavar = "N",
             .default_value = std::to_string(lu_n),
             .help = "fork/join LU of an N x N matrix beside knary (0: none)",
             .min = 0,
             .max = 20000},
            {.name = "heat",
             .kind = opt_kind::integer,
             .metavar = "N",
             .default_value = std::to_string(heat_n),
             .help = "fork/join heat stencil on an N x N grid beside knary (0: none; at least 3)",
             .min = 0,
             .max = 20000},
            {.name = "heat-steps",
             .kind = opt_kind::integer,
             .metavar = "S",
             .default_value = std::to_string(heat_steps),
             .help = "time steps of the heat stencil",
             .min = 1,
             .max = 1000000}};
}

std::vector<workload> parse_apps(std::string const& command, options const& o) {
    std::vector<workload> out;
    if (long const n = static_cast<long>(o.integer("lu")); n > 0) out.push_back(lu_workload(int(n)));
    if (long const n = static_cast<long>(o.integer("heat")); n > 0) {
        if (n < 3) throw usage_error(command + ": --heat " + std::to_string(n) + ": the grid side must be at least 3 (or 0: none)");
        out.push_back(heat_workload(int(n), int(o.integer("heat-steps"))));
    }
    return out;
}

}  // namespace weft::bench::knary

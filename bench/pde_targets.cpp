#include "pde_targets.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

namespace weft::bench::pde {
namespace {

constexpr double threads_bound = 1.10;  // best threaded version / handcoded
constexpr double model_bound = 0.20;    // |time / model - 1|

bool is_threads(std::string const& v) { return v == "threads2" || v == "threads4"; }

}  // namespace

void emit_targets(context& ctx, std::vector<target_point> const& points, int cpus) {
    // (transport, ranks) -> n -> version -> point
    std::map<std::pair<std::string, long>, std::map<long, std::map<std::string, target_point const*>>> groups;
    for (auto const& p : points) {
        if (p.transport == "mpi" && p.ranks > cpus) continue;  // the target is one rank per CPU
        groups[{p.transport, p.ranks}][p.n][p.version] = &p;
    }
    table t({"transport", "ranks", "target", "value", "bound", "met", "where"});
    for (auto const& [key, by_n] : groups) {
        auto const& [transport, ranks] = key;
        auto base = [&](char const* name) -> json_object {
            json_object rec = ctx.record();
            rec.add("target", name).add("transport", transport).add("ranks", ranks);
            return rec;
        };
        // The crossing: the smallest n whose model has a threaded version below blocking1.
        long crossing = -1;
        for (auto const& [n, vs] : by_n) {
            auto const b = vs.find("blocking1");
            if (b == vs.end()) continue;
            for (auto const& [v, p] : vs)
                if (is_threads(v) && p->model_overlap_s < b->second->model_overlap_s) crossing = n;
            if (crossing >= 0) break;
        }
        json_object th = base("threads_over_handcoded");
        std::string th_where = "model: threads never beat blocking1";
        if (crossing < 0) {
            th.add_null("crossing_n").add_null("value").add("bound", threads_bound).add_null("met");
            t.add_row({transport, std::to_string(ranks), "threads_over_handcoded", "-", fmt(threads_bound, 2), "n/a",
                       th_where});
        } else {
            double worst = 0;
            long worst_n = crossing;
            bool any = false;
            for (auto const& [n, vs] : by_n) {
                if (n < crossing) continue;
                auto const h = vs.find("handcoded");
                if (h == vs.end()) continue;
                double best = std::numeric_limits<double>::infinity();
                for (auto const& [v, p] : vs)
                    if (is_threads(v)) best = std::min(best, median_of_ratios(p->round_times, h->second->round_times));
                if (!std::isfinite(best)) continue;
                any = true;
                if (best > worst) worst = best, worst_n = n;
            }
            th.add("crossing_n", crossing);
            if (any) {
                th.add("value", worst)
                    .add("worst_n", worst_n)
                    .add("bound", threads_bound)
                    .add("met", worst <= threads_bound);
                th_where = "n >= " + std::to_string(crossing) + ", worst at n = " + std::to_string(worst_n);
                t.add_row({transport, std::to_string(ranks), "threads_over_handcoded", fmt(worst, 2),
                           fmt(threads_bound, 2), worst <= threads_bound ? "yes" : "NO", th_where});
            } else {
                th.add_null("value").add("bound", threads_bound).add_null("met");
                t.add_row({transport, std::to_string(ranks), "threads_over_handcoded", "-", fmt(threads_bound, 2),
                           "n/a", "no threaded and handcoded rows"});
            }
        }
        add_provenance(th);
        ctx.emit(th);

        double worst_dev = -1;
        long worst_n = 0;
        std::string worst_v;
        for (auto const& [n, vs] : by_n)
            for (auto const& [v, p] : vs) {
                if (p->model_overlap_s <= 0) continue;
                double const dev = std::abs(p->time_s / p->model_overlap_s - 1);
                if (dev > worst_dev) worst_dev = dev, worst_n = n, worst_v = v;
            }
        if (worst_dev < 0) continue;
        json_object md = base("model_within_20pct");
        md.add("value", worst_dev).add("worst_n", worst_n).add("worst_version", worst_v);
        md.add("bound", model_bound).add("met", worst_dev <= model_bound);
        add_provenance(md);
        ctx.emit(md);
        t.add_row({transport, std::to_string(ranks), "model_within_20pct", fmt(worst_dev, 2), fmt(model_bound, 2),
                   worst_dev <= model_bound ? "yes" : "NO", worst_v + " at n = " + std::to_string(worst_n)});
    }
    ctx.print(t,
              "pde targets: the better of threads2 and threads4 within 1.10x of handcoded from the n where weft's "
              "model has threads beat blocking1 (ratio within each round, median); every version within 20% of "
              "weft's model (|time/model - 1|, worst row)");
}

}  // namespace weft::bench::pde

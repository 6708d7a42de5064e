// weft-bench filaments — the costs of filaments against the serial code they
// replace (seed 004 §4; docs/design/filaments.md, "Measurements").
//
// Figures, each the median over --rounds rounds, ratios from the same run:
//   fib_serial_s           the plain recursion fib(N), no runtime involved
//   fib_fil_s              fib(N) with weft::join at every call, in weft::fork_join
//   fib_ratio              fib_fil_s / fib_serial_s (1 worker: the cost of a
//                          pruned fork; target <= 1.10)
//   fib_speedup            fib_serial_s / fib_fil_s (2 workers: target >= 1.8)
//   loop_serial_s          a dense loop over M doubles (a[i] = a[i] * k + b[i])
//   loop_fil_s             the same body in weft::parallel_for
//   loop_ratio             loop_fil_s / loop_serial_s (1 worker: target <= 1.03)
//   forks, forks_pruned, steals: filament statistics of the fib rounds
// One JSON line per worker count (--workers).
#include <algorithm>
#include <string>
#include <vector>

#include "harness.hpp"
#include "weft/filament.hpp"

namespace weft::bench::filaments {
namespace {

__attribute__((noinline)) long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

__attribute__((noinline)) long fib_fil(int n) {
    if (n < 2) return n;
    auto [a, b] = weft::join([=] { return fib_fil(n - 1); }, [=] { return fib_fil(n - 2); });
    return a + b;
}

__attribute__((noinline)) void loop_serial(double* a, const double* b, long m, double k) {
    for (long i = 0; i < m; ++i) a[i] = a[i] * k + b[i];
}

__attribute__((noinline)) void loop_fil(double* a, const double* b, long m, double k) {
    weft::parallel_for(weft::range<long>{0, m}, [=](long i) { a[i] = a[i] * k + b[i]; });
}

template <class F>
summary time_rounds(int rounds, F f) {
    std::vector<double> v;
    f();  // warm-up (first-touch, caches, the servers' stacks)
    for (int r = 0; r < rounds; ++r) {
        std::uint64_t t0 = now_ns();
        f();
        v.push_back(static_cast<double>(now_ns() - t0) * 1e-9);
    }
    return summarize(v);
}

int run(context& ctx) {
    const int rounds = static_cast<int>(ctx.opts().integer("rounds"));
    const int n = static_cast<int>(ctx.opts().integer("fib"));
    const long m = static_cast<long>(ctx.opts().integer("loop"));
    std::vector<std::string> ws = ctx.opts().list("workers");
    table t({"workers", "fib serial s", "fib fil s", "fil/serial", "speedup", "loop serial s", "loop fil s",
             "fil/serial", "forks", "pruned", "steals"});
    std::vector<double> a(static_cast<std::size_t>(m), 1.0), b(static_cast<std::size_t>(m), 0.5);
    for (const std::string& w : ws) {
        weft_config_t cfg{};
        cfg.workers = std::stoi(w);
        check(weft_init(&cfg), "weft_init");
        // volatile: fib_serial is pure, and the compiler would otherwise reuse
        // one call's result for every round.
        volatile int nv = n;
        summary fs = time_rounds(rounds, [&] { keep(fib_serial(nv)); });
        check(weft_fil_stats_reset(), "weft_fil_stats_reset");
        summary ff = time_rounds(rounds, [&] {
            int m0 = nv;
            keep(weft::fork_join([=] { return fib_fil(m0); }));
        });
        weft_fil_stats_t st = weft::filament_stats();
        summary ls = time_rounds(rounds, [&] { loop_serial(a.data(), b.data(), m, 0.999); });
        summary lf = time_rounds(rounds, [&] { loop_fil(a.data(), b.data(), m, 0.999); });
        check(weft_finalize(), "weft_finalize");

        json_object rec = ctx.record();
        rec.add("workers", cfg.workers).add("fib_n", n).add("loop_m", m);
        rec.add_summary("fib_serial_s", fs).add_summary("fib_fil_s", ff);
        rec.add("fib_ratio", ff.median / fs.median).add("fib_speedup", fs.median / ff.median);
        rec.add_summary("loop_serial_s", ls).add_summary("loop_fil_s", lf);
        rec.add("loop_ratio", lf.median / ls.median);
        rec.add("forks", static_cast<unsigned long long>(st.forks))
            .add("forks_pruned", static_cast<unsigned long long>(st.forks_pruned))
            .add("steals", static_cast<unsigned long long>(st.steals));
        add_provenance(rec);
        ctx.emit(rec);
        t.add_row({w, fmt(fs.median, 4), fmt(ff.median, 4), fmt_ratio(ff.median / fs.median),
                   fmt_ratio(fs.median / ff.median), fmt(ls.median, 4), fmt(lf.median, 4),
                   fmt_ratio(lf.median / ls.median), fmt_sig(static_cast<double>(st.forks)),
                   fmt_sig(static_cast<double>(st.forks_pruned)), fmt_sig(static_cast<double>(st.steals))});
    }
    ctx.print(t, "filaments: fork at every call of fib, and a dense loop, against serial code");
    if (std::string w = build_warning(); !w.empty()) ctx.warn("%s", w.c_str());
    return 0;
}

registrar const reg{experiment{
    .name = "filaments",
    .description = "filaments: fib with a fork per call and a dense parallel_for against serial code",
    .details = "Times fib(--fib) as plain recursion and with weft::join at every call, and a dense loop\n"
               "over --loop doubles as a plain loop and in weft::parallel_for, at each --workers count.\n"
               "Figures: fib_serial_s, fib_fil_s, fib_ratio, fib_speedup, loop_serial_s, loop_fil_s,\n"
               "loop_ratio (medians over --rounds; each also _spread/_min/_max), forks, forks_pruned, steals.",
    .options =
        {
            {.name = "rounds", .kind = opt_kind::integer, .metavar = "N", .default_value = "7",
             .help = "timed rounds per figure (the median is reported)", .min = 1, .max = 1000},
            {.name = "fib", .kind = opt_kind::integer, .metavar = "N", .default_value = "30",
             .help = "fib argument", .min = 1, .max = 50},
            {.name = "loop", .kind = opt_kind::integer, .metavar = "M", .default_value = "4000000",
             .help = "elements of the dense loop", .min = 1, .max = 1e10},
            {.name = "workers", .kind = opt_kind::list, .metavar = "LIST", .default_value = "1,2",
             .help = "worker counts, comma-separated"},
        },
    .run = run,
}};

}  // namespace
}  // namespace weft::bench::filaments

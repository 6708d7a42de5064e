// Raw MPI ping-pong: the parent's side (pingpong.hpp).
#include "pingpong.hpp"

#include <cstdio>
#include <cstdlib>

#include "harness.hpp"
#include "mpi_launch.hpp"

namespace weft::bench::pingpong {

long iters_for(std::size_t bytes, long iters) {
    long n = iters;
    for (std::size_t b = 4096; b < bytes && n > 10; b *= 2) n /= 2;
    return n < 10 ? 10 : n;
}

std::vector<std::size_t> parse_sizes(std::string const& option, std::vector<std::string> const& items) {
    constexpr std::size_t max_bytes = std::size_t{64} << 20;
    std::vector<std::size_t> sizes;
    for (std::string const& item : items) {
        char* end = nullptr;
        unsigned long long v = std::strtoull(item.c_str(), &end, 10);
        if (end != item.c_str() && *end == 'K') v <<= 10, ++end;
        else if (end != item.c_str() && *end == 'M') v <<= 20, ++end;
        if (item.empty() || end == item.c_str() || *end != '\0' || item[0] == '-' || v < 1 || v > max_bytes)
            throw usage_error("--" + option + ": '" + item +
                              "' is not a byte count in [1, 64M] (an integer with an optional K or M suffix)");
        sizes.push_back(static_cast<std::size_t>(v));
    }
    return sizes;
}

std::vector<point> measure(std::string const& experiment, std::vector<std::size_t> const& sizes, int rounds,
                           long iters, std::vector<std::string> const& extra, char const* what) {
    std::string list;
    for (std::size_t b : sizes) {
        if (!list.empty()) list += ',';
        list += std::to_string(b);
    }
    std::vector<std::string> args = {experiment, "--mpi-child", "--sizes", list, "--rounds", std::to_string(rounds),
                                     "--iters", std::to_string(iters)};
    args.insert(args.end(), extra.begin(), extra.end());
    std::string const out = mpi::run(2, args, what);
    std::vector<point> points(sizes.size());
    for (std::size_t i = 0; i < sizes.size(); ++i) points[i].bytes = sizes[i];
    for (std::string const& line : mpi::lines_tagged(out, "pingpong")) {
        unsigned long long bytes = 0;
        int round = 0;
        double ns = 0;
        if (std::sscanf(line.c_str(), "%llu %d %lf", &bytes, &round, &ns) != 3) die("ping-pong child: bad line '%s'", line.c_str());
        for (point& p : points)
            if (p.bytes == bytes) p.half_rtt_ns.push_back(ns);
    }
    for (point const& p : points)
        if (static_cast<int>(p.half_rtt_ns.size()) != rounds)
            die("ping-pong child: %zu of %d rounds reported for %zu bytes; its output: %s", p.half_rtt_ns.size(),
                rounds, p.bytes, out.c_str());
    return points;
}

fit fit_alpha_beta(std::vector<point> const& points, std::size_t max_bytes) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    std::size_t n = 0;
    for (point const& p : points) {
        if (p.bytes > max_bytes) continue;
        double const x = static_cast<double>(p.bytes), y = summarize(p.half_rtt_ns).median;
        sx += x, sy += y, sxx += x * x, sxy += x * y, ++n;
    }
    fit f;
    f.points = n;
    if (n == 0) return f;
    double const den = static_cast<double>(n) * sxx - sx * sx;
    f.beta_ns_per_byte = den > 0 ? (static_cast<double>(n) * sxy - sx * sy) / den : 0;
    f.alpha_ns = (sy - f.beta_ns_per_byte * sx) / static_cast<double>(n);
    return f;
}

}  // namespace weft::bench::pingpong

// weft-bench harness — statistics over repeated rounds (harness/stats.hpp).
#include "harness/stats.hpp"

#include <algorithm>
#include <cmath>

namespace weft::bench {

double percentile(std::vector<double> const& sorted, double p) {
    if (sorted.empty()) return 0;
    if (p <= 0) return sorted.front();
    if (p >= 1) return sorted.back();
    double const pos = p * static_cast<double>(sorted.size() - 1);
    auto const lo = static_cast<std::size_t>(std::floor(pos));
    std::size_t const hi = std::min(lo + 1, sorted.size() - 1);
    double const frac = pos - static_cast<double>(lo);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

summary summarize(std::vector<double> samples) {
    summary s;
    if (samples.empty()) return s;
    std::sort(samples.begin(), samples.end());
    s.n = samples.size();
    s.min = samples.front();
    s.max = samples.back();
    s.median = percentile(samples, 0.5);
    s.p10 = percentile(samples, 0.1);
    s.p90 = percentile(samples, 0.9);
    s.spread = s.median != 0 ? (s.p90 - s.p10) / s.median : 0;
    return s;
}

double median(std::vector<double> samples) { return summarize(std::move(samples)).median; }

double median_of_ratios(std::vector<double> const& num, std::vector<double> const& den) {
    std::vector<double> ratios;
    for (std::size_t i = 0; i < num.size() && i < den.size(); ++i) ratios.push_back(num[i] / den[i]);
    return summarize(std::move(ratios)).median;
}

}  // namespace weft::bench

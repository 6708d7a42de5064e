// weft-bench harness — statistics over repeated rounds.
#pragma once

#include <cstddef>
#include <vector>

namespace weft::bench {

struct summary {
    double median = 0;
    double min = 0;
    double max = 0;
    double p10 = 0;
    double p90 = 0;
    double spread = 0;  // (p90 - p10) / median; 0 when median is 0
    std::size_t n = 0;
};

// Percentile p in [0, 1] of an ascending-sorted, non-empty sample, by linear
// interpolation between the closest ranks (numpy's default "linear" method).
double percentile(std::vector<double> const& sorted, double p);

// Summary of a sample (need not be sorted). An empty sample gives all zeros.
summary summarize(std::vector<double> samples);
// The median of a sample (need not be sorted); 0 for an empty one.
double median(std::vector<double> samples);
// The median over i of num[i] / den[i] (same length): the ratio of two
// versions measured in the same rounds, robust to a machine whose speed moves
// between rounds (a ratio of the two medians mixes rounds seconds apart).
double median_of_ratios(std::vector<double> const& num, std::vector<double> const& den);

}  // namespace weft::bench

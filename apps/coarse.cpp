// Exact comparison of a version's output with serial's (apps/coarse.hpp).
#include "apps/coarse.hpp"

namespace weft::apps {

std::string compare_exact(std::span<const double> mine, std::span<const double> serial, std::size_t cols,
                          const char* what) {
    if (mine.size() != serial.size())
        return std::string(what) + " has " + std::to_string(mine.size()) + " elements, serial's " +
               std::to_string(serial.size());
    std::size_t bad = 0, first = 0;
    for (std::size_t k = 0; k < mine.size(); ++k)
        if (!(mine[k] == serial[k]) && bad++ == 0) first = k;
    if (bad == 0) return {};
    return std::to_string(bad) + " of " + std::to_string(mine.size()) + " elements of " + what + " differ; first (" +
           std::to_string(first / cols) + ", " + std::to_string(first % cols) + ") = " + std::to_string(mine[first]) +
           ", serial gives " + std::to_string(serial[first]);
}

}  // namespace weft::apps

// weft::detail — the runtime's own measurements (weft_stats_get, WEFT_STATS=1).
#pragma once

#include <cstdio>

namespace weft::detail {
void print_stats(std::FILE* out);
}

// weft::detail — the runtime's own measurements (weft_stats_get, WEFT_STATS=1).
#pragma once

#include <cstdio>

#include "weft/weft.h"

namespace weft::detail {
void print_stats(std::FILE* out);

// The heap's counters, kept by the layer above that owns weft_malloc
// (src/mem/quota_alloc.cpp defines them): weft_stats_get adds them, and
// weft_stats_reset resets them, without the core including that layer.
void heap_add_stats(weft_stats_t* out);
void heap_reset_stats();
// What the heap figure counts, for WEFT_STATS: "weft_malloc", or "malloc"
// when libweft-pthread counts every allocation of the program.
extern const char* heap_source;
}  // namespace weft::detail

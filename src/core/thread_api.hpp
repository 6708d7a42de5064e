// weft::detail — what the C API for threads (thread_api.cpp) offers the layers
// above beside weft.h's functions.
#pragma once

#include <weft/weft.h>

namespace weft::detail {

// weft_thread_create, with `tp` as the new ult's own thread pointer
// (core/thread_pointer.hpp) from its first instruction on: the switch to it
// installs it. Beside weft_thread_create so that both inline the one create path.
int create_with_thread_pointer(weft_thread_t* thread, const weft_attr_t* attr, void* (*fn)(void*), void* arg, void* tp);

}  // namespace weft::detail

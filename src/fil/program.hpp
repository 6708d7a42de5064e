// weft::detail::fil — the paper's implicit program: what weft_fil_start runs.
#pragma once

#include <cstddef>

#include "weft/weft.h"

namespace weft::detail::fil {

// Records a fork made outside any region as a root of the calling thread's
// next weft_fil_start. 0 or ENOMEM.
int program_add_root(weft_fil_fork_fn fn, const void* args, std::size_t size, void* result);
// Lists / unlists a pool set for the calling thread's weft_fil_start.
int program_add_set(weft_fil_poolset_t ps);
void program_remove_set(weft_fil_poolset_t ps);

}  // namespace weft::detail::fil

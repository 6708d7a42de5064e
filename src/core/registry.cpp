#include "core/registry.hpp"

// The bounds of the section weft_registrations, which the linker defines in
// the program or shared library that holds WEFT_REGISTER entries (weak: a
// link with none, such as a fuzz target built from a few sources, has an
// empty table).
extern "C" {
extern weft::detail::registration_fn __start_weft_registrations[] __attribute__((weak, visibility("hidden")));
extern weft::detail::registration_fn __stop_weft_registrations[] __attribute__((weak, visibility("hidden")));
}

namespace weft::detail {

void link_static_registrations() {
    // A function-local static: initialized once, and a concurrent first
    // lookup waits for it. The entries call registry<Def>::add, never a
    // lookup, so this never re-enters itself.
    static const bool linked = [] {
        for (registration_fn* entry = __start_weft_registrations; entry != __stop_weft_registrations; ++entry)
            (*entry)();
        return true;
    }();
    (void)linked;
}

}  // namespace weft::detail

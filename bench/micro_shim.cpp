// weft-bench micro: shim_create_join, a pthread_create + pthread_join pair of
// a plain Pthreads program (bench/plain_pthreads/create_join.c) run under
// libweft-pthread, measured in the same run as weft's own create_join. The
// program is a child process started from the measuring thread, so it
// inherits that thread's one-CPU affinity; it runs with WEFT_WORKERS=1 (as
// create_join has one worker), warms up its stacks with a tenth of the pairs,
// then times the rest itself. Process start-up is outside the figure.
// Registered only where the shim is built and usable (not in sanitizer builds:
// docs/shim.md, "With sanitizers").
#include <cstdlib>
#include <string>
#include <string_view>

#include <sys/wait.h>

#include "harness.hpp"
#include "micro.hpp"

#ifdef WEFT_SHIM_LIBRARY
namespace weft::bench::micro {
namespace {

op_result shim_create_join(std::uint64_t n, int) {
    std::vector<std::string> const env = {std::string("LD_PRELOAD=") + WEFT_SHIM_LIBRARY, "WEFT_WORKERS=1",
                                          "WEFT_STATS", "WEFT_TRACE"};
    int status = 0;
    std::string const out = run_piped(WEFT_SHIM_CREATE_JOIN, {WEFT_SHIM_CREATE_JOIN, std::to_string(n)}, env, &status);
    unsigned long long ops = 0;
    double elapsed_ns = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        std::sscanf(out.c_str(), "ops=%llu elapsed_ns=%lf", &ops, &elapsed_ns) != 2 || ops != n)
        return {0, 0,
                "shim create_join: " + std::string(WEFT_SHIM_CREATE_JOIN) + " under the shim failed (output '" + out +
                    "')"};
    return {elapsed_ns, ops, {}};
}

struct register_shim_ops {
    register_shim_ops() {
        if (!std::string_view(WEFT_BUILD_SANITIZE).empty()) return;
        op_registrar{micro_op{.id = "shim_create_join",
                              .kind = "create_join",
                              .family = "shim",
                              .unit = "create+join",
                              .order = 0,
                              .paired_with = "create_join",
                              .run = &shim_create_join}};
    }
} const shim_ops;

}  // namespace
}  // namespace weft::bench::micro
#endif

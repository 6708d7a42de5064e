// The integration binary: GoogleTest's main, unless WEFT_TEST_SCENARIO names a
// child scenario. The process-level tests (process_test.cpp) re-execute this
// binary (/proc/self/exe) with WEFT_TEST_SCENARIO=<name> and whatever WEFT_*
// variables the case needs, then check the child's stderr and how it ended
// (the pattern of rayon's tests/stack_overflow_crash.rs). A scenario is a
// plain program: it never returns to GoogleTest.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "integration/scenarios.hpp"

int main(int argc, char** argv) {
    if (const char* name = std::getenv("WEFT_TEST_SCENARIO"); name != nullptr && *name != '\0') {
        for (const auto& s : weft_it::scenarios())
            if (std::strcmp(s.name, name) == 0) return s.run();
        std::fprintf(stderr, "unknown scenario '%s'\n", name);
        return 99;
    }
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}

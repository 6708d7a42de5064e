// Child scenarios of the integration binary (see main.cpp). Each is a small
// weft program that ends the process in a way the parent test checks: a
// stack overflow, a deadlock report, an exit status, statistics at exit.
#pragma once

#include <vector>

namespace weft_it {

struct scenario {
    const char* name;
    int (*run)();  // returns the process exit status (if it returns at all)
};

const std::vector<scenario>& scenarios();

}  // namespace weft_it

// hello.cpp — the C++ API: spawn returns a task whose join() gives the value
// (or rethrows what the thread threw). Divide and conquer with a thread per call.
#include <cstdio>
#include <stdexcept>
#include <weft/weft.hpp>

long fib(long n) {
    if (n < 20) return n < 2 ? n : fib(n - 1) + fib(n - 2);
    auto left = weft::spawn(fib, n - 1);  // runs concurrently with the call below
    long right = fib(n - 2);
    return left.join() + right;
}

int main() {
    weft::runtime rt;  // optional: without it, the first weft call starts the runtime
    long v = fib(30);
    std::printf("fib(30) = %ld on %d workers\n", v, weft_num_workers());

    auto failing = weft::spawn([] { throw std::runtime_error("thrown in a weft thread"); });
    try {
        failing.join();
    } catch (const std::exception& e) {
        std::printf("join rethrew: %s\n", e.what());
    }
    return v == 832040 ? 0 : 1;
}

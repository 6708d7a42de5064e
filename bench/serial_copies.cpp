// weft-bench — W copies of a serial program at once (serial_copies.hpp).
#include "serial_copies.hpp"

#include <utility>

#include "harness.hpp"

namespace weft::bench {

serial_copies::serial_copies(int copies, std::function<void(int)> run)
    : run_(std::move(run)), start_(copies), finish_(copies) {
    for (int i = 1; i < copies; ++i)
        others_.emplace_back([this, i] {
            for (;;) {
                start_.arrive_and_wait();
                if (stop_) return;
                run_(i);
                finish_.arrive_and_wait();
            }
        });
}

serial_copies::~serial_copies() {
    stop_ = true;
    start_.arrive_and_wait();
    for (std::thread& t : others_) t.join();
}

double serial_copies::round() {
    std::uint64_t const t0 = now_ns();
    start_.arrive_and_wait();
    run_(0);
    finish_.arrive_and_wait();
    return static_cast<double>(now_ns() - t0) / 1e9;
}

}  // namespace weft::bench

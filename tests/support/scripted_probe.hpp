// A load probe (src/adapt/probe.hpp) whose readings and toe-test answers the
// test gives, one per call, and which records what try_more was asked: to
// drive the adaptive controller's decisions (controller::step) without a
// machine's load. Internal headers: for the tests that link weft_internal.
#pragma once

#include <deque>
#include <vector>

#include "adapt/probe.hpp"

namespace wt {

class scripted_probe final : public weft::detail::adapt::probe {
public:
    std::deque<weft::detail::adapt::reading> readings;
    std::deque<bool> toe_answers;
    std::vector<int> toe_asked;
    const char* name() const override { return "scripted"; }
    weft::detail::adapt::reading read(weft::detail::runtime*, int) override {
        if (readings.empty()) return {};
        weft::detail::adapt::reading r = readings.front();
        readings.pop_front();
        return r;
    }
    bool try_more(weft::detail::runtime*, int n) override {
        toe_asked.push_back(n);
        if (toe_answers.empty()) return false;
        bool a = toe_answers.front();
        toe_answers.pop_front();
        return a;
    }
};

inline constexpr weft::detail::adapt::reading bad_reading{true, false};
inline constexpr weft::detail::adapt::reading good_reading{false, false};

}  // namespace wt

// The filaments' hunger word (include/weft/detail/fil_hunger.hpp): the count
// and the biases share one word without disturbing each other, and the inline
// pruning test's two cases (0, or exactly the counting bias) are the only
// values that mean "nobody wants a fork".
#include <gtest/gtest.h>

#include "weft/detail/fil_hunger.hpp"

namespace {

using weft::detail::hunger_word;

TEST(FilHunger, count_ignores_the_biases) {
    hunger_word h;
    EXPECT_EQ(h.load(), 0);
    h.set(hunger_word::counting);
    h.set(hunger_word::ready);
    h.set(hunger_word::no_pruning);
    EXPECT_EQ(h.count(), 0);
    h.add(3);
    h.add(-1);
    EXPECT_EQ(h.count(), 2);
    h.clear(hunger_word::ready);
    EXPECT_EQ(h.count(), 2);
    EXPECT_EQ(h.load(), hunger_word::counting + hunger_word::no_pruning + 2);
}

TEST(FilHunger, only_the_counting_bias_still_prunes) {
    hunger_word h;
    h.set(hunger_word::counting);
    EXPECT_EQ(h.load(), hunger_word::counting);  // pruned, and counted
    h.set(hunger_word::ready);
    EXPECT_NE(h.load(), hunger_word::counting);  // the owner's list wants its ready job
    h.clear(hunger_word::ready);
    h.add(1);
    EXPECT_NE(h.load(), hunger_word::counting);  // a hungry participant
    h.add(-1);
    EXPECT_EQ(h.load(), hunger_word::counting);
}

TEST(FilHunger, a_full_count_stays_below_the_biases) {
    hunger_word h;
    h.add(hunger_word::count_mask);
    EXPECT_EQ(h.count(), hunger_word::count_mask);
    EXPECT_EQ(h.load() & hunger_word::counting, 0);
}

}  // namespace

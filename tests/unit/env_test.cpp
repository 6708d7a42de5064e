// Class: negative, requirement. Every WEFT_* variable of docs/env.md, and every
// field of weft_config_t: a bad value makes weft_init return EINVAL after a
// stderr line naming the variable, the value and what is valid; good values
// (every documented spelling) are accepted. Exit-at-implicit-start is covered by
// tests/integration (it ends the process).
#include <cerrno>
#include <string>
#include <tuple>

#include "support/weft_test.hpp"

namespace {

class Env : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_EQ(weft_is_initialized(), 0); }
    void TearDown() override {
        if (weft_is_initialized() != 0) weft_finalize();
    }
    // weft_init(cfg) with var=value set; returns rc and captures stderr.
    int init_with(const char* var, const char* value, const weft_config_t* cfg, std::string* err) {
        wt::scoped_env e(var, value);
        ::testing::internal::CaptureStderr();
        int rc = weft_init(cfg);
        *err = ::testing::internal::GetCapturedStderr();
        return rc;
    }
    wt::watchdog dog_{wt::default_test_limit(), "Env test"};
};

struct bad_value {
    const char* var;
    const char* value;
    const char* valid_hint;  // a word the message's list of valid values contains
};

class EnvBadValue : public Env, public ::testing::WithParamInterface<bad_value> {};

TEST_P(EnvBadValue, init_fails_with_einval_and_names_the_variable) {
    const bad_value& p = GetParam();
    // Keep the other variables sane so that only `var` can be at fault.
    wt::scoped_env w("WEFT_WORKERS", std::string(p.var) == "WEFT_WORKERS" ? p.value : "1");
    std::string err;
    int rc = init_with(p.var, p.value, nullptr, &err);
    EXPECT_EQ(rc, EINVAL) << p.var << "='" << p.value << "'";
    EXPECT_EQ(weft_is_initialized(), 0);
    EXPECT_TRUE(wt::contains(err, std::string(p.var) + "='" + p.value + "'"));
    EXPECT_TRUE(wt::contains(err, "invalid"));
    EXPECT_TRUE(wt::contains(err, p.valid_hint));
}

const bad_value kBadValues[] = {
    {"WEFT_WORKERS", "zero", "1 to 1024"},
    {"WEFT_WORKERS", "0", "1 to 1024"},
    {"WEFT_WORKERS", "-2", "1 to 1024"},
    {"WEFT_WORKERS", "1025", "1 to 1024"},
    {"WEFT_WORKERS", "", "1 to 1024"},
    {"WEFT_WORKERS", "2x", "1 to 1024"},
    {"WEFT_WORKERS", "99999999999999999999999", "1 to 1024"},
    {"WEFT_SCHED", "roundrobin", "fifo"},
    {"WEFT_SCHED", "", "lifo"},
    {"WEFT_SCHED", "fifo ", "fifo"},
    {"WEFT_STACK_SIZE", "abc", "16384"},
    {"WEFT_STACK_SIZE", "", "16384"},
    {"WEFT_STACK_SIZE", "16383", "16384"},
    {"WEFT_STACK_SIZE", "8K", "16384"},
    {"WEFT_STACK_SIZE", "2G", "1GiB"},
    {"WEFT_STACK_SIZE", "1073741825", "1GiB"},
    {"WEFT_STACK_SIZE", "64Q", "suffix"},
    {"WEFT_STACK_SIZE", "-64K", "16384"},
    {"WEFT_STACK_SIZE", "64K ", "suffix"},
    {"WEFT_STACK_SIZE", "99999999999999999999G", "16384"},
    {"WEFT_STATS", "yes", "0 or 1"},
    {"WEFT_STATS", "2", "0 or 1"},
    {"WEFT_DEADLOCK", "maybe", "abort or off"},
    {"WEFT_DEADLOCK", "", "abort or off"},
    {"WEFT_DEADLOCK", "ABORT", "abort or off"},
};

std::string bad_name(const ::testing::TestParamInfo<bad_value>& info) {
    std::string s = std::string(info.param.var).substr(5) + "_" + std::to_string(info.index);
    return s;
}

INSTANTIATE_TEST_SUITE_P(All, EnvBadValue, ::testing::ValuesIn(kBadValues), bad_name);

// --- good values ----------------------------------------------------------------

TEST_F(Env, workers_accepts_range) {
    for (const char* v : {"1", "2", "7"}) {
        std::string err;
        ASSERT_EQ(init_with("WEFT_WORKERS", v, nullptr, &err), 0) << v << ": " << err;
        EXPECT_EQ(weft_num_workers(), std::stoi(v));
        EXPECT_EQ(err, "");
        ASSERT_EQ(weft_finalize(), 0);
    }
}

TEST_F(Env, sched_accepts_fifo_and_lifo) {
    wt::scoped_env w("WEFT_WORKERS", "1");
    for (const char* v : {"fifo", "lifo"}) {
        std::string err;
        ASSERT_EQ(init_with("WEFT_SCHED", v, nullptr, &err), 0) << v << ": " << err;
        EXPECT_STREQ(weft_sched_name(), v);
        ASSERT_EQ(weft_finalize(), 0);
    }
}

TEST_F(Env, stack_size_accepts_documented_suffixes) {
    wt::scoped_env w("WEFT_WORKERS", "1");
    const std::pair<const char*, size_t> cases[] = {
        {"65536", 65536},
        {"16384", 16384},
        {"64K", 64 << 10},
        {"64k", 64 << 10},
        {"64KiB", 64 << 10},
        {"64kib", 64 << 10},
        {"1M", 1 << 20},
        {"1m", 1 << 20},
        {"1MiB", 1 << 20},
        {"2MIB", 2 << 20},
        {"1G", size_t(1) << 30},
        {"1GiB", size_t(1) << 30},
        {"1073741824", size_t(1) << 30},
    };
    for (const auto& [text, bytes] : cases) {
        std::string err;
        ASSERT_EQ(init_with("WEFT_STACK_SIZE", text, nullptr, &err), 0) << text << ": " << err;
        weft_attr_t attr;
        weft_attr_init(&attr);
        size_t got = 0;
        EXPECT_EQ(weft_attr_getstacksize(&attr, &got), 0);
        EXPECT_EQ(got, bytes) << text;
        ASSERT_EQ(weft_finalize(), 0);
    }
}

TEST_F(Env, stack_size_is_used_by_threads) {
    wt::scoped_env w("WEFT_WORKERS", "1");
    std::string err;
    ASSERT_EQ(init_with("WEFT_STACK_SIZE", "512K", nullptr, &err), 0) << err;
    // A thread may use most of a 512 KiB stack (the default 64 KiB would overflow).
    int ok = 0;
    weft_thread_t t = wt::go([&] {
        volatile char big[384 * 1024];
        for (size_t i = 0; i < sizeof big; i += 4096) big[i] = 1;
        ok = big[4096];
    });
    wt::join(t);
    EXPECT_EQ(ok, 1);
}

TEST_F(Env, stats_accepts_documented_spellings) {
    wt::scoped_env w("WEFT_WORKERS", "1");
    for (const char* v : {"1", "on", "true", "0", "off", "false", ""}) {
        std::string err;
        ASSERT_EQ(init_with("WEFT_STATS", v, nullptr, &err), 0) << "'" << v << "': " << err;
        // Statistics (if asked) print at finalize: keep them out of the test log.
        ::testing::internal::CaptureStderr();
        ASSERT_EQ(weft_finalize(), 0);
        std::string out = ::testing::internal::GetCapturedStderr();
        bool on = std::string(v) == "1" || std::string(v) == "on" || std::string(v) == "true";
        EXPECT_EQ(out.find("weft statistics") != std::string::npos, on) << "WEFT_STATS='" << v << "'";
    }
}

TEST_F(Env, deadlock_accepts_abort_and_off) {
    wt::scoped_env w("WEFT_WORKERS", "1");
    for (const char* v : {"abort", "off"}) {
        std::string err;
        ASSERT_EQ(init_with("WEFT_DEADLOCK", v, nullptr, &err), 0) << v << ": " << err;
        ASSERT_EQ(weft_finalize(), 0);
    }
}

TEST_F(Env, unset_variables_take_defaults) {
    wt::scoped_env a("WEFT_WORKERS", nullptr), b("WEFT_SCHED", nullptr), c("WEFT_STACK_SIZE", nullptr),
        d("WEFT_STATS", nullptr), e("WEFT_DEADLOCK", nullptr);
    ASSERT_EQ(weft_init(nullptr), 0);
    EXPECT_STREQ(weft_sched_name(), "ws");
    EXPECT_GE(weft_num_workers(), 1);
}

TEST_F(Env, config_value_wins_over_bad_environment) {
    // A field set in weft_config_t takes precedence: the variable is not read.
    wt::scoped_env a("WEFT_WORKERS", "zero"), b("WEFT_SCHED", "nope"), c("WEFT_STACK_SIZE", "tiny");
    weft_config_t cfg = wt::config(2, "lifo", 65536);
    ::testing::internal::CaptureStderr();
    int rc = weft_init(&cfg);
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(rc, 0) << err;
    EXPECT_EQ(err, "");
}

// --- bad weft_config_t fields ------------------------------------------------------

struct bad_cfg {
    weft_config_t cfg;
    const char* field;
};

class EnvBadConfig : public Env, public ::testing::WithParamInterface<bad_cfg> {};

TEST_P(EnvBadConfig, init_fails_with_einval_and_names_the_field) {
    ::testing::internal::CaptureStderr();
    int rc = weft_init(&GetParam().cfg);
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(rc, EINVAL);
    EXPECT_EQ(weft_is_initialized(), 0);
    EXPECT_TRUE(wt::contains(err, GetParam().field));
    EXPECT_TRUE(wt::contains(err, "invalid"));
}

const bad_cfg kBadConfigs[] = {
    {wt::config(-1, nullptr, 0), "weft_config_t.workers"},
    {wt::config(1025, nullptr, 0), "weft_config_t.workers"},
    {wt::config(1, "nope", 0), "weft_config_t.sched"},
    {wt::config(1, "", 0), "weft_config_t.sched"},
    {wt::config(1, nullptr, 100), "weft_config_t.stack_size"},
    {wt::config(1, nullptr, WEFT_STACK_MIN - 1), "weft_config_t.stack_size"},
    {wt::config(1, nullptr, (size_t(1) << 30) + 1), "weft_config_t.stack_size"},
};

INSTANTIATE_TEST_SUITE_P(All, EnvBadConfig, ::testing::ValuesIn(kBadConfigs));

}  // namespace

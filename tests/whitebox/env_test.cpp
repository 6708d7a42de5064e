// Class: negative, requirement. The one rule for WEFT_* values (docs/env.md, "How
// a value is read"; src/core/env.hpp) and weft_config_t's precedence over them.
//
// EnvTable holds, for every variable the runtime reads, its accepted forms with
// the setting each gives, and its rejected forms; a rejected form must print
// exactly "weft: NAME='VALUE' is invalid: expected VALID\n", VALID being written
// out below once per variable. The table runs through the parser
// (read_settings) for every row (EnvTable) and through weft_init for every
// rejected row (EnvRejected); the Env tests start the runtime with accepted ones.
// Exit-at-implicit-start is covered by tests/integration (it ends the process).
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/env.hpp"
#include "support/weft_test.hpp"

namespace {

const char* const kVariables[] = {"WEFT_WORKERS",  "WEFT_SCHED",          "WEFT_STACK_SIZE", "WEFT_QUOTA",
                                  "WEFT_STATS",    "WEFT_DEADLOCK",       "WEFT_TRACE",      "WEFT_WS_YIELD",
                                  "WEFT_ADAPT",    "WEFT_ADAPT_INTERVAL", "WEFT_BUDGET",     "WEFT_MPI_THREAD",
                                  "WEFT_NET_PEER_TIMEOUT"};

// What each variable's error message lists as valid.
std::string valid_values(const std::string& var) {
    const std::string sizes = ": digits with an optional suffix K, KiB, M, MiB, G or GiB (e.g. 64K)";
    if (var == "WEFT_WORKERS") return "an integer from 1 to 1024";
    if (var == "WEFT_SCHED") return "one of dfs, fifo, lifo, ws";
    if (var == "WEFT_STACK_SIZE") return "a size from 16K to 1G" + sizes;
    if (var == "WEFT_QUOTA") return "a size from 1K to 1024G" + sizes;
    if (var == "WEFT_STATS") return "one of 1, on, true, 0, off, false";
    if (var == "WEFT_DEADLOCK") return "one of abort, off";
    if (var == "WEFT_WS_YIELD") return "one of 1, on, true, 0, off, false";
    if (var == "WEFT_ADAPT") return "one of asat, schedstat, off";
    if (var == "WEFT_ADAPT_INTERVAL") return "a number of milliseconds from 10 to 60000";
    if (var == "WEFT_BUDGET") return "off, or a shared-memory name: '/' then 1 to 250 characters, no other '/'";
    if (var == "WEFT_MPI_THREAD") return "one of funneled, multiple";
    if (var == "WEFT_NET_PEER_TIMEOUT") return "a number of milliseconds from 100 to 86400000, or off";
    return "(no message: " + var + " has no invalid value at parse time)";
}

// The setting a variable controls, as a string.
std::string setting_of(const std::string& var, const weft::detail::settings& s) {
    if (var == "WEFT_WORKERS") return std::to_string(s.workers);
    if (var == "WEFT_SCHED") return s.sched;
    if (var == "WEFT_STACK_SIZE") return std::to_string(s.stack_size);
    if (var == "WEFT_QUOTA") return std::to_string(s.quota);
    if (var == "WEFT_STATS") return s.stats ? "on" : "off";
    if (var == "WEFT_DEADLOCK") return s.deadlock_abort ? "abort" : "off";
    if (var == "WEFT_TRACE") return s.trace_path.empty() ? "no trace" : "trace to '" + s.trace_path + "'";
    if (var == "WEFT_WS_YIELD") return s.ws_yield ? "yield" : "no yield";
    if (var == "WEFT_ADAPT") return s.adapt;
    if (var == "WEFT_ADAPT_INTERVAL") return std::to_string(s.adapt_interval_ms);
    if (var == "WEFT_BUDGET") return s.budget_name.empty() ? "per-user budget" : s.budget_name;
    if (var == "WEFT_MPI_THREAD") return s.mpi_thread_multiple ? "multiple" : "funneled";
    if (var == "WEFT_NET_PEER_TIMEOUT") return s.peer_timeout_ns == 0 ? "off" : std::to_string(s.peer_timeout_ns);
    return "?";
}

constexpr const char* kUnset = nullptr;
constexpr const char* kRejected = nullptr;
constexpr const char* kCpus = "<usable cpus>";  // WEFT_WORKERS's default, known at run time

struct env_case {
    const char* var;
    const char* value;    // kUnset: the variable is not in the environment
    const char* setting;  // what it gives, or kRejected
};

std::ostream& operator<<(std::ostream& os, const env_case& c) {
    return os << c.var << (c.value == kUnset ? std::string(" unset") : "='" + std::string(c.value) + "'");
}

const env_case kTable[] = {
    // WEFT_WORKERS: digits only, 1..1024.
    {"WEFT_WORKERS", "1", "1"},
    {"WEFT_WORKERS", "2", "2"},
    {"WEFT_WORKERS", "007", "7"},
    {"WEFT_WORKERS", "1024", "1024"},
    {"WEFT_WORKERS", kUnset, kCpus},
    {"WEFT_WORKERS", "", kCpus},
    {"WEFT_WORKERS", "0", kRejected},
    {"WEFT_WORKERS", "1025", kRejected},
    {"WEFT_WORKERS", "zero", kRejected},
    {"WEFT_WORKERS", "-2", kRejected},
    {"WEFT_WORKERS", "+2", kRejected},
    {"WEFT_WORKERS", " 2", kRejected},
    {"WEFT_WORKERS", "2 ", kRejected},
    {"WEFT_WORKERS", "\t2", kRejected},
    {"WEFT_WORKERS", "2x", kRejected},
    {"WEFT_WORKERS", "0x10", kRejected},
    {"WEFT_WORKERS", "2.0", kRejected},
    {"WEFT_WORKERS", "99999999999999999999999", kRejected},
    // WEFT_SCHED: a registered policy, any case.
    {"WEFT_SCHED", "fifo", "fifo"},
    {"WEFT_SCHED", "lifo", "lifo"},
    {"WEFT_SCHED", "dfs", "dfs"},
    {"WEFT_SCHED", "ws", "ws"},
    {"WEFT_SCHED", "WS", "ws"},
    {"WEFT_SCHED", "Fifo", "fifo"},
    {"WEFT_SCHED", "DFS", "dfs"},
    {"WEFT_SCHED", kUnset, "ws"},
    {"WEFT_SCHED", "", "ws"},
    {"WEFT_SCHED", "roundrobin", kRejected},
    {"WEFT_SCHED", "fifo ", kRejected},
    {"WEFT_SCHED", " ws", kRejected},
    {"WEFT_SCHED", "w s", kRejected},
    {"WEFT_SCHED", "ws,fifo", kRejected},
    // WEFT_STACK_SIZE: a size from 16K to 1G.
    {"WEFT_STACK_SIZE", "65536", "65536"},
    {"WEFT_STACK_SIZE", "16384", "16384"},
    {"WEFT_STACK_SIZE", "64K", "65536"},
    {"WEFT_STACK_SIZE", "64k", "65536"},
    {"WEFT_STACK_SIZE", "64KiB", "65536"},
    {"WEFT_STACK_SIZE", "64kib", "65536"},
    {"WEFT_STACK_SIZE", "64KIB", "65536"},
    {"WEFT_STACK_SIZE", "1M", "1048576"},
    {"WEFT_STACK_SIZE", "1m", "1048576"},
    {"WEFT_STACK_SIZE", "1MiB", "1048576"},
    {"WEFT_STACK_SIZE", "2MIB", "2097152"},
    {"WEFT_STACK_SIZE", "1G", "1073741824"},
    {"WEFT_STACK_SIZE", "1gib", "1073741824"},
    {"WEFT_STACK_SIZE", "1073741824", "1073741824"},
    {"WEFT_STACK_SIZE", "0016K", "16384"},
    {"WEFT_STACK_SIZE", kUnset, "65536"},
    {"WEFT_STACK_SIZE", "", "65536"},
    {"WEFT_STACK_SIZE", "abc", kRejected},
    {"WEFT_STACK_SIZE", "0", kRejected},
    {"WEFT_STACK_SIZE", "16383", kRejected},
    {"WEFT_STACK_SIZE", "8K", kRejected},
    {"WEFT_STACK_SIZE", "2G", kRejected},
    {"WEFT_STACK_SIZE", "1073741825", kRejected},
    {"WEFT_STACK_SIZE", "64Q", kRejected},
    {"WEFT_STACK_SIZE", "64KB", kRejected},
    {"WEFT_STACK_SIZE", "64kb", kRejected},
    {"WEFT_STACK_SIZE", "65536B", kRejected},
    {"WEFT_STACK_SIZE", "K", kRejected},
    {"WEFT_STACK_SIZE", "1.5M", kRejected},
    {"WEFT_STACK_SIZE", "0x10000", kRejected},
    {"WEFT_STACK_SIZE", "-64K", kRejected},
    {"WEFT_STACK_SIZE", "+64K", kRejected},
    {"WEFT_STACK_SIZE", " 64K", kRejected},
    {"WEFT_STACK_SIZE", "64K ", kRejected},
    {"WEFT_STACK_SIZE", "64 K", kRejected},
    {"WEFT_STACK_SIZE", "99999999999999999999G", kRejected},
    {"WEFT_STACK_SIZE", "17179869184G", kRejected},  // 2^34 G: overflows 64 bits
    // WEFT_QUOTA: a size from 1K to 1024G.
    {"WEFT_QUOTA", "1024", "1024"},
    {"WEFT_QUOTA", "1K", "1024"},
    {"WEFT_QUOTA", "256k", "262144"},
    {"WEFT_QUOTA", "1MiB", "1048576"},
    {"WEFT_QUOTA", "1024G", "1099511627776"},
    {"WEFT_QUOTA", kUnset, "262144"},
    {"WEFT_QUOTA", "", "262144"},
    {"WEFT_QUOTA", "1023", kRejected},
    {"WEFT_QUOTA", "1025G", kRejected},
    {"WEFT_QUOTA", "64KB", kRejected},
    {"WEFT_QUOTA", "512K ", kRejected},
    {"WEFT_QUOTA", "abc", kRejected},
    {"WEFT_QUOTA", "-1K", kRejected},
    // WEFT_STATS: on/off words, any case.
    {"WEFT_STATS", "1", "on"},
    {"WEFT_STATS", "on", "on"},
    {"WEFT_STATS", "true", "on"},
    {"WEFT_STATS", "TRUE", "on"},
    {"WEFT_STATS", "On", "on"},
    {"WEFT_STATS", "0", "off"},
    {"WEFT_STATS", "off", "off"},
    {"WEFT_STATS", "false", "off"},
    {"WEFT_STATS", "OFF", "off"},
    {"WEFT_STATS", "False", "off"},
    {"WEFT_STATS", kUnset, "off"},
    {"WEFT_STATS", "", "off"},
    {"WEFT_STATS", "yes", kRejected},
    {"WEFT_STATS", "no", kRejected},
    {"WEFT_STATS", "2", kRejected},
    {"WEFT_STATS", " 1", kRejected},
    {"WEFT_STATS", "1 ", kRejected},
    {"WEFT_STATS", "enable", kRejected},
    // WEFT_MPI_THREAD: checked at weft_init whatever the transport (the mpi
    // transport reads it again when a job starts).
    {"WEFT_MPI_THREAD", "funneled", "funneled"},
    {"WEFT_MPI_THREAD", "MULTIPLE", "multiple"},
    {"WEFT_MPI_THREAD", kUnset, "funneled"},
    {"WEFT_MPI_THREAD", "serialized", kRejected},
    {"WEFT_MPI_THREAD", "multiple ", kRejected},
    // WEFT_NET_PEER_TIMEOUT: milliseconds 100..86400000 or off (ns here).
    {"WEFT_NET_PEER_TIMEOUT", kUnset, "30000000000"},
    {"WEFT_NET_PEER_TIMEOUT", "100", "100000000"},
    {"WEFT_NET_PEER_TIMEOUT", "86400000", "86400000000000"},
    {"WEFT_NET_PEER_TIMEOUT", "Off", "off"},
    {"WEFT_NET_PEER_TIMEOUT", "99", kRejected},
    {"WEFT_NET_PEER_TIMEOUT", "86400001", kRejected},
    {"WEFT_NET_PEER_TIMEOUT", "0", kRejected},
    {"WEFT_NET_PEER_TIMEOUT", "1s", kRejected},
    // WEFT_DEADLOCK: abort or off, any case.
    {"WEFT_DEADLOCK", "abort", "abort"},
    {"WEFT_DEADLOCK", "off", "off"},
    {"WEFT_DEADLOCK", "ABORT", "abort"},
    {"WEFT_DEADLOCK", "Off", "off"},
    {"WEFT_DEADLOCK", kUnset, "abort"},
    {"WEFT_DEADLOCK", "", "abort"},
    {"WEFT_DEADLOCK", "maybe", kRejected},
    {"WEFT_DEADLOCK", "0", kRejected},
    {"WEFT_DEADLOCK", " off", kRejected},
    {"WEFT_DEADLOCK", "abort ", kRejected},
    // WEFT_TRACE: a path, taken as written (whether it opens is checked at start:
    // TraceFile tests).
    {"WEFT_TRACE", "/tmp/weft-trace.json", "trace to '/tmp/weft-trace.json'"},
    {"WEFT_TRACE", " trace.json", "trace to ' trace.json'"},
    {"WEFT_TRACE", kUnset, "no trace"},
    {"WEFT_TRACE", "", "no trace"},
    // WEFT_WS_YIELD: on/off words, any case (for experiments: weft-bench oversub).
    {"WEFT_WS_YIELD", "on", "yield"},
    {"WEFT_WS_YIELD", "1", "yield"},
    {"WEFT_WS_YIELD", "TRUE", "yield"},
    {"WEFT_WS_YIELD", "off", "no yield"},
    {"WEFT_WS_YIELD", "Off", "no yield"},
    {"WEFT_WS_YIELD", "0", "no yield"},
    {"WEFT_WS_YIELD", "false", "no yield"},
    {"WEFT_WS_YIELD", kUnset, "yield"},
    {"WEFT_WS_YIELD", "", "yield"},
    {"WEFT_WS_YIELD", "no", kRejected},
    {"WEFT_WS_YIELD", "pause", kRejected},
    {"WEFT_WS_YIELD", "off ", kRejected},
    {"WEFT_WS_YIELD", " on", kRejected},
    // WEFT_ADAPT: a probe name or off, any case (src/adapt).
    {"WEFT_ADAPT", kUnset, "schedstat"},
    {"WEFT_ADAPT", "", "schedstat"},
    {"WEFT_ADAPT", "schedstat", "schedstat"},
    {"WEFT_ADAPT", "ASAT", "asat"},
    {"WEFT_ADAPT", "off", "off"},
    {"WEFT_ADAPT", "on", kRejected},
    {"WEFT_ADAPT", "psi", kRejected},
    {"WEFT_ADAPT", "asat ", kRejected},
    // WEFT_ADAPT_INTERVAL: milliseconds, 10..60000 (0: the mode's default).
    {"WEFT_ADAPT_INTERVAL", kUnset, "0"},
    {"WEFT_ADAPT_INTERVAL", "10", "10"},
    {"WEFT_ADAPT_INTERVAL", "1000", "1000"},
    {"WEFT_ADAPT_INTERVAL", "60000", "60000"},
    {"WEFT_ADAPT_INTERVAL", "9", kRejected},
    {"WEFT_ADAPT_INTERVAL", "60001", kRejected},
    {"WEFT_ADAPT_INTERVAL", "1s", kRejected},
    // WEFT_BUDGET: off or a POSIX shared-memory name.
    {"WEFT_BUDGET", kUnset, "per-user budget"},
    {"WEFT_BUDGET", "OFF", "off"},
    {"WEFT_BUDGET", "/my-budget", "/my-budget"},
    {"WEFT_BUDGET", "my-budget", kRejected},
    {"WEFT_BUDGET", "/a/b", kRejected},
    {"WEFT_BUDGET", "/", kRejected},
};

std::string case_name(const ::testing::TestParamInfo<env_case>& info) {
    std::string s = std::string(info.param.var).substr(5) + "_" + std::to_string(info.index);
    return s;
}

// Every WEFT_* variable unset but `var`, set to `value` (or unset), for the scope.
class env_only {
public:
    env_only(const char* var, const char* value) {
        for (int i = 0; i < kCount; ++i) {
            const char* name = kVariables[i];
            vars_[i] = new wt::scoped_env(name, std::string(name) == var ? value : nullptr);
        }
    }
    ~env_only() {
        for (wt::scoped_env* v : vars_) delete v;
    }
    env_only(const env_only&) = delete;
    env_only& operator=(const env_only&) = delete;

private:
    static constexpr int kCount = sizeof kVariables / sizeof kVariables[0];
    wt::scoped_env* vars_[kCount];
};

class EnvTable : public ::testing::TestWithParam<env_case> {
protected:
    void SetUp() override { ASSERT_EQ(weft_is_initialized(), 0); }
    void TearDown() override {
        if (weft_is_initialized() != 0) weft_finalize();
    }
    std::string expected_error() const {
        const env_case& c = GetParam();
        return std::string("weft: ") + c.var + "='" + c.value + "' is invalid: expected " + valid_values(c.var) +
               "\n";
    }
    wt::watchdog dog_{wt::default_test_limit(), "EnvTable"};
};

TEST_P(EnvTable, parser_gives_the_setting_or_the_exact_error) {
    const env_case& c = GetParam();
    env_only env(c.var, c.value);
    weft::detail::settings s;
    ::testing::internal::CaptureStderr();
    int rc = weft::detail::read_settings(nullptr, &s);
    std::string err = ::testing::internal::GetCapturedStderr();
    if (c.setting == kRejected) {
        EXPECT_EQ(rc, EINVAL) << c << " gave " << setting_of(c.var, s);
        EXPECT_EQ(err, expected_error());
    } else {
        ASSERT_EQ(rc, 0) << c << ": " << err;
        EXPECT_EQ(err, "");
        std::string want = c.setting == std::string(kCpus) ? std::to_string(weft::detail::usable_cpus()) : c.setting;
        EXPECT_EQ(setting_of(c.var, s), want) << c;
    }
}

// The rejected rows again, through weft_init.
class EnvRejected : public EnvTable {};

TEST_P(EnvRejected, weft_init_fails_with_einval_and_the_exact_error) {
    const env_case& c = GetParam();
    env_only env(c.var, c.value);
    ::testing::internal::CaptureStderr();
    int rc = weft_init(nullptr);
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(rc, EINVAL);
    EXPECT_EQ(weft_is_initialized(), 0);
    EXPECT_EQ(err, expected_error());
}

std::vector<env_case> rejected_rows() {
    std::vector<env_case> rows;
    for (const env_case& c : kTable)
        if (c.setting == kRejected) rows.push_back(c);
    return rows;
}

INSTANTIATE_TEST_SUITE_P(All, EnvTable, ::testing::ValuesIn(kTable), case_name);
INSTANTIATE_TEST_SUITE_P(All, EnvRejected, ::testing::ValuesIn(rejected_rows()), case_name);

// The sizes the messages list are those the parser accepts.
TEST(EnvSizes, message_lists_the_suffixes_the_parser_accepts) {
    EXPECT_EQ(weft::detail::byte_suffixes(), "K, KiB, M, MiB, G or GiB");
    for (const char* suffix : {"K", "KiB", "M", "MiB", "G", "GiB"}) {
        std::size_t v = 0;
        EXPECT_TRUE(weft::detail::parse_bytes(std::string("3") + suffix, &v)) << suffix;
    }
}

// --- accepted values, end to end ---------------------------------------------------

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
    // weft_finalize, returning what it printed (statistics, if asked).
    std::string finalize_output() {
        ::testing::internal::CaptureStderr();
        EXPECT_EQ(weft_finalize(), 0);
        return ::testing::internal::GetCapturedStderr();
    }
    static bool has_stats(const std::string& out) { return out.find("weft statistics") != std::string::npos; }
    wt::watchdog dog_{wt::default_test_limit(), "Env test"};
};

TEST_F(Env, workers_are_started) {
    for (const char* v : {"1", "2", "007"}) {
        std::string err;
        ASSERT_EQ(init_with("WEFT_WORKERS", v, nullptr, &err), 0) << v << ": " << err;
        EXPECT_EQ(weft_num_workers(), std::atoi(v));
        EXPECT_EQ(err, "");
        ASSERT_EQ(weft_finalize(), 0);
    }
}

TEST_F(Env, sched_is_used_whatever_its_case) {
    wt::scoped_env w("WEFT_WORKERS", "1");
    for (const auto& [v, name] : {std::pair{"fifo", "fifo"}, {"LIFO", "lifo"}, {"Dfs", "dfs"}, {"WS", "ws"}}) {
        std::string err;
        ASSERT_EQ(init_with("WEFT_SCHED", v, nullptr, &err), 0) << v << ": " << err;
        EXPECT_STREQ(weft_sched_name(), name);
        ASSERT_EQ(weft_finalize(), 0);
    }
}

TEST_F(Env, stack_size_is_the_default_of_attributes) {
    wt::scoped_env w("WEFT_WORKERS", "1");
    for (const auto& [v, bytes] : {std::pair<const char*, size_t>{"64kib", 65536}, {"2M", 2 << 20}, {"", 65536}}) {
        std::string err;
        ASSERT_EQ(init_with("WEFT_STACK_SIZE", v, nullptr, &err), 0) << v << ": " << err;
        weft_attr_t attr;
        weft_attr_init(&attr);
        size_t got = 0;
        EXPECT_EQ(weft_attr_getstacksize(&attr, &got), 0);
        EXPECT_EQ(got, bytes) << "WEFT_STACK_SIZE='" << v << "'";
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

TEST_F(Env, stats_print_at_finalize_for_every_on_word) {
    wt::scoped_env w("WEFT_WORKERS", "1");
    for (const auto& [v, on] : {std::pair{"1", true}, {"On", true}, {"TRUE", true}, {"0", false}, {"off", false},
                                {"False", false}, {"", false}}) {
        std::string err;
        ASSERT_EQ(init_with("WEFT_STATS", v, nullptr, &err), 0) << "'" << v << "': " << err;
        EXPECT_EQ(has_stats(finalize_output()), on) << "WEFT_STATS='" << v << "'";
    }
}

TEST_F(Env, deadlock_accepts_abort_and_off_in_any_case) {
    wt::scoped_env w("WEFT_WORKERS", "1");
    for (const char* v : {"abort", "off", "OFF", ""}) {
        std::string err;
        ASSERT_EQ(init_with("WEFT_DEADLOCK", v, nullptr, &err), 0) << v << ": " << err;
        ASSERT_EQ(weft_finalize(), 0);
    }
}

TEST_F(Env, unset_variables_take_defaults) {
    env_only none("", nullptr);
    ASSERT_EQ(weft_init(nullptr), 0);
    EXPECT_STREQ(weft_sched_name(), "ws");
    EXPECT_EQ(weft_num_workers(), weft::detail::usable_cpus());
}

// --- weft_config_t against the environment -------------------------------------------

TEST_F(Env, config_value_wins_over_bad_environment) {
    // A field set in weft_config_t takes precedence: the variable is not read.
    wt::scoped_env a("WEFT_WORKERS", "zero"), b("WEFT_SCHED", "nope"), c("WEFT_STACK_SIZE", "tiny"),
        d("WEFT_STATS", "maybe");
    weft_config_t cfg = wt::config(2, "lifo", 65536, WEFT_CONFIG_OFF);
    ::testing::internal::CaptureStderr();
    int rc = weft_init(&cfg);
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(rc, 0) << err;
    EXPECT_EQ(err, "");
    EXPECT_EQ(weft_num_workers(), 2);
    EXPECT_STREQ(weft_sched_name(), "lifo");
}

TEST_F(Env, unset_config_fields_take_the_environment) {
    wt::scoped_env a("WEFT_WORKERS", "3"), b("WEFT_SCHED", "dfs"), c("WEFT_STATS", "1");
    weft_config_t cfg = wt::config(0, nullptr, 0, WEFT_CONFIG_UNSET);
    std::string err;
    ASSERT_EQ(init_with("WEFT_STACK_SIZE", "128K", &cfg, &err), 0) << err;
    EXPECT_EQ(weft_num_workers(), 3);
    EXPECT_STREQ(weft_sched_name(), "dfs");
    weft_attr_t attr;
    weft_attr_init(&attr);
    size_t got = 0;
    EXPECT_EQ(weft_attr_getstacksize(&attr, &got), 0);
    EXPECT_EQ(got, 128u << 10);
    EXPECT_TRUE(has_stats(finalize_output()));
}

TEST_F(Env, config_stats_off_wins_over_weft_stats_on) {
    wt::scoped_env w("WEFT_WORKERS", "1");
    weft_config_t cfg = wt::config(1, nullptr, 0, WEFT_CONFIG_OFF);
    std::string err;
    ASSERT_EQ(init_with("WEFT_STATS", "1", &cfg, &err), 0) << err;
    EXPECT_FALSE(has_stats(finalize_output()));
}

TEST_F(Env, config_stats_on_wins_over_weft_stats_off) {
    weft_config_t cfg = wt::config(1, nullptr, 0, WEFT_CONFIG_ON);
    std::string err;
    ASSERT_EQ(init_with("WEFT_STATS", "0", &cfg, &err), 0) << err;
    EXPECT_TRUE(has_stats(finalize_output()));
}

TEST_F(Env, config_sched_is_case_insensitive) {
    weft_config_t cfg = wt::config(1, "FIFO");
    ASSERT_EQ(weft_init(&cfg), 0);
    EXPECT_STREQ(weft_sched_name(), "fifo");
}

// --- bad weft_config_t fields ------------------------------------------------------

struct bad_cfg {
    weft_config_t cfg;
    const char* message;  // the exact stderr line
};

class EnvBadConfig : public Env, public ::testing::WithParamInterface<bad_cfg> {};

TEST_P(EnvBadConfig, init_fails_with_einval_and_the_exact_message) {
    env_only none("", nullptr);
    ::testing::internal::CaptureStderr();
    int rc = weft_init(&GetParam().cfg);
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(rc, EINVAL);
    EXPECT_EQ(weft_is_initialized(), 0);
    EXPECT_EQ(err, GetParam().message);
}

const bad_cfg kBadConfigs[] = {
    {wt::config(-1), "weft: weft_config_t.workers='-1' is invalid: expected an integer from 1 to 1024\n"},
    {wt::config(1025), "weft: weft_config_t.workers='1025' is invalid: expected an integer from 1 to 1024\n"},
    {wt::config(1, "nope"), "weft: weft_config_t.sched='nope' is invalid: expected one of dfs, fifo, lifo, ws\n"},
    {wt::config(1, ""), "weft: weft_config_t.sched='' is invalid: expected one of dfs, fifo, lifo, ws\n"},
    {wt::config(1, " ws"), "weft: weft_config_t.sched=' ws' is invalid: expected one of dfs, fifo, lifo, ws\n"},
    {wt::config(1, nullptr, 100),
     "weft: weft_config_t.stack_size='100' is invalid: expected a byte count from 16384 to 1073741824\n"},
    {wt::config(1, nullptr, WEFT_STACK_MIN - 1),
     "weft: weft_config_t.stack_size='16383' is invalid: expected a byte count from 16384 to 1073741824\n"},
    {wt::config(1, nullptr, (size_t(1) << 30) + 1),
     "weft: weft_config_t.stack_size='1073741825' is invalid: expected a byte count from 16384 to 1073741824\n"},
    {wt::config(1, nullptr, 0, 2),
     "weft: weft_config_t.stats='2' is invalid: expected WEFT_CONFIG_ON (1), WEFT_CONFIG_OFF (-1) or "
     "WEFT_CONFIG_UNSET (0)\n"},
    {wt::config(1, nullptr, 0, -2),
     "weft: weft_config_t.stats='-2' is invalid: expected WEFT_CONFIG_ON (1), WEFT_CONFIG_OFF (-1) or "
     "WEFT_CONFIG_UNSET (0)\n"},
};

INSTANTIATE_TEST_SUITE_P(All, EnvBadConfig, ::testing::ValuesIn(kBadConfigs));

}  // namespace

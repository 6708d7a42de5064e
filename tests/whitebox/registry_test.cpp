// Class: requirement, negative. The one registry of pluggable parts
// (src/core/registry.hpp): its order, lookup and scoped registration on a
// kind of part of the test's own; its refusal of a malformed definition; and
// that WEFT_SCHED, WEFT_NET and WEFT_ADAPT take their valid values, and the
// list their error message prints, from it: a test-only policy, transport and
// probe, registered for the length of a test, are accepted by name and
// listed, and are gone from the message once unregistered.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "adapt/probe.hpp"
#include "core/env.hpp"
#include "core/registry.hpp"
#include "net/job.hpp"
#include "sched/policy.hpp"
#include "support/weft_test.hpp"

namespace plug_test {

struct widget_def {
    static constexpr weft::detail::plug_kind kind{"widget", "tests/whitebox/registry_test.cpp"};
    const char* name = nullptr;
    const char* description = nullptr;
    int size = 0;
};

const char* contract_violation(const widget_def& d) { return d.size > 0 ? nullptr : "size must be > 0"; }

}  // namespace plug_test

namespace {

using namespace weft::detail;
using plug_test::widget_def;
using widgets = registry<widget_def>;

// The registered names, one by one, as for_each gives them.
template <class Def>
std::string names_of() {
    std::string out;
    registry<Def>::for_each([&](const Def& d) { out += (out.empty() ? "" : ", ") + std::string(d.name); });
    return out;
}

// requirement: names come out in alphabetical order whatever the order of
// registration (static initialization's, which the language leaves open).
TEST(Registry, lists_names_alphabetically_and_finds_them_in_any_case) {
    static const widget_def zeta{"zeta", "z", 1}, alpha{"alpha", "a", 1}, mid{"mid-2", "m", 1}, beta{"beta", "b", 1};
    ASSERT_EQ(widgets::names(), "");
    {
        registrar<widget_def> rz{&zeta}, ra{&alpha}, rm{&mid};
        EXPECT_EQ(widgets::names(), "alpha, mid-2, zeta");
        EXPECT_EQ(names_of<widget_def>(), "alpha, mid-2, zeta");
        EXPECT_EQ(widgets::find("MID-2"), &mid);
        EXPECT_EQ(widgets::find("Zeta"), &zeta);
        EXPECT_EQ(widgets::find("mid"), nullptr);
        EXPECT_EQ(widgets::find(""), nullptr);
        {
            registrar<widget_def> rb{&beta};
            EXPECT_EQ(widgets::names(), "alpha, beta, mid-2, zeta");
        }
        EXPECT_EQ(widgets::names(), "alpha, mid-2, zeta");
    }
    EXPECT_EQ(widgets::names(), "") << "a scoped registration ends with its scope";
    EXPECT_EQ(widgets::find("alpha"), nullptr);
}

class RegistryDeathTest : public ::testing::Test {
protected:
    void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// negative: a definition that breaks its kind's contract stops the program
// with the kind, the name, what is wrong and where the contract is.
TEST_F(RegistryDeathTest, a_contract_violation_is_refused) {
    static const widget_def empty{"empty", "e", 0};
    EXPECT_DEATH(registrar<widget_def> r{&empty},
                 "weft: widget 'empty' is malformed: size must be > 0 \\(see tests/whitebox/registry_test.cpp\\)");
}

TEST_F(RegistryDeathTest, a_name_registered_twice_is_refused) {
    static const widget_def first{"twin", "1", 1}, second{"twin", "2", 1};
    registrar<widget_def> r{&first};
    EXPECT_DEATH(registrar<widget_def> r2{&second}, "widget 'twin' is malformed: its name is registered already");
}

TEST_F(RegistryDeathTest, a_name_that_is_not_lowercase_or_missing_is_refused) {
    static const widget_def upper{"Big", "b", 1}, spaced{"a b", "s", 1}, unnamed{nullptr, "u", 1};
    EXPECT_DEATH(registrar<widget_def> r{&upper}, "widget 'Big' is malformed: a name is required: lowercase");
    EXPECT_DEATH(registrar<widget_def> r{&spaced}, "widget 'a b' is malformed: a name is required");
    EXPECT_DEATH(registrar<widget_def> r{&unnamed}, "widget '\\(unnamed\\)' is malformed: a name is required");
}

TEST_F(RegistryDeathTest, a_missing_description_is_refused) {
    static const widget_def mute{"mute", nullptr, 1};
    EXPECT_DEATH(registrar<widget_def> r{&mute}, "widget 'mute' is malformed: a description is required");
}

TEST_F(RegistryDeathTest, a_transport_or_probe_without_a_factory_is_refused) {
    static const net::transport_def no_make{.name = "no-make", .description = "t"};
    EXPECT_DEATH(registrar<net::transport_def> r{&no_make}, "transport 'no-make' is malformed: make is required");
    static const adapt::probe_def no_probe{.name = "no-probe", .description = "p", .interval_ms = 10};
    EXPECT_DEATH(registrar<adapt::probe_def> r{&no_probe}, "load probe 'no-probe' is malformed: make is required");
}

// --- The variables that name a part -----------------------------------------------

const sched_policy_def test_policy = {
    .name = "zz-test-policy",
    .description = "registered by tests/whitebox/registry_test.cpp",
    .create = [](int) -> void* { return nullptr; },
    .destroy = [](void*) {},
    .spawn = [](void*, int, ult*, ult*) { return false; },
    .ready = [](void*, int, ult*, ready_reason) {},
    .pick_next = [](void*, int) -> ult* { return nullptr; },
};

bool g_test_transport_made = false;
const net::transport_def test_transport = {
    .name = "zz-test-transport",
    .description = "registered by tests/whitebox/registry_test.cpp",
    .make =
        [](const net::transport_config&, std::unique_ptr<net::transport>*) {
            g_test_transport_made = true;
            return ENOTSUP;
        },
};

const adapt::probe_def test_probe = {
    .name = "zz-test-probe",
    .description = "registered by tests/whitebox/registry_test.cpp",
    .interval_ms = 10,
    .make = [](std::string* why) -> std::unique_ptr<adapt::probe> {
        *why = "the test probe is never available";
        return nullptr;
    },
};

// read_settings' stderr and result for one variable's value.
int read_with(const char* var, const char* value, settings* s, std::string* err) {
    wt::scoped_env e(var, value);
    ::testing::internal::CaptureStderr();
    int rc = read_settings(nullptr, s);
    *err = ::testing::internal::GetCapturedStderr();
    return rc;
}

int read_net_with(const char* value, net::transport_config* tc, std::string* err) {
    wt::scoped_env e("WEFT_NET", value);
    std::uint32_t nodes = 0;
    ::testing::internal::CaptureStderr();
    int rc = net::read_net_settings(nullptr, &nodes, tc);
    *err = ::testing::internal::GetCapturedStderr();
    return rc;
}

class RegistryEnv : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_EQ(weft_is_initialized(), 0); }
    void TearDown() override {
        if (weft_is_initialized() != 0) weft_finalize();
    }
};

// requirement: WEFT_SCHED accepts what is registered and lists exactly it.
TEST_F(RegistryEnv, sched_lists_exactly_the_registered_policies) {
    settings s;
    std::string err;
    {
        registrar<sched_policy_def> r{&test_policy};
        const std::string listed = names_of<sched_policy_def>();
        ASSERT_NE(listed.find("zz-test-policy"), std::string::npos) << listed;
        EXPECT_EQ(read_with("WEFT_SCHED", "nope", &s, &err), EINVAL);
        EXPECT_EQ(err, "weft: WEFT_SCHED='nope' is invalid: expected one of " + listed + "\n");
        ASSERT_EQ(read_with("WEFT_SCHED", "ZZ-Test-Policy", &s, &err), 0) << err;
        EXPECT_EQ(s.sched, "zz-test-policy");
    }
    EXPECT_EQ(read_with("WEFT_SCHED", "zz-test-policy", &s, &err), EINVAL);
    EXPECT_EQ(err, "weft: WEFT_SCHED='zz-test-policy' is invalid: expected one of dfs, fifo, lifo, ws\n");
}

// requirement: WEFT_NET likewise, and weft_net_init makes the transport
// with the registered factory.
TEST_F(RegistryEnv, net_lists_exactly_the_registered_transports) {
    const std::string builtin = WEFT_HAVE_MPI ? "faulty, inproc, mpi" : "faulty, inproc";
    net::transport_config tc;
    std::string err;
    {
        registrar<net::transport_def> r{&test_transport};
        const std::string listed = names_of<net::transport_def>();
        ASSERT_NE(listed.find("zz-test-transport"), std::string::npos) << listed;
        EXPECT_EQ(read_net_with("nope", &tc, &err), EINVAL);
        EXPECT_EQ(err, "weft: WEFT_NET='nope' is invalid: expected one of " + listed + "\n");
        ASSERT_EQ(read_net_with("ZZ-TEST-TRANSPORT", &tc, &err), 0) << err;
        EXPECT_EQ(tc.def, &test_transport);

        weft_config_t c = wt::config(1);
        ASSERT_EQ(weft_init(&c), 0);
        weft_net_config_t nc{};
        nc.transport = "zz-test-transport";
        g_test_transport_made = false;
        EXPECT_EQ(weft_net_init(&nc), ENOTSUP) << "the registered factory's error";
        EXPECT_TRUE(g_test_transport_made);
        ASSERT_EQ(weft_finalize(), 0);
    }
    EXPECT_EQ(read_net_with("zz-test-transport", &tc, &err), EINVAL);
    EXPECT_EQ(err, "weft: WEFT_NET='zz-test-transport' is invalid: expected one of " + builtin + "\n");
}

// requirement: WEFT_ADAPT likewise (the registered probes, then off), and
// weft_init asks the registered probe's factory, whose reason for saying no
// reaches stderr.
TEST_F(RegistryEnv, adapt_lists_exactly_the_registered_probes) {
    settings s;
    std::string err;
    {
        registrar<adapt::probe_def> r{&test_probe};
        const std::string listed = names_of<adapt::probe_def>();
        ASSERT_NE(listed.find("zz-test-probe"), std::string::npos) << listed;
        EXPECT_EQ(read_with("WEFT_ADAPT", "nope", &s, &err), EINVAL);
        EXPECT_EQ(err, "weft: WEFT_ADAPT='nope' is invalid: expected one of " + listed + ", off\n");
        ASSERT_EQ(read_with("WEFT_ADAPT", "zz-TEST-probe", &s, &err), 0) << err;
        EXPECT_EQ(s.adapt, "zz-test-probe");

        weft_config_t c = wt::config(2);
        c.adapt = "zz-test-probe";
        ::testing::internal::CaptureStderr();
        ASSERT_EQ(weft_init(&c), 0);
        err = ::testing::internal::GetCapturedStderr();
        EXPECT_EQ(err,
                  "weft: WEFT_ADAPT=zz-test-probe: the test probe is never available; the worker count stays "
                  "fixed\n");
        weft_adapt_info_t info;
        ASSERT_EQ(weft_adapt_get(&info), 0);
        EXPECT_STREQ(info.mode, "off");
        ASSERT_EQ(weft_finalize(), 0);
    }
    EXPECT_EQ(read_with("WEFT_ADAPT", "zz-test-probe", &s, &err), EINVAL);
    EXPECT_EQ(err, "weft: WEFT_ADAPT='zz-test-probe' is invalid: expected one of asat, schedstat, off\n");
}

}  // namespace

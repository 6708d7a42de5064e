// The transport suite's fixture: a job over one transport, under one
// scheduler and worker count, and the way its tests are written so that they
// run unchanged over every transport, one process or many.
//
// A test is a role per node, run by run_every_node on a weft thread of that
// node. Over inproc and faulty every node lives in this process, and every
// role runs here; under mpi (the same test binary started by mpiexec, one
// rank per node) each process runs its own rank's role. Roles reach other
// nodes only through the public API: ports, the naming service to find each
// other's ports, messages to say how far they are.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "support/net_test.hpp"
#include "support/weft_test.hpp"
#include "weft/weft.h"

namespace wt {

struct transport_param {
    const char* transport;
    rt_param rt;
};

inline void PrintTo(const transport_param& p, std::ostream* os) {
    *os << p.transport << " " << p.rt.sched << " " << p.rt.workers << "w";
}

// Every transport given x every scheduler x 1 and 2 workers.
inline std::vector<transport_param> transport_params(const std::vector<const char*>& transports) {
    std::vector<transport_param> out;
    for (const char* t : transports)
        for (const rt_param& r : rt_params({1, 2})) out.push_back(transport_param{t, r});
    return out;
}

inline std::string transport_param_name(const ::testing::TestParamInfo<transport_param>& info) {
    return std::string(info.param.transport) + "_" + info.param.rt.sched + "_" + std::to_string(info.param.rt.workers) +
           "w";
}

// Byte i of message seq of a sender (node, thread): every message's bytes
// differ from its neighbours', so a message read from the wrong place shows.
inline unsigned char byte_of(int node, int thread, int seq, std::size_t i) {
    return static_cast<unsigned char>((std::size_t(node) * 7 + std::size_t(thread) * 13 + std::size_t(seq) * 31 + i) &
                                      0xff);
}

inline bool same_port(const weft_port_id_t& a, const weft_port_id_t& b) {
    return a.node == b.node && a.index == b.index && a.gen == b.gen;
}

// A port another node registered under `name`; waits until it is.
inline weft_port_id_t find_port(const char* name) {
    weft_port_id_t p{};
    EXPECT_EQ(weft_net_name_lookup(name, &p, WEFT_NET_FOREVER), 0) << name;
    return p;
}

// The nodes of a job over a transport that runs them all in this process;
// under mpi the job has as many nodes as ranks.
constexpr int kSuiteNodes = 3;

class net_transport_fixture : public ::testing::TestWithParam<transport_param> {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dog_ = new watchdog(default_test_limit(), std::string(info->test_suite_name()) + "." + info->name());
        ASSERT_EQ(weft_is_initialized(), 0) << "a previous test left the runtime running";
        // No peer timeout unless a test injects a death: on a loaded machine a
        // node's progress may stop for longer than any timeout, and a death
        // declared where none was injected fails sends a receiver waits for.
        ::setenv("WEFT_NET_PEER_TIMEOUT", "off", 1);
        weft_config_t cfg = config(GetParam().rt.workers, GetParam().rt.sched);
        ASSERT_EQ(weft_init(&cfg), 0);
    }
    void start() {
        weft_net_config_t c{};
        c.nodes = mpi() ? 0 : kSuiteNodes;
        c.transport = GetParam().transport;
        ASSERT_EQ(weft_net_init(&c), 0);
        ASSERT_STREQ(weft_net_transport(), GetParam().transport);
        started_ = true;
    }
    void TearDown() override {
        if (started_) {
            EXPECT_EQ(weft_net_finalize(), 0);
        }
        if (weft_is_initialized() != 0) {
            EXPECT_EQ(weft_finalize(), 0);
        }
        ::unsetenv("WEFT_NET_PEER_TIMEOUT");
        delete dog_;
    }
    bool mpi() const { return std::strcmp(GetParam().transport, "mpi") == 0; }
    bool faulty() const { return std::strcmp(GetParam().transport, "faulty") == 0; }

    // Runs role(node) on a weft thread of each node this process runs (every
    // node; under mpi, this rank's) and joins them.
    template <class Role>
    void run_every_node(Role role) {
        std::vector<int> nodes;
        if (mpi()) {
            nodes.push_back(weft_net_self_node());  // under mpi: this rank, on every thread
        } else {
            for (int n = 0; n < weft_net_num_nodes(); ++n) nodes.push_back(n);
        }
        struct one {
            Role* role;
            int node;
            void operator()() { (*role)(node); }
        };
        std::vector<one> ones;
        for (int n : nodes) ones.push_back(one{&role, n});
        std::vector<weft_thread_t> ts;
        for (one& o : ones) ts.push_back(spawn_on(o.node, &o));
        for (weft_thread_t t : ts) ASSERT_EQ(weft_thread_join(t, nullptr), 0);
    }

    bool started_ = false;
    watchdog* dog_ = nullptr;
};

}  // namespace wt

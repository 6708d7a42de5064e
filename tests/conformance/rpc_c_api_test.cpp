// Class: requirement (conformance). Runs rpc_c_api.c: weft/rpc.h from C11
// through the shared library's exported ABI.
#include "support/weft_test.hpp"

extern "C" int weft_c_rpc(void);

namespace {

TEST(CApiRpc, server_call_names_barrier) {
    wt::watchdog dog(wt::default_test_limit(), "CApiRpc test");
    ASSERT_EQ(weft_is_initialized(), 0);
    EXPECT_EQ(weft_c_rpc(), 0) << "failed check at rpc_c_api.c line";
    if (weft_is_initialized() != 0) {
        (void)weft_net_finalize();
        (void)weft_finalize();
    }
}

}  // namespace

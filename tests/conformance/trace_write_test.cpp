// Class: negative, requirement. WEFT_TRACE never loses the trace silently: a
// file that cannot be opened is an error at start (weft_init returns EINVAL),
// and a write that fails when the trace is written (at weft_finalize, or at
// exit) prints a warning naming the file and the error.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "support/weft_test.hpp"

namespace {

class TraceFile : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_EQ(weft_is_initialized(), 0); }
    void TearDown() override {
        if (weft_is_initialized() != 0) weft_finalize();
    }
    // Starts weft with WEFT_TRACE=path (statistics off, whatever WEFT_STATS
    // says, so that stderr holds only what the trace writer prints), runs a
    // few threads so that the trace has slices, and returns what
    // weft_finalize printed.
    std::string run_and_finalize(const char* path) {
        wt::scoped_env t("WEFT_TRACE", path);
        weft_config_t cfg = wt::config(1, "fifo", 0, WEFT_CONFIG_OFF);
        EXPECT_EQ(weft_init(&cfg), 0);
        for (int i = 0; i < 4; ++i) wt::join(wt::go([] {}));
        ::testing::internal::CaptureStderr();
        EXPECT_EQ(weft_finalize(), 0);
        return ::testing::internal::GetCapturedStderr();
    }
    wt::watchdog dog_{wt::default_test_limit(), "TraceFile"};
};

TEST_F(TraceFile, a_failed_write_is_reported_with_the_file_and_the_error) {
    // weft runs on Linux only (futex, membarrier), where /dev/full is a
    // standard device: its absence is a broken machine, not a reason to skip.
    struct stat st;
    ASSERT_EQ(stat("/dev/full", &st), 0) << "this test needs /dev/full, which fails every write with ENOSPC";
    ASSERT_TRUE(S_ISCHR(st.st_mode)) << "/dev/full is not the character device that fails every write";
    EXPECT_EQ(run_and_finalize("/dev/full"),
              "weft: could not write the trace to WEFT_TRACE='/dev/full': No space left on device "
              "(the file is incomplete)\n");
}

TEST_F(TraceFile, a_written_trace_prints_nothing) {
    char path[] = "/tmp/weft-trace-XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    EXPECT_EQ(run_and_finalize(path), "");
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::remove(path);
    EXPECT_TRUE(wt::contains(text.str(), "\"traceEvents\""));
    EXPECT_TRUE(wt::contains(text.str(), "\"dropped_slices\":0}}\n"));
}

TEST_F(TraceFile, a_file_that_cannot_be_opened_is_an_error_at_start) {
    wt::scoped_env t("WEFT_TRACE", "/nonexistent-weft-dir/trace.json");
    weft_config_t cfg = wt::config(1);
    ::testing::internal::CaptureStderr();
    int rc = weft_init(&cfg);
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(rc, EINVAL);
    EXPECT_EQ(weft_is_initialized(), 0);
    EXPECT_EQ(err,
              "weft: WEFT_TRACE='/nonexistent-weft-dir/trace.json' is invalid: expected a file this process can "
              "create or truncate (opening it failed: No such file or directory)\n");
}

}  // namespace

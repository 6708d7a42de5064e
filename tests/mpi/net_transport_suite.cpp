// The transport suite (tests/unit/net_transport_test.cpp) over the mpi
// transport: every rank runs the same GoogleTest program, the same tests in
// the same order, each test a job of one node per rank; tests/CMakeLists.txt
// builds it with that file and registers it for 2 and 4 ranks.
//
// The program initialises MPI itself, so that weft uses that MPI and each
// test's weft_net_finalize leaves it running for the next test's job. A check
// that fails on one rank ends the whole job (MPI_Abort) once its message is
// printed: the other ranks would otherwise wait for messages the failed rank
// never sends.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

namespace {

// At the first failed check, not at the test's end: the test's own teardown
// (weft_net_finalize) would wait for ranks that wait for this one.
class abort_job_on_failure : public ::testing::EmptyTestEventListener {
    void OnTestPartResult(const ::testing::TestPartResult& r) override {
        if (!r.failed()) return;
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::fprintf(stderr, "FAIL rank %d: %s.%s: ending the job\n", rank,
                     info != nullptr ? info->test_suite_name() : "", info != nullptr ? info->name() : "");
        std::fflush(stdout);
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
};

}  // namespace

int main(int argc, char** argv) {
    int provided = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS ||
        provided < MPI_THREAD_SERIALIZED) {
        std::fprintf(stderr, "net_transport_suite: MPI_Init_thread gave thread level %d, below MPI_THREAD_SERIALIZED\n",
                     provided);
        return 1;
    }
    ::testing::InitGoogleTest(&argc, argv);
    // Appended after the default printer: a failure is printed before the job ends.
    ::testing::UnitTest::GetInstance()->listeners().Append(new abort_job_on_failure);
    int rc = RUN_ALL_TESTS();
    MPI_Finalize();
    return rc;
}

// The transport suite (tests/whitebox/net_transport_test.cpp) over the mpi
// transport: every rank runs the same GoogleTest program, the same tests in
// the same order, each test a job of one node per rank; tests/CMakeLists.txt
// builds it with that file and registers it for 2 and 4 ranks.
//
// The program initialises MPI itself, so that weft uses that MPI and each
// test's weft_net_finalize leaves it running for the next test's job. A check
// that fails on one rank ends the whole job once its message is
// printed: the other ranks would otherwise wait for messages the failed rank
// never sends.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

namespace {

int g_rank = 0;

// At the first failed check, not at the test's end: the test's own teardown
// (weft_net_finalize) would wait for ranks that wait for this one. The check
// may fail on a weft thread, in the middle of weft's own MPI calls on this
// rank, so no MPI call here: the process ends, and mpiexec ends the job when a
// rank exits with a non-zero status before MPI_Finalize.
class abort_job_on_failure : public ::testing::EmptyTestEventListener {
    void OnTestPartResult(const ::testing::TestPartResult& r) override {
        if (!r.failed()) return;
        std::fprintf(stderr, "FAIL rank %d: ending the job\n", g_rank);
        std::fflush(stdout);
        std::fflush(stderr);
        std::_Exit(1);
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
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    ::testing::InitGoogleTest(&argc, argv);
    // Appended after the default printer: a failure is printed before the job ends.
    ::testing::UnitTest::GetInstance()->listeners().Append(new abort_job_on_failure);
    int rc = RUN_ALL_TESTS();
    MPI_Finalize();
    return rc;
}

// Class: requirement (conformance). Runs the C11 checks of c_api.c through the
// shared library's exported ABI, and checks that every weft synchronization
// type fits in (size and alignment) its Pthreads counterpart, as the later
// libweft-pthread shim needs to place a weft object inside a pthread one, and
// that C and C++ see the same layouts.
#include <link.h>
#include <pthread.h>
#include <semaphore.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#include "support/weft_test.hpp"

extern "C" {
std::size_t weft_c_sizeof(int which);
std::size_t weft_c_sizeof_pthread(int which);
int weft_c_static_initializers(void);
int weft_c_threads(void);
int weft_c_stale_handles(void);
int weft_c_sync(void);
int weft_c_keys(void);
int weft_c_implicit_start(void);
}

namespace {

class CApi : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_EQ(weft_is_initialized(), 0); }
    void TearDown() override {
        if (weft_is_initialized() != 0) weft_finalize();  // after a failed check
    }
    wt::watchdog dog_{wt::default_test_limit(), "CApi test"};
};

TEST_F(CApi, static_initializers) { EXPECT_EQ(weft_c_static_initializers(), 0) << "failed check at c_api.c line"; }
TEST_F(CApi, threads) { EXPECT_EQ(weft_c_threads(), 0) << "failed check at c_api.c line"; }
TEST_F(CApi, stale_handles) { EXPECT_EQ(weft_c_stale_handles(), 0) << "failed check at c_api.c line"; }
TEST_F(CApi, synchronization) { EXPECT_EQ(weft_c_sync(), 0) << "failed check at c_api.c line"; }
TEST_F(CApi, keys) { EXPECT_EQ(weft_c_keys(), 0) << "failed check at c_api.c line"; }
TEST_F(CApi, implicit_start) { EXPECT_EQ(weft_c_implicit_start(), 0) << "failed check at c_api.c line"; }

TEST(Layout, c_and_cxx_agree) {
    const std::size_t cxx[] = {sizeof(weft_mutex_t),   sizeof(weft_cond_t),        sizeof(weft_rwlock_t),
                               sizeof(weft_barrier_t), sizeof(weft_sem_t),         sizeof(weft_once_t),
                               sizeof(weft_attr_t),    sizeof(weft_mutexattr_t),   sizeof(weft_condattr_t),
                               sizeof(weft_key_t),     sizeof(weft_thread_t),      sizeof(weft_config_t),
                               sizeof(weft_stats_t),   sizeof(weft_worker_stats_t)};
    for (int i = 0; i < int(sizeof cxx / sizeof cxx[0]); ++i) EXPECT_EQ(weft_c_sizeof(i), cxx[i]) << "type #" << i;
}

template <class W, class P>
void expect_fits(const char* what) {
    EXPECT_LE(sizeof(W), sizeof(P)) << what << ": size";
    EXPECT_LE(alignof(W), alignof(P)) << what << ": alignment";
}

TEST(Layout, synchronization_types_fit_in_pthread_types) {
    expect_fits<weft_mutex_t, pthread_mutex_t>("weft_mutex_t in pthread_mutex_t");
    expect_fits<weft_cond_t, pthread_cond_t>("weft_cond_t in pthread_cond_t");
    expect_fits<weft_rwlock_t, pthread_rwlock_t>("weft_rwlock_t in pthread_rwlock_t");
    expect_fits<weft_barrier_t, pthread_barrier_t>("weft_barrier_t in pthread_barrier_t");
    expect_fits<weft_sem_t, sem_t>("weft_sem_t in sem_t");
    expect_fits<weft_once_t, pthread_once_t>("weft_once_t in pthread_once_t");
}

TEST(Layout, attribute_and_handle_types_fit_in_pthread_types) {
    expect_fits<weft_attr_t, pthread_attr_t>("weft_attr_t in pthread_attr_t");
    expect_fits<weft_mutexattr_t, pthread_mutexattr_t>("weft_mutexattr_t in pthread_mutexattr_t");
    expect_fits<weft_condattr_t, pthread_condattr_t>("weft_condattr_t in pthread_condattr_t");
    expect_fits<weft_key_t, pthread_key_t>("weft_key_t in pthread_key_t");
    expect_fits<weft_thread_t, pthread_t>("weft_thread_t in pthread_t");
}

TEST(Layout, c_sees_the_same_pthread_sizes) {
    EXPECT_EQ(weft_c_sizeof_pthread(0), sizeof(pthread_mutex_t));
    EXPECT_EQ(weft_c_sizeof_pthread(1), sizeof(pthread_cond_t));
    EXPECT_EQ(weft_c_sizeof_pthread(2), sizeof(pthread_rwlock_t));
    EXPECT_EQ(weft_c_sizeof_pthread(3), sizeof(pthread_barrier_t));
    EXPECT_EQ(weft_c_sizeof_pthread(4), sizeof(sem_t));
    EXPECT_EQ(weft_c_sizeof_pthread(5), sizeof(pthread_once_t));
}

TEST(Layout, once_init_matches_pthread_once_init_value) {
    // The shim maps PTHREAD_ONCE_INIT objects to weft_once_t as they are.
    pthread_once_t p = PTHREAD_ONCE_INIT;
    weft_once_t w = WEFT_ONCE_INIT;
    EXPECT_EQ(static_cast<int>(p), w);
}

TEST(Layout, zeroed_objects_equal_static_initializers) {
    // A zero-filled pthread object (static storage) must read as a valid weft
    // object for the shim: the static initializers are all-zero where Pthreads'
    // are (PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
    // PTHREAD_RWLOCK_INITIALIZER are all zero on glibc).
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    weft_cond_t c = WEFT_COND_INITIALIZER;
    weft_rwlock_t rw = WEFT_RWLOCK_INITIALIZER;
    auto all_zero = [](const void* p, std::size_t n) {
        const auto* b = static_cast<const unsigned char*>(p);
        for (std::size_t i = 0; i < n; ++i)
            if (b[i] != 0) return false;
        return true;
    };
    EXPECT_TRUE(all_zero(&m, sizeof m));
    EXPECT_TRUE(all_zero(&c, sizeof c));
    EXPECT_TRUE(all_zero(&rw, sizeof rw));
}

// The header's version is the version of the library the program loads: the
// build names libweft.so.MAJOR.MINOR.PATCH after the same macros (the
// top-level CMakeLists.txt reads them), so a header from one release used with
// the library of another shows here.
int find_libweft(dl_phdr_info* info, std::size_t, void* out) {
    const char* name = info->dlpi_name;
    if (name != nullptr && std::strstr(name, "libweft.so") != nullptr) {
        *static_cast<std::string*>(out) = name;
        return 1;
    }
    return 0;
}

TEST(Version, macros_name_the_loaded_library) {
    std::string loaded;
    ASSERT_NE(dl_iterate_phdr(&find_libweft, &loaded), 0) << "this binary did not load libweft.so";
    char* real = realpath(loaded.c_str(), nullptr);
    ASSERT_NE(real, nullptr) << loaded;
    std::string file = real;
    std::free(real);
    file = file.substr(file.rfind('/') + 1);
    const std::string expect = "libweft.so." + std::to_string(WEFT_VERSION_MAJOR) + "." +
                               std::to_string(WEFT_VERSION_MINOR) + "." + std::to_string(WEFT_VERSION_PATCH);
    EXPECT_EQ(file, expect) << "loaded from " << loaded;
}

}  // namespace

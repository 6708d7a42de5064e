// The application suite of Lowenthal, Freeh & Andrews (Filaments, §4): what
// every application in apps/ provides, and the registry weft-bench and the
// tests iterate over.
//
// An application is one folder, apps/NAME/, with
//   NAME.hpp          the problem (inputs, outputs, the basic blocks every
//                     version shares: same arithmetic, same allocation) and the
//                     serial, coarse-grain and filaments versions;
//   NAME.cpp          its `app` description, registered with a static
//                     `registrar` (adding an application touches no other file);
//   NAME_omp.cpp      optional peers, compiled only when OpenMP / oneTBB are
//   NAME_tbb.cpp      installed (apps/CMakeLists.txt); each registers itself
//                     into the application's `peers` slot with a `peer_registrar`.
//
// The versions (§4, "three versions of each program"):
//   serial     no parallel construct at all;
//   coarse     one kernel thread (std::thread) per worker with a static
//              partition, or a bag of tasks where the paper used one;
//   filaments  weft's filaments (include/weft/filament.hpp), on the workers of
//              the running weft runtime (the caller initialises it);
//   omp, tbb   the same algorithm with OpenMP tasks/loops and oneTBB.
// Every version reads the same inputs and must produce the serial output
// (within floating-point tolerance where the order of a reduction differs).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace weft::apps {

// The workers a filaments version spreads its pools over (one pool each, as
// weft::pool_set::add_pools makes them): the running runtime's, at least 1.
int filament_workers() noexcept;

enum class version { serial, coarse, filaments, omp, tbb };

// "serial", "coarse", "filaments", "omp", "tbb".
const char* version_name(version v) noexcept;
// The version named s; false when s names none.
bool parse_version(std::string_view s, version& v) noexcept;

struct app;

// One problem of one size: its inputs, and the output of its last run.
// Applications implement reset, compare and the three paper versions; run()
// dispatches, to the registered peers too.
class instance {
public:
    virtual ~instance() = default;
    // Restores the inputs a run modifies (not timed). Called before every run.
    virtual void reset() = 0;
    // Runs version v (timed by the caller). `workers` is the number of kernel
    // threads the coarse-grain version and the peers use; the filaments version
    // uses the workers of the running weft runtime, which the caller started
    // with the same count. A peer that was not built: std::logic_error.
    void run(version v, int workers);
    // Empty when this instance's output equals `reference`'s (an instance of
    // the same application and size whose last run was the serial version);
    // otherwise what differs, for an error message ("max |x - y| = 3e-4 at (1, 2)").
    virtual std::string compare(const instance& reference) const = 0;

protected:
    virtual void run_serial() = 0;
    virtual void run_coarse(int workers) = 0;
    virtual void run_filaments() = 0;

private:
    friend std::unique_ptr<instance> make_instance(const app& a, long size);
    const char* app_name_ = nullptr;  // set by make_instance: finds the peers
};

using peer_fn = void (*)(instance&, int workers);

struct app {
    const char* name;         // "fib": the folder and the --app value
    const char* description;  // one line: what it computes and how it forks
    long bench_size;          // the size at which the serial version takes 1-3 s here
    long demo_size;           // a short run (serial 0.01-0.4 s): `weft-bench filaments --demo-sizes`, which the
                              // demo runs on fib, quadrature, quicksort, jacobi and matmul (~0.1 s each)
    long test_size;           // a size the tests run in milliseconds
    const char* size_meaning; // what `size` is ("n of fib(n)", "grid side")
    std::unique_ptr<instance> (*make)(long size);
};

// Registers an application at static-initialisation time.
struct registrar {
    explicit registrar(const app& a);
};

// Registers a peer version (omp or tbb) of the application named `app_name`.
struct peer_registrar {
    peer_registrar(const char* app_name, version v, peer_fn run);
};

// An instance of application a at `size` (use this, not a.make: run() needs
// to know its application to find the peers).
std::unique_ptr<instance> make_instance(const app& a, long size);

// Every registered application, sorted by name.
const std::vector<app>& all_apps();
// The application named `name`, or null.
const app* find_app(std::string_view name);
// The peer version v of application `app_name`, or null when it was not built.
peer_fn find_peer(std::string_view app_name, version v);

// The versions of `a` available in this build, serial first.
std::vector<version> versions_of(const app& a);

}  // namespace weft::apps

// weft-bench harness — locating the running executable and the report script (harness/locate.hpp).
#include "harness/locate.hpp"

#include <cstdlib>
#include <filesystem>

#include <unistd.h>

namespace weft::bench {

namespace fs = std::filesystem;

std::string self_exe() {
    std::error_code ec;
    auto p = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : p.string();
}

std::string find_report_script() {
    constexpr char const* rel = "bench/report/make_report.py";
    std::error_code ec;
    auto is_file = [&](fs::path const& p) { return fs::is_regular_file(p, ec); };

    // 1. An explicit override.
    if (char const* env = std::getenv("WEFT_BENCH_REPORT"); env && *env) {
        if (is_file(env)) return env;
    }
    // 2. The source tree, if the build compiled it in.
#ifdef WEFT_SOURCE_DIR
    if (auto p = fs::path(WEFT_SOURCE_DIR) / rel; is_file(p)) return p.string();
#endif
    // 3. Beside this source file's folder, bench/ (CMake passes absolute
    //    source paths, so __FILE__ names the source tree the binary was built
    //    from).
    if (fs::path here(__FILE__); here.is_absolute()) {
        if (auto p = here.parent_path().parent_path() / "report" / "make_report.py"; is_file(p)) return p.string();
    }
    // 4. Upward from the executable (build/release/bin -> the source tree),
    //    and an installed share/weft/.
    auto search_up = [&](fs::path dir) -> std::string {
        for (int depth = 0; depth < 8 && !dir.empty(); ++depth) {
            if (auto p = dir / rel; is_file(p)) return p.string();
            if (auto p = dir / "share" / "weft" / rel; is_file(p)) return p.string();
            if (dir == dir.parent_path()) break;
            dir = dir.parent_path();
        }
        return {};
    };
    if (std::string exe = self_exe(); !exe.empty()) {
        if (auto p = search_up(fs::path(exe).parent_path()); !p.empty()) return p;
    }
    // 5. Upward from the current directory.
    if (auto cwd = fs::current_path(ec); !ec) {
        if (auto p = search_up(cwd); !p.empty()) return p;
    }
    return {};
}

}  // namespace weft::bench

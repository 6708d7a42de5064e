// weft-bench harness — provenance: how the tool was built and what the machine was doing (harness/provenance.hpp).
#include "harness/provenance.hpp"

#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "harness/cpus.hpp"

namespace weft::bench {

#ifndef WEFT_BUILD_TYPE
#define WEFT_BUILD_TYPE ""
#endif
#ifndef WEFT_BUILD_CONTEXT
#define WEFT_BUILD_CONTEXT ""
#endif
#ifndef WEFT_BUILD_SANITIZE
#define WEFT_BUILD_SANITIZE ""
#endif

namespace {
// Taken before main(), before any experiment pins a thread.
int const startup_cpus = static_cast<int>(allowed_cpus().size());
}  // namespace

std::string cpu_model() {
    std::FILE* f = std::fopen("/proc/cpuinfo", "r");
    if (f == nullptr) return {};
    std::string model;
    char line[512];
    while (model.empty() && std::fgets(line, sizeof line, f) != nullptr) {
        std::string_view l(line);
        if (!l.starts_with("model name")) continue;
        auto const colon = l.find(':');
        if (colon == std::string_view::npos) continue;
        l.remove_prefix(colon + 1);
        while (!l.empty() && (l.front() == ' ' || l.front() == '\t')) l.remove_prefix(1);
        while (!l.empty() && (l.back() == '\n' || l.back() == ' ')) l.remove_suffix(1);
        model = l;
    }
    std::fclose(f);
    return model;
}

namespace {
// The first line `command` prints, without its newline ("" if it fails).
std::string first_line_of(std::string const& command) {
    std::FILE* p = popen(command.c_str(), "r");
    if (p == nullptr) return {};
    char buf[256] = {0};
    std::string out;
    if (std::fgets(buf, sizeof buf, p) != nullptr) out = buf;
    if (pclose(p) != 0) return {};
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return out;
}
}  // namespace

std::string source_commit() {
#ifdef WEFT_SOURCE_DIR
    std::string const git = "git -C '" + std::string(WEFT_SOURCE_DIR) + "' ";
    std::string commit = first_line_of(git + "rev-parse --short=12 HEAD 2>/dev/null");
    if (commit.empty()) return {};
    // Tracked files changed since that commit: the build is not exactly it.
    if (!first_line_of(git + "status --porcelain --untracked-files=no 2>/dev/null").empty()) commit += "+dirty";
    return commit;
#else
    return {};
#endif
}

std::string utc_now_iso() {
    std::time_t const t = std::time(nullptr);
    std::tm tm{};
    char buf[32] = {0};
    if (gmtime_r(&t, &tm) == nullptr || std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) return {};
    return buf;
}

void add_provenance(json_object& rec) {
    rec.add("build_type", WEFT_BUILD_TYPE);
    rec.add("context", WEFT_BUILD_CONTEXT);
    rec.add("sanitize", WEFT_BUILD_SANITIZE);
    rec.add("cpus", startup_cpus);
    static std::string const model = cpu_model();
    rec.add("cpu_model", model);
    double load[1] = {0};
    if (getloadavg(load, 1) == 1)
        rec.add("loadavg_1m", load[0]);
    else
        rec.add_null("loadavg_1m");
}

std::string build_warning() {
    std::string const type = WEFT_BUILD_TYPE;
    std::string const sanitize = WEFT_BUILD_SANITIZE;
    if (!sanitize.empty())
        return "this weft-bench was built with sanitizers (" + sanitize + "): do not quote its times";
    if (!type.empty() && type != "Release" && type != "RelWithDebInfo")
        return "this weft-bench is a " + type + " build: do not quote its times (use the release preset)";
    return {};
}

}  // namespace weft::bench

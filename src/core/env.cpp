#include "core/env.hpp"

#include <sched.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "core/tunables.hpp"
#include "sched/policy.hpp"

namespace weft::detail {

namespace {

bool parse_int(const char* text, long min, long max, long* out) {
    if (text == nullptr || *text == '\0') return false;
    errno = 0;
    char* end = nullptr;
    long v = std::strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max) return false;
    *out = v;
    return true;
}

void complain(const char* what, const char* value, const std::string& valid) {
    std::fprintf(stderr, "weft: %s='%s' is invalid: expected %s\n", what, value, valid.c_str());
}

int cgroup_cpu_limit() {
    // cgroup v2: "max 100000" or "<quota> <period>".
    std::ifstream v2("/sys/fs/cgroup/cpu.max");
    std::string quota;
    long period = 0;
    if (v2 >> quota >> period) {
        if (quota == "max" || period <= 0) return 0;
        long q = std::strtol(quota.c_str(), nullptr, 10);
        return q > 0 ? static_cast<int>((q + period - 1) / period) : 0;
    }
    std::ifstream q1("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), p1("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
    long q = 0, p = 0;
    if ((q1 >> q) && (p1 >> p) && q > 0 && p > 0) return static_cast<int>((q + p - 1) / p);
    return 0;
}

}  // namespace

int usable_cpus() {
    int n = 0;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) n = CPU_COUNT(&set);
    if (n <= 0) n = 1;
    int limit = cgroup_cpu_limit();
    if (limit > 0 && limit < n) n = limit;
    return n;
}

bool parse_bytes(const char* text, std::size_t* out) {
    if (text == nullptr || *text < '0' || *text > '9') return false;
    errno = 0;
    char* end = nullptr;
    unsigned long long v = std::strtoull(text, &end, 10);
    if (errno != 0) return false;
    unsigned long long mult = 1;
    std::string suffix(end);
    for (auto& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (suffix.empty() || suffix == "b") mult = 1;
    else if (suffix == "k" || suffix == "kib" || suffix == "kb") mult = 1ull << 10;
    else if (suffix == "m" || suffix == "mib" || suffix == "mb") mult = 1ull << 20;
    else if (suffix == "g" || suffix == "gib" || suffix == "gb") mult = 1ull << 30;
    else return false;
    if (v > ~0ull / mult) return false;
    *out = static_cast<std::size_t>(v * mult);
    return true;
}

int read_settings(const weft_config_t* cfg, settings* out) {
    settings s;
    char buf[64];

    // Workers.
    if (cfg != nullptr && cfg->workers != 0) {
        if (cfg->workers < 1 || cfg->workers > tun::max_workers) {
            std::snprintf(buf, sizeof buf, "%d", cfg->workers);
            complain("weft_config_t.workers", buf, "an integer from 1 to " + std::to_string(tun::max_workers));
            return EINVAL;
        }
        s.workers = cfg->workers;
    } else if (const char* e = std::getenv("WEFT_WORKERS"); e != nullptr) {
        long v = 0;
        if (!parse_int(e, 1, tun::max_workers, &v)) {
            complain("WEFT_WORKERS", e, "an integer from 1 to " + std::to_string(tun::max_workers));
            return EINVAL;
        }
        s.workers = static_cast<int>(v);
    } else {
        s.workers = usable_cpus();
    }

    // Scheduling policy.
    const char* sched = (cfg != nullptr && cfg->sched != nullptr) ? cfg->sched : std::getenv("WEFT_SCHED");
    const char* sched_what = (cfg != nullptr && cfg->sched != nullptr) ? "weft_config_t.sched" : "WEFT_SCHED";
    if (sched == nullptr) sched = "ws";  // why: docs/design/ws.md, "The default policy"
    if (find_policy(sched) == nullptr) {
        complain(sched_what, sched, "one of " + policy_names());
        return EINVAL;
    }
    s.sched = sched;

    // Default stack size.
    std::string range = "a byte count from " + std::to_string(WEFT_STACK_MIN) +
                        " to 1GiB, optionally with a K, M or G suffix (e.g. 64K)";
    if (cfg != nullptr && cfg->stack_size != 0) {
        if (cfg->stack_size < WEFT_STACK_MIN || cfg->stack_size > tun::max_stack_size) {
            std::snprintf(buf, sizeof buf, "%zu", cfg->stack_size);
            complain("weft_config_t.stack_size", buf, range);
            return EINVAL;
        }
        s.stack_size = cfg->stack_size;
    } else if (const char* e = std::getenv("WEFT_STACK_SIZE"); e != nullptr) {
        std::size_t v = 0;
        if (!parse_bytes(e, &v) || v < WEFT_STACK_MIN || v > tun::max_stack_size) {
            complain("WEFT_STACK_SIZE", e, range);
            return EINVAL;
        }
        s.stack_size = v;
    } else {
        s.stack_size = tun::default_stack_size;
    }

    // Memory quota K of the space-efficient scheduler (seed 000; tunables.hpp).
    if (const char* e = std::getenv("WEFT_QUOTA"); e != nullptr) {
        std::size_t v = 0;
        if (!parse_bytes(e, &v) || v < tun::min_quota || v > tun::max_quota) {
            complain("WEFT_QUOTA", e,
                     "a byte count from 1K to 1024G, optionally with a K, M or G suffix (e.g. 64K)");
            return EINVAL;
        }
        s.quota = v;
    } else {
        s.quota = tun::default_quota;
    }

    // Statistics at exit.
    if (cfg != nullptr && cfg->stats != 0) {
        s.stats = true;
    } else if (const char* e = std::getenv("WEFT_STATS"); e != nullptr) {
        if (std::strcmp(e, "1") == 0 || std::strcmp(e, "on") == 0 || std::strcmp(e, "true") == 0) s.stats = true;
        else if (std::strcmp(e, "0") == 0 || std::strcmp(e, "off") == 0 || std::strcmp(e, "false") == 0 || *e == '\0')
            s.stats = false;
        else {
            complain("WEFT_STATS", e, "0 or 1 (also off/on, false/true)");
            return EINVAL;
        }
    }

    s.measure = s.stats || (cfg != nullptr && cfg->measure != 0);
    if (const char* e = std::getenv("WEFT_TRACE"); e != nullptr && *e != '\0') {
        s.trace_path = e;
        s.measure = true;
    }

    *out = std::move(s);
    return 0;
}

}  // namespace weft::detail

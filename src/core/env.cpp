// weft::detail — the one parser of WEFT_* values and weft_config_t fields; its
// rule is at the top of env.hpp and of docs/env.md.
#include "core/env.hpp"

#include <sched.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <span>
#include <string>

#include "adapt/probe.hpp"
#include "core/registry.hpp"
#include "core/tunables.hpp"
#include "sched/policy.hpp"

namespace weft::detail {

const char* env_value(const char* name) {
    const char* e = std::getenv(name);
    return (e != nullptr && *e != '\0') ? e : nullptr;
}

namespace {
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
}  // namespace

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i])) return false;
    return true;
}

void complain(const char* what, std::string_view value, const std::string& valid) {
    std::fprintf(stderr, "weft: %s='%.*s' is invalid: expected %s\n", what, static_cast<int>(value.size()),
                 value.data(), valid.c_str());
}

namespace {

// Rule 3: the index of `text` in `words`, ignoring case; -1 if absent.
int find_keyword(std::string_view text, std::span<const std::string_view> words) {
    int i = 0;
    for (std::string_view w : words) {
        if (iequals(text, w)) return i;
        ++i;
    }
    return -1;
}

std::string join_words(std::span<const std::string_view> words) {
    std::string s;
    for (std::string_view w : words) {
        if (!s.empty()) s += ", ";
        s += w;
    }
    return s;
}

// Rule 5's suffixes, in the order the messages list them.
struct byte_suffix {
    std::string_view text;
    unsigned shift;
};
constexpr byte_suffix kSuffixes[] = {{"K", 10}, {"KiB", 10}, {"M", 20}, {"MiB", 20}, {"G", 30}, {"GiB", 30}};

// A byte count in the largest of G, M, K that divides it exactly: 16384 -> "16K".
std::string show_bytes(std::size_t v) {
    constexpr byte_suffix units[] = {{"G", 30}, {"M", 20}, {"K", 10}};
    for (const byte_suffix& u : units)
        if (v != 0 && v % (std::size_t(1) << u.shift) == 0) return std::to_string(v >> u.shift) + std::string(u.text);
    return std::to_string(v);
}

std::string size_valid(std::size_t min, std::size_t max) {
    return "a size from " + show_bytes(min) + " to " + show_bytes(max) + ": digits with an optional suffix " +
           byte_suffixes() + " (e.g. 64K)";
}

// On/off values: the first kOnCount words mean on, the others off.
constexpr std::string_view kSwitchWords[] = {"1", "on", "true", "0", "off", "false"};
constexpr int kOnCount = 3;
constexpr std::string_view kDeadlockWords[] = {"abort", "off"};

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

bool parse_count(std::string_view text, unsigned long long max, unsigned long long* out) {
    if (text.empty()) return false;
    unsigned long long v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return false;
        unsigned d = static_cast<unsigned>(c - '0');
        if (v > (max - d) / 10) return false;  // v * 10 + d > max
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

bool parse_bytes(std::string_view text, std::size_t* out) {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    std::string_view suffix = text.substr(digits);
    unsigned shift = 0;
    if (!suffix.empty()) {
        const byte_suffix* found = nullptr;
        for (const byte_suffix& s : kSuffixes)
            if (iequals(suffix, s.text)) found = &s;
        if (found == nullptr) return false;
        shift = found->shift;
    }
    unsigned long long v = 0;
    if (!parse_count(text.substr(0, digits), ~0ull >> shift, &v)) return false;
    *out = static_cast<std::size_t>(v << shift);
    return true;
}

std::string byte_suffixes() {
    std::string s;
    constexpr std::size_t n = sizeof kSuffixes / sizeof kSuffixes[0];
    for (std::size_t i = 0; i < n; ++i) {
        if (i > 0) s += i + 1 == n ? " or " : ", ";
        s += kSuffixes[i].text;
    }
    return s;
}

// --- The message-passing transport's variables (docs/design/mpi.md) --------------------
// The peer timeout (docs/design/mpi.md, "A rank that dies"). Default: 30 s,
// three to four orders of magnitude above the longest a live peer takes to
// answer (its progress runs at every scheduling point, at most 1 ms apart
// when idle, plus a scheduler quantum of milliseconds when its rank waits for
// a CPU), and short against a user's patience with a hung program.
constexpr unsigned long long kPeerTimeoutDefaultMs = 30'000;
constexpr unsigned long long kPeerTimeoutMinMs = 100;         // below, scheduling noise could look like death
constexpr unsigned long long kPeerTimeoutMaxMs = 86'400'000;  // a day

int read_mpi_thread(bool* multiple) {
    static constexpr std::string_view kWords[] = {"funneled", "multiple"};
    *multiple = false;
    if (const char* v = env_value("WEFT_MPI_THREAD"); v != nullptr) {
        int k = find_keyword(v, kWords);
        if (k < 0) {
            complain("WEFT_MPI_THREAD", v, "one of " + join_words(kWords));
            return EINVAL;
        }
        *multiple = k == 1;
    }
    return 0;
}

int read_peer_timeout(std::int64_t* ns) {
    *ns = std::int64_t(kPeerTimeoutDefaultMs) * 1'000'000;
    if (const char* v = env_value("WEFT_NET_PEER_TIMEOUT"); v != nullptr) {
        unsigned long long ms = 0;
        if (iequals(v, "off")) {
            *ns = 0;
        } else if (parse_count(v, kPeerTimeoutMaxMs, &ms) && ms >= kPeerTimeoutMinMs) {
            *ns = std::int64_t(ms) * 1'000'000;
        } else {
            complain("WEFT_NET_PEER_TIMEOUT", v,
                     "a number of milliseconds from " + std::to_string(kPeerTimeoutMinMs) + " to " +
                         std::to_string(kPeerTimeoutMaxMs) + ", or off");
            return EINVAL;
        }
    }
    return 0;
}

int read_settings(const weft_config_t* cfg, settings* out) {
    settings s;

    // Workers.
    const std::string workers_valid = "an integer from 1 to " + std::to_string(tun::max_workers);
    if (cfg != nullptr && cfg->workers != 0) {
        if (cfg->workers < 1 || cfg->workers > tun::max_workers) {
            complain("weft_config_t.workers", std::to_string(cfg->workers), workers_valid);
            return EINVAL;
        }
        s.workers = cfg->workers;
    } else if (const char* e = env_value("WEFT_WORKERS"); e != nullptr) {
        unsigned long long v = 0;
        if (!parse_count(e, tun::max_workers, &v) || v < 1) {
            complain("WEFT_WORKERS", e, workers_valid);
            return EINVAL;
        }
        s.workers = static_cast<int>(v);
    } else {
        s.workers = usable_cpus();
    }

    // Scheduling policy.
    const bool sched_field = cfg != nullptr && cfg->sched != nullptr;
    const char* sched = sched_field ? cfg->sched : env_value("WEFT_SCHED");
    if (sched == nullptr) sched = "ws";  // why: docs/design/ws.md, "The default policy"
    const sched_policy_def* policy = registry<sched_policy_def>::find(sched);
    if (policy == nullptr) {
        complain(sched_field ? "weft_config_t.sched" : "WEFT_SCHED", sched,
                 "one of " + registry<sched_policy_def>::names());
        return EINVAL;
    }
    s.sched = policy->name;

    // Default stack size.
    if (cfg != nullptr && cfg->stack_size != 0) {
        if (cfg->stack_size < WEFT_STACK_MIN || cfg->stack_size > tun::max_stack_size) {
            complain("weft_config_t.stack_size", std::to_string(cfg->stack_size),
                     "a byte count from " + std::to_string(WEFT_STACK_MIN) + " to " +
                         std::to_string(tun::max_stack_size));
            return EINVAL;
        }
        s.stack_size = cfg->stack_size;
    } else if (const char* e = env_value("WEFT_STACK_SIZE"); e != nullptr) {
        std::size_t v = 0;
        if (!parse_bytes(e, &v) || v < WEFT_STACK_MIN || v > tun::max_stack_size) {
            complain("WEFT_STACK_SIZE", e, size_valid(WEFT_STACK_MIN, tun::max_stack_size));
            return EINVAL;
        }
        s.stack_size = v;
    } else {
        s.stack_size = tun::default_stack_size;
    }

    // Memory quota K of the space-efficient scheduler (Narlikar & Blelloch; tunables.hpp).
    if (const char* e = env_value("WEFT_QUOTA"); e != nullptr) {
        std::size_t v = 0;
        if (!parse_bytes(e, &v) || v < tun::min_quota || v > tun::max_quota) {
            complain("WEFT_QUOTA", e, size_valid(tun::min_quota, tun::max_quota));
            return EINVAL;
        }
        s.quota = v;
    } else {
        s.quota = tun::default_quota;
    }

    // Statistics at exit: the field is a tri-state, so that a program can force
    // them off whatever the environment says.
    const int stats_field = cfg != nullptr ? cfg->stats : WEFT_CONFIG_UNSET;
    if (stats_field == WEFT_CONFIG_ON || stats_field == WEFT_CONFIG_OFF) {
        s.stats = stats_field == WEFT_CONFIG_ON;
    } else if (stats_field != WEFT_CONFIG_UNSET) {
        complain("weft_config_t.stats", std::to_string(stats_field),
                 "WEFT_CONFIG_ON (1), WEFT_CONFIG_OFF (-1) or WEFT_CONFIG_UNSET (0)");
        return EINVAL;
    } else if (const char* e = env_value("WEFT_STATS"); e != nullptr) {
        int k = find_keyword(e, kSwitchWords);
        if (k < 0) {
            complain("WEFT_STATS", e, "one of " + join_words(kSwitchWords));
            return EINVAL;
        }
        s.stats = k < kOnCount;
    }

    // Deadlock report.
    if (const char* e = env_value("WEFT_DEADLOCK"); e != nullptr) {
        int k = find_keyword(e, kDeadlockWords);
        if (k < 0) {
            complain("WEFT_DEADLOCK", e, "one of " + join_words(kDeadlockWords));
            return EINVAL;
        }
        s.deadlock_abort = k == 0;
    }

    // The yield between an idle worker's failed rounds of steals (ws; Arora,
    // Blumofe & Plaxton). Off only for the experiment that shows what it is
    // for (weft-bench oversub): the idle loop then pause-spins as with the
    // other policies (core/worker.cpp).
    if (const char* e = env_value("WEFT_WS_YIELD"); e != nullptr) {
        int k = find_keyword(e, kSwitchWords);
        if (k < 0) {
            complain("WEFT_WS_YIELD", e, "one of " + join_words(kSwitchWords));
            return EINVAL;
        }
        s.ws_yield = k < kOnCount;
    }

    // Adaptive worker count (src/adapt; why schedstat is the default:
    // docs/design/adapt.md, "Two probes").
    {
        const bool field = cfg != nullptr && cfg->adapt != nullptr;
        const char* e = field ? cfg->adapt : env_value("WEFT_ADAPT");
        s.adapt = "schedstat";
        if (e != nullptr) {
            if (iequals(e, "off")) {
                s.adapt = "off";
            } else if (const adapt::probe_def* p = registry<adapt::probe_def>::find(e); p != nullptr) {
                s.adapt = p->name;
            } else {
                complain(field ? "weft_config_t.adapt" : "WEFT_ADAPT", e,
                         "one of " + registry<adapt::probe_def>::names() + ", off");
                return EINVAL;
            }
            s.adapt_explicit = true;
        }
        if (const char* iv = env_value("WEFT_ADAPT_INTERVAL"); iv != nullptr) {
            unsigned long long v = 0;
            if (!parse_count(iv, tun::adapt_max_interval_ms, &v) || v < tun::adapt_min_interval_ms) {
                complain("WEFT_ADAPT_INTERVAL", iv,
                         "a number of milliseconds from " + std::to_string(tun::adapt_min_interval_ms) + " to " +
                             std::to_string(tun::adapt_max_interval_ms));
                return EINVAL;
            }
            s.adapt_interval_ms = static_cast<int>(v);
        }
        // The machine-wide core budget (src/adapt/budget.hpp): "off", or the
        // POSIX shared-memory name of a budget of one's own (a "/" and a name
        // with no other "/").
        if (const char* b = env_value("WEFT_BUDGET"); b != nullptr) {
            std::string_view v = b;
            bool name_ok = v.size() >= 2 && v.size() <= 251 && v[0] == '/' && v.find('/', 1) == std::string_view::npos;
            if (iequals(v, "off")) {
                s.budget_name = "off";
            } else if (name_ok) {
                s.budget_name = b;
            } else {
                complain("WEFT_BUDGET", b, "off, or a shared-memory name: '/' then 1 to 250 characters, no other '/'");
                return EINVAL;
            }
        }
    }

    // Trace file: a path, taken as written (rule 2); opened by the runtime.
    if (const char* e = env_value("WEFT_TRACE"); e != nullptr) s.trace_path = e;

    // Message passing over MPI: read again by the transport when a job
    // starts, checked here so that a bad value never waits for that.
    if (int rc = read_mpi_thread(&s.mpi_thread_multiple); rc != 0) return rc;
    if (int rc = read_peer_timeout(&s.peer_timeout_ns); rc != 0) return rc;

    s.measure = s.stats || (cfg != nullptr && cfg->measure != 0) || !s.trace_path.empty();
    *out = std::move(s);
    return 0;
}

}  // namespace weft::detail

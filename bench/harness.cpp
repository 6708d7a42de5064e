// weft-bench harness: timing, statistics, JSON, tables, options, registry.
// See harness.hpp for the contract of each piece.
#include "harness.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <list>

#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sched/policy.hpp"

namespace weft::bench {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------

std::uint64_t now_ns() noexcept {
    using namespace std::chrono;
    return static_cast<std::uint64_t>(duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count());
}

void busy_for_ns(std::uint64_t ns) noexcept {
    std::uint64_t const end = now_ns() + ns;
    while (now_ns() < end) {
    }
}

// ---------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------

double percentile(std::vector<double> const& sorted, double p) {
    if (sorted.empty()) return 0;
    if (p <= 0) return sorted.front();
    if (p >= 1) return sorted.back();
    double const pos = p * static_cast<double>(sorted.size() - 1);
    auto const lo = static_cast<std::size_t>(std::floor(pos));
    std::size_t const hi = std::min(lo + 1, sorted.size() - 1);
    double const frac = pos - static_cast<double>(lo);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

summary summarize(std::vector<double> samples) {
    summary s;
    if (samples.empty()) return s;
    std::sort(samples.begin(), samples.end());
    s.n = samples.size();
    s.min = samples.front();
    s.max = samples.back();
    s.median = percentile(samples, 0.5);
    s.p10 = percentile(samples, 0.1);
    s.p90 = percentile(samples, 0.9);
    s.spread = s.median != 0 ? (s.p90 - s.p10) / s.median : 0;
    return s;
}

double median_of_ratios(std::vector<double> const& num, std::vector<double> const& den) {
    std::vector<double> ratios;
    for (std::size_t i = 0; i < num.size() && i < den.size(); ++i) ratios.push_back(num[i] / den[i]);
    return summarize(std::move(ratios)).median;
}

// ---------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------

std::string json_quote(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 2);
    out.push_back('"');
    for (char const c : s) {
        auto const u = static_cast<unsigned char>(c);
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (u < 0x20 || u == 0x7f) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", u);
                out += buf;
            } else {
                out.push_back(c);
            }
        }
    }
    out.push_back('"');
    return out;
}

std::string json_number(double v) {
    if (!std::isfinite(v)) return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.7g", v);
    return buf;
}

json_object& json_object::field(std::string_view key, std::string_view value_text) {
    if (!body_.empty()) body_ += ',';
    body_ += json_quote(key);
    body_ += ':';
    body_ += value_text;
    return *this;
}

json_object& json_object::add(std::string_view key, double v) { return field(key, json_number(v)); }
json_object& json_object::add(std::string_view key, int v) { return field(key, std::to_string(v)); }
json_object& json_object::add(std::string_view key, long v) { return field(key, std::to_string(v)); }
json_object& json_object::add(std::string_view key, long long v) { return field(key, std::to_string(v)); }
json_object& json_object::add(std::string_view key, unsigned v) { return field(key, std::to_string(v)); }
json_object& json_object::add(std::string_view key, unsigned long v) { return field(key, std::to_string(v)); }
json_object& json_object::add(std::string_view key, unsigned long long v) { return field(key, std::to_string(v)); }
json_object& json_object::add(std::string_view key, bool v) { return field(key, v ? "true" : "false"); }
json_object& json_object::add(std::string_view key, std::string_view v) { return field(key, json_quote(v)); }
json_object& json_object::add(std::string_view key, char const* v) {
    return v ? field(key, json_quote(v)) : add_null(key);
}
json_object& json_object::add(std::string_view key, std::string const& v) { return field(key, json_quote(v)); }
json_object& json_object::add_null(std::string_view key) { return field(key, "null"); }
json_object& json_object::add_raw(std::string_view key, std::string_view json) { return field(key, json); }

json_object& json_object::add(std::string_view key, std::vector<std::string> const& v) {
    std::string arr = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) arr += ',';
        arr += json_quote(v[i]);
    }
    arr += ']';
    return field(key, arr);
}

json_object& json_object::add_summary(std::string_view key, summary const& s) {
    std::string k(key);
    add(k, s.median);
    add(k + "_spread", s.spread);
    add(k + "_min", s.min);
    add(k + "_max", s.max);
    return *this;
}

std::string json_object::str() const { return "{" + body_ + "}"; }

// ---------------------------------------------------------------------------
// Tables
// ---------------------------------------------------------------------------

table::table(std::vector<std::string> headers, std::string align)
    : headers_(std::move(headers)), align_(std::move(align)) {
    if (align_.empty()) {
        align_.assign(headers_.size(), 'r');
        if (!align_.empty()) align_[0] = 'l';
    }
    align_.resize(headers_.size(), 'r');
}

void table::add_row(std::vector<std::string> cells) {
    cells.resize(headers_.size());
    rows_.push_back(std::move(cells));
}

void table::add_separator() { rows_.emplace_back(); }

namespace {
// Display width of UTF-8 text: counts code points, not bytes (so "±" is 1).
std::size_t display_width(std::string const& s) {
    std::size_t w = 0;
    for (char const c : s)
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++w;
    return w;
}
}  // namespace

void table::print(std::FILE* out) const {
    std::vector<std::size_t> width(headers_.size());
    for (std::size_t c = 0; c < headers_.size(); ++c) width[c] = display_width(headers_[c]);
    for (auto const& row : rows_)
        for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], display_width(row[c]));

    auto print_row = [&](std::vector<std::string> const& row) {
        std::string line;
        for (std::size_t c = 0; c < headers_.size(); ++c) {
            std::string const& cell = row[c];
            std::size_t const pad = width[c] - display_width(cell);
            if (c) line += "  ";
            if (align_[c] == 'r') line.append(pad, ' ');
            line += cell;
            if (align_[c] != 'r' && c + 1 < headers_.size()) line.append(pad, ' ');
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        std::fprintf(out, "%s\n", line.c_str());
    };
    auto rule = [&] {
        std::size_t total = 0;
        for (std::size_t c = 0; c < width.size(); ++c) total += width[c] + (c ? 2 : 0);
        std::string line;
        for (std::size_t i = 0; i < total; ++i) line += "-";
        std::fprintf(out, "%s\n", line.c_str());
    };
    print_row(headers_);
    rule();
    for (auto const& row : rows_) {
        if (row.empty())
            rule();
        else
            print_row(row);
    }
}

std::string fmt(double v, int decimals) {
    if (!std::isfinite(v)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

namespace {
std::string thousands(long long v) {
    std::string digits = std::to_string(v < 0 ? -v : v);
    std::string out;
    int n = 0;
    for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
        if (n && n % 3 == 0) out.push_back(',');
        out.push_back(*it);
        ++n;
    }
    if (v < 0) out.push_back('-');
    std::reverse(out.begin(), out.end());
    return out;
}
}  // namespace

std::string fmt_sig(double v) {
    if (!std::isfinite(v)) return "-";
    double const a = std::fabs(v);
    if (a >= 1000) return thousands(std::llround(v));
    if (a >= 100) return fmt(v, 0);
    if (a >= 10) return fmt(v, 1);
    if (a >= 1) return fmt(v, 2);
    if (a == 0) return "0";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

std::string fmt_pct(double fraction) {
    if (!std::isfinite(fraction)) return "-";
    return fmt(fraction * 100, fraction < 0.1 ? 1 : 0) + "%";
}

std::string fmt_ratio(double v) {
    if (!std::isfinite(v)) return "-";
    return fmt_sig(v) + "x";
}

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------

option_spec opt_rounds(int default_rounds) {
    return {.name = "rounds",
            .kind = opt_kind::integer,
            .metavar = "N",
            .default_value = std::to_string(default_rounds),
            .help = "repeated measurement rounds; figures are medians over them",
            .min = 1,
            .max = 100000};
}

option_spec opt_workers(int default_workers) {
    return {.name = "workers",
            .kind = opt_kind::integer,
            .metavar = "N",
            .default_value = std::to_string(default_workers),
            .help = "worker kernel threads of the weft runtime",
            .min = 1,
            .max = 4096};
}

option_spec opt_iters(long default_iters, std::string help) {
    return {.name = "iters",
            .kind = opt_kind::integer,
            .metavar = "N",
            .default_value = std::to_string(default_iters),
            .help = help.empty() ? "operations timed per round" : std::move(help),
            .min = 1,
            .max = 1e12};
}

namespace {
std::vector<std::string> sched_names() {
    std::vector<std::string> names;
    weft::detail::registry<weft::detail::sched_policy_def>::for_each(
        [&](weft::detail::sched_policy_def const& d) { names.emplace_back(d.name); });
    return names;
}
}  // namespace

option_spec opt_sched_list(std::string default_value, std::string help) {
    return {.name = "sched",
            .kind = opt_kind::list,
            .metavar = "LIST",
            .default_value = std::move(default_value),
            .help = std::move(help),
            .choices_of = sched_names};
}

option_spec opt_sched() {
    return {.name = "sched",
            .kind = opt_kind::string,
            .metavar = "NAME",
            .default_value = "",
            .help = "weft scheduling policy (default: WEFT_SCHED, else the runtime's default)"};
}

std::string const& options::raw(std::string_view name) const {
    auto it = values_.find(name);
    if (it == values_.end())
        die("internal error: option --%.*s was read but never declared", int(name.size()), name.data());
    return it->second;
}

long long options::integer(std::string_view name) const { return std::atoll(raw(name).c_str()); }
double options::number(std::string_view name) const { return std::strtod(raw(name).c_str(), nullptr); }
std::string const& options::string(std::string_view name) const { return raw(name); }
bool options::flag(std::string_view name) const { return raw(name) == "1"; }
bool options::given(std::string_view name) const { return given_.contains(name); }

std::vector<std::string> options::list(std::string_view name) const {
    std::vector<std::string> out;
    std::string const& s = raw(name);
    std::size_t start = 0;
    while (start <= s.size() && !s.empty()) {
        std::size_t const comma = s.find(',', start);
        std::size_t const end = comma == std::string::npos ? s.size() : comma;
        if (end > start) out.push_back(s.substr(start, end - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

void options::set(std::string const& name, std::string value, bool given) {
    values_[name] = std::move(value);
    if (given) given_.insert(name);
}

namespace {

std::string join(std::vector<std::string> const& v, char const* sep) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) out += sep;
        out += v[i];
    }
    return out;
}

std::string bound_text(double v) {
    if (v >= 1e18) return "inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", v);
    return buf;
}

std::vector<std::string> choices_of(option_spec const& spec) {
    return spec.choices_of != nullptr ? spec.choices_of() : spec.choices;
}

// Validates `value` for `spec`, returning its canonical text (sizes in bytes).
std::string validate(std::string const& command, option_spec const& spec, std::string const& value) {
    auto bad = [&](std::string const& what) -> usage_error {
        return usage_error(command + ": --" + spec.name + " expects " + what + ", got '" + value + "'");
    };
    auto range = [&](double v, std::string const& kind) {
        if (v < spec.min || v > spec.max)
            throw bad(kind + " in [" + bound_text(spec.min) + ", " + bound_text(spec.max) + "]");
    };
    switch (spec.kind) {
    case opt_kind::integer: {
        long long v = 0;
        auto const* first = value.data();
        auto const* last = value.data() + value.size();
        auto [ptr, ec] = std::from_chars(first, last, v);
        if (value.empty() || ec != std::errc{} || ptr != last)
            throw bad("an integer in [" + bound_text(spec.min) + ", " + bound_text(spec.max) + "]");
        range(static_cast<double>(v), "an integer");
        return std::to_string(v);
    }
    case opt_kind::size: {
        unsigned long long v = 0;
        auto const* first = value.data();
        auto const* last = value.data() + value.size();
        auto [ptr, ec] = std::from_chars(first, last, v);
        std::string suffix(ptr, last);
        std::transform(suffix.begin(), suffix.end(), suffix.begin(), ::tolower);
        unsigned long long mul = 1;
        if (suffix.empty() || suffix == "b")
            mul = 1;
        else if (suffix == "k" || suffix == "kib" || suffix == "kb")
            mul = 1ull << 10;
        else if (suffix == "m" || suffix == "mib" || suffix == "mb")
            mul = 1ull << 20;
        else if (suffix == "g" || suffix == "gib" || suffix == "gb")
            mul = 1ull << 30;
        else
            mul = 0;
        if (value.empty() || ec != std::errc{} || ptr == first || mul == 0)
            throw bad("a size in bytes, optionally with a K, M or G suffix");
        double const bytes = static_cast<double>(v) * static_cast<double>(mul);
        range(bytes, "a size");
        return std::to_string(v * mul);
    }
    case opt_kind::number: {
        char* end = nullptr;
        errno = 0;
        double const v = std::strtod(value.c_str(), &end);
        if (value.empty() || end != value.c_str() + value.size() || errno || !std::isfinite(v))
            throw bad("a number in [" + bound_text(spec.min) + ", " + bound_text(spec.max) + "]");
        range(v, "a number");
        return value;
    }
    case opt_kind::string: {
        std::vector<std::string> const choices = choices_of(spec);
        if (!choices.empty() && std::find(choices.begin(), choices.end(), value) == choices.end())
            throw bad("one of " + join(choices, ", "));
        return value;
    }
    case opt_kind::list: {
        options tmp;
        tmp.set("x", value, true);
        auto items = tmp.list("x");
        if (items.empty()) throw bad("a comma-separated list");
        std::vector<std::string> const choices = choices_of(spec);
        if (!choices.empty())
            for (auto const& item : items)
                if (std::find(choices.begin(), choices.end(), item) == choices.end())
                    throw usage_error(command + ": --" + spec.name + ": unknown name '" + item +
                                      "'; valid: " + join(choices, ", "));
        return value;
    }
    case opt_kind::flag: return "1";
    }
    return value;
}

}  // namespace

options parse_options(std::string const& command, std::vector<option_spec> const& specs,
                      std::vector<std::string> const& args) {
    options opts;
    auto find = [&](std::string_view name) -> option_spec const* {
        for (auto const& s : specs)
            if (s.name == name) return &s;
        return nullptr;
    };
    auto valid_list = [&] {
        std::vector<std::string> names;
        for (auto const& s : specs) names.push_back("--" + s.name);
        return join(names, ", ");
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string const& arg = args[i];
        if (arg.size() < 3 || arg.compare(0, 2, "--") != 0)
            throw usage_error(command + ": unexpected argument '" + arg +
                              "'; options start with --; valid: " + valid_list());
        std::string name = arg.substr(2);
        std::string value;
        bool has_value = false;
        if (auto eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name.resize(eq);
            has_value = true;
        }
        option_spec const* spec = find(name);
        if (!spec) throw usage_error(command + ": unknown option '--" + name + "'; valid options: " + valid_list());
        if (spec->kind == opt_kind::flag) {
            if (has_value) throw usage_error(command + ": --" + name + " takes no value");
            opts.set(name, "1", true);
            continue;
        }
        if (!has_value) {
            if (i + 1 >= args.size())
                throw usage_error(command + ": --" + name + " needs a value (" +
                                  (spec->metavar.empty() ? std::string("VALUE") : spec->metavar) + ")");
            value = args[++i];
        }
        opts.set(name, validate(command, *spec, value), true);
    }
    for (auto const& s : specs) {
        if (opts.given(s.name)) continue;
        if (s.kind == opt_kind::flag)
            opts.set(s.name, "0", false);
        else if (s.default_value.empty())
            opts.set(s.name, "", false);
        else  // canonical form too (a size default of "64K" reads as 65536)
            opts.set(s.name, validate(command + " (default)", s, s.default_value), false);
    }
    return opts;
}

std::string options_help(std::vector<option_spec> const& specs) {
    std::vector<std::pair<std::string, std::string>> rows;
    std::size_t w = 0;
    for (auto const& s : specs) {
        std::string left = "  --" + s.name;
        if (s.kind != opt_kind::flag) left += " " + (s.metavar.empty() ? std::string("VALUE") : s.metavar);
        std::string right = s.help;
        if (std::vector<std::string> const choices = choices_of(s); !choices.empty())
            right += " (" + join(choices, ", ") + ")";
        if (s.kind != opt_kind::flag && !s.default_value.empty()) right += " [default: " + s.default_value + "]";
        w = std::max(w, left.size());
        rows.emplace_back(std::move(left), std::move(right));
    }
    std::string out;
    for (auto const& [l, r] : rows) out += l + std::string(w - l.size() + 2, ' ') + r + "\n";
    return out;
}

// ---------------------------------------------------------------------------
// Registry
// ---------------------------------------------------------------------------

namespace {
// A list, so that pointers stay valid as experiments register; a function-local
// static, so that registration from other translation units' static
// initialisers never sees it unconstructed.
std::list<experiment>& registry() {
    static std::list<experiment> r;
    return r;
}
}  // namespace

registrar::registrar(experiment e) {
    if (e.name.empty() || !e.run) die("internal error: an experiment registered without a name or a run function");
    for (auto const& x : registry())
        if (x.name == e.name) die("internal error: two experiments are named '%s'", e.name.c_str());
    registry().push_back(std::move(e));
}

std::vector<experiment const*> experiments() {
    std::vector<experiment const*> out;
    for (auto const& e : registry()) out.push_back(&e);
    std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->name < b->name; });
    return out;
}

experiment const* find_experiment(std::string_view name) {
    for (auto const& e : registry())
        if (e.name == name) return &e;
    return nullptr;
}

std::vector<option_spec> const& common_options() {
    static std::vector<option_spec> const specs = {
        {.name = "json", .kind = opt_kind::flag, .help = "print one JSON object per line (JSONL) instead of tables"},
        {.name = "jsonl",
         .kind = opt_kind::string,
         .metavar = "FILE",
         .help = "also append the JSON lines to FILE (tables still go to stdout)"},
        {.name = "help", .kind = opt_kind::flag, .help = "describe this experiment and its options"},
    };
    return specs;
}

// ---------------------------------------------------------------------------
// Context
// ---------------------------------------------------------------------------

context::context(experiment const& exp, options opts) : exp_(&exp), opts_(std::move(opts)), start_ns_(now_ns()) {
    json_ = opts_.flag("json");
    if (std::string const& path = opts_.string("jsonl"); !path.empty()) {
        jsonl_ = std::fopen(path.c_str(), "a");
        if (!jsonl_) die("cannot open --jsonl file '%s': %s", path.c_str(), std::strerror(errno));
    }
}

context::~context() {
    if (jsonl_) std::fclose(jsonl_);
}

json_object context::record() const {
    json_object rec;
    rec.add("experiment", exp_->name);
    return rec;
}

void context::emit(json_object const& rec) {
    std::string const line = rec.str() + "\n";
    if (json_) {
        std::fputs(line.c_str(), stdout);
        std::fflush(stdout);
    }
    if (jsonl_) {
        std::fputs(line.c_str(), jsonl_);
        std::fflush(jsonl_);
    }
}

void context::print(table const& t, std::string_view title) {
    if (json_) return;
    if (!title.empty()) std::printf("%.*s\n", int(title.size()), title.data());
    t.print(stdout);
    std::fflush(stdout);
}

void context::say(char const* format, ...) {
    if (json_) return;
    va_list ap;
    va_start(ap, format);
    std::vprintf(format, ap);
    va_end(ap);
    std::fflush(stdout);
}

void context::progress(char const* format, ...) {
    std::FILE* out = json_ ? stderr : stdout;
    std::fprintf(out, "  [%s %.1f s] ", exp_->name.c_str(), double(now_ns() - start_ns_) * 1e-9);
    va_list ap;
    va_start(ap, format);
    std::vfprintf(out, format, ap);
    va_end(ap);
    std::fputc('\n', out);
    std::fflush(out);
}

void context::warn(char const* format, ...) {
    std::fflush(stdout);
    std::fprintf(stderr, "weft-bench %s: warning: ", exp_->name.c_str());
    va_list ap;
    va_start(ap, format);
    std::vfprintf(stderr, format, ap);
    va_end(ap);
    std::fputc('\n', stderr);
}

// ---------------------------------------------------------------------------
// Failing loudly
// ---------------------------------------------------------------------------

void check_failed(int rc, char const* what) { die("%s failed: %s (error %d)", what, std::strerror(rc), rc); }

void die(char const* format, ...) {
    std::fflush(stdout);
    std::fprintf(stderr, "weft-bench: ");
    va_list ap;
    va_start(ap, format);
    std::vfprintf(stderr, format, ap);
    va_end(ap);
    std::fputc('\n', stderr);
    std::fflush(stderr);
    _exit(1);
}

// ---------------------------------------------------------------------------
// CPUs
// ---------------------------------------------------------------------------

std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> out;
    if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) != 0) return out;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) out.push_back(c);
    return out;
}

int pin_current_thread(int cpu) noexcept {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

int pin_attr(pthread_attr_t* attr, int cpu) noexcept {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_attr_setaffinity_np(attr, sizeof set, &set);
}

int confine_to_cpus(int want) {
    std::vector<int> const cpus = allowed_cpus();
    cpu_set_t set;
    CPU_ZERO(&set);
    int n = 0;
    for (int c : cpus) {
        if (n == want) break;
        CPU_SET(c, &set);
        ++n;
    }
    if (n > 0 && sched_setaffinity(0, sizeof set, &set) != 0) die("sched_setaffinity: %s", std::strerror(errno));
    return n;
}

affinity_guard::affinity_guard() noexcept {
    CPU_ZERO(&saved_);
    ok_ = pthread_getaffinity_np(pthread_self(), sizeof saved_, &saved_) == 0;
}

affinity_guard::~affinity_guard() {
    if (ok_) pthread_setaffinity_np(pthread_self(), sizeof saved_, &saved_);
}

// ---------------------------------------------------------------------------
// Child processes
// ---------------------------------------------------------------------------

piped_child spawn_piped(std::string const& exe, std::vector<std::string> const& args,
                        std::vector<std::string> const& env) {
    std::vector<std::string> vars;
    for (char** e = environ; *e != nullptr; ++e) vars.emplace_back(*e);
    for (std::string const& change : env) {
        std::string const name = change.substr(0, change.find('='));
        std::erase_if(vars, [&](std::string const& v) {
            return v.size() > name.size() && v[name.size()] == '=' && v.compare(0, name.size(), name) == 0;
        });
        if (change.size() > name.size()) vars.push_back(change);
    }
    std::vector<std::string> argv_text = args;
    std::vector<char*> argv, envp;
    for (auto& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& v : vars) envp.push_back(v.data());
    envp.push_back(nullptr);

    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) die("pipe: %s", std::strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = 0;
    int const rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) die("cannot start '%s': %s", exe.c_str(), std::strerror(rc));
    return {pid, fds[0]};
}

int wait_child(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) die("waitpid(%d): %s", static_cast<int>(pid), std::strerror(errno));
    return status;
}

std::string run_piped(std::string const& exe, std::vector<std::string> const& args, std::vector<std::string> const& env,
                      int* status) {
    piped_child const child = spawn_piped(exe, args, env);
    std::string out;
    char buf[4096];
    for (;;) {
        ssize_t const got = read(child.out_fd, buf, sizeof buf);
        if (got > 0)
            out.append(buf, static_cast<std::size_t>(got));
        else if (got == 0 || errno != EINTR)
            break;
    }
    close(child.out_fd);
    *status = wait_child(child.pid);
    return out;
}

double number_after(std::string const& out, char const* key) {
    auto const at = out.find(key);
    if (at == std::string::npos) return -1;
    return std::strtod(out.c_str() + at + std::strlen(key), nullptr);
}

long long peak_on_line(std::string const& out, char const* key) {
    auto const at = out.find(key);
    if (at == std::string::npos) return -1;
    auto const eol = out.find('\n', at);
    auto const peak = out.find("(peak ", at);
    if (peak == std::string::npos || (eol != std::string::npos && peak > eol)) return -1;
    return std::strtoll(out.c_str() + peak + 6, nullptr, 10);
}

// ---------------------------------------------------------------------------
// Provenance
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Locating things
// ---------------------------------------------------------------------------

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
    // 3. Beside this source file (CMake passes absolute source paths, so
    //    __FILE__ names the source tree the binary was built from).
    if (fs::path here(__FILE__); here.is_absolute()) {
        if (auto p = here.parent_path() / "report" / "make_report.py"; is_file(p)) return p.string();
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

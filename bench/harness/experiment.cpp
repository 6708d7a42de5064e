// weft-bench harness — the registry of experiments and the context a run gets (harness/experiment.hpp).
#include "harness/experiment.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <list>

#include "harness/clock.hpp"
#include "harness/failure.hpp"

namespace weft::bench {

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

}  // namespace weft::bench

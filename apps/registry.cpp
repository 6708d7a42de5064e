// The registry of applications and their peer versions (apps/app.hpp).
#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "apps/app.hpp"
#include "weft/weft.h"

namespace weft::apps {
namespace {

// Function-local statics: registrars run during static initialisation, in an
// unspecified order across files.
std::vector<app>& apps_table() {
    static std::vector<app> t;
    return t;
}

std::map<std::pair<std::string, version>, peer_fn>& peers_table() {
    static std::map<std::pair<std::string, version>, peer_fn> t;
    return t;
}

constexpr std::pair<version, const char*> names[] = {
    {version::serial, "serial"}, {version::coarse, "coarse"}, {version::filaments, "filaments"},
    {version::omp, "omp"},       {version::tbb, "tbb"},
};

}  // namespace

int filament_workers() noexcept {
    const int n = weft_num_workers();
    return n > 0 ? n : 1;
}

const char* version_name(version v) noexcept {
    for (auto& [k, n] : names)
        if (k == v) return n;
    return "?";
}

bool parse_version(std::string_view s, version& v) noexcept {
    for (auto& [k, n] : names)
        if (s == n) {
            v = k;
            return true;
        }
    return false;
}

registrar::registrar(const app& a) {
    auto& t = apps_table();
    t.push_back(a);
    std::sort(t.begin(), t.end(), [](const app& x, const app& y) { return std::string_view(x.name) < y.name; });
}

peer_registrar::peer_registrar(const char* app_name, version v, peer_fn run) {
    peers_table()[{app_name, v}] = run;
}

const std::vector<app>& all_apps() { return apps_table(); }

const app* find_app(std::string_view name) {
    for (const app& a : apps_table())
        if (name == a.name) return &a;
    return nullptr;
}

peer_fn find_peer(std::string_view app_name, version v) {
    auto it = peers_table().find({std::string(app_name), v});
    return it == peers_table().end() ? nullptr : it->second;
}

std::vector<version> versions_of(const app& a) {
    std::vector<version> v{version::serial, version::coarse, version::filaments};
    for (version p : {version::omp, version::tbb})
        if (find_peer(a.name, p)) v.push_back(p);
    return v;
}

std::unique_ptr<instance> make_instance(const app& a, long size) {
    std::unique_ptr<instance> p = a.make(size);
    p->app_name_ = a.name;
    return p;
}

void instance::run(version v, int workers) {
    switch (v) {
        case version::serial: run_serial(); return;
        case version::coarse: run_coarse(workers); return;
        case version::filaments: run_filaments(); return;
        case version::omp:
        case version::tbb: break;
    }
    const char* name = app_name_ != nullptr ? app_name_ : "?";
    peer_fn f = find_peer(name, v);
    if (!f)
        throw std::logic_error(std::string(name) + ": no " + version_name(v) +
                               " version in this build (it needs OpenMP / oneTBB when configured)");
    f(*this, workers);
}

}  // namespace weft::apps

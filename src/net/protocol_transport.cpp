// weft::detail::net — the transport over protocol endpoints (protocol.hpp,
// make_protocol_transport): the one transport class of every link. It runs
// the endpoints' progress from the scheduler's hook (core/progress.hpp) and
// hands each weft_net_* call to the endpoint of the calling thread's node.
#include <sched.h>

#include <cerrno>
#include <cstdio>
#include <new>

#include "core/progress.hpp"
#include "core/ult.hpp"
#include "net/port.hpp"
#include "net/protocol.hpp"

namespace weft::detail::net {
namespace {

class protocol_transport final : public transport {
public:
    protocol_transport(const char* name, std::vector<std::unique_ptr<protocol>> eps)
        : name_(name), eps_(std::move(eps)) {}

    const char* name() const override { return name_; }
    std::uint32_t nodes() const override { return std::uint32_t(eps_.front()->size()); }
    std::int32_t home() const override { return eps_.size() == 1 ? eps_.front()->rank() : -1; }

    int start(job& j) override {
        std::size_t started = 0;
        int rc = 0;
        for (; started < eps_.size() && rc == 0; ++started) rc = eps_[started]->start(j);
        if (rc == 0 && !set_progress_hook(&progress_entry, this)) {
            std::fprintf(stderr, "weft: WEFT_NET=%s: another progress hook is set\n", name_);
            rc = EBUSY;
        }
        if (rc != 0)
            for (std::size_t i = 0; i < started; ++i) eps_[i]->stop_end();
        return rc;
    }

    // Blocks only the calling thread: it yields between tests.
    int all_started(job&) override {
        for (auto& e : eps_)
            if (int rc = e->barrier_begin(); rc != 0) return rc;
        for (unsigned spins = 0;; ++spins) {
            bool all = true;
            for (auto& e : eps_) {
                bool done = false;
                if (int rc = e->barrier_test(&done); rc != 0) return rc;
                all &= done;
            }
            if (all) return 0;
            weft_thread_yield();
            if (spins % 64 == 63) sched_yield();  // oversubscribed ranks: let the others run
        }
    }

    void stop(job&) override {
        for (auto& e : eps_) e->stop_begin();
        for (unsigned spins = 0;; ++spins) {
            bool all = true;
            for (auto& e : eps_) all &= e->stop_poll();
            if (all) break;
            weft_thread_yield();
            if (spins % 64 == 63) sched_yield();  // oversubscribed ranks: let the others run
        }
        clear_progress_hook();
        for (auto& e : eps_) e->stop_end();
    }

    int send(const weft_port_id_t& to, msg_header h, const void* buf, std::size_t len) override {
        return of(h.source).send(to, h, buf, len);
    }

    std::int64_t first_look(std::uint32_t node) const override { return caller().first_look(node); }

    int look(std::uint32_t node, std::int64_t* next_ns) override { return caller().look(node, next_ns); }

    void report_loss(std::uint32_t node, std::uint64_t sender, const weft_port_id_t& to) override {
        of(to.node).report_loss(node, sender, to);
    }

private:
    static bool progress_entry(void* self, bool waiting) {
        bool did = false;
        for (auto& e : static_cast<protocol_transport*>(self)->eps_) did |= e->progress(waiting);
        return did;
    }

    protocol& of(std::uint32_t node) const {
        return eps_.size() == 1 ? *eps_.front() : *eps_[node < eps_.size() ? node : 0];
    }

    // The calling thread's node's endpoint.
    protocol& caller() const {
        if (eps_.size() == 1) return *eps_.front();
        ult* u = current_ult();
        return of(u != nullptr ? u->node : 0);
    }

    const char* name_;
    std::vector<std::unique_ptr<protocol>> eps_;
};

spinlock g_next_lock;
std::unique_ptr<link> g_next_link;  // use_link_once's, until the next init takes it
const char* g_next_name = nullptr;

int make_named(const char* name, std::vector<std::unique_ptr<protocol>> eps, std::unique_ptr<transport>* out) {
    if (eps.empty()) return EINVAL;
    out->reset(new (std::nothrow) protocol_transport(name, std::move(eps)));
    return *out ? 0 : ENOMEM;
}

}  // namespace

void use_link_once(std::unique_ptr<link> l, const char* name) {
    lock_guard<spinlock> g(g_next_lock);
    g_next_link = std::move(l);
    g_next_name = name;
}

bool take_link_once(std::unique_ptr<transport>* out, int* rc) {
    std::unique_ptr<link> l;
    const char* name = nullptr;
    {
        lock_guard<spinlock> g(g_next_lock);
        if (!g_next_link) return false;
        l = std::move(g_next_link);
        name = g_next_name;
    }
    std::vector<std::unique_ptr<protocol>> eps;
    eps.emplace_back(new (std::nothrow) protocol(std::move(l), 0));
    *rc = eps.back() ? make_named(name, std::move(eps), out) : ENOMEM;
    return true;
}

int make_protocol_transport(const transport_config& cfg, std::vector<std::unique_ptr<protocol>> eps,
                            std::unique_ptr<transport>* out) {
    return make_named(cfg.def->name, std::move(eps), out);
}

}  // namespace weft::detail::net

// The in-process transport: every node of the job lives in this process, so
// a message to another node is put into the destination port directly. Its
// one addition is the injected latency (WEFT_NET_LATENCY): a message becomes
// receivable alpha + beta * bytes ns after its send, the cost model of
// Felten & McNamee, "Improving the performance of message-passing
// applications by multithreading" (§5: alpha_R + beta_R * length), so that a program's overlap of
// computation and communication can be studied on one machine. The delay is
// the message's ready time; a receiver that finds it at the head of the port
// waits for that time on the core's timers (port.cpp).
#include <cerrno>
#include <climits>
#include <new>

#include "core/wait.hpp"
#include "net/port.hpp"
#include "net/transport.hpp"

namespace weft::detail::net {
namespace {

class inproc final : public transport {
public:
    explicit inproc(const transport_config& cfg)
        : name_(cfg.def->name), alpha_(cfg.alpha_ns), beta_(cfg.beta_ns_per_byte) {}

    const char* name() const override { return name_; }

    int send(const weft_port_id_t& to, msg_header h, const void* buf, std::size_t len) override {
        job* j = current_job();
        h.sent_ns = monotonic_ns();
        // Saturates far beyond any run's length (alpha and beta are bounded
        // when read; a length may be anything).
        constexpr std::int64_t kFar = INT64_MAX / 4;
        __int128 delay = __int128(alpha_) + __int128(beta_) * __int128(len);
        h.ready_ns = delay >= kFar ? kFar : h.sent_ns + static_cast<std::int64_t>(delay);
        return port_put(*j, to, h, buf, len);
    }

private:
    const char* name_;
    std::int64_t alpha_;
    std::int64_t beta_;
};

const transport_def inproc_transport = {
    .name = "inproc",
    .description = "every node in this process, with the injected latency alpha + beta * bytes",
    .make =
        [](const transport_config& cfg, std::unique_ptr<transport>* out) {
            out->reset(new (std::nothrow) inproc(cfg));
            return *out ? 0 : ENOMEM;
        },
};

}  // namespace
WEFT_REGISTER(inproc_transport);
}  // namespace weft::detail::net

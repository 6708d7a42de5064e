// The mpi transport's frame decoder (wire.hpp): every check a received frame
// passes before the transport acts on it.
#include "net/wire.hpp"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace weft::detail::net {
namespace {

wire_error fail(decoded_frame* out, wire_error e, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

wire_error fail(decoded_frame* out, wire_error e, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(out->why, sizeof out->why, fmt, ap);
    va_end(ap);
    out->payload = nullptr;
    out->payload_len = 0;
    return e;
}

}  // namespace

const char* wire_error_name(wire_error e) {
    switch (e) {
    case wire_error::none: return "no error";
    case wire_error::truncated: return "truncated frame";
    case wire_error::bad_magic: return "not a weft frame";
    case wire_error::bad_version: return "unknown frame version";
    case wire_error::bad_kind: return "unknown frame kind";
    case wire_error::bad_flags: return "flags or reserved bits set";
    case wire_error::length_mismatch: return "payload length mismatch";
    case wire_error::oversized: return "oversized frame";
    case wire_error::bad_node: return "node out of range";
    case wire_error::bad_fields: return "field not allowed for the kind";
    }
    return "unknown error";
}

void encode_header(const wire_header& h, void* out) { std::memcpy(out, &h, sizeof h); }

wire_error decode_frame(const void* bytes, std::size_t n, const wire_context& ctx, decoded_frame* out) {
    out->why[0] = '\0';
    if (bytes == nullptr || n < kWireHeaderBytes)
        return fail(out, wire_error::truncated, "%zu bytes, a frame has at least the %zu of its header", n,
                    kWireHeaderBytes);
    wire_header& h = out->h;
    std::memcpy(&h, bytes, sizeof h);
    if (h.magic != kWireMagic)
        return fail(out, wire_error::bad_magic, "magic 0x%08" PRIx32 ", expected 0x%08" PRIx32, h.magic, kWireMagic);
    if (h.version != kWireVersion)
        return fail(out, wire_error::bad_version, "version %u, this build reads version %u", unsigned(h.version),
                    unsigned(kWireVersion));
    if (h.kind < std::uint8_t(frame_kind::data) || h.kind > std::uint8_t(frame_kind::resume))
        return fail(out, wire_error::bad_kind, "kind %u, valid kinds are 1 to %u", unsigned(h.kind),
                    unsigned(frame_kind::resume));
    if ((h.flags & ~kFlagBulk) != 0 || h.reserved != 0)
        return fail(out, wire_error::bad_flags, "flags 0x%04x, reserved 0x%08" PRIx32 ": the only flag is 0x%04x "
                    "(bulk) and reserved must be 0", unsigned(h.flags), h.reserved, unsigned(kFlagBulk));
    bool bulk = (h.flags & kFlagBulk) != 0;
    if (bulk && h.kind != std::uint8_t(frame_kind::data))
        return fail(out, wire_error::bad_flags, "the bulk flag on a kind-%u frame: only data frames have a bulk "
                    "payload", unsigned(h.kind));
    if (h.len > kWireMaxPayload)
        return fail(out, wire_error::oversized, "len %" PRIu64 " is above the limit of %" PRIu64 " bytes", h.len,
                    kWireMaxPayload);
    std::size_t follows = n - kWireHeaderBytes;
    if (bulk && (follows != 0 || h.len == 0))
        return fail(out, wire_error::length_mismatch, "a bulk frame of len %" PRIu64 " with %zu bytes after its "
                    "header: it has none, and a len above 0", h.len, follows);
    if (!bulk && h.len != follows)
        return fail(out, wire_error::length_mismatch, "len %" PRIu64 " but %zu bytes follow the header", h.len,
                    follows);
    if (h.src_node >= ctx.nodes || h.src_node != ctx.from)
        return fail(out, wire_error::bad_node, "src_node %" PRIu32 " from node %" PRIu32 " of %" PRIu32
                    ": it must be the sender's own node", h.src_node, ctx.from, ctx.nodes);
    if (h.dst_node >= ctx.nodes)
        return fail(out, wire_error::bad_node, "dst_node %" PRIu32 ", the job has %" PRIu32 " nodes", h.dst_node,
                    ctx.nodes);
    auto kind = frame_kind(h.kind);
    if (kind != frame_kind::data && h.len != 0)
        return fail(out, wire_error::bad_fields, "a kind-%u frame with %" PRIu64 " bytes of payload: only data "
                    "frames carry one", unsigned(h.kind), h.len);
    switch (kind) {
    case frame_kind::data:
    case frame_kind::probe:
        if (h.dst_node != ctx.self)
            return fail(out, wire_error::bad_node, "a kind-%u frame for a port of node %" PRIu32 " reached node %"
                        PRIu32, unsigned(h.kind), h.dst_node, ctx.self);
        break;
    case frame_kind::credit:
        if (h.arg0 > kWireMaxCreditMsgs)
            return fail(out, wire_error::bad_fields, "a credit of %" PRIu64 " messages, at most %" PRIu64, h.arg0,
                        kWireMaxCreditMsgs);
        if (h.arg1 > kWireMaxPayload)
            return fail(out, wire_error::bad_fields, "a credit of %" PRIu64 " bytes, at most %" PRIu64, h.arg1,
                        kWireMaxPayload);
        break;
    case frame_kind::probe_reply:
    case frame_kind::nack:
        if (h.tag < 0 || h.tag > 4095)
            return fail(out, wire_error::bad_fields, "errno %" PRId32 " in a kind-%u frame: expected 0 to 4095",
                        h.tag, unsigned(h.kind));
        if (kind == frame_kind::nack && h.tag == 0)
            return fail(out, wire_error::bad_fields, "a nack with errno 0");
        break;
    case frame_kind::hold:
    case frame_kind::resume:
        if (h.dst_node != ctx.from)
            return fail(out, wire_error::bad_node, "a kind-%u frame from node %" PRIu32 " about a port of node %"
                        PRIu32 ": only a port's own node holds or resumes it", unsigned(h.kind), ctx.from,
                        h.dst_node);
        break;
    case frame_kind::credit_request:
    case frame_kind::bye:
        break;
    }
    out->payload = h.len != 0 && !bulk ? static_cast<const unsigned char*>(bytes) + kWireHeaderBytes : nullptr;
    out->payload_len = std::size_t(h.len);
    out->bulk = bulk;
    return wire_error::none;
}

}  // namespace weft::detail::net

// The RPC frame header: encode, and a decoder that checks every field
// (rpc_frame.hpp has the layout).
#include "net/rpc_frame.hpp"

#include <cstring>

namespace weft::detail::net {
namespace {

template <class T>
T load(const unsigned char* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

template <class T>
void store(unsigned char* p, T v) {
    std::memcpy(p, &v, sizeof v);
}

}  // namespace

const char* frame_error_text(frame_error e) {
    switch (e) {
        case frame_error::none: return "no error";
        case frame_error::truncated_header: return "shorter than the 48-byte RPC header";
        case frame_error::bad_magic: return "not an RPC frame (bad magic number)";
        case frame_error::bad_version: return "RPC frame version is not 1";
        case frame_error::bad_kind: return "RPC frame kind is neither request (1) nor reply (2)";
        case frame_error::bad_flags: return "RPC frame flags are not 0";
        case frame_error::bad_status: return "RPC frame status is invalid (a request's must be 0, a reply's 0..4095)";
        case frame_error::bad_reply_to: return "RPC reply carries a reply port";
        case frame_error::payload_too_large: return "RPC frame announces a payload above 64 MiB";
        case frame_error::truncated_payload: return "RPC frame is shorter than its header's payload length";
        case frame_error::trailing_bytes: return "RPC frame is longer than its header's payload length";
    }
    return "unknown RPC frame error";
}

decoded_frame decode_frame(const void* bytes, std::size_t len) {
    decoded_frame d;
    const auto* b = static_cast<const unsigned char*>(bytes);
    if (len < kFrameHeader) {
        d.error = frame_error::truncated_header;
        return d;
    }
    if (load<std::uint32_t>(b) != kFrameMagic) {
        d.error = frame_error::bad_magic;
        return d;
    }
    if (b[4] != kFrameVersion) {
        d.error = frame_error::bad_version;
        return d;
    }
    if (b[5] != std::uint8_t(frame_kind::request) && b[5] != std::uint8_t(frame_kind::reply)) {
        d.error = frame_error::bad_kind;
        return d;
    }
    frame& f = d.f;
    f.kind = frame_kind(b[5]);
    f.fn_id = load<std::uint32_t>(b + 8);
    f.status = load<std::int32_t>(b + 12);
    f.sig = load<std::uint64_t>(b + 16);
    f.call_id = load<std::uint64_t>(b + 24);
    f.reply_to.node = load<std::uint32_t>(b + 32);
    f.reply_to.index = load<std::uint32_t>(b + 36);
    f.reply_to.gen = load<std::uint32_t>(b + 40);
    f.payload_len = load<std::uint32_t>(b + 44);
    d.header_read = true;
    if (load<std::uint16_t>(b + 6) != 0) {
        d.error = frame_error::bad_flags;
    } else if (f.kind == frame_kind::request ? f.status != 0 : (f.status < 0 || f.status > kFrameMaxStatus)) {
        d.error = frame_error::bad_status;
    } else if (f.kind == frame_kind::reply && (f.reply_to.node | f.reply_to.index | f.reply_to.gen) != 0) {
        d.error = frame_error::bad_reply_to;
    } else if (f.payload_len > kFrameMaxPayload) {
        d.error = frame_error::payload_too_large;
    } else if (len - kFrameHeader < f.payload_len) {
        d.error = frame_error::truncated_payload;
    } else if (len - kFrameHeader > f.payload_len) {
        d.error = frame_error::trailing_bytes;
    } else {
        f.payload = b + kFrameHeader;
    }
    return d;
}

void encode_header(const frame& f, void* out) {
    auto* b = static_cast<unsigned char*>(out);
    store<std::uint32_t>(b, kFrameMagic);
    b[4] = kFrameVersion;
    b[5] = std::uint8_t(f.kind);
    store<std::uint16_t>(b + 6, 0);
    store<std::uint32_t>(b + 8, f.fn_id);
    store<std::int32_t>(b + 12, f.status);
    store<std::uint64_t>(b + 16, f.sig);
    store<std::uint64_t>(b + 24, f.call_id);
    store<std::uint32_t>(b + 32, f.reply_to.node);
    store<std::uint32_t>(b + 36, f.reply_to.index);
    store<std::uint32_t>(b + 40, f.reply_to.gen);
    store<std::uint32_t>(b + 44, f.payload_len);
}

}  // namespace weft::detail::net

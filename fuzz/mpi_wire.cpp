// libFuzzer target: the mpi transport's wire format (src/net/wire.cpp), for a
// job size, receiving node and source node taken from the input's first three
// bytes. The frame is either the rest of the input as it is (raw), or, when
// the first byte's top bit is set, built field by field from the rest of the
// input (mostly valid values, so that every kind's rules are reached) and
// encoded with encode_header, as the transport builds the frames it sends.
//
// Invariants, each able to fail on its own:
//   - decode_frame never reads outside the bytes; an error has its name and a
//     non-empty reason;
//   - it accepts a frame exactly when the rules of wire.hpp (restated below,
//     from the documented layout, independently of the decoder) hold;
//   - an accepted frame's fields are the bytes at the offsets wire.hpp
//     documents, and it announces exactly the payload that follows (a bulk
//     frame: none, and a len above 0);
//   - a header rebuilt field by field from those fields and encoded with
//     encode_header is the frame's header byte for byte, and the rebuilt frame
//     decodes again to the same fields and payload;
//   - a frame built from fields decodes to exactly those fields.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "net/wire.hpp"

using namespace weft::detail::net;

namespace {

template <class T>
T at(const unsigned char* b, std::size_t off) {
    T v;
    std::memcpy(&v, b + off, sizeof v);
    return v;
}

// The header's fields read from the offsets of wire.hpp's layout table, and
// assigned one by one (never a copy of the whole struct).
wire_header read_documented(const unsigned char* b) {
    wire_header h;
    h.magic = at<std::uint32_t>(b, 0);
    h.version = at<std::uint8_t>(b, 4);
    h.kind = at<std::uint8_t>(b, 5);
    h.flags = at<std::uint16_t>(b, 6);
    h.tag = at<std::int32_t>(b, 8);
    h.src_node = at<std::uint32_t>(b, 12);
    h.dst_node = at<std::uint32_t>(b, 16);
    h.dst_index = at<std::uint32_t>(b, 20);
    h.dst_gen = at<std::uint32_t>(b, 24);
    h.reserved = at<std::uint32_t>(b, 28);
    h.sent_ns = at<std::int64_t>(b, 32);
    h.len = at<std::uint64_t>(b, 40);
    h.arg0 = at<std::uint64_t>(b, 48);
    h.arg1 = at<std::uint64_t>(b, 56);
    return h;
}

bool same_fields(const wire_header& a, const wire_header& b) {
    return a.magic == b.magic && a.version == b.version && a.kind == b.kind && a.flags == b.flags &&
           a.tag == b.tag && a.src_node == b.src_node && a.dst_node == b.dst_node && a.dst_index == b.dst_index &&
           a.dst_gen == b.dst_gen && a.reserved == b.reserved && a.sent_ns == b.sent_ns && a.len == b.len &&
           a.arg0 == b.arg0 && a.arg1 == b.arg1;
}

// wire.hpp's rules for a frame of header h followed by `follows` bytes: the
// first one broken, or nullptr when the frame is valid.
const char* broken_rule(const wire_header& h, std::size_t follows, const wire_context& c) {
    if (h.magic != kWireMagic) return "magic";
    if (h.version != kWireVersion) return "version";
    if (h.kind < 1 || h.kind > 9) return "kind";
    if ((h.flags & ~kFlagBulk) != 0 || h.reserved != 0) return "flags/reserved";
    bool bulk = (h.flags & kFlagBulk) != 0;
    auto kind = frame_kind(h.kind);
    if (bulk && kind != frame_kind::data) return "bulk on a control frame";
    if (h.len > kWireMaxPayload) return "len above the limit";
    if (bulk ? follows != 0 || h.len == 0 : h.len != follows) return "len against the bytes that follow";
    if (h.src_node != c.from || h.src_node >= c.nodes || h.dst_node >= c.nodes) return "nodes";
    if (kind != frame_kind::data && h.len != 0) return "payload on a control frame";
    if ((kind == frame_kind::data || kind == frame_kind::probe) && h.dst_node != c.self) return "not for this node";
    if (kind == frame_kind::credit && (h.arg0 > kWireMaxCreditMsgs || h.arg1 > kWireMaxPayload)) return "credit";
    if (kind == frame_kind::probe_reply && (h.tag < 0 || h.tag > 4095)) return "probe_reply errno";
    if (kind == frame_kind::nack && (h.tag < 1 || h.tag > 4095)) return "nack errno";
    if ((kind == frame_kind::hold || kind == frame_kind::resume) && h.dst_node != c.from) return "hold/resume port";
    return nullptr;
}

// A value that is usually `good` and sometimes anything.
template <class T>
T mostly(FuzzedDataProvider& in, T good) {
    return in.ConsumeIntegralInRange<int>(0, 7) != 0 ? good : in.ConsumeIntegral<T>();
}

// A frame built from fields as the transport builds one: header fields
// assigned, encoded with encode_header, the payload after it (or none: bulk).
std::vector<unsigned char> build(FuzzedDataProvider& in, const wire_context& c, wire_header* fields) {
    wire_header h;
    h.magic = mostly(in, kWireMagic);
    h.version = mostly(in, kWireVersion);
    h.kind = std::uint8_t(in.ConsumeIntegralInRange<int>(0, 10));
    h.flags = mostly<std::uint16_t>(in, in.ConsumeBool() ? kFlagBulk : 0);
    h.tag = in.ConsumeBool() ? in.ConsumeIntegralInRange<std::int32_t>(-1, 4096) : in.ConsumeIntegral<std::int32_t>();
    h.src_node = mostly(in, c.from);
    h.dst_node = mostly(in, in.ConsumeBool() ? c.self : c.from);
    h.dst_index = in.ConsumeIntegral<std::uint32_t>();
    h.dst_gen = in.ConsumeIntegral<std::uint32_t>();
    h.reserved = mostly<std::uint32_t>(in, 0);
    h.sent_ns = in.ConsumeIntegral<std::int64_t>();
    std::uint64_t limit = in.ConsumeBool() ? kWireMaxCreditMsgs + 1 : kWireMaxPayload + 1;
    h.arg0 = in.ConsumeBool() ? in.ConsumeIntegralInRange<std::uint64_t>(0, limit) : in.ConsumeIntegral<std::uint64_t>();
    h.arg1 = in.ConsumeBool() ? in.ConsumeIntegralInRange<std::uint64_t>(0, kWireMaxPayload + 1)
                              : in.ConsumeIntegral<std::uint64_t>();
    bool bulk = (h.flags & kFlagBulk) != 0;
    std::uint64_t bulk_len = mostly<std::uint64_t>(in, in.ConsumeIntegralInRange<std::uint64_t>(0, kWireMaxPayload + 1));
    bool len_matches = in.ConsumeIntegralInRange<int>(0, 7) != 0;
    std::uint64_t len_other = in.ConsumeIntegral<std::uint64_t>();
    std::vector<unsigned char> payload = bulk ? std::vector<unsigned char>{} : in.ConsumeRemainingBytes<unsigned char>();
    h.len = bulk ? bulk_len : len_matches ? payload.size() : len_other;
    std::vector<unsigned char> frame(kWireHeaderBytes + payload.size());
    encode_header(h, frame.data());
    if (!payload.empty()) std::memcpy(frame.data() + kWireHeaderBytes, payload.data(), payload.size());
    *fields = h;
    return frame;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 3) return 0;
    wire_context ctx;
    ctx.nodes = 1u + data[0] % 8u;
    ctx.self = data[1] % ctx.nodes;
    ctx.from = data[2] % ctx.nodes;
    bool from_fields = (data[0] & 0x80) != 0;

    std::vector<unsigned char> frame;
    wire_header built;
    if (from_fields) {
        FuzzedDataProvider in(data + 3, size - 3);
        frame = build(in, ctx, &built);
    } else {
        frame.assign(data + 3, data + size);  // its own allocation: ASan sees a read past the end
    }
    const unsigned char* bytes = frame.data();
    std::size_t n = frame.size();

    decoded_frame d;
    wire_error e = decode_frame(bytes, n, ctx, &d);
    const char* rule = n < kWireHeaderBytes ? "truncated" : broken_rule(read_documented(bytes), n - kWireHeaderBytes, ctx);
    if (e != wire_error::none) {
        if (wire_error_name(e) == nullptr || wire_error_name(e)[0] == '\0' || d.why[0] == '\0') std::abort();
        if (std::memchr(d.why, '\0', sizeof d.why) == nullptr) std::abort();
        if (rule == nullptr) std::abort();  // a valid frame rejected
        return 0;
    }
    if (rule != nullptr) std::abort();  // a frame breaking a rule accepted
    const wire_header& h = d.h;
    if (!same_fields(h, read_documented(bytes))) std::abort();
    if (from_fields && !same_fields(h, built)) std::abort();
    if (h.len != d.payload_len || d.bulk != ((h.flags & kFlagBulk) != 0)) std::abort();
    if (d.bulk) {
        if (n != kWireHeaderBytes || d.payload_len == 0 || d.payload != nullptr ||
            frame_kind(h.kind) != frame_kind::data)
            std::abort();
    } else {
        if (n != kWireHeaderBytes + d.payload_len) std::abort();
        if (d.payload_len != 0 && d.payload != bytes + kWireHeaderBytes) std::abort();
        if (d.payload_len == 0 && d.payload != nullptr) std::abort();
    }

    // Re-encode from the fields, then decode the rebuilt frame again.
    std::vector<unsigned char> again(n);
    encode_header(read_documented(bytes), again.data());
    if (std::memcmp(again.data(), bytes, kWireHeaderBytes) != 0) std::abort();
    if (d.payload_len != 0 && !d.bulk) std::memcpy(again.data() + kWireHeaderBytes, d.payload, d.payload_len);
    decoded_frame d2;
    if (decode_frame(again.data(), again.size(), ctx, &d2) != wire_error::none) std::abort();
    if (!same_fields(d2.h, h) || d2.bulk != d.bulk || d2.payload_len != d.payload_len) std::abort();
    if (d.payload_len != 0 && !d.bulk && std::memcmp(d2.payload, d.payload, d.payload_len) != 0) std::abort();
    return 0;
}

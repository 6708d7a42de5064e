// The mpi transport's frame decoder (src/net/wire.hpp): a well-formed frame of
// every kind decodes; each malformed one is rejected with the error that names
// what is wrong (and a reason text), whatever the bytes.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <vector>

#include "net/wire.hpp"

namespace {

using namespace weft::detail::net;

constexpr wire_context kCtx{4, 1, 2};  // 4 nodes; we are node 1; the frame came from node 2

std::vector<unsigned char> frame(const wire_header& h, std::size_t payload) {
    std::vector<unsigned char> b(kWireHeaderBytes + payload);
    encode_header(h, b.data());
    for (std::size_t i = 0; i < payload; ++i) b[kWireHeaderBytes + i] = static_cast<unsigned char>(i);
    return b;
}

wire_header data_header(std::size_t len) {
    wire_header h;
    h.kind = std::uint8_t(frame_kind::data);
    h.tag = 9;
    h.src_node = 2;
    h.dst_node = 1;
    h.dst_index = 3;
    h.len = len;
    return h;
}

wire_error decode(const std::vector<unsigned char>& b, decoded_frame* f) {
    return decode_frame(b.data(), b.size(), kCtx, f);
}

TEST(NetWire, data_frame_decodes) {
    auto b = frame(data_header(100), 100);
    decoded_frame f;
    ASSERT_EQ(decode(b, &f), wire_error::none) << f.why;
    EXPECT_EQ(f.h.tag, 9);
    EXPECT_EQ(f.h.dst_index, 3u);
    ASSERT_EQ(f.payload_len, 100u);
    EXPECT_EQ(f.payload, b.data() + kWireHeaderBytes);
    EXPECT_EQ(f.payload[99], 99);
}

TEST(NetWire, empty_data_frame_has_no_payload_pointer) {
    auto b = frame(data_header(0), 0);
    decoded_frame f;
    ASSERT_EQ(decode(b, &f), wire_error::none) << f.why;
    EXPECT_EQ(f.payload, nullptr);
    EXPECT_EQ(f.payload_len, 0u);
}

TEST(NetWire, bulk_data_frame_is_its_header_alone) {
    wire_header h = data_header(100000);
    h.flags = kFlagBulk;
    auto b = frame(h, 0);
    decoded_frame f;
    ASSERT_EQ(decode(b, &f), wire_error::none) << f.why;
    EXPECT_TRUE(f.bulk);
    EXPECT_EQ(f.payload, nullptr);
    EXPECT_EQ(f.payload_len, 100000u);
}

TEST(NetWire, every_control_kind_decodes) {
    for (frame_kind k : {frame_kind::credit, frame_kind::credit_request, frame_kind::probe, frame_kind::probe_reply,
                         frame_kind::nack, frame_kind::bye, frame_kind::hold, frame_kind::resume}) {
        wire_header h = data_header(0);
        h.kind = std::uint8_t(k);
        if (k == frame_kind::hold || k == frame_kind::resume) h.dst_node = 2;  // a port of the sender
        if (k == frame_kind::nack) h.tag = ENOENT;
        if (k == frame_kind::probe_reply) h.tag = 0;
        if (k == frame_kind::credit) h.arg0 = 3, h.arg1 = 300;
        decoded_frame f;
        EXPECT_EQ(decode(frame(h, 0), &f), wire_error::none) << int(k) << ": " << f.why;
    }
}

struct bad_case {
    const char* name;
    void (*edit)(wire_header&);
    std::ptrdiff_t extra;  // payload bytes beyond what len says
    wire_error want;
};

TEST(NetWire, malformed_frames_are_rejected_with_the_reason) {
    const bad_case cases[] = {
        {"magic", [](wire_header& h) { h.magic = 0x12345678; }, 0, wire_error::bad_magic},
        {"version", [](wire_header& h) { h.version = 9; }, 0, wire_error::bad_version},
        {"kind 0", [](wire_header& h) { h.kind = 0; }, 0, wire_error::bad_kind},
        {"kind 200", [](wire_header& h) { h.kind = 200; }, 0, wire_error::bad_kind},
        {"unknown flag", [](wire_header& h) { h.flags = 2; }, 0, wire_error::bad_flags},
        {"bulk with bytes after the header", [](wire_header& h) { h.flags = kFlagBulk; }, 0,
         wire_error::length_mismatch},
        {"bulk of no bytes",
         [](wire_header& h) {
             h.flags = kFlagBulk;
             h.len = 0;
         },
         0, wire_error::length_mismatch},
        {"bulk on a credit",
         [](wire_header& h) {
             h.kind = std::uint8_t(frame_kind::credit);
             h.flags = kFlagBulk;
             h.len = 0;
         },
         0, wire_error::bad_flags},
        {"reserved", [](wire_header& h) { h.reserved = 1; }, 0, wire_error::bad_flags},
        {"truncated payload", [](wire_header&) {}, -5, wire_error::length_mismatch},
        {"trailing bytes", [](wire_header&) {}, 7, wire_error::length_mismatch},
        {"oversized", [](wire_header& h) { h.len = kWireMaxPayload + 1; }, 0, wire_error::oversized},
        {"src outside the job", [](wire_header& h) { h.src_node = 4; }, 0, wire_error::bad_node},
        {"src not the sender", [](wire_header& h) { h.src_node = 3; }, 0, wire_error::bad_node},
        {"dst outside the job", [](wire_header& h) { h.dst_node = 77; }, 0, wire_error::bad_node},
        {"data for another node", [](wire_header& h) { h.dst_node = 0; }, 0, wire_error::bad_node},
        {"payload on a credit",
         [](wire_header& h) { h.kind = std::uint8_t(frame_kind::credit); }, 0, wire_error::bad_fields},
        {"credit too large",
         [](wire_header& h) {
             h.kind = std::uint8_t(frame_kind::credit);
             h.len = 0;
             h.arg0 = kWireMaxCreditMsgs + 1;
         },
         0, wire_error::bad_fields},
        {"hold of another node's port",
         [](wire_header& h) {
             h.kind = std::uint8_t(frame_kind::hold);
             h.len = 0;
             h.dst_node = 1;
         },
         0, wire_error::bad_node},
        {"resume of another node's port",
         [](wire_header& h) {
             h.kind = std::uint8_t(frame_kind::resume);
             h.len = 0;
             h.dst_node = 3;
         },
         0, wire_error::bad_node},
        {"nack without errno",
         [](wire_header& h) {
             h.kind = std::uint8_t(frame_kind::nack);
             h.len = 0;
             h.tag = 0;
         },
         0, wire_error::bad_fields},
    };
    for (const bad_case& c : cases) {
        wire_header h = data_header(16);
        c.edit(h);
        std::size_t payload = std::size_t(std::ptrdiff_t(h.len > 1024 ? 16 : h.len) + c.extra);
        auto b = frame(h, payload);
        decoded_frame f;
        EXPECT_EQ(decode(b, &f), c.want) << c.name << ": " << f.why;
        EXPECT_NE(f.why[0], '\0') << c.name << ": no reason given";
        EXPECT_EQ(f.payload, nullptr) << c.name;
    }
}

TEST(NetWire, short_buffers_are_truncated_frames) {
    auto b = frame(data_header(0), 0);
    decoded_frame f;
    for (std::size_t n = 0; n < kWireHeaderBytes; ++n) {
        EXPECT_EQ(decode_frame(b.data(), n, kCtx, &f), wire_error::truncated) << n;
        EXPECT_NE(std::strstr(f.why, "bytes"), nullptr) << f.why;
    }
    EXPECT_EQ(decode_frame(nullptr, 0, kCtx, &f), wire_error::truncated);
}

TEST(NetWire, random_bytes_never_decode_as_garbage) {
    // Random bytes behind a valid magic and version: whatever the decoder
    // accepts is self-consistent (length and nodes in range).
    std::mt19937_64 rng(42);
    for (int i = 0; i < 20000; ++i) {
        std::vector<unsigned char> b(kWireHeaderBytes + (rng() % 64));
        for (auto& c : b) c = static_cast<unsigned char>(rng());
        wire_header h;
        std::memcpy(&b[0], &h.magic, 4);
        b[4] = kWireVersion;
        decoded_frame f;
        if (decode(b, &f) != wire_error::none) continue;
        EXPECT_EQ(f.bulk ? kWireHeaderBytes : f.payload_len + kWireHeaderBytes, b.size());
        EXPECT_LT(f.h.src_node, kCtx.nodes);
        EXPECT_LT(f.h.dst_node, kCtx.nodes);
    }
}

}  // namespace

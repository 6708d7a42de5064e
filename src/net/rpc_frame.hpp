// weft::detail::net — the frames of weft's RPC: the fixed header that starts
// every request and every reply, its encoder, and its decoder.
//
// A frame is one message on a port (docs/design/rpc.md, "Frames"):
//
//   offset  size  field
//        0     4  magic        0x43505257 ("WRPC" in host byte order)
//        4     1  version      1
//        5     1  kind         1 request, 2 reply
//        6     2  flags        0
//        8     4  fn_id        the function called (a reply: the one it answers)
//       12     4  status       request: 0; reply: 0 or the call's error (1..4095)
//       16     8  sig          the caller's type signature of the function; 0: untyped
//       24     8  call_id      chosen by the caller, copied into the reply
//       32    12  reply_to     request: the caller's reply port (node, index, gen); reply: 0
//       44     4  payload_len  bytes after the header: arguments, result, or error text
//       48        payload
//
// Fields are in host byte order: the nodes of a job run one build on one
// kind of machine. decode_frame is a pure function of its bytes, so a
// libFuzzer target drives it (fuzz/rpc_frame.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "weft/weft.h"

namespace weft::detail::net {

inline constexpr std::uint32_t kFrameMagic = 0x43505257u;
inline constexpr std::uint8_t kFrameVersion = 1;
inline constexpr std::size_t kFrameHeader = 48;
// The largest payload a frame may announce: 64 MiB. A bound on what a
// decoder believes, not an allocation (a message's length is the port's
// business, bounded by the port's max_bytes).
inline constexpr std::uint32_t kFrameMaxPayload = 64u << 20;
// A reply's status is an errno value: 0 or 1..4095.
inline constexpr std::int32_t kFrameMaxStatus = 4095;

enum class frame_kind : std::uint8_t { request = 1, reply = 2 };

struct frame {
    frame_kind kind = frame_kind::request;
    std::uint32_t fn_id = 0;
    std::int32_t status = 0;
    std::uint64_t sig = 0;
    std::uint64_t call_id = 0;
    weft_port_id_t reply_to{};
    const unsigned char* payload = nullptr;  // into the decoded bytes
    std::uint32_t payload_len = 0;
};

// What is wrong with a frame; frame_error_text names it for messages.
enum class frame_error {
    none,
    truncated_header,   // fewer than kFrameHeader bytes
    bad_magic,
    bad_version,
    bad_kind,
    bad_flags,
    bad_status,         // a request with a status, or a reply status outside 0..4095
    bad_reply_to,       // a reply with a reply port
    payload_too_large,  // payload_len above kFrameMaxPayload
    truncated_payload,  // fewer bytes than payload_len announces
    trailing_bytes,     // more bytes than header + payload_len
};
const char* frame_error_text(frame_error e);

struct decoded_frame {
    frame_error error = frame_error::none;
    // The fixed fields were read (magic, version and kind are valid): f's
    // fn_id, call_id and reply_to are usable even when error is set, so a
    // server can answer a request whose payload is wrong.
    bool header_read = false;
    frame f;
};

// Decodes the frame in bytes[0..len). Pure: reads only those bytes; the
// result's payload points into them.
decoded_frame decode_frame(const void* bytes, std::size_t len);

// Writes f's header (payload_len included, payload not) into out[0..kFrameHeader).
void encode_header(const frame& f, void* out);

}  // namespace weft::detail::net

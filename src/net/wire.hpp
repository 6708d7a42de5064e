// weft::detail::net — the wire format of the protocol (protocol.hpp): one frame
// per message of a link's frame lane, a fixed 64-byte header followed by the payload (or, for a long
// message, by nothing: its payload is the sender's next bulk message), and its
// decoder.
//
// decode_frame is a pure function (bytes in; a decoded frame, or an error that
// names what was wrong), so that a fuzz target drives it directly: nothing
// that another rank sends reaches a port or the transport's state before it
// has passed here. docs/design/mpi.md, "Wire format", lists the kinds.
//
// Layout (host byte order: every rank of a job runs this same build on the
// same kind of machine; `magic` catches a peer that does not):
//   off  size  field
//     0     4  magic      kWireMagic
//     4     1  version    kWireVersion
//     5     1  kind       frame_kind
//     6     2  flags      kFlagBulk or 0
//     8     4  tag        data: the message's tag; probe_reply, nack: an errno value
//    12     4  src_node   the sending node (its rank)
//    16    12  dst        node, index, gen of a port (data: the destination; probe,
//                         probe_reply, nack: the port asked about; hold, resume:
//                         the sender's port)
//    28     4  reserved   0
//    32     8  sent_ns    data: CLOCK_MONOTONIC at the send (the sender's clock)
//    40     8  len        bytes of payload (data only; else 0): after the header,
//                         or in the bulk message that follows (kFlagBulk)
//    48     8  arg0       credit: messages returned; probe, probe_reply: the request id;
//                         data, nack: the sending thread's token (msg_header::sender), 0: none
//    56     8  arg1       credit: bytes returned; probe_reply: the port's max_bytes
#pragma once

#include <cstddef>
#include <cstdint>

namespace weft::detail::net {

inline constexpr std::uint32_t kWireMagic = 0x54464557;  // "WEFT" read as a little-endian word
inline constexpr std::uint8_t kWireVersion = 2;
inline constexpr std::size_t kWireHeaderBytes = 64;
// The largest payload a frame may carry: 1 GiB. Guess: far above any port's
// useful max_bytes; a length above it is a garbled frame, not a message.
inline constexpr std::uint64_t kWireMaxPayload = std::uint64_t(1) << 30;
// The most messages one credit frame may return (a peer's whole window is far
// smaller; the protocol caps it at its own window, protocol_receive.cpp).
inline constexpr std::uint64_t kWireMaxCreditMsgs = std::uint64_t(1) << 20;
// A data frame of only its header: its len payload bytes are the sender's next
// message on the link's bulk lane (link.hpp), which carries nothing else.
inline constexpr std::uint16_t kFlagBulk = 1;

enum class frame_kind : std::uint8_t {
    data = 1,            // a message for port dst
    credit = 2,          // arg0 messages and arg1 bytes of the receiver's window are free again
    credit_request = 3,  // the sender waits for credit: return what is free now
    probe = 4,           // does port dst exist? (reply: probe_reply with the same arg0)
    probe_reply = 5,     // tag: 0 or ENOENT; arg1: the port's max_bytes
    nack = 6,            // a data frame for port dst failed there with errno `tag`
    bye = 7,             // the sender finalizes: it sends nothing more to this node
    hold = 8,            // port dst (of the sender) is full: send it nothing until its resume
    resume = 9,          // port dst (of the sender) took every frame it held back: send again
};

struct wire_header {
    std::uint32_t magic = kWireMagic;
    std::uint8_t version = kWireVersion;
    std::uint8_t kind = 0;
    std::uint16_t flags = 0;
    std::int32_t tag = 0;
    std::uint32_t src_node = 0;
    std::uint32_t dst_node = 0;
    std::uint32_t dst_index = 0;
    std::uint32_t dst_gen = 0;
    std::uint32_t reserved = 0;
    std::int64_t sent_ns = 0;
    std::uint64_t len = 0;
    std::uint64_t arg0 = 0;
    std::uint64_t arg1 = 0;
};
static_assert(sizeof(wire_header) == kWireHeaderBytes, "the wire header is 64 bytes, laid out as wire.hpp says");

enum class wire_error {
    none = 0,
    truncated,        // fewer bytes than a header
    bad_magic,        // not a weft frame
    bad_version,      // a frame of another version of this format
    bad_kind,         // kind is none of frame_kind
    bad_flags,        // an unknown flag or the reserved word is set, or kFlagBulk on a control frame
    length_mismatch,  // len disagrees with the bytes that follow the header
    oversized,        // len above kWireMaxPayload
    bad_node,         // src_node or dst_node outside the job, or src_node not the sender
    bad_fields,       // a field the kind does not allow (payload on a control frame, a credit too large, ...)
};

// What a receiver knows to judge a frame by.
struct wire_context {
    std::uint32_t nodes = 0;  // the job's nodes
    std::uint32_t self = 0;   // the receiving node
    std::uint32_t from = 0;   // the node the frame came from (MPI's source rank)
};

struct decoded_frame {
    wire_header h;
    const unsigned char* payload = nullptr;  // inside the decoded bytes; null when len is 0 or bulk
    std::size_t payload_len = 0;             // h.len (a bulk frame's too: the length of the bulk to receive)
    bool bulk = false;                       // kFlagBulk: the payload comes as the next bulk message
    char why[160] = {};                      // on an error: what was wrong, with the values
};

// Decodes the n bytes at `bytes` (any alignment) as one frame. Returns
// wire_error::none and fills out->h, payload and payload_len; or the error, with
// out->why naming the field, its value and what is valid. Pure: reads only its
// arguments, writes only *out.
wire_error decode_frame(const void* bytes, std::size_t n, const wire_context& ctx, decoded_frame* out);

// The error's name, e.g. "truncated frame".
const char* wire_error_name(wire_error e);

// Writes h's 64 bytes at out.
void encode_header(const wire_header& h, void* out);

}  // namespace weft::detail::net

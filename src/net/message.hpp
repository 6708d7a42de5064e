// weft::detail::net — a message buffered in a port: a header and its bytes,
// in one allocation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace weft::detail::net {

// What travels with a message's bytes, from the sender to the receiver's
// weft_net_status_t.
struct msg_header {
    std::int32_t tag = 0;
    std::uint32_t source = 0;    // the sender's node
    std::int64_t sent_ns = 0;    // another node's message: CLOCK_MONOTONIC at its send; else 0
    std::int64_t ready_ns = 0;   // receivable from then on; 0: at once
    // The sending weft thread (sender_token()), told if the message is
    // dropped (port.cpp, note_loss); 0: nobody to tell (an external thread,
    // or a thread of another process).
    std::uint64_t sender = 0;
};

struct message {
    message* next = nullptr;
    msg_header h;
    std::size_t len = 0;
    // The bytes follow the struct (bytes()).
    unsigned char* bytes() { return reinterpret_cast<unsigned char*>(this + 1); }
};

// A message holding a copy of len bytes from buf; null when out of memory.
message* make_message(const msg_header& h, const void* buf, std::size_t len);
void free_message(message* m);

}  // namespace weft::detail::net

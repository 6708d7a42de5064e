// libFuzzer target: the mpi transport's frame decoder (src/net/wire.cpp) on
// any bytes, for a job size, receiving node and source node taken from the
// input's first three bytes. It must never read outside the bytes; an error
// must come with its name and a non-empty reason; a frame it accepts must
// re-encode to exactly its header, announce exactly the payload that follows
// (a bulk frame: none follows, and its len, above 0, is the bulk's), and name
// nodes inside the job, with the source being the sender.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "net/wire.hpp"

using namespace weft::detail::net;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 3) return 0;
    wire_context ctx;
    ctx.nodes = 1u + data[0] % 8u;
    ctx.self = data[1] % ctx.nodes;
    ctx.from = data[2] % ctx.nodes;
    const std::uint8_t* bytes = data + 3;
    std::size_t n = size - 3;

    decoded_frame d;
    wire_error e = decode_frame(bytes, n, ctx, &d);
    if (e != wire_error::none) {
        if (wire_error_name(e) == nullptr || wire_error_name(e)[0] == '\0' || d.why[0] == '\0') std::abort();
        if (std::memchr(d.why, '\0', sizeof d.why) == nullptr) std::abort();
        return 0;
    }
    const wire_header& h = d.h;
    if (h.len != d.payload_len) std::abort();
    if (d.bulk) {
        if (n != kWireHeaderBytes || d.payload_len == 0 || d.payload != nullptr ||
            frame_kind(h.kind) != frame_kind::data)
            std::abort();
    } else {
        if (n != kWireHeaderBytes + d.payload_len) std::abort();
        if (d.payload_len != 0 && d.payload != bytes + kWireHeaderBytes) std::abort();
    }
    if (h.src_node != ctx.from || h.src_node >= ctx.nodes || h.dst_node >= ctx.nodes) std::abort();
    unsigned char header[kWireHeaderBytes];
    encode_header(h, header);
    if (std::memcmp(header, bytes, kWireHeaderBytes) != 0) std::abort();
    return 0;
}

// libFuzzer target: the RPC frame decoder (src/net/rpc_frame.cpp) on any
// bytes. It must never read outside them, and a frame it accepts must be
// exactly what encode_header writes for the decoded fields, followed by the
// payload it announces.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "net/rpc_frame.hpp"

using namespace weft::detail::net;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    decoded_frame d = decode_frame(data, size);
    if (d.error != frame_error::none) {
        if (frame_error_text(d.error)[0] == '\0') std::abort();
        return 0;
    }
    const frame& f = d.f;
    if (size != kFrameHeader + f.payload_len || f.payload != data + kFrameHeader) std::abort();
    unsigned char header[kFrameHeader];
    encode_header(f, header);
    if (std::memcmp(header, data, kFrameHeader) != 0) std::abort();
    return 0;
}

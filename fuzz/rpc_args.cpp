// libFuzzer target: the typed stubs' decoding (include/weft/rpc.hpp,
// rpc_detail::reader) of a parameter list (int, std::string,
// std::vector<double>, std::span<const std::int32_t>) from any bytes. It must
// never read outside them nor allocate more than they can hold, and a list it
// accepts must take exactly as many bytes as packing those values again.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "weft/rpc.hpp"

using namespace weft::rpc::rpc_detail;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using params = std::tuple<int, std::string, std::vector<double>, std::span<const std::int32_t>>;
    constexpr auto idx = std::make_index_sequence<std::tuple_size_v<params>>{};
    // weft receives into 16-byte-aligned buffers; so does this.
    std::unique_ptr<block[]> buf(new block[size / sizeof(block) + 1]);
    if (size != 0) std::memcpy(buf[0].b, data, size);
    reader rd(buf[0].b, size);
    params p = unpack<params>(rd, idx);
    if (rd.at_end() && packed_size(p, idx) != size) std::abort();
    return 0;
}

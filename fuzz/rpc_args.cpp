// libFuzzer target: the typed stubs' argument packing and decoding
// (include/weft/rpc.hpp: packed_size, pack, reader, unpack) for several
// parameter lists, one picked by the input's first byte (its low bits; the
// lists are below). Two directions, by the first byte's top bit:
//   - bytes first: the rest of the input decoded as the list. A list the
//     reader accepts (every byte taken) must pack again to exactly as many
//     bytes, equal to the input at every byte the packer writes (the rest is
//     alignment padding, which the reader skips), and decode again to the same
//     values;
//   - values first: values made from the rest of the input, packed, must
//     decode (every byte taken) to the same values.
// Always: the reader never reads outside the bytes nor allocates more than
// they can hold, and never makes a value its type cannot hold (UBSan: a bool
// other than 0 or 1).
#include <fuzzer/FuzzedDataProvider.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "weft/rpc.hpp"

using namespace weft::detail::rpc;

namespace {

struct padded {  // padding inside: after c and after s
    char c;
    double d;
    std::int16_t s;
};
struct alignas(16) wide {
    std::uint64_t lo, hi;
};

// The parameter lists: every integer width in both orders (alignment between
// them), bool, floating point, strings, vectors and spans of plain elements,
// structs with padding, over-aligned structs, arrays of arrays, and none.
using lists = std::tuple<
    std::tuple<std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t, std::uint32_t,
               std::uint64_t, std::int8_t>,
    std::tuple<std::uint64_t, std::uint32_t, std::uint16_t, std::uint8_t, bool, char, std::span<const bool>>,
    std::tuple<char, double, float, std::string, std::int8_t, std::vector<double>, std::vector<std::int8_t>>,
    std::tuple<int, std::string, std::vector<double>, std::span<const std::int32_t>>,
    std::tuple<std::uint8_t, padded, std::vector<std::array<std::int16_t, 3>>, wide, std::vector<padded>,
               std::span<const wide>, std::string>,
    std::tuple<std::array<std::array<double, 2>, 2>, std::vector<wide>, std::string, std::string,
               std::span<const std::uint8_t>>,
    std::tuple<std::vector<std::uint64_t>>,
    std::tuple<>>;
constexpr std::size_t kLists = std::tuple_size_v<lists>;

template <class T>
bool same(const T& a, const T& b) {
    if constexpr (plain_v<T>) {
        if constexpr (std::is_same_v<T, bool>) return a == b;  // as bools (see below)
        return std::memcmp(&a, &b, sizeof(T)) == 0;  // bytes: NaN equals itself, padding included
    } else {
        using E = std::remove_const_t<typename T::value_type>;
        if (a.size() != b.size()) return false;
        if constexpr (std::is_same_v<E, bool>) {  // as bools: UBSan reports a byte no bool has
            for (std::size_t i = 0; i < a.size(); ++i)
                if (a[i] != b[i]) return false;
            return true;
        }
        return a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(E)) == 0;
    }
}

template <class Tuple, std::size_t... I>
bool same_all(const Tuple& a, const Tuple& b, std::index_sequence<I...>) {
    return (true && ... && same(std::get<I>(a), std::get<I>(b)));
}

// A 16-aligned buffer of at least n bytes, each `fill`, as weft receives into.
struct aligned {
    aligned(std::size_t n, unsigned char fill) : blocks(n / sizeof(block) + 1), b(new block[blocks]) {
        std::memset(bytes(), fill, blocks * sizeof(block));
    }
    unsigned char* bytes() { return reinterpret_cast<unsigned char*>(b.get()); }
    std::size_t blocks;
    std::unique_ptr<block[]> b;
};

// Decodes n bytes at p as Tuple: true if the reader takes exactly every byte.
template <class Tuple>
bool decode(const unsigned char* p, std::size_t n, Tuple* out) {
    reader rd(p, n);
    *out = unpack<Tuple>(rd, std::make_index_sequence<std::tuple_size_v<Tuple>>{});
    return rd.at_end();
}

// A value made from the input; a span's elements live in `keep`.
template <class T>
T make(FuzzedDataProvider& in, std::vector<std::shared_ptr<void>>& keep) {
    if constexpr (plain_v<T>) {
        T v;
        std::vector<unsigned char> b = in.ConsumeBytes<unsigned char>(sizeof(T));
        b.resize(sizeof(T));
        if constexpr (std::is_same_v<T, bool>) b[0] &= 1;  // the only bytes a bool has
        std::memcpy(&v, b.data(), sizeof(T));
        return v;
    } else if constexpr (std::is_same_v<T, std::string>) {
        return in.ConsumeRandomLengthString(64);
    } else {
        using E = std::remove_const_t<typename T::value_type>;
        std::size_t n = in.ConsumeIntegralInRange<std::size_t>(0, 16);
        if constexpr (is_span<T>::value) {  // an array, not a vector: a span of bool has no vector to view
            std::shared_ptr<E[]> a(new E[n]());
            for (std::size_t i = 0; i < n; ++i) a[i] = make<E>(in, keep);
            keep.push_back(a);
            return T(a.get(), n);
        } else {
            T v(n);
            for (E& e : v) e = make<E>(in, keep);
            return v;
        }
    }
}

template <class Tuple, std::size_t... I>
Tuple make_all(FuzzedDataProvider& in, std::vector<std::shared_ptr<void>>& keep, std::index_sequence<I...>) {
    return Tuple{make<std::tuple_element_t<I, Tuple>>(in, keep)...};  // braces: made left to right
}

template <class Tuple>
void bytes_first(const unsigned char* data, std::size_t size) {
    constexpr auto idx = std::make_index_sequence<std::tuple_size_v<Tuple>>{};
    aligned in(size, 0);
    if (size != 0) std::memcpy(in.bytes(), data, size);
    Tuple v;
    if (!decode(in.bytes(), size, &v)) return;
    if (packed_size(v, idx) != size) std::abort();
    // Packed twice, over zeros and over ones: a byte that differs is one the
    // packer does not write (padding); every other byte must be the input's.
    aligned zeros(size, 0x00), ones(size, 0xff);
    pack(zeros.bytes(), size, v, idx);
    pack(ones.bytes(), size, v, idx);
    for (std::size_t i = 0; i < size; ++i)
        if (zeros.bytes()[i] == ones.bytes()[i] && zeros.bytes()[i] != data[i]) std::abort();
    for (std::size_t i = size; i < zeros.blocks * sizeof(block); ++i)  // nothing written past the packed size
        if (zeros.bytes()[i] != 0x00 || ones.bytes()[i] != 0xff) std::abort();
    Tuple again;
    if (!decode(zeros.bytes(), size, &again) || !same_all(v, again, idx)) std::abort();
}

template <class Tuple>
void values_first(const unsigned char* data, std::size_t size) {
    constexpr auto idx = std::make_index_sequence<std::tuple_size_v<Tuple>>{};
    FuzzedDataProvider in(data, size);
    std::vector<std::shared_ptr<void>> keep;
    Tuple v = make_all<Tuple>(in, keep, idx);
    std::size_t n = packed_size(v, idx);
    aligned b(n, 0xa5);
    pack(b.bytes(), n, v, idx);
    Tuple back;
    if (!decode(b.bytes(), n, &back) || !same_all(v, back, idx)) std::abort();
}

template <std::size_t... L>
void run(std::size_t which, bool from_values, const unsigned char* data, std::size_t size, std::index_sequence<L...>) {
    ((which == L ? (from_values ? values_first<std::tuple_element_t<L, lists>>(data, size)
                                : bytes_first<std::tuple_element_t<L, lists>>(data, size))
                 : void()),
     ...);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    run((data[0] & 0x7f) % kLists, (data[0] & 0x80) != 0, data + 1, size - 1, std::make_index_sequence<kLists>{});
    return 0;
}

// weft::detail::net — starting and ending a job; reading its configuration.
#pragma once

#include "net/transport.hpp"
#include "weft/weft.h"

namespace weft::detail::net {

// Limits of WEFT_NET_LATENCY and of the config's latency fields.
inline constexpr long long kMaxAlphaNs = 10'000'000'000LL;  // 10 s
inline constexpr long long kMaxBetaNs = 1'000'000LL;        // 1 ms per byte

// Resolves cfg's fields, else WEFT_NET / WEFT_NET_LATENCY, else the defaults
// (docs/env.md); EINVAL after the rule-6 line on stderr for a bad one.
[[nodiscard]] int read_net_settings(const weft_net_config_t* cfg, std::uint32_t* nodes, transport_config* out);

}  // namespace weft::detail::net

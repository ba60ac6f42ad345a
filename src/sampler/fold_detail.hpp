// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the files of TickBuilder (fold*.cpp): the process key order and rounding.
#pragma once

#include "core/time.hpp"
#include "telemetry/tick.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <tuple>

namespace gua::sampler::fold_detail {

using Start = std::optional<std::uint64_t>;

/// Whether process `a` comes before the key (pid, type, start) in a card's process order.
inline bool key_less(const telemetry::ProcessTick& a, std::uint32_t pid,
                     telemetry::ProcessType type, Start start) {
    return std::tuple(a.pid, static_cast<int>(a.type), a.start_ticks) <
           std::tuple(pid, static_cast<int>(type), start);
}

inline bool key_is(const telemetry::ProcessTick& a, std::uint32_t pid, telemetry::ProcessType type,
                   Start start) {
    return a.pid == pid && a.type == type && a.start_ticks == start;
}

/// Rounds `x` µs to an integer in [0, limit].
inline DurationUs round_within(double x, DurationUs limit) {
    return std::clamp<DurationUs>(std::llround(x), 0, std::max<DurationUs>(limit, 0));
}

} // namespace gua::sampler::fold_detail

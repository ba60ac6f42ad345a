// SPDX-License-Identifier: Apache-2.0
// The idle-timeout policy: each unit's recorded holding cut where an idle-held streak reaches T,
// counted two ways (drop: the user never returns; relaunch: a new hold at the reactivation).
#pragma once

#include "plan/model.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace gua::plan {

/// How a unit that becomes active again after its cut is counted.
enum class Band : std::uint8_t { drop, relaunch };

/// A relaunched unit holds its card this long before its work resumes (it reloads at full
/// memory): its hold starts at the reactivation and lasts the recorded rest plus this.
inline constexpr DurationUs k_relaunch_warmup_us = 10 * k_us_per_minute;

/// One stretch a unit holds its cards under the policy.
struct Hold {
    TimeUs begin = 0;
    TimeUs end = 0;
    std::uint32_t unit = 0;
    friend bool operator==(const Hold&, const Hold&) = default;
};

/// The sessions the policy would have cut.
struct Cuts {
    std::int64_t killed = 0;           ///< holds cut at T
    std::int64_t resumed = 0;          ///< of which the unit was active again later
    std::vector<DurationUs> return_us; ///< per resumed cut: reactivation − cut time
    DurationUs held_saved_us = 0;      ///< idle-held unit time no longer held (drop band)
};

/// The holds of `demand` under `timeout` (nullopt: no policy, the recorded stretches) counted
/// as `band`, sorted by begin, and what was cut. A recorded stretch ends where the unit was
/// not seen for a tick (a gap in its presence).
std::vector<Hold> holds_of(const Demand& demand, std::optional<DurationUs> timeout, Band band,
                           Cuts& cuts);

} // namespace gua::plan

// SPDX-License-Identifier: Apache-2.0
// The report's allocation section: the allocation matrix, allocated-unused by owner (priced) and
// use outside the scheduler by identity, from the window's accumulated totals.
#pragma once

#include "audit/card_tick.hpp"
#include "audit/grouping.hpp"
#include "audit/window.hpp"
#include "report/model.hpp"
#include "store/reader.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace gua::report {

/// The owner of an allocation as §4 and §7 name it: a pod's namespace, else its user; kind is
/// "namespace" or "user". "(unknown)" when the source named neither.
std::pair<std::string, std::string> allocation_owner(const audit::AllocationRow& row);

/// The allocation section of the window, or nullopt when no card had an allocation (or an
/// unknown one). `allocations` is the table the ticks' AllocationShare indexes (rows it lacks
/// are named "(unknown)"); `micros_of_gpu` maps a card (CardTick::gpu) to its GPU-hour price.
std::optional<AllocationSection> allocation_section(
    const audit::WindowAccumulator& acc, const std::vector<store::IdentityRow>& identities,
    const std::vector<audit::AllocationRow>& allocations, const audit::Grouping& grouping,
    const std::map<std::uint32_t, std::int64_t>& micros_of_gpu);

} // namespace gua::report

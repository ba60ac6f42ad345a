// SPDX-License-Identifier: Apache-2.0
// gua's /metrics families (exported_families.def) as a table: the exporter declares and writes
// them by id, the fleet reader queries them by the same ids.
#pragma once

#include "telemetry/card_fields.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gua::telemetry {

/// Where a family stands in /metrics: before the per-card readings of card_fields.def (the
/// audit's counters and the cards' gauges) or after them (the daemon's own).
enum class FamilyPlace : std::uint8_t { audit, daemon };

/// A family of exported_families.def, by its name without the gua_ prefix.
enum class Family : std::uint8_t {
#define GUA_FAMILY(id, place, name, kind, labels, help) id,
#include "telemetry/exported_families.def"
#undef GUA_FAMILY
};

/// One row of exported_families.def.
struct ExportedFamily {
    Family id;
    FamilyPlace place;
    std::string_view name;
    MetricKind kind;
    std::string_view labels; ///< the label names of every series, space-separated, in order
    std::string_view help;
};

inline constexpr std::array k_exported_families{
#define GUA_FAMILY(id, place, name, kind, labels, help)                                            \
    ExportedFamily{Family::id, FamilyPlace::place, name, MetricKind::kind, labels, help},
#include "telemetry/exported_families.def"
#undef GUA_FAMILY
};

/// The row of `f`.
constexpr const ExportedFamily& exported(Family f) {
    return k_exported_families[static_cast<std::size_t>(f)];
}

/// The Prometheus name of `f`.
constexpr std::string_view family_name(Family f) {
    return exported(f).name;
}

/// The label names of `f`, in the order its series write them.
std::vector<std::string> family_labels(Family f);

} // namespace gua::telemetry

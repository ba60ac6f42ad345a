// SPDX-License-Identifier: Apache-2.0
// The per-card numeric fields of a card-tick: card_fields.def expanded into the CardReadings
// struct and a descriptor table that the fold, the block codec, the views and /metrics iterate.
// This is the only place that expands the list.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gua::telemetry {

/// Identifies one per-card field (its position in k_card_fields).
enum class CardField : std::uint8_t {
#define GUA_CARD_FIELD(id, ...) id,
#include "telemetry/card_fields.def"
#undef GUA_CARD_FIELD
};

/// The per-card readings of a poll or a card-tick, one optional integer per field of
/// card_fields.def: nullopt is "not measured" (unsupported, failed, not recorded), never 0.
struct CardReadings {
#define GUA_CARD_FIELD(id, ...) std::optional<std::int64_t> id;
#include "telemetry/card_fields.def"
#undef GUA_CARD_FIELD
    friend bool operator==(const CardReadings&, const CardReadings&) = default;
};

/// How the sampler folds a field's poll readings into the tick (card_fields.def, column fold).
enum class Fold : std::uint8_t { last, bits, counter, event_time, derived, mean };

/// What a field's stored value is relative to (card_fields.def, column base).
enum class StoredBase : std::uint8_t { none, energy, clock_event };

/// Which Prometheus series a field feeds.
enum class MetricKind : std::uint8_t { none, gauge, counter };

/// One row of card_fields.def.
struct CardFieldInfo {
    CardField field;
    std::string_view id;                              ///< member and view column name
    std::optional<std::int64_t> CardReadings::*value; ///< the member
    std::size_t stream;                               ///< frozen tick_block stream number
    std::string_view column;                          ///< tick_block column
    int since;                                        ///< schema version of the stream
    Fold fold;
    std::int64_t quantum; ///< units of the member per stored unit (≥ 1)
    StoredBase base;
    std::uint64_t base_bit; ///< for StoredBase::clock_event: the clocks-event bit
    MetricKind metric_kind;
    std::string_view metric;       ///< family name; empty when metric_kind is none
    double metric_scale;           ///< base units per unit of the member
    std::string_view metric_label; ///< "name=value", or empty
    std::string_view help;         ///< HELP of the family; empty after its first field
};

/// Every field, in CardField order.
inline constexpr std::array k_card_fields = {
#define GUA_CARD_FIELD(id, stream, column, since, fold, quantum, base, base_bit, metric_kind,      \
                       metric, metric_scale, metric_label, help)                                   \
    CardFieldInfo{CardField::id,                                                                   \
                  #id,                                                                             \
                  &CardReadings::id,                                                               \
                  stream,                                                                          \
                  column,                                                                          \
                  since,                                                                           \
                  Fold::fold,                                                                      \
                  quantum,                                                                         \
                  StoredBase::base,                                                                \
                  base_bit,                                                                        \
                  MetricKind::metric_kind,                                                         \
                  metric,                                                                          \
                  metric_scale,                                                                    \
                  metric_label,                                                                    \
                  help},
#include "telemetry/card_fields.def"
#undef GUA_CARD_FIELD
};

/// Number of per-card fields.
inline constexpr std::size_t k_card_field_count = k_card_fields.size();

/// The field whose bits the event_time fields (and StoredBase::clock_event) read, and the power
/// that StoredBase::energy multiplies by the tick's duration.
inline constexpr CardField k_clock_events_field = CardField::clock_events;
inline constexpr CardField k_power_field = CardField::power_mw;

/// The descriptor of `field`.
constexpr const CardFieldInfo& info(CardField field) {
    return k_card_fields[static_cast<std::size_t>(field)];
}

} // namespace gua::telemetry

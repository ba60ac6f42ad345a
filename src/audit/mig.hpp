// SPDX-License-Identifier: Apache-2.0
// MIG instances as parts of a card: the fraction of its parent a MIG instance is, and the price
// that follows from it (docs/recommendations.md "Prices").
#pragma once

#include "audit/cost.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gua::audit {

/// A card as the report knows it: a physical GPU or a MIG instance (parent_uuid set, or a
/// "MIG-" uuid). Parent facts are empty/nullopt when the parent was never recorded.
struct CardFacts {
    std::string uuid;
    std::string name; ///< e.g. "NVIDIA A100-SXM4-80GB MIG 3g.40gb"
    std::optional<std::int64_t> memory_total_mib;
    std::string parent_uuid;
    std::string parent_name; ///< the parent's model name when recorded
    std::optional<std::int64_t> parent_memory_total_mib;
};

/// True for a MIG instance.
bool is_mig(const CardFacts& card);

/// The compute slices of the MIG profile named in `name` ("… MIG 3g.40gb" → 3), or nullopt.
std::optional<int> mig_profile_slices(std::string_view name);

/// The compute slices of a whole card of model `model`: 4 for an A30, else 7 (A100, H100, H200,
/// B200 and their variants).
int mig_card_slices(std::string_view model);

/// The model name of a MIG instance's parent: the recorded parent name, else the instance name
/// without its " MIG …" suffix (empty when that leaves nothing).
std::string mig_parent_model(const CardFacts& card);

/// A card's fraction of a whole GPU: 1 for a physical card; for a MIG instance its profile's
/// slices over the parent's, else its memory over the parent's, else 1 (unknown).
double card_fraction(const CardFacts& card);

/// A card's price per hour of its own time and how it was found.
struct CardPrice {
    std::int64_t micros_per_gpu_hour = 0;
    double fraction = 1;
    std::string rule; ///< empty for a physical card priced by its model
};

/// The price of an hour of `card`: a physical card's price_micros(); for a MIG instance, a price
/// row that matches the instance's name but not its parent's model names its price; otherwise
/// the parent model's price (or the --price override) × card_fraction().
CardPrice card_price(const Pricing& pricing, const CardFacts& card);

} // namespace gua::audit

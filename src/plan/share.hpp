// SPDX-License-Identifier: Apache-2.0
// Sharing modes: how much of a card a unit takes (exclusive, a MIG profile, or MPS memory), and
// the MIG profile table (mig_profiles.def).
#pragma once

#include "plan/model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gua::plan {

/// How units share a card.
enum class Share : std::uint8_t { exclusive, mig, mps };

/// "exclusive", "mig" or "mps".
std::string_view to_string(Share share);
/// The share named `text`; nullopt when unknown.
std::optional<Share> parse_share(std::string_view text);

/// One MIG GPU-instance profile of a card model.
struct MigProfile {
    std::string_view name;
    int compute_slices = 0;
    int memory_slices = 0;
    int most_instances = 0;
};

/// A card model's MIG geometry.
struct MigCard {
    std::string_view key;
    std::string_view match; ///< the model name contains it (case-insensitive)
    int nominal_gb = 0;
    int compute_slices = 0;
    int memory_slices = 0;
    std::vector<MigProfile> profiles; ///< in the table's order: smallest first
};

/// The MIG geometry of a card of `model` with `memory_mib`: the table's card whose name matches
/// and whose nominal memory is nearest (within 15 %); nullopt for cards without MIG.
std::optional<MigCard> mig_card(std::string_view model, std::int64_t memory_mib);

/// Memory kept free on an MPS card for the MPS server and contexts: 5 % of the card.
std::int64_t mps_reserve_mib(std::int64_t memory_mib);
/// MIG profiles must hold a unit's peak memory plus this share of it.
inline constexpr double k_mig_headroom = 0.10;

/// A card's capacity in two dimensions and a unit's need per card in the same units:
/// exclusive (1, 1) cards; MIG (compute slices, memory slices); MPS (MiB, 1) where a unit
/// needs (its peak memory, 0) unless it takes the whole card.
struct Capacity {
    std::int64_t a = 1;
    std::int64_t b = 1;
    friend bool operator==(const Capacity&, const Capacity&) = default;
};

/// What sharing mode `share` means on `pool`: the card's capacity and, for a unit, its need
/// (whole cards for gangs, units of unknown memory and those too big for any profile).
struct Sizing {
    Share share = Share::exclusive;
    Capacity card;
    std::optional<MigCard> mig;     ///< the pool's MIG geometry under Share::mig
    std::int64_t mib_per_slice = 0; ///< MIG: the card's memory over its memory slices
    /// `unit`'s need per card, and for MIG the profile name ("" for a whole card).
    Capacity need(const Unit& unit, std::string* profile = nullptr) const;
};

/// The sizing of `pool` under `share` (exclusive when the pool has no MIG table).
Sizing sizing_of(const Pool& pool, Share share);

} // namespace gua::plan

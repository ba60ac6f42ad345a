// SPDX-License-Identifier: Apache-2.0
// Sharing modes and the MIG profile table.
#include "plan/share.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace gua::plan {

namespace {

std::vector<MigCard> mig_table() {
    std::vector<MigCard> cards;
#define GUA_MIG_CARD(key, match, gb, compute, memory)                                              \
    cards.push_back(MigCard{#key, match, gb, compute, memory, {}});
#define GUA_MIG_PROFILE(key, name, compute, memory, most)                                          \
    cards.back().profiles.push_back(MigProfile{name, compute, memory, most});
#include "plan/mig_profiles.def"
#undef GUA_MIG_PROFILE
#undef GUA_MIG_CARD
    return cards;
}

bool contains_nocase(std::string_view hay, std::string_view needle) {
    const auto it =
        std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char x, char y) {
            return std::tolower(static_cast<unsigned char>(x)) ==
                   std::tolower(static_cast<unsigned char>(y));
        });
    return it != hay.end();
}

} // namespace

std::string_view to_string(Share share) {
    switch (share) {
    case Share::mig:
        return "mig";
    case Share::mps:
        return "mps";
    case Share::exclusive:
        break;
    }
    return "exclusive";
}

std::optional<Share> parse_share(std::string_view text) {
    for (Share s : {Share::exclusive, Share::mig, Share::mps}) {
        if (text == to_string(s)) {
            return s;
        }
    }
    return std::nullopt;
}

std::optional<MigCard> mig_card(std::string_view model, std::int64_t memory_mib) {
    const double gb = static_cast<double>(memory_mib) / 1024.0;
    std::optional<MigCard> best;
    double best_gap = 0.15;
    for (MigCard& c : mig_table()) {
        const double gap = std::abs(gb - c.nominal_gb) / c.nominal_gb;
        if (contains_nocase(model, c.match) && gap <= best_gap) {
            best_gap = gap;
            best = std::move(c);
        }
    }
    return best;
}

std::int64_t mps_reserve_mib(std::int64_t memory_mib) {
    return memory_mib / 20;
}

Capacity Sizing::need(const Unit& unit, std::string* profile) const {
    if (profile != nullptr) {
        profile->clear();
    }
    const bool whole = unit.gpus > 1 || unit.memory_unknown || unit.kind != UnitKind::process;
    if (share == Share::exclusive || whole) {
        return card;
    }
    if (share == Share::mps) {
        return unit.peak_mib <= card.a ? Capacity{unit.peak_mib, 0} : card;
    }
    const double need_mib = static_cast<double>(unit.peak_mib) * (1.0 + k_mig_headroom);
    for (const MigProfile& p : mig->profiles) {
        const double mib = static_cast<double>(mib_per_slice * p.memory_slices);
        const double compute = 100.0 * p.compute_slices / mig->compute_slices;
        if (need_mib <= mib && unit.mean_compute_pct() <= compute) {
            if (profile != nullptr) {
                *profile = std::string(p.name);
            }
            return Capacity{p.compute_slices, p.memory_slices};
        }
    }
    return card;
}

Sizing sizing_of(const Pool& pool, Share share) {
    Sizing s;
    s.share = share;
    if (share == Share::mps) {
        s.card = Capacity{
            std::max<std::int64_t>(1, pool.memory_mib - mps_reserve_mib(pool.memory_mib)), 1};
    } else if (share == Share::mig) {
        s.mig = mig_card(pool.model, pool.memory_mib);
        if (!s.mig) {
            s.share = Share::exclusive;
        } else {
            s.card = Capacity{s.mig->compute_slices, s.mig->memory_slices};
            s.mib_per_slice = pool.memory_mib / s.mig->memory_slices;
        }
    }
    return s;
}

} // namespace gua::plan

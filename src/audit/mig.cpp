// SPDX-License-Identifier: Apache-2.0
// MIG fractions and prices.
#include "audit/mig.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace gua::audit {

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

/// Position of the " MIG" marker in a lower-cased name ("mig 3g.40gb" may also start it).
std::size_t mig_marker(const std::string& lowered) {
    if (lowered.starts_with("mig ")) {
        return 0;
    }
    return lowered.find(" mig ");
}

} // namespace

bool is_mig(const CardFacts& card) {
    return !card.parent_uuid.empty() || card.uuid.starts_with("MIG-");
}

std::optional<int> mig_profile_slices(std::string_view name) {
    const std::string l = lower(name);
    const std::size_t marker = mig_marker(l);
    if (marker == std::string::npos) {
        return std::nullopt;
    }
    // The profile is "<slices>g.<memory>gb", optionally "+me" etc.: "3g.40gb", "1g.10gb+me".
    std::size_t i = l.find_first_of("0123456789", marker);
    if (i == std::string::npos) {
        return std::nullopt;
    }
    int slices = 0;
    while (i < l.size() && std::isdigit(static_cast<unsigned char>(l[i])) != 0 && slices < 100) {
        slices = slices * 10 + (l[i] - '0');
        ++i;
    }
    if (i + 1 >= l.size() || l[i] != 'g' || l[i + 1] != '.' || slices <= 0) {
        return std::nullopt;
    }
    return slices;
}

int mig_card_slices(std::string_view model) {
    return lower(model).find("a30") != std::string::npos ? 4 : 7;
}

std::string mig_parent_model(const CardFacts& card) {
    if (!card.parent_name.empty()) {
        return card.parent_name;
    }
    const std::string l = lower(card.name);
    const std::size_t marker = mig_marker(l);
    return marker == std::string::npos ? card.name : card.name.substr(0, marker);
}

double card_fraction(const CardFacts& card) {
    if (!is_mig(card)) {
        return 1.0;
    }
    const std::string parent = mig_parent_model(card);
    if (const std::optional<int> slices = mig_profile_slices(card.name)) {
        return std::min(1.0, static_cast<double>(*slices) / mig_card_slices(parent));
    }
    if (card.memory_total_mib && card.parent_memory_total_mib && *card.memory_total_mib > 0 &&
        *card.parent_memory_total_mib > 0) {
        return std::min(1.0, static_cast<double>(*card.memory_total_mib) /
                                 static_cast<double>(*card.parent_memory_total_mib));
    }
    return 1.0;
}

CardPrice card_price(const Pricing& pricing, const CardFacts& card) {
    if (!is_mig(card)) {
        return CardPrice{price_micros(pricing, card.name), 1.0, ""};
    }
    const std::string parent = mig_parent_model(card);
    const std::string l = lower(card.name);
    const std::string lp = lower(parent);
    if (!pricing.override_micros_per_gpu_hour) {
        for (const ModelPrice& row : pricing.models) {
            const std::string m = lower(row.match);
            if (!m.empty() && l.find(m) != std::string::npos && lp.find(m) == std::string::npos) {
                return CardPrice{row.micros_per_gpu_hour, 1.0,
                                 fmt::format("priced as \"{}\" (configured)", row.match)};
            }
        }
    }
    const double fraction = card_fraction(card);
    const std::int64_t whole = price_micros(pricing, parent);
    const auto price =
        static_cast<std::int64_t>(std::llround(static_cast<double>(whole) * fraction));
    std::string how;
    if (const std::optional<int> slices = mig_profile_slices(card.name)) {
        how = fmt::format("{}/{} of the parent's price (MIG slices)", *slices,
                          mig_card_slices(parent));
    } else if (fraction < 1.0) {
        how = fmt::format("{:.3f} of the parent's price (MIG memory share)", fraction);
    } else {
        how = "the parent's whole price (MIG profile unknown)";
    }
    return CardPrice{price, fraction, how};
}

} // namespace gua::audit

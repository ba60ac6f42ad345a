// SPDX-License-Identifier: Apache-2.0
// Imbalance: the spread of an identity's active share over the cards it held.
#include "audit/imbalance.hpp"

namespace gua::audit {

std::optional<Imbalance> imbalance(const std::vector<CardActivity>& cards, DurationUs min_us) {
    std::optional<Imbalance> out;
    std::size_t counted = 0;
    for (const CardActivity& c : cards) {
        const DurationUs held = c.active_us + c.idle_held_us;
        if (held < min_us || held <= 0) {
            continue;
        }
        const double share = static_cast<double>(c.active_us) / static_cast<double>(held);
        if (!out) {
            out = Imbalance{c.gpu, share, c.gpu, share};
        } else if (share > out->busiest_share) {
            out->busiest_gpu = c.gpu;
            out->busiest_share = share;
        } else if (share < out->idlest_share) {
            out->idlest_gpu = c.gpu;
            out->idlest_share = share;
        }
        ++counted;
    }
    return counted >= 2 ? out : std::nullopt;
}

} // namespace gua::audit

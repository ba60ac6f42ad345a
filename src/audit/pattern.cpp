// SPDX-License-Identifier: Apache-2.0
// Bimodality from the four efficiency buckets of one card-tick.
#include "audit/pattern.hpp"

namespace gua::audit {

Pattern pattern_of(const CardTick& tick) {
    if (!tick.active_us) {
        return Pattern::unmeasured;
    }
    if (*tick.active_us <= 0) {
        return Pattern::inactive;
    }
    DurationUs measured = 0;
    for (const DurationUs b : tick.bucket_us) {
        measured += b;
    }
    if (measured <= 0) {
        return Pattern::steady;
    }
    const auto share = [measured](DurationUs us) {
        return static_cast<double>(us) / static_cast<double>(measured);
    };
    const double low = share(tick.bucket_us[static_cast<std::size_t>(Bucket::idle)]);
    const double high = share(tick.bucket_us[static_cast<std::size_t>(Bucket::compute_bound)]);
    if (low + high >= k_bursty_extremes_share && low >= k_bursty_side_share &&
        high >= k_bursty_side_share) {
        return Pattern::bursty;
    }
    return Pattern::steady;
}

const char* to_string(Pattern pattern) {
    switch (pattern) {
    case Pattern::unmeasured:
        return "unmeasured";
    case Pattern::inactive:
        return "inactive";
    case Pattern::steady:
        return "steady";
    case Pattern::bursty:
        return "bursty";
    }
    return "unmeasured";
}

} // namespace gua::audit

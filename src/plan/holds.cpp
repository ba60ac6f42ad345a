// SPDX-License-Identifier: Apache-2.0
// The idle-timeout policy over each unit's phases.
#include "plan/holds.hpp"

#include <algorithm>

namespace gua::plan {

namespace {

/// The index one past the contiguous stretch of `phases` that starts at `i`.
std::size_t stretch_end(const std::vector<Phase>& phases, std::size_t i) {
    std::size_t j = i + 1;
    while (j < phases.size() && phases[j].begin == phases[j - 1].end) {
        ++j;
    }
    return j;
}

struct Walker {
    std::optional<DurationUs> timeout;
    Band band;
    Cuts& cuts;
    std::vector<Hold>& out;
    std::uint32_t unit;

    /// Cuts the stretch phases[i, j); returns false when the unit is dropped.
    bool stretch(const std::vector<Phase>& phases, std::size_t i, std::size_t j) {
        TimeUs begin = phases[i].begin;
        DurationUs extra = 0; // the warm-up of a relaunched hold
        std::size_t k = i;
        while (k < j) {
            if (phases[k].active || !timeout) {
                ++k;
                continue;
            }
            // phases alternate, so phases[k] is one idle streak
            const DurationUs streak = phases[k].end - phases[k].begin;
            if (streak <= *timeout) {
                ++k;
                continue;
            }
            const TimeUs cut = phases[k].begin + *timeout;
            out.push_back(Hold{begin, cut + extra, unit});
            ++cuts.killed;
            cuts.held_saved_us += phases[k].end - cut;
            const std::size_t next = k + 1;
            if (next == j) {
                return true; // it ended idle: nothing to return to
            }
            ++cuts.resumed;
            cuts.return_us.push_back(phases[next].begin - cut);
            if (band == Band::drop) {
                return false;
            }
            begin = phases[next].begin;
            extra = k_relaunch_warmup_us;
            k = next;
        }
        out.push_back(Hold{begin, phases[j - 1].end + extra, unit});
        return true;
    }
};

} // namespace

std::vector<Hold> holds_of(const Demand& demand, std::optional<DurationUs> timeout, Band band,
                           Cuts& cuts) {
    std::vector<Hold> out;
    for (std::uint32_t u = 0; u < demand.units.size(); ++u) {
        const std::vector<Phase>& phases = demand.units[u].phases;
        Walker w{timeout, band, cuts, out, u};
        for (std::size_t i = 0; i < phases.size();) {
            const std::size_t j = stretch_end(phases, i);
            if (!w.stretch(phases, i, j)) {
                break;
            }
            i = j;
        }
    }
    std::sort(out.begin(), out.end(), [](const Hold& a, const Hold& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.unit < b.unit;
    });
    return out;
}

} // namespace gua::plan

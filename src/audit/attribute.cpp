// SPDX-License-Identifier: Apache-2.0
// Attribution of card time to identities (DESIGN.md "No double counting"), in exact integers.
#include "audit/attribute.hpp"

#include <algorithm>
#include <cmath>

namespace gua::audit {

namespace {

__extension__ using Int128 = __int128;

IdentityShareUs& share_of(std::vector<IdentityShareUs>& out, std::uint32_t identity) {
    for (IdentityShareUs& s : out) {
        if (s.identity == identity) {
            return s;
        }
    }
    out.push_back(IdentityShareUs{identity});
    return out.back();
}

/// Memory weight of a process: its memory, or the held threshold when the driver did not say.
std::int64_t mem_weight(const ProcTick& p, const Thresholds& thresholds) {
    return std::max<std::int64_t>(p.mem_used_mib.value_or(thresholds.held_mib), 0);
}

/// SM weight of a process in 0.01 % units (0 without a reading).
std::int64_t sm_weight(const ProcTick& p) {
    return p.sm_util_pct ? std::max<std::int64_t>(std::llround(*p.sm_util_pct * 100.0), 0) : 0;
}

struct Part {
    const ProcTick* process;
    std::int64_t weight;
    std::int64_t amount = 0;
    std::int64_t remainder = 0;
};

/// Splits `amount` exactly over the processes accepted by `pick`, in proportion to `weight`
/// (equally when all weights are zero); leftover microseconds go to the largest remainders.
/// Returns false when no process was picked.
template <typename Pick, typename Weight, typename Add>
bool split(const CardTick& tick, DurationUs amount, Pick pick, Weight weight, Add add,
           std::vector<Part>& parts) {
    parts.clear();
    Int128 total = 0;
    for (const ProcTick& p : tick.processes) {
        if (pick(p)) {
            parts.push_back(Part{&p, weight(p)});
            total += parts.back().weight;
        }
    }
    if (parts.empty()) {
        return false;
    }
    if (total == 0) {
        for (Part& part : parts) {
            part.weight = 1;
        }
        total = static_cast<Int128>(parts.size());
    }
    DurationUs assigned = 0;
    for (Part& part : parts) {
        const Int128 scaled = static_cast<Int128>(amount) * part.weight;
        part.amount = static_cast<std::int64_t>(scaled / total);
        part.remainder = static_cast<std::int64_t>(scaled % total);
        assigned += part.amount;
    }
    for (DurationUs left = amount - assigned; left > 0; --left) {
        Part* best = &parts.front();
        for (Part& part : parts) {
            if (part.remainder > best->remainder) {
                best = &part;
            }
        }
        ++best->amount;
        best->remainder = -1;
    }
    for (const Part& part : parts) {
        add(*part.process, part.amount);
    }
    return true;
}

} // namespace

void attribute_us(const CardTick& tick, const StateTimes& states, const Thresholds& thresholds,
                  std::uint32_t nobody, std::vector<IdentityShareUs>& out) {
    out.clear();
    std::vector<Part> parts;
    parts.reserve(tick.processes.size());
    const auto holder = [&](const ProcTick& p) { return is_holder(p, thresholds); };
    const auto any = [](const ProcTick&) { return true; };
    const auto by_mem = [&](const ProcTick& p) { return mem_weight(p, thresholds); };

    if (states.active > 0) {
        const auto add_active = [&](const ProcTick& p, DurationUs us) {
            share_of(out, p.identity).active_us += us;
        };
        // The sampler's own poll-by-poll attribution first; the rest (polls in which no process
        // had a reading, older recordings) is split over the tick as a whole.
        DurationUs rest = states.active;
        for (const ProcTick& p : tick.processes) {
            if (p.active_us && rest > 0) {
                const DurationUs us = std::clamp<DurationUs>(*p.active_us, 0, rest);
                add_active(p, us);
                rest -= us;
            }
        }
        std::int64_t sm_total = 0;
        for (const ProcTick& p : tick.processes) {
            sm_total += sm_weight(p);
        }
        const bool done = rest == 0 ||
                          (sm_total > 0 && split(tick, rest, any, sm_weight, add_active, parts)) ||
                          split(tick, rest, holder, by_mem, add_active, parts) ||
                          split(tick, rest, any, by_mem, add_active, parts);
        if (!done) {
            share_of(out, nobody).active_us += rest;
        }
    }
    if (states.idle_held > 0) {
        const auto add_held = [&](const ProcTick& p, DurationUs us) {
            share_of(out, p.identity).idle_held_us += us;
        };
        // The sampler's poll-by-poll split first (who held what while the card was held); the
        // rest (older recordings, rounding) by memory over the tick.
        DurationUs rest = states.idle_held;
        for (const ProcTick& p : tick.processes) {
            if (p.idle_held_us && rest > 0) {
                const DurationUs us = std::clamp<DurationUs>(*p.idle_held_us, 0, rest);
                add_held(p, us);
                rest -= us;
            }
        }
        if (rest > 0) {
            split(tick, rest, holder, by_mem, add_held, parts);
        }
    }
    // Idle-held memory per process: whenever the card was not active, and for the whole tick when
    // its own per-process reading is below the active threshold.
    const DurationUs card_idle = states.idle_held + states.truly_idle;
    for (const ProcTick& p : tick.processes) {
        if (!holder(p)) {
            continue;
        }
        // While the card is below the active threshold every process on it is idle, whatever
        // its own mean over the tick says.
        const bool own_idle = p.sm_util_pct && *p.sm_util_pct < thresholds.active_util_pct;
        const DurationUs idle_us = std::max(card_idle, own_idle ? tick.duration_us : DurationUs{0});
        if (idle_us > 0) {
            share_of(out, p.identity).idle_held_mib_us += mem_weight(p, thresholds) * idle_us;
        }
    }
}

void attribute(const CardTick& tick, const StateTimes& states, const Thresholds& thresholds,
               std::uint32_t nobody, std::vector<IdentityShare>& out) {
    std::vector<IdentityShareUs> exact;
    attribute_us(tick, states, thresholds, nobody, exact);
    out.clear();
    for (const IdentityShareUs& s : exact) {
        out.push_back(IdentityShare{s.identity, static_cast<double>(s.active_us),
                                    static_cast<double>(s.idle_held_us),
                                    static_cast<double>(s.idle_held_mib_us)});
    }
}

void presence(const CardTick& tick, const Thresholds& thresholds, std::vector<Presence>& out) {
    out.clear();
    for (const ProcTick& p : tick.processes) {
        const auto it = std::find_if(out.begin(), out.end(),
                                     [&](const Presence& x) { return x.identity == p.identity; });
        Presence& entry = it != out.end() ? *it : out.emplace_back(Presence{p.identity, false});
        entry.holder = entry.holder || is_holder(p, thresholds);
    }
}

} // namespace gua::audit

// Attribution of card time to identities (DESIGN.md "No double counting").
#include "audit/attribute.hpp"

#include <algorithm>

namespace gua::audit {

namespace {

IdentityShare& share_of(std::vector<IdentityShare>& out, std::uint32_t identity) {
    for (IdentityShare& s : out) {
        if (s.identity == identity) {
            return s;
        }
    }
    out.push_back(IdentityShare{identity});
    return out.back();
}

/// Memory weight of a process: its memory, or the held threshold when the driver did not say.
double mem_weight(const ProcTick& p, const Thresholds& thresholds) {
    return static_cast<double>(
        std::max<std::int64_t>(p.mem_used_mib.value_or(thresholds.held_mib), 0));
}

/// Splits `amount` over the processes accepted by `pick`, by `weight`; falls back to an equal
/// split when all weights are zero. Returns false when no process was picked.
template <typename Pick, typename Weight, typename Add>
bool split(const CardTick& tick, double amount, Pick pick, Weight weight, Add add) {
    double total = 0;
    std::size_t count = 0;
    for (const ProcTick& p : tick.processes) {
        if (pick(p)) {
            total += weight(p);
            ++count;
        }
    }
    if (count == 0) {
        return false;
    }
    for (const ProcTick& p : tick.processes) {
        if (pick(p)) {
            const double w = total > 0 ? weight(p) / total : 1.0 / static_cast<double>(count);
            add(p, amount * w);
        }
    }
    return true;
}

} // namespace

void attribute(const CardTick& tick, const StateTimes& states, const Thresholds& thresholds,
               std::uint32_t nobody, std::vector<IdentityShare>& out) {
    out.clear();
    const auto holder = [&](const ProcTick& p) { return is_holder(p, thresholds); };
    const auto any = [](const ProcTick&) { return true; };
    const auto by_mem = [&](const ProcTick& p) { return mem_weight(p, thresholds); };
    const auto by_sm = [](const ProcTick& p) { return p.sm_util_pct.value_or(0.0); };

    if (states.active > 0) {
        const double active = static_cast<double>(states.active);
        const auto add_active = [&](const ProcTick& p, double us) {
            share_of(out, p.identity).active_us += us;
        };
        double sm_total = 0;
        for (const ProcTick& p : tick.processes) {
            sm_total += p.sm_util_pct.value_or(0.0);
        }
        const bool done = (sm_total > 0 && split(tick, active, any, by_sm, add_active)) ||
                          split(tick, active, holder, by_mem, add_active) ||
                          split(tick, active, any, by_mem, add_active);
        if (!done) {
            share_of(out, nobody).active_us += active;
        }
    }
    if (states.idle_held > 0) {
        split(tick, static_cast<double>(states.idle_held), holder, by_mem,
              [&](const ProcTick& p, double us) { share_of(out, p.identity).idle_held_us += us; });
    }
    // Idle-held memory per process: whenever the card was not active, and for the whole tick when
    // its own per-process reading is below the active threshold.
    const double card_idle = static_cast<double>(states.idle_held + states.truly_idle);
    for (const ProcTick& p : tick.processes) {
        if (!holder(p)) {
            continue;
        }
        // While the card is below the active threshold every process on it is idle, whatever
        // its own mean over the tick says.
        const bool own_idle = p.sm_util_pct && *p.sm_util_pct < thresholds.active_util_pct;
        const double idle_us =
            std::max(card_idle, own_idle ? static_cast<double>(tick.duration_us) : 0.0);
        if (idle_us > 0) {
            share_of(out, p.identity).idle_held_mib_us += mem_weight(p, thresholds) * idle_us;
        }
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

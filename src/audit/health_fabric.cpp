// SPDX-License-Identifier: Apache-2.0
// Interconnect and bus totals: each card-tick's NVLink, PCIe and row-remapper readings turned
// into summable integers and the spans during which something was wrong.
#include "audit/health_fabric.hpp"

#include <algorithm>

namespace gua::audit {

namespace {

using telemetry::CardReadings;

constexpr std::array<std::optional<std::int64_t> CardReadings::*, k_nvlink_error_count>
    k_nvlink_fields{&CardReadings::nvlink_replays, &CardReadings::nvlink_recoveries,
                    &CardReadings::nvlink_crc_errors};

double per_hour(std::int64_t count, DurationUs us) {
    return static_cast<double>(count) / to_hours(us);
}

void add_nvlink(const CardTick& tick, DurationUs span, FabricTotals& out) {
    bool errors = false;
    for (std::size_t k = 0; k < k_nvlink_error_count; ++k) {
        const std::optional<std::int64_t>& v = tick.readings.*k_nvlink_fields[k];
        if (v) {
            out.nvlink_known_us[k] += span;
            out.nvlink_errors[k] += *v;
            errors = errors || *v > 0;
        }
    }
    if (errors) {
        out.nvlink_errors_seen.add(tick.t0, tick.t0 + span);
    }
    const CardReadings& r = tick.readings;
    if (!r.nvlink_links || !r.nvlink_links_active || *r.nvlink_links <= 0) {
        return;
    }
    out.links_known_us += span;
    out.links = std::max(out.links, *r.nvlink_links);
    if (*r.nvlink_links_active < *r.nvlink_links) {
        out.links_active_min = out.links_down_us == 0
                                   ? *r.nvlink_links_active
                                   : std::min(out.links_active_min, *r.nvlink_links_active);
        out.links_down_us += span;
        out.links_down_seen.add(tick.t0, tick.t0 + span);
    }
}

/// Adds the replay counter readings of `o` (a later span) to `out`: the increase from `out`'s
/// latest reading to `o`'s first counts over `o`'s first tick, unless the counter went back (the
/// driver was reloaded).
void add_replay_counter(const FabricTotals& o, FabricTotals& out) {
    if (o.pcie_replay_read_us <= 0) {
        return;
    }
    if (out.pcie_replay_read_us <= 0) {
        out.pcie_replay_first = o.pcie_replay_first;
        out.pcie_replay_first_us = o.pcie_replay_first_us;
    } else if (o.pcie_replay_first >= out.pcie_replay_last) {
        out.pcie_replay_known_us += o.pcie_replay_first_us;
        out.pcie_replays += o.pcie_replay_first - out.pcie_replay_last;
    }
    out.pcie_replay_read_us += o.pcie_replay_read_us;
    out.pcie_replay_last = o.pcie_replay_last;
}

void add_pcie(const CardTick& tick, DurationUs span, DurationUs active, FabricTotals& out) {
    const CardReadings& r = tick.readings;
    if (r.pcie_replays) {
        FabricTotals one;
        one.pcie_replay_read_us = std::max<DurationUs>(span, 1);
        one.pcie_replay_first = one.pcie_replay_last = *r.pcie_replays;
        one.pcie_replay_first_us = span;
        add_replay_counter(one, out);
    }
    if (!r.pcie_gen || !r.pcie_gen_max || !r.pcie_width || !r.pcie_width_max) {
        return;
    }
    out.pcie_gen_max = std::max(out.pcie_gen_max, *r.pcie_gen_max);
    out.pcie_width_max = std::max(out.pcie_width_max, *r.pcie_width_max);
    if (active <= 0) {
        return; // an idle card lowers its link generation to save power
    }
    out.pcie_known_active_us += active;
    if (*r.pcie_gen < *r.pcie_gen_max || *r.pcie_width < *r.pcie_width_max) {
        const bool first = out.pcie_degraded_active_us == 0;
        out.pcie_gen_low = first ? *r.pcie_gen : std::min(out.pcie_gen_low, *r.pcie_gen);
        out.pcie_width_low = first ? *r.pcie_width : std::min(out.pcie_width_low, *r.pcie_width);
        out.pcie_degraded_active_us += active;
        out.pcie_degraded_seen.add(tick.t0, tick.t0 + span);
    }
}

} // namespace

void SeenSpan::add(TimeUs t0, TimeUs end) {
    first_us = first_us == 0 ? t0 : std::min(first_us, t0);
    last_end_us = std::max(last_end_us, end);
}

SeenSpan& SeenSpan::operator+=(const SeenSpan& o) {
    if (o.first_us != 0) {
        add(o.first_us, o.last_end_us);
    }
    return *this;
}

std::optional<double> FabricTotals::nvlink_rate(NvlinkError kind) const {
    const auto k = static_cast<std::size_t>(kind);
    if (nvlink_known_us[k] <= 0) {
        return std::nullopt;
    }
    return per_hour(nvlink_errors[k], nvlink_known_us[k]);
}

std::optional<double> FabricTotals::pcie_replay_rate() const {
    if (pcie_replay_known_us <= 0) {
        return std::nullopt;
    }
    return per_hour(pcie_replays, pcie_replay_known_us);
}

FabricTotals& FabricTotals::operator+=(const FabricTotals& o) {
    for (std::size_t k = 0; k < k_nvlink_error_count; ++k) {
        nvlink_known_us[k] += o.nvlink_known_us[k];
        nvlink_errors[k] += o.nvlink_errors[k];
    }
    nvlink_errors_seen += o.nvlink_errors_seen;
    links_known_us += o.links_known_us;
    links_active_min = links_down_us == 0     ? o.links_active_min
                       : o.links_down_us == 0 ? links_active_min
                                              : std::min(links_active_min, o.links_active_min);
    links_down_us += o.links_down_us;
    links = std::max(links, o.links);
    links_down_seen += o.links_down_seen;
    pcie_known_active_us += o.pcie_known_active_us;
    pcie_gen_low = pcie_degraded_active_us == 0     ? o.pcie_gen_low
                   : o.pcie_degraded_active_us == 0 ? pcie_gen_low
                                                    : std::min(pcie_gen_low, o.pcie_gen_low);
    pcie_width_low = pcie_degraded_active_us == 0     ? o.pcie_width_low
                     : o.pcie_degraded_active_us == 0 ? pcie_width_low
                                                      : std::min(pcie_width_low, o.pcie_width_low);
    pcie_degraded_active_us += o.pcie_degraded_active_us;
    pcie_gen_max = std::max(pcie_gen_max, o.pcie_gen_max);
    pcie_width_max = std::max(pcie_width_max, o.pcie_width_max);
    pcie_degraded_seen += o.pcie_degraded_seen;
    add_replay_counter(o, *this);
    pcie_replay_known_us += o.pcie_replay_known_us;
    pcie_replays += o.pcie_replays;
    remap_known_us += o.remap_known_us;
    remap_failed_us += o.remap_failed_us;
    remap_failed_seen += o.remap_failed_seen;
    return *this;
}

void add_fabric(const CardTick& tick, const StateTimes& states, FabricTotals& out) {
    const DurationUs span = states.total(); // the tick's counted time
    add_nvlink(tick, span, out);
    add_pcie(tick, span, states.active, out);
    if (tick.readings.remap_failure) {
        out.remap_known_us += span;
        if (*tick.readings.remap_failure != 0) {
            out.remap_failed_us += span;
            out.remap_failed_seen.add(tick.t0, tick.t0 + span);
        }
    }
}

} // namespace gua::audit

// SPDX-License-Identifier: Apache-2.0
// Test helper: hand-built telemetry ticks (cards with processes) for the exporter tests.
#pragma once

#include "audit/classify.hpp"
#include "telemetry/tick.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace gua::exporter::testing {

/// The labels of user `user`'s identity series without Kubernetes or container names, as the
/// exposition writes them (every series of an identity family has the same label names).
inline std::string who(const std::string& user) {
    return "user=\"" + user + "\",namespace=\"\",pod=\"\",container=\"\"";
}

/// A tick starting at 2026-05-11T08:00:00Z + seq × duration.
inline telemetry::Tick tick(int seq, int duration_s) {
    telemetry::Tick t;
    t.seq = static_cast<std::uint64_t>(seq);
    t.duration_us = duration_s * k_us_per_second;
    t.t0 = 1778486400 * k_us_per_second + seq * t.duration_us;
    return t;
}

/// A compute process of `user` holding `mem_mib` with per-process SM `sm_pct` (< 0: no reading).
inline telemetry::ProcessTick process(const std::string& user, std::int64_t mem_mib,
                                      double sm_pct) {
    static std::uint32_t next_pid = 1000;
    telemetry::ProcessTick p;
    p.pid = ++next_pid;
    p.start_ticks = p.pid * 7;
    p.identity.user = user;
    p.identity.command = "python3";
    p.mem_used_mib = mem_mib;
    if (sm_pct >= 0) {
        p.sm_util_pct = sm_pct;
    }
    return p;
}

/// Card `index` at constant `util_pct` for `duration_s`, with `processes`.
inline telemetry::CardTickRecord card(int index, int duration_s, double util_pct,
                                      std::vector<telemetry::ProcessTick> processes) {
    telemetry::CardTickRecord c;
    c.device.uuid = fmt::format("GPU-00000000-0000-0000-0000-{:012}", index);
    c.device.index = index;
    c.device.name = "NVIDIA H100 80GB HBM3";
    c.device.memory_total_mib = 81559;
    c.util_source = telemetry::UtilSource::snapshot;
    c.util_pct = util_pct;
    const DurationUs d = duration_s * k_us_per_second;
    c.active_us = util_pct >= 10.0 ? d : 0;
    c.bucket_us[static_cast<std::size_t>(audit::bucket_of(util_pct))] = d;
    std::int64_t used = 0;
    for (const telemetry::ProcessTick& p : processes) {
        used += p.mem_used_mib.value_or(0);
    }
    c.readings.mem_used_mib = used;
    c.readings.power_mw = 60500;
    c.readings.temperature_c = 41;
    c.util_samples = 1;
    c.processes = std::move(processes);
    return c;
}

} // namespace gua::exporter::testing

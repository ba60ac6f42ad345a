// SPDX-License-Identifier: Apache-2.0
// Random tick histories for store tests: several cards coming and going, processes of a few
// identities, unmeasured and partially active ticks, jitter, gaps and clock steps.
#pragma once

#include "telemetry/tick.hpp"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace gua::testing {

/// Knobs of random_history().
struct RandomHistoryOptions {
    int ticks = 400;
    bool quantised = false; ///< only values the store keeps exactly (whole %, W, 0.01 %)
    bool clock_steps = true;
};

inline telemetry::DeviceInfo random_device(int index) {
    telemetry::DeviceInfo d;
    d.uuid = "GPU-" + std::to_string(1000 + index) + "-aaaa-bbbb-cccc-0123456789ab";
    d.index = index;
    d.name = "NVIDIA Test";
    d.memory_total_mib = 81920;
    return d;
}

inline telemetry::Identity random_identity(int who) {
    telemetry::Identity id;
    if (who == 0) {
        return id; // unknown
    }
    id.user = "user" + std::to_string(who);
    id.uid = static_cast<std::uint32_t>(1000 + who);
    id.command = "python3";
    return id;
}

/// A history starting at `start` (UTC µs) in non-decreasing time order except for rare clock
/// steps backwards.
inline std::vector<telemetry::Tick> random_history(std::uint64_t seed, TimeUs start,
                                                   const RandomHistoryOptions& o = {}) {
    std::mt19937_64 rng(seed);
    const auto uni = [&](double lo, double hi) {
        return std::uniform_real_distribution<double>(lo, hi)(rng);
    };
    const auto pick = [&](std::int64_t n) {
        return static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n));
    };
    const std::vector<DurationUs> intervals{k_us_per_second, 5 * k_us_per_second,
                                            30 * k_us_per_second, 7 * k_us_per_minute,
                                            95 * k_us_per_minute};
    DurationUs interval = intervals[static_cast<std::size_t>(pick(4))];
    struct Proc {
        std::uint32_t pid;
        int who;
        telemetry::ProcessType type;
        std::optional<std::int64_t> mib;
    };
    const int n_cards = 1 + static_cast<int>(pick(4));
    std::vector<std::vector<Proc>> procs(static_cast<std::size_t>(n_cards));
    std::vector<bool> present(static_cast<std::size_t>(n_cards), true);
    std::uint32_t next_pid = 100;
    std::vector<telemetry::Tick> out;
    TimeUs t = start;
    for (int n = 0; n < o.ticks; ++n) {
        if (pick(60) == 0) {
            interval = intervals[static_cast<std::size_t>(
                pick(static_cast<std::int64_t>(intervals.size())))];
        }
        telemetry::Tick tick;
        tick.seq = static_cast<std::uint64_t>(n);
        tick.t0 = t;
        tick.duration_us = interval;
        if (pick(8) == 0) {
            tick.duration_us += pick(2000) - 1000;
        }
        for (int c = 0; c < n_cards; ++c) {
            auto& card_procs = procs[static_cast<std::size_t>(c)];
            if (pick(30) == 0) {
                present[static_cast<std::size_t>(c)] = !present[static_cast<std::size_t>(c)];
            }
            if (!present[static_cast<std::size_t>(c)]) {
                continue;
            }
            if (pick(10) == 0) {
                card_procs.clear();
                const int k = static_cast<int>(pick(4));
                for (int i = 0; i < k; ++i) {
                    Proc p{next_pid++, static_cast<int>(pick(5)),
                           static_cast<telemetry::ProcessType>(
                               pick(6) == 0 ? 1 : (pick(8) == 0 ? 2 : 0)),
                           std::nullopt};
                    if (pick(6) != 0) {
                        p.mib = std::vector<std::int64_t>{
                            0, 40, 60, 100, 101, 8000, 70000}[static_cast<std::size_t>(pick(7))];
                    }
                    card_procs.push_back(p);
                }
            }
            telemetry::CardTickRecord r;
            r.device = random_device(c);
            const DurationUs d = tick.duration_us;
            const std::int64_t kind = pick(10);
            if (kind == 0) {
                r.util_source = telemetry::UtilSource::none;
            } else if (kind < 6) {
                r.util_source = telemetry::UtilSource::snapshot;
                const double u = static_cast<double>(pick(101));
                r.util_pct = u;
                r.active_us = u >= 10 ? d : 0;
                r.bucket_us[u >= 90 ? 3 : u >= 70 ? 2 : u >= 10 ? 1 : 0] = d;
            } else {
                // Some ticks lost ring samples: their buckets cover the measured rest.
                const bool partial = pick(4) == 0;
                r.util_source =
                    partial ? telemetry::UtilSource::partial : telemetry::UtilSource::samples;
                r.unmeasured_us = partial ? pick(d / 2 + 1) : 0;
                const DurationUs m = d - r.unmeasured_us;
                r.util_pct = o.quantised ? static_cast<double>(pick(101)) : uni(0, 100);
                DurationUs left = m;
                for (std::size_t b = 0; b < 3; ++b) {
                    r.bucket_us[b] = pick(left + 1);
                    left -= r.bucket_us[b];
                }
                r.bucket_us[3] = left;
                // Usually active = everything from 10 % up (the sampler's default threshold).
                r.active_us = pick(3) == 0 ? pick(m + 1) : m - r.bucket_us[0];
            }
            if (r.active_us) { // the measured non-active rest: no holder listed, or unknown
                const DurationUs rest = std::max<DurationUs>(d - r.unmeasured_us - *r.active_us, 0);
                if (card_procs.empty()) {
                    r.idle_unlisted_us = pick(2) == 0 ? rest : pick(rest + 1);
                } else if (pick(6) == 0) {
                    r.idle_unknown_us = pick(rest + 1);
                }
            }
            if (pick(3) == 0) { // every per-card field, in whole stored units when quantised
                for (const telemetry::CardFieldInfo& f : telemetry::k_card_fields) {
                    const std::int64_t range = f.fold == telemetry::Fold::bits ? 512 : 2000;
                    r.readings.*f.value =
                        o.quantised ? f.quantum * pick(range) : pick(range * f.quantum);
                }
            }
            r.read_errors = pick(20) == 0 ? 1 : 0;
            std::int64_t held = 0;
            for (const Proc& p : card_procs) {
                telemetry::ProcessTick pt;
                pt.pid = p.pid;
                pt.start_ticks = p.pid * 7ULL;
                pt.identity = random_identity(p.who);
                pt.type = p.type;
                pt.mem_used_mib = p.mib;
                if (pick(3) == 0) {
                    pt.sm_util_pct =
                        o.quantised ? static_cast<double>(pick(10001)) / 100.0 : uni(0, 100);
                }
                held += p.mib.value_or(0);
                r.processes.push_back(pt);
            }
            // Per-process active time where there were readings: Σ ≤ the card's active time.
            DurationUs unattributed = r.active_us.value_or(0);
            for (telemetry::ProcessTick& pt : r.processes) {
                if (pt.sm_util_pct && r.active_us && pick(4) != 0) {
                    pt.active_us = pick(2) == 0 ? unattributed : pick(unattributed + 1);
                    unattributed -= *pt.active_us;
                }
            }
            // Per-process idle-held time (schema 11) on odd pids, derived without a draw so that
            // the history's random sequence stays as it was: a share of the card's idle-held rest,
            // or an odd value off the stored default.
            if (r.active_us) {
                const DurationUs rest = std::max<DurationUs>(
                    d - r.unmeasured_us - *r.active_us - r.idle_unknown_us - r.idle_unlisted_us, 0);
                for (telemetry::ProcessTick& pt : r.processes) {
                    if (pt.pid % 2 == 1 && pt.type != telemetry::ProcessType::graphics) {
                        const std::int64_t mib =
                            std::max<std::int64_t>(pt.mem_used_mib.value_or(1), 1);
                        pt.idle_held_us = held > 0 ? rest * std::min(mib, held) / held : rest / 3;
                        if (pt.pid % 4 == 1) {
                            *pt.idle_held_us = *pt.idle_held_us / 2 + 7;
                        }
                    }
                }
            }
            r.readings.mem_used_mib = held;
            tick.cards.push_back(r);
        }
        out.push_back(tick);
        t += tick.duration_us;
        if (pick(5) == 0) {
            t += pick(3000) - 500; // wall clock jitter
        }
        if (pick(50) == 0) {
            t += pick(4 * k_us_per_hour); // daemon down
        }
        if (o.clock_steps && pick(200) == 0) {
            t -= pick(2 * k_us_per_hour); // clock stepped back
        }
    }
    return out;
}

} // namespace gua::testing

// SPDX-License-Identifier: Apache-2.0
// FREE → RUN → HOLD → FREE per card, as described in §10 of gpu-usage-audit's reference.
#include "fleet_workload.hpp"

#include <array>
#include <random>
#include <string>
#include <vector>

namespace gua::bench {

namespace {

enum class Phase { free, run, hold };

struct Proc {
    std::uint32_t pid;
    int who; ///< index into k_people; 5 = unresolved
    std::int64_t mib;
    int sm_pct; ///< its steady share of the SMs while the job runs (whole percent, as NVML)
};

struct Card {
    Phase phase = Phase::free;
    std::int64_t left = 0; ///< ticks left in the phase
    bool ends_in_hold = false;
    std::vector<Proc> procs;
    // Health (its own random stream: the states above are those of gpu-usage-audit's workload).
    Phase health_phase = Phase::free;
    double job_watts = 0;        ///< the running job's typical draw
    bool power_capped = false;   ///< the job runs into the power limit
    std::int64_t ghost_mib = 0;  ///< memory a crashed job left behind, until the card is reset
    bool link_read_busy = false; ///< the daemon has read the PCIe link while the card was busy
    double temperature = 32;
    double mem_temperature = 38;
    std::int64_t energy_mj_remainder = 0;
    std::array<std::int64_t, 7> gpm_cpct{}; ///< the running job's GPM levels (add_gpm)
    Phase gpm_phase = Phase::free;          ///< the phase of the previous tick
};

constexpr std::int64_t k_power_limit_mw = 400000; // A100-SXM4-80GB
constexpr std::int64_t k_max_sm_clock_mhz = 1410;
constexpr std::int64_t k_reserved_mib = 512;

/// The health readings of one card-tick: limits, ECC and reservation steady; power, energy and
/// temperatures following the load (a first-order lag, whole degrees); the clocks and their
/// event reasons steady per phase (idle, or a power-capped job); sometimes ghost memory after a
/// job ended.
void add_health(Card& card, const FleetOptions& o, double util, std::mt19937_64& rng,
                telemetry::CardTickRecord& r) {
    std::uniform_real_distribution<double> uni(0.0, 1.0);
    if (card.phase != card.health_phase) {
        if (card.phase == Phase::run) {
            card.job_watts = 220 + uni(rng) * 150;
            card.power_capped = uni(rng) < 0.2;
        } else if (card.phase == Phase::free) {
            card.ghost_mib = uni(rng) < 0.1 ? 2048 : 0;
        }
        card.health_phase = card.phase;
    }
    telemetry::CardReadings& h = r.readings;
    h.power_limit_mw = k_power_limit_mw;
    h.max_sm_clock_mhz = k_max_sm_clock_mhz;
    h.mem_total_mib = 81920;
    h.mem_reserved_mib = k_reserved_mib;
    h.ecc_uncorrected = 0;
    h.remapped_rows_cor = 0;
    h.remapped_rows_unc = 0;
    h.remap_pending = 0;
    // Interconnect and bus (A100-SXM4: 12 NVLink links, PCIe gen4 x16): no errors, every link
    // up, the link at gen4 under load and at gen1 when idle (the driver saves power); the daemon
    // keeps the reading of its latest busy poll, so gen1 only until the card is first busy.
    h.nvlink_replays = 0;
    h.nvlink_recoveries = 0;
    h.nvlink_crc_errors = 0;
    h.nvlink_links = 12;
    h.nvlink_links_active = 12;
    card.link_read_busy = card.link_read_busy || (card.phase == Phase::run && util > 0);
    h.pcie_gen = card.link_read_busy ? 4 : 1;
    h.pcie_gen_max = 4;
    h.pcie_width = 16;
    h.pcie_width_max = 16;
    h.remap_failure = 0;
    double watts = card.phase == Phase::free ? 55 : 62;
    double target_c = card.phase == Phase::free ? 32 : 34;
    if (card.phase == Phase::run) {
        watts = card.power_capped ? 400 : card.job_watts * (0.75 + 0.25 * util / 100.0);
        target_c = 40 + watts / 10;
    }
    card.temperature += (target_c - card.temperature) * 0.3;
    card.mem_temperature += (target_c + 6 - card.mem_temperature) * 0.2;
    h.power_mw = std::llround(watts) * 1000;
    h.temperature_c = std::llround(card.temperature);
    h.mem_temperature_c = std::llround(card.mem_temperature);
    const bool running = card.phase == Phase::run;
    h.sm_clock_mhz = running ? (card.power_capped ? 1275 : k_max_sm_clock_mhz) : 210;
    const std::int64_t events = running ? (card.power_capped ? 0x4 : 0) : 0x1;
    h.clock_events = events;
    const auto during = [&](std::int64_t bit) { return (events & bit) != 0 ? o.interval_us : 0; };
    h.clocks_idle_us = during(0x1);
    h.clocks_sw_power_cap_us = during(0x4);
    h.clocks_hw_slowdown_us = 0;
    h.clocks_sync_boost_us = 0;
    h.clocks_sw_thermal_us = 0;
    h.clocks_hw_thermal_us = 0;
    h.clocks_hw_power_brake_us = 0;
    // The energy counter integrates the draw over the whole tick, which a busy card's one
    // reading only approximates (±3 %); whole joules with the remainder carried, as the sampler.
    const double mean_watts = running ? watts * (0.97 + 0.06 * uni(rng)) : watts;
    const std::int64_t mj = std::llround(mean_watts * static_cast<double>(o.interval_us) / 1000.0) +
                            card.energy_mj_remainder;
    h.energy_mj = (mj + 500) / 1000 * 1000;
    card.energy_mj_remainder = mj - *h.energy_mj;
    h.ghost_mib = running ? 0 : card.ghost_mib;
}

/// The GPM readings of one card-tick (FleetOptions::gpm): a job's levels drawn when it starts
/// (SM active below utilization, as on real cards; tensor and FP16 pipes used by half the jobs),
/// whole percent; 0 while the card does not run a job.
void add_gpm(Card& card, const FleetOptions& o, double util, bool job_started, std::mt19937_64& rng,
             telemetry::CardTickRecord& r) {
    if (o.gpm == FleetOptions::Gpm::off) {
        return;
    }
    std::uniform_real_distribution<double> uni(0.0, 1.0);
    const bool running = card.phase == Phase::run;
    if (job_started || o.gpm == FleetOptions::Gpm::per_tick) {
        const double active = util * (0.4 + 0.5 * (job_started ? uni(rng) : 0.5));
        const bool tensor = uni(rng) < 0.5;
        card.gpm_cpct = {std::llround(active),
                         std::llround(active * 0.4),
                         tensor ? std::llround(active * 0.6) : 0,
                         std::llround(20 + 50 * uni(rng)),
                         0,
                         std::llround(active * 0.5),
                         tensor ? std::llround(active * 0.3) : 0};
    }
    telemetry::CardReadings& g = r.readings;
    const auto level = [&](std::size_t i) { return running ? card.gpm_cpct[i] * 100 : 0; };
    g.sm_active_cpct = level(0);
    g.sm_occupancy_cpct = level(1);
    g.tensor_active_cpct = level(2);
    g.dram_bw_cpct = level(3);
    g.fp64_active_cpct = level(4);
    g.fp32_active_cpct = level(5);
    g.fp16_active_cpct = level(6);
}

constexpr std::array<const char*, 5> k_people{"alice", "bob", "carol", "dave", "erin"};
constexpr std::array<std::int64_t, 5> k_sizes{40, 900, 8000, 24000, 70000};

std::string uuid_of(int i, std::mt19937_64& rng) {
    static constexpr char k_hex[] = "0123456789abcdef";
    std::string u = "GPU-";
    for (int g : {8, 4, 4, 4, 12}) {
        for (int k = 0; k < g; ++k) {
            u += k_hex[(rng() + static_cast<unsigned>(i)) % 16];
        }
        u += '-';
    }
    u.pop_back();
    return u;
}

} // namespace

FleetTruth generate_fleet(const FleetOptions& o,
                          const std::function<void(const telemetry::Tick&)>& sink) {
    std::mt19937_64 rng(o.seed);
    std::mt19937_64 health_rng(o.seed ^ 0x6865616c7468ULL);
    std::mt19937_64 gpm_rng(o.seed ^ 0x67706dULL); // its own stream: health readings unchanged
    std::uniform_real_distribution<double> uni(0.0, 1.0);
    const auto between = [&](double lo_s, double hi_s) {
        const double s = lo_s + uni(rng) * (hi_s - lo_s);
        return std::max<std::int64_t>(
            1, static_cast<std::int64_t>(s * k_us_per_second / static_cast<double>(o.interval_us)));
    };
    std::vector<telemetry::DeviceInfo> devices;
    std::vector<Card> cards(static_cast<std::size_t>(o.gpus));
    for (int i = 0; i < o.gpus; ++i) {
        devices.push_back(
            telemetry::DeviceInfo{uuid_of(i, rng), i, "NVIDIA A100-SXM4-80GB", 81920, "", ""});
    }
    std::vector<telemetry::Identity> people;
    for (const char* name : k_people) {
        telemetry::Identity id;
        id.user = name;
        id.uid = static_cast<std::uint32_t>(1000 + people.size());
        id.command = "python3";
        people.push_back(id);
    }
    people.push_back(telemetry::Identity{}); // unresolved
    std::uint32_t next_pid = 10000;
    FleetTruth truth;
    telemetry::Tick tick;
    tick.duration_us = o.interval_us;
    tick.cards.resize(devices.size());

    for (std::int64_t n = 0; n < o.ticks; ++n) {
        tick.seq = static_cast<std::uint64_t>(n);
        tick.t0 = o.start + n * o.interval_us;
        const std::int64_t hour = (tick.t0 / k_us_per_hour) % 24;
        const std::int64_t weekday = (tick.t0 / k_us_per_day + 4) % 7;
        const bool office = weekday >= 1 && weekday <= 5 && hour >= 8 && hour < 20;
        for (std::size_t c = 0; c < cards.size(); ++c) {
            Card& card = cards[c];
            if (card.left <= 0) {
                if (card.phase == Phase::free) {
                    if (uni(rng) < (office ? 0.8 : 0.3)) {
                        card.phase = Phase::run;
                        card.left = between(3600, 12 * 3600);
                        card.ends_in_hold = uni(rng) < 0.6;
                        card.procs.clear();
                        const double r = uni(rng);
                        const int n_procs = r < 0.5 ? 1 : (r < 0.75 ? 2 : 3);
                        const int who = static_cast<int>(rng() % 6);
                        for (int k = 0; k < n_procs; ++k) {
                            card.procs.push_back(Proc{next_pid++, who, k_sizes[rng() % 5],
                                                      10 + static_cast<int>(rng() % 80)});
                        }
                        if (uni(rng) < 0.15) {
                            card.procs.push_back(Proc{next_pid++, static_cast<int>(rng() % 6),
                                                      uni(rng) < 0.5 ? 300 : 5000,
                                                      1 + static_cast<int>(rng() % 5)});
                        }
                    } else {
                        card.left = between(1800, 4 * 3600);
                    }
                } else if (card.phase == Phase::run && card.ends_in_hold) {
                    card.phase = Phase::hold;
                    card.left = between(1800, 24 * 3600);
                } else {
                    card.phase = Phase::free;
                    card.procs.clear();
                    card.left = between(1800, 6 * 3600);
                }
            }
            const bool job_started = card.phase == Phase::run && card.phase != card.gpm_phase;
            card.gpm_phase = card.phase;
            --card.left;
            double util = 0;
            if (card.phase == Phase::run) {
                util = uni(rng) < 0.1 ? 5 + uni(rng) * 95 : 40 + uni(rng) * 60;
            } else if (card.phase == Phase::hold) {
                util = uni(rng) < 0.05 ? uni(rng) * 12 : uni(rng) * 3;
            }
            util = static_cast<double>(static_cast<int>(util)); // NVML reports whole percent
            telemetry::CardTickRecord& r = tick.cards[c];
            r = telemetry::CardTickRecord{};
            r.device = devices[c];
            r.util_source = telemetry::UtilSource::snapshot;
            r.util_pct = util;
            r.util_samples = 1;
            const bool active = util >= 10;
            const double fault = o.measurement_faults ? uni(rng) : 1.0;
            if (fault < 0.00005) { // samples lost for part of the tick
                r.util_source = telemetry::UtilSource::partial;
                r.unmeasured_us = 1 + static_cast<DurationUs>(uni(rng) * 0.5 *
                                                              static_cast<double>(o.interval_us));
                ++truth.faults;
            }
            const DurationUs measured = o.interval_us - r.unmeasured_us;
            r.active_us = active ? measured : 0;
            const std::size_t bucket = util >= 90 ? 3 : util >= 70 ? 2 : util >= 10 ? 1 : 0;
            r.bucket_us[bucket] = measured;
            if (card.procs.empty()) {
                r.idle_unlisted_us = measured - *r.active_us;
            } else if (!active && fault >= 0.00005 && fault < 0.0001) { // process list unreadable
                r.idle_unknown_us = measured;
                ++truth.faults;
            }
            // Per-process readings while the job runs: active time split by SM share (the
            // sampler's rule poll by poll; one poll per tick here). Held only: no readings.
            int sm_total = 0;
            for (const Proc& p : card.procs) {
                sm_total += card.phase == Phase::run ? p.sm_pct : 0;
            }
            std::int64_t held = 0;
            for (const Proc& p : card.procs) {
                telemetry::ProcessTick pt;
                pt.pid = p.pid;
                pt.start_ticks = p.pid * 100ULL;
                pt.identity = people[static_cast<std::size_t>(p.who)];
                pt.mem_used_mib = p.mib;
                if (sm_total > 0) {
                    pt.sm_util_pct = p.sm_pct;
                    pt.active_us = *r.active_us * p.sm_pct / sm_total;
                }
                r.processes.push_back(pt);
                held += p.mib;
            }
            add_health(card, o, util, health_rng, r);
            add_gpm(card, o, util, job_started, gpm_rng, r);
            r.readings.mem_used_mib = held + *r.readings.ghost_mib;
            if (!o.health) { // memory only, as the workload was before the health readings
                r.readings = telemetry::CardReadings{};
                r.readings.mem_used_mib = held;
            }
            truth.processes += static_cast<std::int64_t>(card.procs.size());
            if (active) {
                ++truth.active;
            } else if (held > 100) {
                ++truth.idle_held;
            } else {
                ++truth.truly_idle;
            }
        }
        sink(tick);
    }
    return truth;
}

} // namespace gua::bench

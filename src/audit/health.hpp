// SPDX-License-Identifier: Apache-2.0
// Health totals of a card or an identity: energy by source and by state, accumulated card-tick
// by card-tick from the recorded health readings (docs/health.md). Pure: no I/O.
#pragma once

#include "audit/card_tick.hpp"
#include "audit/classify.hpp"
#include "audit/health_fabric.hpp"

#include <array>
#include <cstdint>
#include <optional>

namespace gua::audit {

/// What a kWh costs and emits ([energy] of gua.toml); each nullopt when not configured.
struct EnergyPricing {
    std::optional<std::int64_t> micros_per_kwh; ///< price, micro-units of [pricing] currency
    std::optional<double> grams_co2_per_kwh;    ///< grid carbon intensity
    friend bool operator==(const EnergyPricing&, const EnergyPricing&) = default;
};

/// The highest accepted electricity price, 100 currency units per kWh, and carbon intensity,
/// 2000 g CO2 per kWh (coal is about 1000).
inline constexpr std::int64_t k_max_micros_per_kwh = 100'000'000;
inline constexpr double k_max_grams_co2_per_kwh = 2000;

/// The cost of `mj` millijoules at `micros_per_kwh`, in cents, rounded half up once.
std::int64_t energy_cost_cents(std::int64_t mj, std::int64_t micros_per_kwh);

/// The energy of one card-tick, in millijoules, and where it came from.
struct TickEnergy {
    std::int64_t mj = 0;
    bool from_counter = false; ///< the driver's energy counter; false: power × duration
};

/// The energy of `tick`: its recorded energy counter increase, else (no counter reading) its
/// power reading × its duration, else nullopt ("n/a", never 0).
std::optional<TickEnergy> tick_energy(const CardTick& tick);

/// Index of a state in EnergyTotals::state_mj.
enum class EnergyState : std::uint8_t {
    active = 0,
    idle_held = 1,
    truly_idle = 2,
    unmeasured = 3,
    allocated_unused = 4,
};
inline constexpr std::size_t k_energy_state_count = 5;

/// Energy of one card over some card-ticks, in millijoules, with the card time each source covers.
struct EnergyTotals {
    std::int64_t counter_mj = 0; ///< from the driver's energy counter
    DurationUs counter_us = 0;   ///< card time whose energy came from the counter
    std::int64_t power_mj = 0;   ///< power × time, where the counter was absent
    DurationUs power_us = 0;     ///< card time whose energy came from power × time
    /// The same energy by the state of its card time (index: EnergyState): each tick's energy
    /// split in proportion to its state times (the tick's power taken as constant).
    std::array<std::int64_t, k_energy_state_count> state_mj{};

    std::int64_t total_mj() const { return counter_mj + power_mj; }
    DurationUs known_us() const { return counter_us + power_us; }
    EnergyTotals& operator+=(const EnergyTotals& o);
    friend bool operator==(const EnergyTotals&, const EnergyTotals&) = default;
};

/// The clocks-event reasons that hold a working card's clocks back, in report order.
enum class ThrottleReason : std::uint8_t {
    sw_power_cap = 0,
    hw_slowdown = 1,
    sw_thermal = 2,
    hw_thermal = 3,
    sync_boost = 4,
    hw_power_brake = 5,
};
inline constexpr std::size_t k_throttle_reason_count = 6;
/// Their names in /metrics (the `reason` label), in ThrottleReason order.
inline constexpr std::array<const char*, k_throttle_reason_count> k_throttle_reason_names{
    "sw_power_cap", "hw_slowdown", "sw_thermal", "hw_thermal", "sync_boost", "hw_power_brake"};
/// The names of EnergyState in /metrics (the `state` label), in order.
inline constexpr std::array<const char*, k_energy_state_count> k_energy_state_names{
    "active", "idle_held", "truly_idle", "unmeasured", "allocated_unused"};

/// A member of telemetry::CardReadings (one field of card_fields.def).
using ReadingField = std::optional<std::int64_t> telemetry::CardReadings::*;

/// The recorded time per tick of `reason` (telemetry/card_fields.def).
ReadingField reason_field(ThrottleReason reason);

/// Clocks of one card while active: time per clocks-event reason and SM clock against its highest.
struct ThrottleTotals {
    /// Active time of card-ticks whose clocks-event reasons were read.
    DurationUs events_active_us = 0;
    /// Of it, time with each reason (index: ThrottleReason): per tick the reason's time, at most
    /// the tick's active time (power and heat limits act under load).
    std::array<DurationUs, k_throttle_reason_count> reason_active_us{};
    DurationUs clock_active_us = 0;    ///< active time of card-ticks with SM clock and its max
    std::int64_t clock_mhz_ms = 0;     ///< Σ SM clock × active time (MHz·ms)
    std::int64_t max_clock_mhz_ms = 0; ///< Σ highest SM clock × active time (MHz·ms)

    ThrottleTotals& operator+=(const ThrottleTotals& o);
    friend bool operator==(const ThrottleTotals&, const ThrottleTotals&) = default;
};

/// Memory of one card: time near full, and memory no live process accounts for ("ghost").
struct MemoryTotals {
    DurationUs known_us = 0;       ///< card time with memory used and total read
    DurationUs pressure_us = 0;    ///< of it, time with used ≥ k_memory_pressure_share of total
    DurationUs ghost_known_us = 0; ///< card time with ghost memory read
    std::int64_t ghost_mib_ms = 0; ///< Σ ghost MiB × time above k_ghost_floor_mib (MiB·ms)
    TimeUs ghost_first_us = 0;     ///< start of the first card-tick with ghost memory (0: none)
    TimeUs ghost_last_end_us = 0;  ///< end of the last one (0: none)

    MemoryTotals& operator+=(const MemoryTotals& o);
    friend bool operator==(const MemoryTotals&, const MemoryTotals&) = default;
};

/// Memory used at or above this share of the total is "memory pressure" (an OOM is near).
inline constexpr double k_memory_pressure_share = 0.9;
/// Ghost memory at or below this is driver noise, not counted.
inline constexpr std::int64_t k_ghost_floor_mib = 100;
/// Share of a card's time under memory pressure from which it gets a finding.
inline constexpr double k_memory_pressure_finding_share = 0.05;

/// How heavily an active card worked: the share of its capacity it used, binned in 5 % steps.
inline constexpr std::size_t k_load_bins = 20;

/// The load of `tick` as a share of its capacity: power drawn / enforced power limit (may exceed
/// 1 briefly); nullopt when either reading is missing. The one place that judges how heavily a
/// card worked: a GPM SM-active share can join here.
std::optional<double> load_share(const CardTick& tick);

/// The bin of a load share: ⌊share × 20⌋, at most 19.
std::size_t load_bin(double share);

/// Active time by load bin (index: load_bin()).
using LoadBins = std::array<DurationUs, k_load_bins>;

/// What makes a tick "busy but light" (configuration, [health] in gua.toml).
struct HealthRules {
    int light_power_pct = 30; ///< active with less than this % of the power limit: light
    friend bool operator==(const HealthRules&, const HealthRules&) = default;
};

/// Active time in the bins below `light_power_pct` (a multiple of 5).
DurationUs light_us(const LoadBins& bins, int light_power_pct);

/// Share of active time that was light from which a card gets a finding.
inline constexpr double k_light_finding_share = 0.1;

/// A card's throttling as shares of its active time; nullopt where not read ("n/a").
struct ThrottleShares {
    std::array<std::optional<double>, k_throttle_reason_count> reason{}; ///< of events-read time
    std::optional<double> clock_ratio; ///< effective / highest SM clock over active time
    std::optional<double> thermal;     ///< the larger of the software and hardware thermal shares
    std::optional<double> power;       ///< the larger of the power-cap and power-brake shares
};

/// Share of active time with a thermal (or power) reason from which a card gets a finding.
inline constexpr double k_throttle_finding_share = 0.05;

/// The shares of `t`.
ThrottleShares throttle_shares(const ThrottleTotals& t);

/// The GPM metrics (docs/health.md, "GPM metrics"), in report order.
enum class GpmMetric : std::uint8_t {
    sm_active = 0,
    sm_occupancy = 1,
    tensor_active = 2,
    dram_bw = 3,
    fp64_active = 4,
    fp32_active = 5,
    fp16_active = 6,
};
inline constexpr std::size_t k_gpm_metric_count = 7;
/// Their names in JSON and /metrics (the `metric` label), in GpmMetric order.
inline constexpr std::array<const char*, k_gpm_metric_count> k_gpm_metric_names{
    "sm_active",   "sm_occupancy", "tensor_active", "dram_bandwidth",
    "fp64_active", "fp32_active",  "fp16_active"};

/// The recorded reading of `metric` (telemetry/card_fields.def: % × 100, 0–10000).
ReadingField gpm_field(GpmMetric metric);

/// What GPM measured while a card was active.
struct GpmTotals {
    /// Per metric (index: GpmMetric): the active time of card-ticks that read it…
    std::array<DurationUs, k_gpm_metric_count> active_us{};
    /// …and Σ its reading (% × 100) × that active time, in %·100·ms.
    std::array<std::int64_t, k_gpm_metric_count> cpct_ms{};
    /// Active time of card-ticks whose SM active was under k_gpm_light_sm_cpct: busy but light.
    DurationUs light_active_us = 0;

    /// The active-time-weighted mean of `metric` as a share (0–1); nullopt when never read.
    std::optional<double> mean(GpmMetric metric) const;
    GpmTotals& operator+=(const GpmTotals& o);
    friend bool operator==(const GpmTotals&, const GpmTotals&) = default;
};

/// SM active under 20 % (GPM, % × 100) while "active": the card barely works. The same rule as
/// the pools' (audit/pools.cpp), so §8 and §9 agree on which time is light.
inline constexpr std::int64_t k_gpm_light_sm_cpct = 2000;
/// GPM findings need readings over at least this share of the card's active time.
inline constexpr double k_gpm_min_coverage = 0.5;
/// Tensor pipes idle: mean tensor activity under 5 % while the FP32 pipes are busy at least 20 %
/// of the active time — the math runs on CUDA cores, not on Tensor Cores.
inline constexpr double k_tensor_idle_max_share = 0.05;
inline constexpr double k_tensor_idle_min_fp32_share = 0.20;
/// DRAM-bound: the memory bandwidth used at least 60 % of its peak on average while active.
inline constexpr double k_dram_bound_min_share = 0.60;

/// Everything the health section needs of one card, in exact integers (summable over rollups).
struct HealthTotals {
    EnergyTotals energy;
    ThrottleTotals throttle;
    MemoryTotals memory;
    LoadBins load{}; ///< active time by load bin, in card-ticks with power and limit read
    GpmTotals gpm;   ///< GPM metrics over active time (Hopper and newer)
    /// NVLink, PCIe and row remapping (not kept in rollups: hours read from them leave it 0)
    FabricTotals fabric;

    HealthTotals& operator+=(const HealthTotals& o);
    friend bool operator==(const HealthTotals&, const HealthTotals&) = default;
};

/// An identity's health totals: the energy of its attributed (active + idle-held) time and its
/// active time by load.
struct IdentityHealth {
    std::int64_t energy_mj = 0;
    DurationUs energy_us = 0; ///< its attributed time in card-ticks with an energy reading
    LoadBins load{};          ///< its attributed active time by the card-tick's load bin

    IdentityHealth& operator+=(const IdentityHealth& o);
    friend bool operator==(const IdentityHealth&, const IdentityHealth&) = default;
};

/// Adds `tick` (classified into `states`, whose total is the tick's counted time) to `out`.
void add_health(const CardTick& tick, const StateTimes& states, HealthTotals& out);

/// The part of a tick's energy `energy` that `part_us` of its `total_us` carries, in mJ (0 when
/// total_us ≤ 0): the tick's power taken as constant over it.
std::int64_t energy_part_mj(std::int64_t energy_mj, DurationUs part_us, DurationUs total_us);

} // namespace gua::audit

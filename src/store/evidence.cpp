// SPDX-License-Identifier: Apache-2.0
// Field table of the evidence BLOB: each member has an explicit number that is part of the file
// format; a number is never reused or renumbered, new members get new numbers.
#include "store/evidence.hpp"

#include "store/evidence_format.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <variant>

namespace gua::store {

namespace {

using evidence_format::Field;

constexpr std::size_t k_field_count = 94;

std::array<Field, k_field_count> fields_of(audit::GpuTotals& t) {
    audit::PoolTimes& pools = t.pools;
    audit::CardProfile& p = t.profile;
    audit::Provenance& v = t.provenance;
    audit::EnergyTotals& e = t.health.energy;
    audit::ThrottleTotals& th = t.health.throttle;
    audit::MemoryTotals& mem = t.health.memory;
    return {{
        {0, &pools[0]},
        {1, &pools[1]},
        {2, &pools[2]},
        {3, &pools[3]},
        {4, &pools[4]},
        {5, &pools[5]},
        {6, &pools[6]},
        {7, &pools[7]},
        {8, &p.office_us},
        {9, &p.off_hours_us},
        {10, &p.steady_us},
        {11, &p.bursty_us},
        {12, &p.steady_under_us},
        {13, &p.steady_compute_bound_us},
        {14, &p.bursty_bucket_us[0]},
        {15, &p.bursty_bucket_us[1]},
        {16, &p.bursty_bucket_us[2]},
        {17, &p.bursty_bucket_us[3]},
        {18, &p.bursty_util_us},
        {19, &p.steady_under_util_us},
        {20, &p.steady_compute_bound_util_us},
        {21, &p.active_held_mib_us},
        {22, &p.steady_under_held_mib_us},
        {23, &p.idle_held_mib_us},
        // Schema 4: measurement provenance (card-time by telemetry::UtilSource, then unknowns).
        {24, &v.by_source_us[0]},
        {25, &v.by_source_us[1]},
        {26, &v.by_source_us[2]},
        {27, &v.by_source_us[3]},
        {28, &v.util_unknown_us},
        {29, &v.holders_unknown_us},
        {30, &v.no_reading_us},
        {31, &t.overlap_us},
        // Health: energy by source (mJ, and the card time each covers) and by state.
        {32, &e.counter_mj},
        {33, &e.counter_us},
        {34, &e.power_mj},
        {35, &e.power_us},
        {36, &e.state_mj[0]},
        {37, &e.state_mj[1]},
        {38, &e.state_mj[2]},
        {39, &e.state_mj[3]},
        // Health: active time with clocks-event reasons read, by reason; SM clock sums.
        {40, &th.events_active_us},
        {41, &th.reason_active_us[0]},
        {42, &th.reason_active_us[1]},
        {43, &th.reason_active_us[2]},
        {44, &th.reason_active_us[3]},
        {45, &th.reason_active_us[4]},
        {46, &th.reason_active_us[5]},
        {47, &th.clock_active_us},
        {48, &th.clock_mhz_ms},
        {49, &th.max_clock_mhz_ms},
        // Health: memory pressure and ghost memory.
        {50, &mem.known_us},
        {51, &mem.pressure_us},
        {52, &mem.ghost_known_us},
        {53, &mem.ghost_mib_ms},
        {54, &mem.ghost_first_us},
        {55, &mem.ghost_last_end_us},
        // Health: active time by load bin (power / power limit in 5 % steps).
        {56, &t.health.load[0]},
        {57, &t.health.load[1]},
        {58, &t.health.load[2]},
        {59, &t.health.load[3]},
        {60, &t.health.load[4]},
        {61, &t.health.load[5]},
        {62, &t.health.load[6]},
        {63, &t.health.load[7]},
        {64, &t.health.load[8]},
        {65, &t.health.load[9]},
        {66, &t.health.load[10]},
        {67, &t.health.load[11]},
        {68, &t.health.load[12]},
        {69, &t.health.load[13]},
        {70, &t.health.load[14]},
        {71, &t.health.load[15]},
        {72, &t.health.load[16]},
        {73, &t.health.load[17]},
        {74, &t.health.load[18]},
        {75, &t.health.load[19]},
        // Health: GPM metrics over active time (time read and Σ reading × time, per metric in
        // audit::GpmMetric order), then the light time by SM active.
        {76, &t.health.gpm.active_us[0]},
        {77, &t.health.gpm.active_us[1]},
        {78, &t.health.gpm.active_us[2]},
        {79, &t.health.gpm.active_us[3]},
        {80, &t.health.gpm.active_us[4]},
        {81, &t.health.gpm.active_us[5]},
        {82, &t.health.gpm.active_us[6]},
        {83, &t.health.gpm.cpct_ms[0]},
        {84, &t.health.gpm.cpct_ms[1]},
        {85, &t.health.gpm.cpct_ms[2]},
        {86, &t.health.gpm.cpct_ms[3]},
        {87, &t.health.gpm.cpct_ms[4]},
        {88, &t.health.gpm.cpct_ms[5]},
        {89, &t.health.gpm.cpct_ms[6]},
        {90, &t.health.gpm.light_active_us},
        {91, &pools[8]},
        // Schema 13: idle time not held while the allocation was unknown.
        {92, &v.allocation_unknown_us},
        // Energy of allocated-unused time (counted as unmeasured before; 0 in older rows).
        {93, &e.state_mj[4]},
    }};
}

static_assert(audit::k_pool_count == 9 && audit::k_bucket_count == 4 &&
                  audit::k_throttle_reason_count == 6 && audit::k_load_bins == 20 &&
                  audit::k_gpm_metric_count == 7,
              "a new member needs a new field number");

/// The identity evidence: its health totals.
constexpr std::size_t k_identity_field_count = 2 + audit::k_load_bins;

std::array<Field, k_identity_field_count> identity_fields_of(audit::IdentityHealth& h) {
    std::array<Field, k_identity_field_count> f;
    f[0] = Field{0, &h.energy_mj};
    f[1] = Field{1, &h.energy_us};
    for (std::size_t b = 0; b < audit::k_load_bins; ++b) { // numbers 2–21: load bins
        f[2 + b] = Field{static_cast<std::uint8_t>(2 + b), &h.load[b]};
    }
    return f;
}

} // namespace

std::string encode_evidence(const audit::GpuTotals& totals) {
    audit::GpuTotals copy = totals;
    return evidence_format::encode(fields_of(copy));
}

void decode_evidence(std::string_view blob, audit::GpuTotals& totals) {
    totals.pools = audit::PoolTimes{};
    totals.profile = audit::CardProfile{};
    totals.provenance = audit::Provenance{};
    totals.overlap_us = 0;
    totals.health = audit::HealthTotals{};
    evidence_format::decode(blob, fields_of(totals));
}

std::string encode_identity_evidence(const audit::IdentityTotals& totals) {
    audit::IdentityHealth copy = totals.health;
    return evidence_format::encode(identity_fields_of(copy));
}

void decode_identity_evidence(std::string_view blob, audit::IdentityTotals& totals) {
    totals.health = audit::IdentityHealth{};
    evidence_format::decode(blob, identity_fields_of(totals.health));
}

std::vector<int> evidence_differences(std::string_view blob, const audit::GpuTotals& recomputed) {
    audit::GpuTotals stored;
    decode_evidence(blob, stored);
    audit::GpuTotals fresh = recomputed;
    std::array<std::int64_t, audit::k_energy_state_count>& fresh_mj = fresh.health.energy.state_mj;
    if (stored.health.energy.state_mj[4] == 0) { // written before field 93: in unmeasured
        fresh_mj[3] += std::exchange(fresh_mj[4], 0);
    }
    const std::array<Field, k_field_count> s = fields_of(stored);
    const std::array<Field, k_field_count> f = fields_of(fresh);
    std::vector<int> differ;
    for (std::size_t k = 0; k < k_field_count; ++k) {
        const bool same = std::visit(
            [&](auto* stored_value) {
                using T = std::remove_pointer_t<decltype(stored_value)>;
                const T fresh_value = *std::get<T*>(f[k].value);
                if (*stored_value == T{} || *stored_value == fresh_value) {
                    return true;
                }
                if constexpr (std::is_floating_point_v<T>) {
                    // Sums of the same ticks in another order may differ in the last bits.
                    const double scale = std::max(std::fabs(*stored_value), std::fabs(fresh_value));
                    return std::fabs(*stored_value - fresh_value) <= 1e-9 * scale;
                }
                return false;
            },
            s[k].value);
        if (!same) {
            differ.push_back(s[k].number);
        }
    }
    return differ;
}

std::string recode_evidence(std::string_view blob) {
    audit::GpuTotals totals;
    decode_evidence(blob, totals);
    return encode_evidence(totals);
}

std::string recode_identity_evidence(std::string_view blob) {
    audit::IdentityTotals totals;
    decode_identity_evidence(blob, totals);
    return encode_identity_evidence(totals);
}

} // namespace gua::store
